"""Threads and patterns: parallel regions, fork, critical, pipeline, task pool.

Expected times are the hand formulas of the patterns (compositional performance
modelling): a pipeline of stage costs a, b over n items on free cores takes
a + b + (n-1)·max(a, b); a task pool of T threads over n items of cost c takes
ceil(n/T)·c; threads beyond the node's cores share them.
"""

from __future__ import annotations

import math

import pytest
from runtime_helpers import elements, finish_times, machine, spec

from uml2perf_runtime import ModelRuntimeError, simulate


def _run(main, elems, cores=4, procs=1, nodes=1, **kwargs):
    return simulate(spec(main, elems), machine=machine(nodes=nodes, cores=cores), procs=procs, **kwargs)


# -- parallel regions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "threads, cores, expected",
    [
        (8, 4, 2.0),  # 8 threads share 4 cores: each at rate 1/2
        (8, 8, 1.0),
        (4, 8, 1.0),
        (3, 2, 1.5),  # 3 on 2 cores: rate 2/3
        (1, 1, 1.0),
    ],
)
def test_parallel_region_contention(threads, cores, expected):
    a, par = elements("A", "PAR")

    def body(p, v):
        yield from p.compute(a, 1.0)

    def main(p, v):
        yield from p.parallel(par, threads, body)

    res = _run(main, [a, par], cores=cores)
    assert res.time == pytest.approx(expected)
    assert res.element("A")["calls"] == threads
    # thread element time is thread-seconds
    assert res.element("A")["inclusive"] == pytest.approx(threads * expected)
    assert res.element("PAR")["inclusive"] == pytest.approx(expected)
    assert res.element("PAR")["exclusive"] == pytest.approx(0.0)


def test_parallel_thread_identity_and_shared_variables():
    a, par = elements("A", "PAR")
    seen = []

    def body(p, v):
        seen.append((p.pid, p.tid, p.nthreads, p.uid, p.node, p.process.tid))
        v.count += 1
        yield from p.compute(a, 1.0)

    def main(p, v):
        v.count = 0
        yield from p.parallel(par, 3, body)
        counts.append(v.count)

    counts = []
    res = _run(main, [a, par], cores=8, procs=2, nodes=2, placement="round_robin")
    assert counts == [3, 3]
    assert sorted(seen) == [(0, t, 3, t, 0, 0) for t in range(3)] + [(1, t, 3, 3 + t, 1, 0) for t in range(3)]
    assert res.time == pytest.approx(1.0)


def test_threads_fold_into_their_process():
    a, b, par = elements("A", "B", "PAR")

    def body(p, v):
        yield from p.compute(a, 1.0)

    def main(p, v):
        yield from p.compute(b, 0.5)
        yield from p.parallel(par, 8, body)

    res = _run(main, [a, b, par], cores=4)
    row = res.per_process[0]
    # main thread: 0.5 compute + region wall time 2.0 (counted as compute)
    assert row["time"] == pytest.approx(2.5)
    assert row["compute"] == pytest.approx(2.5)
    # threads: 8 threads, each 2.0 s of (slowed) compute
    assert row["threads"]["compute"] == pytest.approx(16.0)


def test_threads_compete_with_other_processes_of_the_node():
    a, par = elements("A", "PAR")

    def body(p, v):
        yield from p.compute(a, 1.0)

    def main(p, v):
        if p.pid == 0:
            yield from p.parallel(par, 2, body)
        else:
            yield from p.compute(a, 1.0)

    res = _run(main, [a, par], cores=2, procs=2)
    # 3 runnable segments on 2 cores: rate 2/3 -> all finish at 1.5
    assert finish_times(res) == pytest.approx([1.5, 1.5])


def test_nested_parallel_regions():
    a, outer, inner = elements("A", "OUTER", "INNER")

    def leaf(p, v):
        yield from p.compute(a, 1.0)

    def middle(p, v):
        yield from p.parallel(inner, 2, leaf)

    def main(p, v):
        yield from p.parallel(outer, 2, middle)

    assert _run(main, [a, outer, inner], cores=4).time == pytest.approx(1.0)
    assert _run(main, [a, outer, inner], cores=2).time == pytest.approx(2.0)


def test_zero_threads_and_bad_thread_counts():
    a, par = elements("A", "PAR")

    def main(p, v):
        yield from p.parallel(par, 0, lambda t, v: t.compute(a, 1.0))

    assert _run(main, [a, par]).time == 0.0
    for bad in (-1, 2.5, math.nan, "x"):

        def main_bad(p, v, bad=bad):
            yield from p.parallel(par, bad, lambda t, v: t.compute(a, 1.0))

        with pytest.raises(ModelRuntimeError, match="number of threads of 'PAR'"):
            _run(main_bad, [a, par])


