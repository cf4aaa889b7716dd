"""The direct routes of rendezvous messages, local costs and parallel regions.

Each is checked twice: that it takes the lean route (what it returns, which process runs a
thread, which context a thread gets) and that it computes exactly what the general path
(``GeneralContext``) computes, to the last bit, including the cases the lean route hands back
(a node that starts sharing its cores during a local cost, a thread's rendezvous send, bodies of
hand-edited modules that are not generator functions).
"""

from __future__ import annotations

from types import GeneratorType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runtime_helpers import elements, machine, spec
from test_runtime_fastpath import build, machines, steps
from test_runtime_fastpath import outcome as fastpath_outcome

from uml2perf_runtime import Link
from uml2perf_runtime.engine.context import Context
from uml2perf_runtime.engine.simulation import Simulation
from uml2perf_runtime.errors import DeadlockError, SimulationError

C, S, R, PAR, T = elements("C", "S", "R", "PAR", "T")
ELEMS = [C, S, R, PAR, T]


def _machine(**kwargs: Any) -> Any:
    options = {"intra_node": Link(1e-6, 1e10), "inter_node": Link(5e-5, 1.25e7), "eager_limit": 4096}
    return machine(**{**options, **kwargs})


def outcome(main: Any, mach: Any, procs: int, general: bool) -> Any:
    """Everything a run predicts, with every context's statistics and the number of events."""
    sim = Simulation(spec(main, ELEMS), mach, procs, general=general)
    try:
        results = sim.run()
    except SimulationError as exc:
        return ("error", type(exc).__name__, str(exc))
    stats = [
        (ctx.calls, ctx.incl, ctx.child, ctx.waits, ctx.totals, ctx.thread_totals, ctx.oversubscribed)
        for ctx in sim.contexts
    ]
    data = results.to_dict()
    data.pop("wall_time", None)  # seconds of this machine, not a prediction
    return data, stats, sim.events


def agree(main: Any, mach: Any, procs: int) -> Any:
    direct = outcome(main, mach, procs, general=False)
    assert direct == outcome(main, mach, procs, general=True)
    assert direct[0] != "error"
    return direct


def rendezvous_ring(rounds: int, size: int, cost: float = 0.0) -> Any:
    def main(p: Any, v: Any) -> Any:
        n = p.nprocs
        for r in range(rounds):
            yield from p.compute(C, 0.001 * (1 + (p.pid + r) % 3))
            if p.pid % 2 == 0:
                yield from p.send(S, (p.pid + 1) % n, size, 0, cost)
                yield from p.recv(R, (p.pid - 1) % n, size, 0, cost)
            else:
                yield from p.recv(R, (p.pid - 1) % n, size, 0, cost)
                yield from p.send(S, (p.pid + 1) % n, size, 0, cost)

    return main


@pytest.mark.parametrize("procs", [2, 4, 6])
@pytest.mark.parametrize("size", [100_000, 100_000.0])
def test_rendezvous_ring_agrees_with_the_general_path(procs: int, size: float) -> None:
    agree(rendezvous_ring(5, size), _machine(nodes=2, cores=2), procs)


def test_rendezvous_send_and_receive_of_a_process_return_tuples() -> None:
    seen: list[type] = []

    def main(p: Any, v: Any) -> Any:
        for _ in range(3):  # the first call checks the site, the next ones use it
            op = p.send(S, 1, 100_000) if p.pid == 0 else p.recv(R, 0, 100_000)
            seen.append(type(op))
            yield from op

    agree(main, _machine(nodes=1, cores=2), 2)
    seen.clear()  # the general path's generators
    Simulation(spec(main, ELEMS), _machine(nodes=1, cores=2), 2).run()
    assert set(seen) == {tuple}


def test_a_threads_rendezvous_send_takes_the_general_path_and_agrees() -> None:
    def body(t: Any, v: Any) -> Any:
        if t.pid == 0:
            yield from t.send(S, 1, 100_000, t.tid)
        else:
            yield from t.recv(R, 0, 100_000, t.tid)

    def main(p: Any, v: Any) -> Any:
        yield from p.parallel(PAR, 2, body)

    agree(main, _machine(nodes=2, cores=2), 2)


@pytest.mark.parametrize("size", [64, 100_000])
def test_local_costs_agree_with_the_general_path(size: int) -> None:
    agree(rendezvous_ring(4, size, cost=0.0005), _machine(nodes=2, cores=2), 4)


def test_a_local_cost_of_a_checked_site_needs_no_argument_checks_but_its_cost_is_still_checked() -> None:
    def main(p: Any, v: Any) -> Any:
        for cost in (0.001, 0.001, -1.0):
            if p.pid == 0:
                yield from p.send(S, 1, 8, 0, cost)
            else:
                yield from p.recv(R, 0, 8, 0, 0.0)

    direct = outcome(main, _machine(nodes=1, cores=2), 2, general=False)
    assert direct == outcome(main, _machine(nodes=1, cores=2), 2, general=True)
    assert direct[0] == "error" and "-1.0" in direct[2] and "'S'" in direct[2]


def test_a_node_that_starts_sharing_its_cores_during_a_local_cost_agrees() -> None:
    """Process 0 spends a send's local cost while threads of process 1 fill the node's one core."""

    def body(t: Any, v: Any) -> Any:
        yield from t.compute(T, 0.002)

    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.send(S, 1, 64, 0, 0.003)
            yield from p.recv(R, 1, 64, 0, 0.002)
        else:
            yield from p.compute(C, 0.001)
            yield from p.parallel(PAR, 2, body)
            yield from p.recv(R, 0, 64, 0, 0.001)
            yield from p.send(S, 0, 64, 0, 0.0)

    direct = agree(main, _machine(nodes=1, cores=1), 2)
    assert any(ctx_stats[6] > 0.0 for ctx_stats in direct[1])  # some computing was slowed by sharing


