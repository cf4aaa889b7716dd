"""Core of the runtime estimator: compute, contention, placement, profile, limits, errors.

Every expected time is computed by hand in the test's comment.
"""

from __future__ import annotations

import gc
import json
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_helpers import elements, finish_times, machine, spec

import uml2perf_runtime as rt
from uml2perf_runtime import (
    DeadlockError,
    Element,
    LimitError,
    ModelRuntimeError,
    ParameterError,
    SimulationError,
    simulate,
)
from uml2perf_runtime.engine.simulation import Simulation

# -- sequential costs and speed ------------------------------------------------------------


def test_single_process_sequential_costs_add_up():
    a, b, c = elements("A", "B", "C")

    def main(p, v):
        yield from p.compute(a, 1.5)
        yield from p.compute(b, 2.5)
        yield from p.compute(a, 0.25)
        yield from p.compute(c, 0.0)

    res = simulate(spec(main, [a, b, c]), machine=machine(), procs=1)
    assert res.time == pytest.approx(4.25)
    row = res.per_process[0]
    assert row["compute"] == pytest.approx(4.25)
    assert row["communication"] == 0.0 and row["wait"] == 0.0
    assert res.element("A")["calls"] == 2
    assert res.element("A")["inclusive"] == pytest.approx(1.75)
    assert res.element("B")["exclusive"] == pytest.approx(2.5)
    # zero cost: counted as a call, no time
    assert res.element("C")["calls"] == 1
    assert res.element("C")["inclusive"] == 0.0


@pytest.mark.parametrize("speed, expected", [(1.0, 6.0), (2.0, 3.0), (4.0, 1.5), (0.5, 12.0)])
def test_costs_are_divided_by_machine_speed(speed, expected):
    (a,) = elements("A")

    def main(p, v):
        yield from p.compute(a, 2.0)
        yield from p.compute(a, 4.0)

    res = simulate(spec(main, [a]), machine=machine(speed=speed), procs=1)
    assert res.time == pytest.approx(expected)


@pytest.mark.parametrize("bad", [-1.0, math.nan, -1e-9])
def test_negative_or_nan_cost_names_the_element(bad):
    (a,) = elements("A1")

    def main(p, v):
        yield from p.compute(a, bad)

    with pytest.raises(ModelRuntimeError) as info:
        simulate(spec(main, [a]), machine=machine(), procs=1)
    message = str(info.value)
    assert "'A1' (xmi:id=_A1, line 10)" in message
    assert "process 0" in message
    assert info.value.element_id == "_A1"


# -- contention (processor sharing) -----------------------------------------------------------


def test_two_processes_on_one_core_take_twice_as_long():
    (a,) = elements("A")

    def main(p, v):
        yield from p.compute(a, 1.0)

    res = simulate(spec(main, [a]), machine=machine(cores=1), procs=2)
    # both run at rate 1/2: each finishes at 2
    assert finish_times(res) == pytest.approx([2.0, 2.0])
    assert [r["compute"] for r in res.per_process] == pytest.approx([2.0, 2.0])


def test_unequal_work_on_one_core():
    (a,) = elements("A")

    def main(p, v):
        yield from p.compute(a, 1.0 if p.pid == 0 else 3.0)

    res = simulate(spec(main, [a]), machine=machine(cores=1), procs=2)
    # [0,2]: both at 1/2 -> P0 done at 2 (1 unit), P1 has 2 left at rate 1 -> 4
    assert finish_times(res) == pytest.approx([2.0, 4.0])


def test_processor_sharing_with_staggered_start_converts_running_segments():
    (a,) = elements("A")

    def main(p, v):
        if p.pid < 2:
            yield from p.compute(a, 3.0)
            yield from p.compute(a, 1.0 if p.pid == 0 else 0.0)
        else:
            yield p.env.timeout(1.0)  # not on the CPU (like a blocked receive)
            yield from p.compute(a, 1.0)

    res = simulate(spec(main, [a]), machine=machine(cores=2), procs=3)
    # [0,1): P0, P1 alone on 2 cores, 1 unit done each, 2 left.
    # t=1: P2 arrives with 1 unit: 3 runnable on 2 cores, rate 2/3.
    # P2 done after 1/(2/3) = 1.5 -> t=2.5; P0, P1 have 2 - 1 = 1 left.
    # [2.5, 3.5): P0, P1 at full speed -> t=3.5; then P0 computes 1 more alone -> 4.5.
    assert finish_times(res) == pytest.approx([4.5, 3.5, 2.5])
    assert res.per_process[2]["compute"] == pytest.approx(1.5)