def test_error_in_a_thread_names_the_thread():
    a, par = elements("A", "PAR")

    def body(p, v):
        yield from p.compute(a, 1.0)
        if p.tid == 2:
            raise ValueError("bad thread")

    def main(p, v):
        yield from p.parallel(par, 4, body)

    with pytest.raises(ModelRuntimeError, match="on process 0 thread 2"):
        _run(main, [a, par])


# -- fork ------------------------------------------------------------------------------------------


def test_fork_runs_branches_concurrently():
    a, b, f = elements("A", "B", "FORK")

    def left(p, v):
        yield from p.compute(a, 1.0)

    def right(p, v):
        yield from p.compute(b, 3.0)

    def main(p, v):
        yield from p.fork(f, (left, right))

    assert _run(main, [a, b, f], cores=2).time == pytest.approx(3.0)
    # one core: both at 1/2 until 'left' is done at t=2, then 2 units of 'right' alone -> 4
    assert _run(main, [a, b, f], cores=1).time == pytest.approx(4.0)


def test_fork_branch_identity():
    a, f = elements("A", "FORK")
    seen = []

    def branch(p, v):
        seen.append((p.tid, p.nthreads))
        yield from p.compute(a, 1.0)

    def main(p, v):
        yield from p.fork(f, [branch, branch, branch])

    _run(main, [a, f])
    assert sorted(seen) == [(0, 3), (1, 3), (2, 3)]


# -- critical ----------------------------------------------------------------------------------------


def test_critical_sections_serialise():
    a, par, crit = elements("A", "PAR", "CRIT")

    def inside(p, v):
        yield from p.compute(a, 1.0)

    def body(p, v):
        yield from p.critical(crit, "lock", inside)

    def main(p, v):
        yield from p.parallel(par, 3, body)

    res = _run(main, [a, par, crit], cores=4)
    # one thread at a time: 3 × 1
    assert res.time == pytest.approx(3.0)
    row = res.element("CRIT")
    # waits 0, 1, 2 plus 1 each inside
    assert row["inclusive"] == pytest.approx(6.0)
    assert row["exclusive"] == pytest.approx(3.0)
    assert res.per_process[0]["threads"]["wait"] == pytest.approx(3.0)


def test_critical_sections_with_different_names_do_not_serialise():
    a, par, crit = elements("A", "PAR", "CRIT")

    def body(p, v):
        yield from p.critical(crit, f"lock{p.tid}", lambda t, v: t.compute(a, 1.0))

    def main(p, v):
        yield from p.parallel(par, 2, body)

    assert _run(main, [a, par, crit], cores=2).time == pytest.approx(1.0)


def test_critical_locks_are_per_process():
    a, par, crit = elements("A", "PAR", "CRIT")

    def body(p, v):
        yield from p.critical(crit, "lock", lambda t, v: t.compute(a, 1.0))

    def main(p, v):
        yield from p.parallel(par, 2, body)

    # two processes, each with two threads on its own node: each process serialises its own
    res = _run(main, [a, par, crit], cores=2, procs=2, nodes=2)
    assert finish_times(res) == pytest.approx([2.0, 2.0])


# -- pipeline -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "costs, items",
    [
        ((1.0, 3.0), 5),
        ((3.0, 1.0), 5),
        ((2.0, 2.0), 4),
        ((1.0, 2.0, 1.0), 4),
        ((0.5, 0.25, 1.5, 1.0), 7),
        ((1.0, 3.0), 1),
    ],
)
def test_pipeline_formula_on_free_cores(costs, items):
    stage_elems = elements(*[f"S{i}" for i in range(len(costs))], "PIPE")
    pipe = stage_elems[-1]

    def make(i):
        def stage(p, v):
            yield from p.compute(stage_elems[i], costs[i])

        return stage

    def main(p, v):
        yield from p.pipeline(pipe, items, [make(i) for i in range(len(costs))])

    res = _run(main, stage_elems, cores=len(costs))
    expected = sum(costs) + (items - 1) * max(costs)
    assert res.time == pytest.approx(expected)
    for i in range(len(costs)):
        assert res.element(f"S{i}")["calls"] == items