def test_threads_of_a_generator_body_start_on_its_generator() -> None:
    runs: list[Any] = []

    def body(t: Any, v: Any) -> Any:
        yield from t.compute(T, 0.001 * (1 + t.tid))

    def main(p: Any, v: Any) -> Any:
        for _ in range(3):
            yield from p.parallel(PAR, 3, body)

    sim = Simulation(spec(main, ELEMS), _machine(nodes=1, cores=4), 1)
    start = sim.start_generator

    def spy(ctx: Any, gen: Any) -> Any:
        runs.append((ctx, type(gen), ctx.tid))
        return start(ctx, gen)

    sim.start_generator = spy  # type: ignore[method-assign]
    sim.run()
    assert len(runs) == 9 and {kind for _, kind, _ in runs} == {GeneratorType}
    assert [tid for _, _, tid in runs] == [0, 1, 2] * 3
    # the second and third regions' threads are the first region's contexts, made again
    first = {id(ctx) for ctx, _, _ in runs[:3]}
    assert {id(ctx) for ctx, _, _ in runs[3:6]} == first == {id(ctx) for ctx, _, _ in runs[6:]}
    agree(main, _machine(nodes=1, cores=4), 2)


def test_bodies_of_hand_edited_modules_that_are_no_generator_functions_still_run() -> None:
    def returns_events(t: Any, v: Any) -> Any:
        return t.compute(T, 0.001 * (1 + t.tid))  # a tuple of events on the direct route

    def returns_nothing(t: Any, v: Any) -> None:
        v.touched = True

    def generator(t: Any, v: Any) -> Any:
        yield from t.compute(T, 0.001 * (1 + t.tid))

    def main(p: Any, v: Any) -> Any:
        yield from p.parallel(PAR, 2, returns_nothing)
        yield from p.parallel(PAR, 2, returns_events)
        yield from p.parallel(PAR, 2, generator)

    data, _, _ = agree(main, _machine(nodes=1, cores=2), 1)
    assert data["time"] == pytest.approx(0.004)


def test_a_reused_thread_context_starts_clean_after_returning_from_a_composite() -> None:
    """A thread whose code returns between ``enter`` and ``leave`` leaves nothing to the next."""

    def body(t: Any, v: Any) -> Any:
        t.enter(C)
        yield from t.compute(T, 0.001)
        if t.tid == 0:
            return
        t.leave(C)

    def main(p: Any, v: Any) -> Any:
        for _ in range(2):
            yield from p.parallel(PAR, 2, body)

    agree(main, _machine(nodes=1, cores=2), 1)


def test_a_deadlock_inside_a_parallel_region_names_the_region() -> None:
    def body(t: Any, v: Any) -> Any:
        yield from t.recv(R, 0, 8, 5)  # nobody sends with tag 5

    def main(p: Any, v: Any) -> Any:
        yield from p.parallel(PAR, 2, body)

    with pytest.raises(DeadlockError) as info:
        Simulation(spec(main, ELEMS), _machine(nodes=1, cores=2), 1).run()
    assert "the 2 threads of parallel region 'PAR'" in str(info.value)


def _fresh_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every thread gets a new context, as before contexts were made again."""
    monkeypatch.setattr(Context, "thread_ended", lambda self: None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=st.lists(steps, min_size=1, max_size=6), mach=machines, procs=st.integers(1, 5))
def test_threads_made_again_predict_what_new_threads_predict(program: Any, mach: Any, procs: int) -> None:
    model = build(program)
    again = fastpath_outcome(model, mach, procs, general=False)
    with pytest.MonkeyPatch.context() as patch:
        _fresh_threads(patch)
        assert fastpath_outcome(model, mach, procs, general=False) == again


def test_a_thread_made_again_outside_a_sped_up_container_runs_at_its_own_speed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A what-if run keeps a thread's inherited factor per context: a context made again for a
    region outside the sped-up container must not keep the factor of its last region."""

    def body(t: Any, v: Any) -> Any:
        yield from t.compute(T, 0.001 * (1 + t.tid))

    def main(p: Any, v: Any) -> Any:
        p.enter(C)
        yield from p.parallel(PAR, 2, body)
        p.leave(C)
        yield from p.parallel(PAR, 2, body)

    def run() -> Any:
        sim = Simulation(spec(main, ELEMS), _machine(nodes=1, cores=2), 1)
        sim.apply_speedups({"C": 2.0})
        return sim.run().to_dict()["time"]

    again = run()
    _fresh_threads(monkeypatch)
    assert run() == again == pytest.approx(0.001 + 0.002)


@pytest.mark.parametrize("sped_up", ["S", "R", "C"])
def test_a_sped_up_local_cost_is_scaled_on_the_direct_route_as_on_the_general_path(sped_up: str) -> None:
    main = rendezvous_ring(3, 64, cost=0.002)

    def run(general: bool) -> Any:
        sim = Simulation(spec(main, ELEMS), _machine(nodes=1, cores=4), 4, general=general)
        sim.apply_speedups({sped_up: 2.0})
        return sim.run().to_dict()

    direct = run(False)
    direct.pop("wall_time", None)
    general = run(True)
    general.pop("wall_time", None)
    assert direct == general
    plain = Simulation(spec(main, ELEMS), _machine(nodes=1, cores=4), 4).run().to_dict()["time"]
    assert direct["time"] < plain
