"""The direct route of the runtime computes exactly what the general path computes.

``Context`` takes the direct route for compute, eager sends, matched receives and collectives;
``GeneralContext`` runs every operation as a generator.  On random models (random sequences of
compute, messages, collectives and thread regions over random process counts and machines) the
two must agree to the last bit: predicted time, per-process figures, every element's statistics,
or the same error.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runtime_helpers import elements, machine, spec

from uml2perf_runtime import Link
from uml2perf_runtime.engine.simulation import Simulation
from uml2perf_runtime.errors import SimulationError

KINDS = ("barrier", "bcast", "reduce", "allreduce", "gather", "scatter", "allgather", "alltoall")
NAMES = ("C", "S", "R", "IS", "IR", "W", "COLL", "PAR", "T", "LOOP")

#: One step of a random program: every process runs the same steps, with pid-dependent values.
steps = st.one_of(
    st.tuples(st.just("compute"), st.floats(0.0, 2.0), st.integers(0, 3)),
    st.tuples(st.just("ring"), st.integers(1, 3), st.sampled_from([0, 64, 1024, 100_000]), st.integers(0, 2)),
    st.tuples(
        st.just("ring_cost"), st.integers(1, 3), st.sampled_from([0, 512, 200_000]), st.floats(0.0, 0.5)
    ),
    st.tuples(st.just("nonblocking"), st.integers(1, 3), st.sampled_from([8, 200_000])),
    st.tuples(st.just("wildcard"), st.sampled_from([16, 300_000])),
    st.tuples(
        st.just("collective"), st.sampled_from(KINDS), st.integers(0, 7), st.sampled_from([0, 8, 5000])
    ),
    st.tuples(st.just("threads"), st.integers(1, 4), st.floats(0.0, 1.0)),
    st.tuples(st.just("loop"), st.integers(0, 3), st.floats(0.0, 0.3)),
    st.tuples(
        st.just("rounds"),
        st.integers(1, 6),
        st.integers(1, 3),
        st.lists(st.sampled_from([0, 8, 8.0, 1024, 1024.0, 100_000]), min_size=1, max_size=3),
        st.floats(0.0, 0.2),
    ),
)


def build(program: list[tuple[Any, ...]]) -> Any:
    elems = elements(*NAMES)
    e = dict(zip(NAMES, elems, strict=True))

    def body(t: Any, v: Any) -> Any:
        yield from t.compute(e["T"], v.cost * (1 + t.tid))

    def main(p: Any, v: Any) -> Any:
        n = p.nprocs
        for step in program:
            kind = step[0]
            if kind == "compute":
                yield from p.compute(e["C"], step[1] * (1 + (p.pid * 7 + step[2]) % 5) / 7)
            elif kind in ("ring", "ring_cost"):
                k, size = step[1], step[2]
                tag = step[3] if kind == "ring" else 0
                cost = step[3] if kind == "ring_cost" else 0.0
                if p.pid % 2 == 0:
                    yield from p.send(e["S"], (p.pid + k) % n, size, tag, cost)
                    yield from p.recv(e["R"], (p.pid - k) % n, size, tag, cost)
                else:
                    yield from p.recv(e["R"], source=(p.pid - k) % n, size=size, tag=tag, cost=cost)
                    yield from p.send(e["S"], dest=(p.pid + k) % n, size=size, tag=tag, cost=cost)
            elif kind == "nonblocking":
                k, size = step[1], step[2]
                yield from p.irecv(e["IR"], (p.pid - k) % n, size, 3, 0.0)
                yield from p.isend(e["IS"], (p.pid + k) % n, size, 3, 0.0)
                yield from p.wait(e["W"], None, 0.0)
            elif kind == "wildcard":
                size = step[1]
                if p.pid == 0:
                    for _ in range(n - 1):
                        yield from p.recv(e["R"], -1, size, -1, 0.0)
                else:
                    yield from p.send(e["S"], 0, size, p.pid % 3, 0.0)
            elif kind == "collective":
                name, root, size = step[1], step[2] % n, step[3]
                if name == "barrier":
                    yield from p.barrier(e["COLL"])
                elif name in ("bcast", "reduce", "gather", "scatter"):
                    yield from getattr(p, name)(e["COLL"], root=root, size=size * (1 + p.pid % 2), cost=0.0)
                else:
                    yield from getattr(p, name)(e["COLL"], size=size, cost=0.0)
            elif kind == "threads":
                v.cost = step[2]
                yield from p.parallel(e["PAR"], step[1], body)
            elif kind == "rounds":
                # the same call sites again and again: sizes of either type, two tags, compute between
                rounds, k, sizes, work = step[1], step[2], step[3], step[4]
                for r in range(rounds):
                    size = sizes[r % len(sizes)]
                    tag = r % 2
                    yield from p.compute(e["C"], work * (1 + p.pid % 2))
                    # every third send has a local cost: the general path matches a parked receive
                    yield from p.send(e["S"], (p.pid + k) % n, size, tag, 0.01 if r % 3 == 2 else 0.0)
                    yield from p.recv(e["R"], (p.pid - k) % n, size, tag, 0.0)
            elif kind == "loop":
                p.enter(e["LOOP"])
                for _ in range(step[1]):
                    p.iteration(e["LOOP"])
                    yield from p.compute(e["C"], step[2] * (1 + p.pid % 3))
                p.leave(e["LOOP"])

    return spec(main, elems)


def outcome(model: Any, mach: Any, procs: int, general: bool) -> Any:
    sim = Simulation(model, mach, procs, general=general)
    try:
        results = sim.run()
    except SimulationError as exc:
        return ("error", type(exc).__name__, str(exc))
    stats = [
        (
            ctx.calls,
            ctx.incl,
            ctx.child,
            ctx.waits,
            ctx.iters,
            ctx.totals,
            ctx.thread_totals,
            ctx.oversubscribed,
            ctx.finish_time,
        )
        for ctx in sim.contexts
    ]
    data = results.to_dict()
    data.pop("wall_time", None)  # seconds of this machine, not a prediction
    return data, stats, sim.events


machines = st.builds(
    lambda nodes, cores, speed, eager, load: machine(
        nodes=nodes,
        cores=cores,
        speed=speed,
        eager_limit=eager,
        background_load=load,
        intra_node=Link(1e-6, 1e10),
        inter_node=Link(5e-5, 1.25e7),
    ),
    st.integers(1, 3),
    st.integers(1, 4),
    st.sampled_from([1.0, 0.5, 3.0]),
    st.sampled_from([None, 0, 4096]),
    st.sampled_from([0.0, 0.0, 0.5]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=st.lists(steps, min_size=1, max_size=8), mach=machines, procs=st.integers(1, 9))
def test_direct_route_and_general_path_agree(program: list[tuple[Any, ...]], mach: Any, procs: int) -> None:
    model = build(program)
    assert outcome(model, mach, procs, general=False) == outcome(model, mach, procs, general=True)


def test_ring_takes_the_direct_route_without_generators() -> None:
    """A compute, an eager send and a receive return tuples, not generators, on the direct route."""
    c, s, r = elements("C", "S", "R")
    seen: list[type] = []

    def main(p: Any, v: Any) -> Any:
        for op in (
            p.compute(c, 1.0),
            p.send(s, (p.pid + 1) % p.nprocs, 8),
            p.recv(r, (p.pid - 1) % p.nprocs, 8),
        ):
            seen.append(type(op))
            yield from op

    Simulation(spec(main, [c, s, r]), machine(nodes=1, cores=2), 2).run()
    assert set(seen) == {tuple}