def test_three_runnable_on_two_cores_staggered_exact():
    (a,) = elements("A")
    starts = [0.0, 0.5, 1.0]
    works = [2.0, 2.0, 2.0]

    def main(p, v):
        if starts[p.pid]:
            yield p.env.timeout(starts[p.pid])
        yield from p.compute(a, works[p.pid])

    res = simulate(spec(main, [a]), machine=machine(cores=2), procs=3)
    # [0,0.5): P0 alone: P0 left 1.5.  [0.5,1): P0, P1 full speed: P0 1.0, P1 1.5 left.
    # t=1: P2 arrives (2.0); rate 2/3.  P0 finishes first: 1.0/(2/3) = 1.5 -> t=2.5;
    # then P1 has 1.5-1.0 = 0.5, P2 has 2-1 = 1.0, two on two cores: P1 at 3.0, P2 at 3.5.
    assert finish_times(res) == pytest.approx([2.5, 3.0, 3.5])


def test_processor_sharing_respects_speed():
    (a,) = elements("A")

    def main(p, v):
        yield from p.compute(a, 1.0)

    res = simulate(spec(main, [a]), machine=machine(cores=1, speed=2.0), procs=2)
    # work 0.5 each (÷ speed), two on one core -> 1.0
    assert finish_times(res) == pytest.approx([1.0, 1.0])


def test_placement_decides_contention():
    (a,) = elements("A")

    def main(p, v):
        yield from p.compute(a, 1.0)

    spread = simulate(spec(main, [a]), machine=machine(nodes=2, cores=2), procs=4)
    assert spread.time == pytest.approx(1.0)
    crowded = simulate(spec(main, [a]), machine=machine(nodes=1, cores=2), procs=4)
    assert crowded.time == pytest.approx(2.0)
    # block placement on an oversubscribed 2-node machine: 5 + 5 processes, 2 cores each
    over = simulate(spec(main, [a]), machine=machine(nodes=2, cores=2), procs=10)
    assert over.time == pytest.approx(2.5)


def test_many_processes_on_few_cores():
    (a,) = elements("A")

    def main(p, v):
        yield from p.compute(a, 1.0)

    res = simulate(spec(main, [a]), machine=machine(nodes=1, cores=4), procs=4096)
    assert res.processes == 4096
    assert res.time == pytest.approx(1024.0)
    assert res.element("A")["calls"] == 4096


# -- placement -----------------------------------------------------------------------------------


def _sim(nprocs, nodes, cores, placement="block"):
    (a,) = elements("A")
    return Simulation(
        spec(lambda p, v: None, [a]), machine(nodes=nodes, cores=cores), nprocs, placement=placement
    )


def test_block_placement_fills_nodes_in_order():
    sim = _sim(8, 4, 2)
    assert [sim.node_of(pid) for pid in range(8)] == [0, 0, 1, 1, 2, 2, 3, 3]
    sim = _sim(5, 4, 4)
    assert [sim.node_of(pid) for pid in range(5)] == [0, 0, 0, 0, 1]
    assert [ctx.ppn for ctx in sim.contexts] == [4, 4, 4, 4, 1]


def test_block_placement_spreads_evenly_when_oversubscribed():
    sim = _sim(10, 2, 2)
    assert [sim.node_of(pid) for pid in range(10)] == [0] * 5 + [1] * 5


def test_round_robin_placement():
    sim = _sim(8, 4, 2, "round_robin")
    assert [sim.node_of(pid) for pid in range(8)] == [0, 1, 2, 3, 0, 1, 2, 3]
    assert all(ctx.ppn == 2 for ctx in sim.contexts)