def test_pipeline_stages_see_items_in_order():
    s0, s1, pipe = elements("S0", "S1", "PIPE")
    seen = []

    def stage0(p, v):
        seen.append((0, p.item, p.tid))
        yield from p.compute(s0, 1.0)

    def stage1(p, v):
        seen.append((1, p.item, p.tid))
        yield from p.compute(s1, 0.5)

    def main(p, v):
        yield from p.pipeline(pipe, 3, (stage0, stage1))

    _run(main, [s0, s1, pipe], cores=2)
    assert [x for x in seen if x[0] == 0] == [(0, k, 0) for k in range(3)]
    assert [x for x in seen if x[0] == 1] == [(1, k, 1) for k in range(3)]


def test_pipeline_on_one_core_is_work_conserving():
    s0, s1, pipe = elements("S0", "S1", "PIPE")

    def main(p, v):
        yield from p.pipeline(pipe, 2, (lambda t, v: t.compute(s0, 1.0), lambda t, v: t.compute(s1, 1.0)))

    # item 0 stage 0 [0,1]; then stage 0 item 1 and stage 1 item 0 share the core -> both at 3;
    # stage 1 item 1 [3,4]
    assert _run(main, [s0, s1, pipe], cores=1).time == pytest.approx(4.0)


def test_pipeline_waiting_counts_as_thread_wait():
    s0, s1, pipe = elements("S0", "S1", "PIPE")

    def main(p, v):
        yield from p.pipeline(pipe, 3, (lambda t, v: t.compute(s0, 2.0), lambda t, v: t.compute(s1, 1.0)))

    res = _run(main, [s0, s1, pipe], cores=2)
    assert res.time == pytest.approx(2.0 + 1.0 + 2 * 2.0)
    # stage 1 waits 2 before item 0, then 1 before items 1 and 2
    assert res.per_process[0]["threads"]["wait"] == pytest.approx(4.0)


def test_empty_pipeline():
    s0, pipe = elements("S0", "PIPE")

    def main(p, v):
        yield from p.pipeline(pipe, 0, (lambda t, v: t.compute(s0, 1.0),))

    res = _run(main, [s0, pipe])
    assert res.time == 0.0
    assert res.element("PIPE")["calls"] == 1


# -- task pool -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "threads, items, cores",
    [
        (4, 10, 4),
        (4, 8, 4),
        (3, 10, 8),
        (1, 5, 1),
        (6, 4, 8),
        (8, 8, 8),
    ],
)
def test_taskpool_formula_on_free_cores(threads, items, cores):
    task, pool = elements("TASK", "POOL")

    def main(p, v):
        yield from p.taskpool(pool, threads, items, lambda t, v: t.compute(task, 0.5))

    res = _run(main, [task, pool], cores=cores)
    assert res.time == pytest.approx(math.ceil(items / threads) * 0.5)
    assert res.element("TASK")["calls"] == items


def test_taskpool_with_more_threads_than_cores():
    task, pool = elements("TASK", "POOL")

    def main(p, v):
        yield from p.taskpool(pool, 8, 8, lambda t, v: t.compute(task, 1.0))

    # 8 workers on 4 cores run at 1/2 -> 2
    assert _run(main, [task, pool], cores=4).time == pytest.approx(2.0)


def test_taskpool_hands_out_every_item_once():
    task, pool = elements("TASK", "POOL")
    seen = []

    def body(p, v):
        seen.append((p.item, p.tid))
        yield from p.compute(task, 1.0 + 0.1 * p.item)

    def main(p, v):
        yield from p.taskpool(pool, 3, 7, body)

    _run(main, [task, pool], cores=3)
    assert sorted(item for item, _ in seen) == list(range(7))
    assert [tid for _, tid in seen[:3]] == [0, 1, 2]


def test_taskpool_without_threads_is_an_error():
    task, pool = elements("TASK", "POOL")

    def main(p, v):
        yield from p.taskpool(pool, 0, 3, lambda t, v: t.compute(task, 1.0))

    with pytest.raises(ModelRuntimeError, match="no threads"):
        _run(main, [task, pool])


def test_threads_arriving_convert_a_running_process_segment():
    a, par = elements("A", "PAR")

    def main(p, v):
        if p.pid == 0:
            yield from p.compute(a, 4.0)
        else:
            yield p.env.timeout(1.0)
            yield from p.parallel(par, 2, lambda t, v: t.compute(a, 1.0))

    res = _run(main, [a, par], cores=2, procs=2)
    # t=1: P0 has 3 left; two threads arrive: 3 on 2 cores at 2/3.
    # threads done after 1.5 (t=2.5); P0 then has 3 - 1 = 2 left alone -> 4.5
    assert finish_times(res) == pytest.approx([4.5, 2.5])


