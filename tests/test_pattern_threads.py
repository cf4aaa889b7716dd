"""Per-stage thread counts of pipelines, serialised hand-offs and the machine's ``[threads]`` keys.

Expected times are computed by hand from the pattern formulas on free cores.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_helpers import elements, spec

from uml2perf_runtime import Machine, MachineError, ModelRuntimeError, simulate

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _machine(cores=4, threads=None):
    data = {"name": "m", "nodes": 1, "cores_per_node": cores}
    if threads is not None:
        data["threads"] = threads
    return Machine.from_dict(data)


def _run(main, elems, cores=4, threads=None):
    return simulate(spec(main, elems), machine=_machine(cores, threads), procs=1)


def _two_stages(a_cost, b_cost):
    a, b, pipe = elements("A", "B", "Pipe")

    def stage_a(p, v):
        yield from p.compute(a, a_cost)

    def stage_b(p, v):
        yield from p.compute(b, b_cost)

    return a, b, pipe, (stage_a, stage_b)


# -- per-stage thread counts --------------------------------------------------------------------


@pytest.mark.parametrize(
    "threads, expected",
    [
        # stage A (1 s) on T workers feeds B (1 s) on T workers, 4 items, 8 cores:
        # T = 1: 1 + 1 + 3·1 = 5; T = 2: items leave A in pairs at 1, 2 and B
        # ends at 2, 3; T = 4: all A at 1, all B at 2
        ((1, 1), 5.0),
        ((2, 2), 3.0),
        ((4, 4), 2.0),
        # a slow stage of 2 workers before a fast one: A ends items at 2, 2, 4, 4 (2 s each),
        # B (1 s, one worker) takes them at 2, 3, 4, 5 -> 6
        ((2, 1), None),
    ],
)
def test_stage_workers_by_hand(threads, expected):
    if expected is None:
        a, b, pipe, stages = _two_stages(2.0, 1.0)
        expected = 6.0
    else:
        a, b, pipe, stages = _two_stages(1.0, 1.0)

    def main(p, v):
        yield from p.pipeline(pipe, 4, stages, threads=threads)

    res = _run(main, [a, b, pipe], cores=8)
    assert res.time == pytest.approx(expected)
    assert res.element("A")["calls"] == 4
    assert res.element("B")["calls"] == 4


def test_stage_workers_share_the_cores():
    a, b, pipe, stages = _two_stages(1.0, 1.0)

    def main(p, v):
        yield from p.pipeline(pipe, 4, stages, threads=(2, 2))

    # A does items 0, 1 alone (0..1); then A's 2, 3 and B's 0, 1 share the 2 cores at half
    # speed (1..3); then B's 2, 3 (3..4): the lower bound of 8 item-stages on 2 cores
    assert _run(main, [a, b, pipe], cores=2).time == pytest.approx(4.0)


def test_ordered_stage_hands_items_on_in_order():
    a, b, pipe = elements("A", "B", "Pipe")

    def stage_a(p, v):
        # item 0 is slow: unordered, B takes item 1 first
        yield from p.compute(a, 3.0 if p.item == 0 else 1.0)

    def stage_b(p, v):
        yield from p.compute(b, 1.0)

    def run(ordered):
        def main(p, v):
            yield from p.pipeline(pipe, 2, (stage_a, stage_b), threads=(2, 1), ordered=ordered)

        return _run(main, [a, b, pipe], cores=4).time

    assert run(False) == pytest.approx(4.0)  # B: item 1 at 1..2, item 0 at 3..4
    assert run(True) == pytest.approx(5.0)  # B: item 0 at 3..4, item 1 at 4..5


def test_pool_stages_run_the_pool_body_on_the_stage_workers():
    a, b, pool_a, pool_b, pipe = elements("A", "B", "PoolA", "PoolB", "Pipe")

    def body_a(p, v):
        yield from p.compute(a, 1.0)

    def body_b(p, v):
        yield from p.compute(b, 1.0)

    def stage_a(p, v):
        yield from p.taskpool(pool_a, 2, 1, body_a)

    def stage_b(p, v):
        yield from p.taskpool(pool_b, 2, 1, body_b)

    def main(p, v):
        yield from p.pipeline(pipe, 4, (stage_a, stage_b), threads=(2, 2), pools=(0, 1))

    res = _run(main, [a, b, pool_a, pool_b, pipe], cores=8)
    assert res.time == pytest.approx(3.0)
    assert res.element("PoolA")["calls"] == 4
    assert res.element("A")["calls"] == 4


def test_thread_counts_must_match_the_stages():
    a, b, pipe, stages = _two_stages(1.0, 1.0)

    def main(p, v):
        yield from p.pipeline(pipe, 4, stages, threads=(2,))

    with pytest.raises(ModelRuntimeError, match="2 stages but 1 thread counts"):
        _run(main, [a, b, pipe])


def test_a_stage_without_threads_is_an_error():
    a, b, pipe, stages = _two_stages(1.0, 1.0)

    def main(p, v):
        yield from p.pipeline(pipe, 4, stages, threads=(2, 0))

    with pytest.raises(ModelRuntimeError, match="stage 2 .* has no threads"):
        _run(main, [a, b, pipe])


# -- serialised hand-off ------------------------------------------------------------------------


def test_handoff_is_serialised_across_workers():
    work, pool = elements("Work", "Pool")

    def body(p, v):
        yield from p.compute(work, 0.0)

    def main(p, v):
        yield from p.taskpool(pool, 4, 8, body, handoff=0.5)

    # 8 hand-offs of 0.5 s under one lock: 4 s whatever the workers
    assert _run(main, [work, pool], cores=4).time == pytest.approx(4.0)


def test_overhead_runs_in_parallel_and_handoff_does_not():
    work, pool = elements("Work", "Pool")

    def body(p, v):
        yield from p.compute(work, 1.0)

    def main(p, v):
        yield from p.taskpool(pool, 2, 4, body, handoff=0.25, overhead=0.25)

    # worker 1: lock 0..0.25, 0.25 + 1 -> 1.5; worker 2: lock 0.25..0.5, -> 1.75;
    # second round: worker 1 lock 1.5..1.75 -> 3.0; worker 2 lock 1.75..2.0 -> 3.25
    res = _run(main, [work, pool], cores=2)
    assert res.time == pytest.approx(3.25)


def test_handoff_lock_is_shared_by_the_patterns_of_a_process():
    a, b, pipe, stages = _two_stages(0.0, 0.0)

    def main(p, v):
        yield from p.pipeline(pipe, 3, stages, handoff=1.0)

    # 6 hand-offs (3 items × 2 stages) of 1 s, one at a time
    assert _run(main, [a, b, pipe]).time == pytest.approx(6.0)


# -- the machine's [threads] keys ---------------------------------------------------------------


def test_machine_threads_are_defaults_for_patterns_without_tags():
    work, pool = elements("Work", "Pool")

    def body(p, v):
        yield from p.compute(work, 1.0)

    def main(p, v):
        yield from p.taskpool(pool, 2, 4, body)

    keys = {"start": 0.1, "handoff": 0.05, "overhead": 0.2}
    # start 2 threads (0.2), then per worker: lock 0.05 + 0.2 + 1; worker 2 waits 0.05 for the lock
    # once; second round's locks do not collide (worker 1 at 1.45, worker 2 at 1.5)
    assert _run(main, [work, pool], cores=2, threads=keys).time == pytest.approx(0.2 + 0.05 + 2 * 1.25)
    assert _run(main, [work, pool], cores=2).time == pytest.approx(2.0)


def test_tags_win_over_the_machine():
    work, pool = elements("Work", "Pool")

    def body(p, v):
        yield from p.compute(work, 1.0)

    def main(p, v):
        yield from p.taskpool(pool, 2, 4, body, startup=0.0, handoff=0.0, overhead=0.0)

    keys = {"start": 0.1, "handoff": 0.05, "overhead": 0.2}
    assert _run(main, [work, pool], cores=2, threads=keys).time == pytest.approx(2.0)


def test_pipeline_start_counts_every_stage_worker():
    a, b, pipe, stages = _two_stages(1.0, 1.0)

    def main(p, v):
        yield from p.pipeline(pipe, 2, stages, threads=(2, 1))

    # 3 workers started at 0.1 s each, then A: both items at 1, B: 1..2, 2..3
    assert _run(main, [a, b, pipe], threads={"start": 0.1}).time == pytest.approx(0.3 + 3.0)


def test_machine_threads_keys_parse_and_round_trip():
    m = _machine(threads={"start": "40us", "handoff": 6e-6})
    assert m.threads is not None
    assert m.threads.start == pytest.approx(40e-6)
    assert m.threads.overhead == 0.0
    assert Machine.from_dict(m.to_dict()).threads == m.threads
    assert _machine().threads is None
    assert "threads" not in _machine().to_dict()


@pytest.mark.parametrize(
    "threads, message",
    [
        ({"strat": 1e-6}, "unknown key 'strat' in \\[threads\\]"),
        ({"start": -1.0}, "\\[threads\\] start must be seconds"),
        ({"handoff": "fast"}, "\\[threads\\] handoff"),
        ("fast", "'threads' must be a table"),
    ],
)
def test_bad_threads_keys_are_errors(threads, message):
    with pytest.raises(MachineError, match=message):
        _machine(threads=threads)


# -- from the model ------------------------------------------------------------------------------


def _pipeline_of_pools(threads: int):
    from builders import ModelBuilder

    b = ModelBuilder("pipe-of-pools")
    main = b.activity("main", main=True)
    pipe = main.structured("Pipe", role="pipeline", items=4, ordered="True")
    first = pipe.structured("PoolA", role="taskpool", threads=threads)
    a = first.action("A", 1.0)
    first.chain(first.initial(), a, first.final())
    second = pipe.structured("PoolB", role="taskpool", threads=threads)
    bb = second.action("B", 1.0)
    second.chain(second.initial(), bb, second.final())
    pipe.chain(pipe.initial(), first.id, second.id, pipe.final())  # type: ignore[attr-defined]
    main.chain(main.initial(), pipe.id, main.final())  # type: ignore[attr-defined]
    return b.build()


@pytest.mark.parametrize("threads, expected", [(1, 5.0), (2, 3.0), (4, 2.0)])
def test_a_pipeline_of_pools_uses_each_pools_threads(threads, expected):
    from stubs import load_module

    from uml2perf.generation import generate

    text = generate(_pipeline_of_pools(threads)).text
    assert f"threads=({threads}, {threads},)" in text and "pools=(0, 1,)" in text
    res = simulate(load_module(text).MODEL, machine=_machine(8), procs=1)
    assert res.time == pytest.approx(expected)


def test_the_analytic_path_declines_stage_workers():
    from uml2perf_runtime.analysis.analytic import NotAnalytic, evaluate

    a, b, pipe, stages = _two_stages(1.0, 1.0)

    def main(p, v):
        yield from p.pipeline(pipe, 4, stages, threads=(2, 2), handoff=0.1)

    with pytest.raises(NotAnalytic, match="threads and patterns"):
        evaluate(spec(main, [a, b, pipe]), _machine(4))


def test_an_action_stage_with_a_threads_tag_gets_that_many_workers():
    from builders import ModelBuilder
    from stubs import load_module

    from uml2perf.generation import generate

    b = ModelBuilder("pipe-threads")
    main = b.activity("main", main=True)
    pipe = main.structured("Pipe", role="pipeline", items=4, handoff="0")
    a = pipe.action("A", 2.0, threads=2)
    bb = pipe.action("B", 1.0)
    pipe.chain(pipe.initial(), a, bb, pipe.final())
    main.chain(main.initial(), pipe.id, main.final())  # type: ignore[attr-defined]
    text = generate(b.build()).text
    assert "threads=(2, 1,)" in text and "pools=" not in text
    # A (2 s, 2 workers) ends items at 2, 2, 4, 4; B (1 s) runs 2..3, 3..4, 4..5, 5..6
    res = simulate(load_module(text).MODEL, machine=_machine(8, {"handoff": 0.5}), procs=1)
    assert res.time == pytest.approx(6.0)  # the tag handoff = 0 wins over the machine's 0.5


def test_a_pipeline_of_plain_stages_prints_as_before():
    from builders import ModelBuilder

    from uml2perf.generation import generate

    b = ModelBuilder("pipe-plain")
    main = b.activity("main", main=True)
    pipe = main.structured("Pipe", role="pipeline", items=4)
    a = pipe.action("A", 2.0)
    bb = pipe.action("B", 1.0)
    pipe.chain(pipe.initial(), a, bb, pipe.final())
    main.chain(main.initial(), pipe.id, main.final())  # type: ignore[attr-defined]
    text = generate(b.build()).text
    assert "threads=" not in text and "pools=" not in text and "ordered=" not in text


def test_a_stage_calling_an_activity_as_a_task_pool_runs_on_its_workers():
    from builders import ModelBuilder
    from stubs import load_module

    from uml2perf.generation import generate

    b = ModelBuilder("pipe-of-called-pools")
    sort = b.activity("sort")
    sort.chain(sort.initial(), sort.action("Sort", 1.0), sort.final())
    main = b.activity("main", main=True)
    pipe = main.structured("Pipe", role="pipeline", items=4)
    first = pipe.call("PoolA", sort.id, role="taskpool", threads=4)  # type: ignore[attr-defined]
    second = pipe.call("PoolB", sort.id, role="taskpool", threads=4)  # type: ignore[attr-defined]
    pipe.chain(pipe.initial(), first, second, pipe.final())
    main.chain(main.initial(), pipe.id, main.final())  # type: ignore[attr-defined]
    text = generate(b.build()).text
    assert "threads=(4, 4,)" in text
    res = simulate(load_module(text).MODEL, machine=_machine(8), procs=1)
    assert res.time == pytest.approx(2.0)


# -- properties ----------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    costs=st.lists(st.floats(0.0, 3.0), min_size=1, max_size=4),
    items=st.integers(0, 6),
    cores=st.integers(1, 4),
)
def test_one_worker_per_stage_is_the_pipeline_as_before(costs, items, cores):
    elems = elements(*[f"S{i}" for i in range(len(costs))], "Pipe")
    *stage_elems, pipe = elems

    def stage_of(elem, cost):
        def stage(p, v):
            yield from p.compute(elem, cost * (1 + p.item % 2))

        return stage

    stages = [stage_of(e, c) for e, c in zip(stage_elems, costs, strict=True)]

    def plain(p, v):
        yield from p.pipeline(pipe, items, stages)

    def explicit(p, v):
        yield from p.pipeline(pipe, items, stages, threads=(1,) * len(stages), ordered=True)

    a = _run(plain, elems, cores=cores)
    b = _run(explicit, elems, cores=cores)
    assert a.time == b.time
    assert [a.element(e.name)["inclusive"] for e in elems] == [b.element(e.name)["inclusive"] for e in elems]


@settings(max_examples=40, deadline=None)
@given(cost=st.floats(0.1, 2.0), items=st.integers(1, 9), workers=st.integers(1, 4))
def test_equal_pool_stages_on_free_cores(cost, items, workers):
    a, b, pipe, stages = _two_stages(cost, cost)

    def main(p, v):
        yield from p.pipeline(pipe, items, stages, threads=(workers, workers))

    # each stage passes items in rounds of `workers`; the second stage trails the first by one item
    rounds = -(-items // workers)
    assert _run(main, [a, b, pipe], cores=2 * workers).time == pytest.approx((rounds + 1) * cost)


def test_a_pipeline_without_items_starts_no_threads():
    a, b, pipe, stages = _two_stages(1.0, 1.0)

    def main(p, v):
        yield from p.pipeline(pipe, 0, stages, threads=(2, 2))

    assert _run(main, [a, b, pipe], threads={"start": 0.1, "handoff": 0.1}).time == 0.0


# -- wake-ups -------------------------------------------------------------------------------------


def test_a_stage_that_waited_for_its_item_wakes_up_first():
    a, b, pipe, stages = _two_stages(1.0, 0.5)

    def main(p, v):
        yield from p.pipeline(pipe, 3, stages, wakeup=0.1)

    # B waits for every item: takes it at 1, 2, 3, resumes 0.1 later and works 0.5
    assert _run(main, [a, b, pipe]).time == pytest.approx(3.6)


def test_a_stage_whose_items_are_queued_does_not_wake_up():
    a, b, pipe, stages = _two_stages(0.5, 1.0)

    def main(p, v):
        yield from p.pipeline(pipe, 3, stages, wakeup=0.1)

    # B waits only for item 0 (0.5 + 0.1), then items 1 and 2 are queued: 0.6 + 3 × 1
    assert _run(main, [a, b, pipe]).time == pytest.approx(3.6)


def test_a_pool_caller_wakes_up_for_each_result_it_waited_for():
    work, pool = elements("Work", "Pool")

    def body(p, v):
        yield from p.compute(work, 1.0)

    def main(p, v):
        yield from p.taskpool(pool, 1, 3, body, wakeup=0.1)

    # results at 1, 2, 3; the caller wakes for each (0.1 each, while the worker goes on)
    assert _run(main, [work, pool], cores=2).time == pytest.approx(3.1)


def test_a_pool_of_quick_tasks_wakes_its_caller_once_for_many_results():
    work, pool = elements("Work", "Pool")

    def body(p, v):
        yield from p.compute(work, 0.01)

    def main(p, v):
        yield from p.taskpool(pool, 1, 20, body, wakeup=0.1)

    # the first result wakes the caller (0.01 .. 0.11); the results of that time wait for it and
    # are taken at once; it sleeps again until the 12th (0.12 .. 0.22), by when the worker is done
    # (0.20): 2 wake-ups for 20 results
    res = _run(main, [work, pool], cores=2)
    assert res.time == pytest.approx(0.22)


def test_the_machine_wakeup_is_the_default():
    a, b, pipe, stages = _two_stages(1.0, 0.5)

    def main(p, v):
        yield from p.pipeline(pipe, 3, stages)

    assert _run(main, [a, b, pipe], threads={"wakeup": 0.1}).time == pytest.approx(3.6)
    assert _run(main, [a, b, pipe]).time == pytest.approx(3.5)


def test_a_woken_caller_holds_the_lock_after_the_worker_took_its_next_item():
    work, pool = elements("Work", "Pool")

    def body(p, v):
        yield from p.compute(work, 1.0)

    def main(p, v):
        yield from p.taskpool(pool, 1, 3, body, handoff=0.05, wakeup=0.1)

    # the worker asks for the lock first (0.05), then the woken caller holds it (0.1) while the
    # worker computes: per item 1.05, and the last wake-up ends the pool: 3 × 1.05 + 0.1
    assert _run(main, [work, pool], cores=2).time == pytest.approx(3.25)


def test_a_quick_worker_waits_for_the_callers_wake_up():
    work, pool = elements("Work", "Pool")

    def body(p, v):
        yield from p.compute(work, 0.01)

    def main(p, v):
        yield from p.taskpool(pool, 1, 2, body, handoff=0.05, wakeup=0.1)

    # worker: lock 0..0.05, item 0 to 0.06; lock 0.06..0.11 (before the caller), item 1 to 0.12;
    # the caller woken at 0.06 holds the lock 0.11..0.21 and then finds item 1 there
    assert _run(main, [work, pool], cores=2).time == pytest.approx(0.21)