def test_placement_from_simulate_and_machine_policy():
    (a,) = elements("A")

    def main(p, v):
        v.seen = (p.node, p.nnodes, p.ppn)
        yield from p.compute(a, 1.0)

    m = machine(nodes=2, cores=2)
    res = simulate(spec(main, [a]), machine=m, procs=4, placement="round_robin")
    assert [r["node"] for r in res.per_process] == [0, 1, 0, 1]
    rr_machine = machine(nodes=2, cores=2, placement="round_robin")
    res = simulate(spec(main, [a]), machine=rr_machine, procs=4)
    assert res.placement == "round_robin"
    assert [r["node"] for r in res.per_process] == [0, 1, 0, 1]
    res = simulate(spec(main, [a]), machine=m, procs=4, nodes=4)
    assert res.nodes == 4
    assert [r["node"] for r in res.per_process] == [0, 0, 1, 1]


def test_default_process_count_is_every_core():
    (a,) = elements("A")
    res = simulate(spec(lambda p, v: p.compute(a, 1.0), [a]), machine=machine(nodes=3, cores=2))
    assert res.processes == 6
    assert res.time == pytest.approx(1.0)


def test_system_parameters():
    (a,) = elements("A")
    seen = {}

    def main(p, v):
        seen[p.pid] = (p.pid, p.nprocs, p.tid, p.nthreads, p.uid, p.node, p.nnodes, p.ppn, p.process is p)
        yield from p.compute(a, 1.0)

    simulate(spec(main, [a]), machine=machine(nodes=2, cores=2), procs=3)
    assert seen[0] == (0, 3, 0, 1, 0, 0, 2, 2, True)
    assert seen[2] == (2, 3, 0, 1, 2, 1, 2, 1, True)


# -- enter / leave ---------------------------------------------------------------------------------


def test_inclusive_and_exclusive_time_of_composites():
    s, t, a, b, c = elements("S", "T", "A", "B", "C")
    s.kind = t.kind = "activity"

    def main(p, v):
        p.enter(s)
        yield from p.compute(a, 1.0)
        p.enter(t)
        yield from p.compute(b, 2.0)
        p.leave(t)
        yield from p.compute(c, 0.5)
        yield p.env.timeout(0.25)  # untracked time belongs to S itself
        p.leave(s)

    res = simulate(spec(main, [s, t, a, b, c]), machine=machine(), procs=1)
    assert res.element("S")["inclusive"] == pytest.approx(3.75)
    assert res.element("S")["exclusive"] == pytest.approx(0.25)
    assert res.element("T")["inclusive"] == pytest.approx(2.0)
    assert res.element("T")["exclusive"] == pytest.approx(0.0)
    assert res.element("S")["calls"] == 1
    # sorted by inclusive time (ties keep model order)
    assert [r["name"] for r in res.elements] == ["S", "T", "B", "A", "C"]


def test_leave_without_enter_is_reported():
    (s,) = elements("S")

    def main(p, v):
        p.leave(s)
        yield from ()

    with pytest.raises(SimulationError, match="without a matching enter"):
        simulate(spec(main, [s]), machine=machine(), procs=1)


# -- per-element statistics across processes -----------------------------------------------------


def test_element_statistics_across_processes_match_numpy():
    a, root_only, never = elements("A", "ROOT", "NEVER")

    def main(p, v):
        yield from p.compute(a, 0.5 * (p.pid + 1))
        yield from p.compute(a, 0.25)
        if p.pid == 0:
            yield from p.compute(root_only, 3.0)

    res = simulate(spec(main, [a, root_only, never]), machine=machine(cores=4), procs=4)
    values = np.array([0.5 * (pid + 1) + 0.25 for pid in range(4)])
    row = res.element("A")
    assert row["calls"] == 8
    assert row["processes"] == 4
    assert row["inclusive"] == pytest.approx(values.sum())
    assert row["mean"] == pytest.approx(values.mean())
    assert row["min"] == pytest.approx(values.min())
    assert row["max"] == pytest.approx(values.max())
    assert row["std"] == pytest.approx(values.std())
    root = res.element("ROOT")
    assert root["processes"] == 1 and root["mean"] == pytest.approx(3.0) and root["std"] == 0.0
    assert res.element("NEVER")["calls"] == 0
    assert sum(r["percent"] for r in res.elements) == pytest.approx(100.0)