def test_patterns_of_two_processes_share_their_node():
    task, pool = elements("TASK", "POOL")

    def main(p, v):
        yield from p.taskpool(pool, 2, 4, lambda t, v: t.compute(task, 1.0))

    # alone: ceil(4/2) = 2; two processes on one 2-core node: 4 workers share 2 cores -> 4
    assert _run(main, [task, pool], cores=2, procs=1).time == pytest.approx(2.0)
    assert _run(main, [task, pool], cores=2, procs=2).time == pytest.approx(4.0)
    assert _run(main, [task, pool], cores=2, procs=2, nodes=2, placement="round_robin").time == pytest.approx(
        2.0
    )


# -- per-item overhead and start-up of pools and pipelines -------------------------------------


def test_task_pool_overhead_and_startup_by_hand():
    work, pool = elements("Work", "Pool")

    def body(p, v):
        yield from p.compute(work, 1.0)

    def main(p, v):
        yield from p.taskpool(pool, 2, 4, body, overhead=0.1, startup=0.5)

    res = _run(main, [work, pool], cores=2)
    # 0.5 s to start, then each of 2 workers takes 2 tasks of 0.1 + 1 s
    assert res.time == pytest.approx(0.5 + 2 * 1.1)


def test_pipeline_overhead_and_startup_by_hand():
    a, b, pipe = elements("A", "B", "Pipe")

    def stage_a(p, v):
        yield from p.compute(a, 1.0)

    def stage_b(p, v):
        yield from p.compute(b, 1.0)

    def main(p, v):
        yield from p.pipeline(pipe, 3, (stage_a, stage_b), overhead=0.1, startup=0.2)

    res = _run(main, [a, b, pipe], cores=2)
    # startup, then a + b + (n - 1) * max with 1.1 s per stage and item
    assert res.time == pytest.approx(0.2 + 1.1 + 1.1 + 2 * 1.1)


def test_without_the_tags_pools_and_pipelines_time_as_before():
    work, pool = elements("Work", "Pool")

    def body(p, v):
        yield from p.compute(work, 1.0)

    def main(p, v):
        yield from p.taskpool(pool, 2, 4, body)

    assert _run(main, [work, pool], cores=2).time == pytest.approx(2.0)


def test_a_negative_overhead_is_an_error():
    work, pool = elements("Work", "Pool")

    def body(p, v):
        yield from p.compute(work, 1.0)

    def main(p, v):
        yield from p.taskpool(pool, 2, 4, body, overhead=-1.0)

    from uml2perf_runtime.errors import ModelRuntimeError

    with pytest.raises(ModelRuntimeError, match="overhead"):
        _run(main, [work, pool], cores=2)


def test_overhead_and_startup_tags_reach_the_generated_code():
    import sys as _sys
    from pathlib import Path as _Path

    _sys.path.insert(0, str(_Path(__file__).resolve().parent))
    from builders import ModelBuilder
    from stubs import load_module

    from uml2perf.generation import generate

    b = ModelBuilder("pool")
    main = b.activity("main", main=True)
    pool = main.structured("Pool", role="taskpool", threads=2, items=4, overhead="1e-1", startup="0.5")
    task = pool.action("Task", 1.0)
    pool.chain(pool.initial(), task, pool.final())
    main.chain(main.initial(), pool.id, main.final())  # type: ignore[attr-defined]
    text = generate(b.build()).text
    assert "overhead=0.1" in text and "startup=0.5" in text
    res = simulate(load_module(text).MODEL, machine=machine(cores=2), procs=1)
    assert res.time == pytest.approx(0.5 + 2 * 1.1)


def test_background_load_shares_the_cores_by_hand(tmp_path):
    from uml2perf_runtime import Machine

    (work,) = elements("Work")

    def main(p, v):
        yield from p.compute(work, 1.0)

    def run(load, procs):
        m = Machine(name="busy", nodes=1, cores_per_node=2, background_load=load)
        return simulate(spec(main, [work]), machine=m, procs=procs).time

    assert run(0.0, 2) == pytest.approx(1.0)
    assert run(1.0, 1) == pytest.approx(1.0)  # one core left: full speed
    assert run(1.0, 2) == pytest.approx(1.5)  # 2 + 1 runnable on 2 cores: rate 2/3
    assert run(0.5, 2) == pytest.approx(1.25)  # 2.5 on 2 cores: rate 0.8
    path = tmp_path / "busy.toml"
    path.write_text('name = "busy"\nnodes = 1\ncores_per_node = 2\nbackground_load = 0.5\n')
    assert Machine.load(path).background_load == 0.5
    path.write_text('name = "busy"\nnodes = 1\ncores_per_node = 2\nbackground_load = 3\n')
    with pytest.raises(Exception, match="more than the node's 2 cores"):
        Machine.load(path)