# -- deadlock ------------------------------------------------------------------------------------


def test_deadlock_reports_who_waits_for_what():
    a, r1 = elements("A", "R1")

    def main(p, v):
        yield from p.compute(a, 1.0)
        if p.pid != 1:
            p.block(r1, f"recv from {(p.pid + 1) % p.nprocs} tag 7")
            yield p.env.event()  # never triggered: no matching send

    with pytest.raises(DeadlockError) as info:
        simulate(spec(main, [a, r1]), machine=machine(nodes=2, cores=2), procs=3)
    err = info.value
    assert [entry["pid"] for entry in err.report] == [0, 2]
    entry = err.report[1]
    assert entry["node"] == 1
    assert entry["element"] == {"name": "R1", "id": "_R1", "kind": "action", "line": 11}
    assert entry["waiting_for"] == "recv from 0 tag 7"
    assert "process 0 (node 0) waits at 'R1' (xmi:id=_R1, line 11) for recv from 1 tag 7" in err.message
    assert "2 processes cannot finish" in err.message
    assert err.time == pytest.approx(1.0)


def test_deadlock_description_may_be_lazy_and_threads_are_listed():
    a, par, r = elements("A", "PAR", "R")
    calls = []

    def describe():
        calls.append(1)
        return "a message that never comes"

    def body(p, v):
        if p.tid == 1:
            p.block(r, describe)
            yield p.env.event()
        yield from p.compute(a, 1.0)

    def main(p, v):
        yield from p.parallel(par, 2, body)

    with pytest.raises(DeadlockError) as info:
        simulate(spec(main, [a, par, r]), machine=machine(cores=2), procs=1)
    report = info.value.report
    assert [(e["pid"], e["tid"]) for e in report] == [(0, 0), (0, 1)]
    assert "threads of parallel region 'PAR'" in report[0]["waiting_for"]
    assert report[1]["waiting_for"] == "a message that never comes"
    assert calls  # formatted only when the report was built


def test_unmarked_wait_still_ends_with_a_deadlock_report():
    (a,) = elements("A")

    def main(p, v):
        yield from p.compute(a, 1.0)
        yield p.env.event()

    with pytest.raises(DeadlockError) as info:
        simulate(spec(main, [a]), machine=machine(), procs=1)
    assert info.value.report[0]["element"]["name"] == "A"
    assert "never happens" in info.value.message


# -- limits ----------------------------------------------------------------------------------------


def test_iteration_limit_names_the_loop():
    a, loop = elements("A", "L")
    loop.kind = "loop"

    def main(p, v):
        while True:
            p.iteration(loop)
            yield from p.compute(a, 0.0)

    with pytest.raises(LimitError) as info:
        simulate(spec(main, [a, loop]), machine=machine(), procs=1, max_iterations=1000)
    assert info.value.kind == "iterations"
    assert "loop 'L' (xmi:id=_L, line 11) ran more than 1,000 iterations on process 0" in info.value.message
    assert "check its condition" in info.value.message


def test_iterations_below_the_limit_are_fine():
    a, loop = elements("A", "L")

    def main(p, v):
        for _ in range(50):
            p.iteration(loop)
            yield from p.compute(a, 0.1)

    res = simulate(spec(main, [a, loop]), machine=machine(), procs=1, max_iterations=50)
    assert res.time == pytest.approx(5.0)


def test_time_limit_lists_running_processes():
    (a,) = elements("A")

    def main(p, v):
        yield from p.compute(a, 10.0 * (p.pid + 1))

    with pytest.raises(LimitError) as info:
        simulate(spec(main, [a]), machine=machine(cores=2), procs=2, max_time=15.0)
    assert info.value.kind == "time"
    assert [e["pid"] for e in info.value.running] == [1]
    assert "15 s" in info.value.message


def test_time_limit_not_hit_when_finishing_exactly_at_it():
    (a,) = elements("A")
    res = simulate(spec(lambda p, v: p.compute(a, 2.0), [a]), machine=machine(), procs=1, max_time=2.0)
    assert res.time == pytest.approx(2.0)


def test_event_limit():
    (a,) = elements("A")

    def main(p, v):
        for _ in range(1000):
            yield from p.compute(a, 1.0)

    with pytest.raises(LimitError) as info:
        simulate(spec(main, [a]), machine=machine(), procs=1, max_events=100)
    assert info.value.kind == "events"
    res = simulate(spec(main, [a]), machine=machine(), procs=1, max_events=10_000)
    assert res.time == pytest.approx(1000.0)


# -- errors in model code ------------------------------------------------------------------------

E_A1 = Element(0, "A1", "action", "_a1", 12)
E_A2 = Element(1, "A2", "action", "_a2", 13)


def FA1(p, v):
    """Cost function FA1 (xmi:id=_fa1)."""
    return 121 / v.P


def activity_div_in_cost(p, v):
    # A1 (xmi:id=_a1): cost
    yield from p.compute(E_A1, FA1(p, v))


def activity_div_in_code(p, v):
    yield from p.compute(E_A1, 1.0)
    # A2 (xmi:id=_a2): code fragment, then cost
    v.Q = 1
    v.R = v.Q / v.P
    yield from p.compute(E_A2, 1.0)


def _init_p0(p, v):
    v.P = p.param("P", 0)


def test_division_by_zero_in_cost_function_names_element_and_process():
    model = spec(activity_div_in_cost, [E_A1, E_A2], init=_init_p0, parameters=[("P", 0)])
    with pytest.raises(ModelRuntimeError) as info:
        simulate(model, machine=machine(cores=4), procs=4)
    err = info.value
    assert err.message.startswith("division by zero in cost of 'A1' (xmi:id=_a1, line 12) on process 0")
    assert isinstance(err.original, ZeroDivisionError)
    assert err.pid == 0 and err.element_id == "_a1" and err.line == 12
    assert isinstance(err.__cause__, ZeroDivisionError)


def test_division_by_zero_in_code_fragment_names_its_element():
    model = spec(activity_div_in_code, [E_A1, E_A2], init=_init_p0, parameters=[("P", 0)])
    with pytest.raises(ModelRuntimeError) as info:
        simulate(model, machine=machine(), procs=1)
    assert "division by zero in code of 'A2' (xmi:id=_a2, line 13) on process 0" in info.value.message
    # with the parameter set, the same model runs
    res = simulate(model, machine=machine(), procs=1, overrides={"P": "2"})
    assert res.time == pytest.approx(2.0)


def test_other_exceptions_fall_back_to_last_element():
    a, b = elements("A", "B")

    def helper():
        return {}["missing"]

    def main(p, v):
        yield from p.compute(a, 1.0)
        helper()

    with pytest.raises(ModelRuntimeError) as info:
        simulate(spec(main, [a, b]), machine=machine(), procs=1)
    assert "KeyError" in info.value.message
    assert "'A' (xmi:id=_A, line 10)" in info.value.message


def test_error_stops_the_run_and_restores_gc():
    (a,) = elements("A")
    gc.enable()

    def main(p, v):
        yield from p.compute(a, 1.0)
        if p.pid == 3:
            raise ValueError("boom")

    with pytest.raises(ModelRuntimeError, match="boom .* on process 3"):
        simulate(spec(main, [a]), machine=machine(cores=4), procs=4)
    assert gc.isenabled()


def test_element_indices_must_match_positions():
    a = Element(1, "A")
    with pytest.raises(SimulationError, match="index 1 but is at position 0"):
        simulate(spec(lambda p, v: None, [a]), machine=machine(), procs=1)


def test_bad_process_count():
    (a,) = elements("A")
    with pytest.raises(SimulationError, match="at least 1"):
        simulate(spec(lambda p, v: None, [a]), machine=machine(), procs=0)


# -- parameters and randomness ----------------------------------------------------------------


def _param_model():
    (a,) = elements("A")
    seen = {}

    def init(p, v):
        v.N = p.param("N", 4)
        v.X = p.param("X", 1.0)
        v.FLAG = p.param("FLAG", False)
        v.NAME = p.param("NAME", "x")

    def main(p, v):
        seen["v"] = (v.N, v.X, v.FLAG, v.NAME)
        yield from p.compute(a, v.X)

    model = spec(main, [a], init=init, parameters=[("N", 4), ("X", 1.0), ("FLAG", False), ("NAME", "x")])
    return model, seen


def test_parameter_overrides_are_typed():
    model, seen = _param_model()
    simulate(model, machine=machine(), procs=1)
    assert seen["v"] == (4, 1.0, False, "x")
    simulate(
        model, machine=machine(), procs=1, overrides={"N": "64", "X": "2.5", "FLAG": "true", "NAME": "abc"}
    )
    assert seen["v"] == (64, 2.5, True, "abc")
    assert type(seen["v"][0]) is int and type(seen["v"][1]) is float
    simulate(model, machine=machine(), procs=1, overrides={"N": "1e3", "X": 3})
    assert seen["v"][:2] == (1000, 3)


def test_unknown_parameter_lists_the_models_parameters():
    model, _ = _param_model()
    with pytest.raises(ParameterError) as info:
        simulate(model, machine=machine(), procs=1, overrides={"M": "1"})
    assert "'M'" in info.value.message and "N, X, FLAG, NAME" in info.value.message


def test_bad_parameter_value():
    model, _ = _param_model()
    with pytest.raises(ParameterError, match="N must be a number"):
        simulate(model, machine=machine(), procs=1, overrides={"N": "many"})
    with pytest.raises(ParameterError, match="FLAG must be true or false"):
        simulate(model, machine=machine(), procs=1, overrides={"FLAG": "maybe"})


def test_random_is_seeded_per_process():
    (a,) = elements("A")
    drawn = {}

    def main(p, v):
        drawn[p.pid] = [p.random() for _ in range(3)]
        yield from p.compute(a, 1.0)

    simulate(spec(main, [a]), machine=machine(cores=2), procs=2, seed=5)
    first = dict(drawn)
    for pid in (0, 1):
        rng = random.Random(5 * 1_000_003 + pid)
        assert first[pid] == [rng.random() for _ in range(3)]
    simulate(spec(main, [a]), machine=machine(cores=2), procs=2, seed=5)
    assert drawn == first
    simulate(spec(main, [a]), machine=machine(cores=2), procs=2, seed=6)
    assert drawn != first


# -- results ---------------------------------------------------------------------------------


def _mixed_model():
    a, b, par = elements("A", "B", "PAR")

    def body(p, v):
        yield from p.compute(b, 0.5 + 0.25 * p.tid + p.random())

    def main(p, v):
        yield from p.compute(a, 1.0 + 0.5 * p.pid)
        yield from p.parallel(par, 3, body)

    return spec(main, [a, b, par])


def test_determinism_same_inputs_same_numbers():
    first = simulate(_mixed_model(), machine=machine(nodes=2, cores=2), procs=5, seed=3).to_dict()
    second = simulate(_mixed_model(), machine=machine(nodes=2, cores=2), procs=5, seed=3).to_dict()
    for d in (first, second):
        d.pop("wall_time")
    assert first == second


def test_to_dict_is_json_and_has_spec_keys():
    res = simulate(_mixed_model(), machine=machine(nodes=2, cores=2), procs=3)
    data = json.loads(json.dumps(res.to_dict()))
    for key in (
        "time",
        "processes",
        "nodes",
        "per_process",
        "elements",
        "machine",
        "seed",
        "model",
        "events",
        "wall_time",
    ):
        assert key in data
    assert data["processes"] == 3 and data["nodes"] == 2
    assert data["machine"]["name"] == "test"
    assert data["events"] > 0
    for row in data["per_process"]:
        assert set(row) >= {"pid", "time", "compute", "communication", "wait"}
    for row in data["elements"]:
        assert set(row) >= {
            "name",
            "id",
            "kind",
            "line",
            "calls",
            "inclusive",
            "exclusive",
            "mean",
            "min",
            "max",
            "std",
            "processes",
        }
    assert data["time"] == max(r["time"] for r in data["per_process"])


def test_report_is_readable():
    res = simulate(_mixed_model(), machine=machine(nodes=2, cores=2), procs=3)
    text = res.report()
    assert "Predicted time:" in text
    assert "Where the time goes" in text
    assert text.endswith("\n")
    many = simulate(_mixed_model(), machine=machine(nodes=4, cores=8), procs=32).report(top=2)
    assert "min" in many and "mean" in many and "max" in many
    assert "more elements" in many


def test_process_breakdown_adds_up_without_idle_time():
    res = simulate(_mixed_model(), machine=machine(nodes=2, cores=2), procs=3)
    for row in res.per_process:
        assert row["compute"] + row["communication"] + row["wait"] == pytest.approx(row["time"])


def test_standalone_main(capsys):
    model, _ = _param_model()
    code = rt.main(model, ["--procs", "2", "--set", "X=2", "--json"], exit=False)
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["time"] == pytest.approx(2.0)  # default machine: 4 cores, no contention
    code = rt.main(model, ["--procs", "1", "--set", "NOPE=1"], exit=False)
    assert code == 1
    assert "NOPE" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        rt.main(model, ["--procs", "1"])
    assert info.value.code == 0


def test_deadlock_time_is_the_last_real_event_even_with_a_time_limit():
    a, r = elements("A", "R")

    def main(p, v):
        yield from p.compute(a, 2.0)
        p.block(r, "recv from 1 tag 0")
        yield p.env.event()

    with pytest.raises(DeadlockError) as info:
        simulate(spec(main, [a, r]), machine=machine(), procs=1, max_time=100.0)
    assert info.value.time == pytest.approx(2.0)
    assert "deadlock at simulated time 2 s" in info.value.message


def test_standalone_main_with_bundled_machine_and_trace(tmp_path, capsys):
    (a,) = elements("A")
    model = spec(lambda p, v: p.compute(a, 1.0), [a])
    trace = tmp_path / "t.json"
    code = rt.main(model, ["--machine", "laptop", "--trace", str(trace)], exit=False)
    assert code == 0
    out = capsys.readouterr().out
    assert (
        "machine 'laptop' (1 node x 8 cores): 8 processes on 1 node" in out and "Predicted time: 1 s" in out
    )
    assert json.loads(trace.read_text())["otherData"]["processes"] == 8


# -- processor sharing against a reference ---------------------------------------------------------


def _reference_ps(jobs, cores):
    """Exact processor sharing, step by step: jobs are lists of ("sleep"|"work", seconds)."""
    now = 0.0
    state = [[0, None] for _ in jobs]  # (phase index, remaining of the phase)
    finish = [0.0] * len(jobs)
    for i, job in enumerate(jobs):
        state[i][1] = job[0][1] if job else None
    while True:
        active = [i for i, (k, _) in enumerate(state) if k < len(jobs[i])]
        if not active:
            return finish
        working = [i for i in active if jobs[i][state[i][0]][0] == "work"]
        rate = min(1.0, cores / len(working)) if working else 1.0
        dt = min(state[i][1] / (rate if i in working else 1.0) for i in active)
        now += dt
        for i in active:
            r = rate if i in working else 1.0
            state[i][1] -= dt * r
            if state[i][1] <= 1e-12:
                state[i][0] += 1
                k = state[i][0]
                if k < len(jobs[i]):
                    state[i][1] = jobs[i][k][1]
                else:
                    finish[i] = now


_phase = st.tuples(st.sampled_from(["sleep", "work"]), st.integers(1, 8).map(lambda x: x / 4))


@settings(max_examples=60, deadline=None)
@given(
    jobs=st.lists(st.lists(_phase, min_size=1, max_size=4), min_size=1, max_size=6), cores=st.integers(1, 3)
)
def test_processor_sharing_matches_reference(jobs, cores):
    (a,) = elements("A")

    def main(p, v):
        for kind, seconds in jobs[p.pid]:
            if kind == "sleep":
                yield p.env.timeout(seconds)
            else:
                yield from p.compute(a, seconds)

    res = simulate(spec(main, [a]), machine=machine(cores=cores), procs=len(jobs))
    assert finish_times(res) == pytest.approx(_reference_ps(jobs, cores), abs=1e-9)
