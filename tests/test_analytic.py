"""The analytic fast path agrees with the simulator and refuses what it cannot evaluate.

Two kinds of models: small modules written by hand in the generated-module
contract (so each control-flow shape is tested on its own), and the bundled
samples and synthetic XMI models run through the real reader and generator.
"""

from __future__ import annotations

import itertools
import textwrap
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from uml2perf_runtime import Machine, simulate
from uml2perf_runtime.analysis.analytic import (
    Batch,
    NonUniform,
    NotAnalytic,
    batch,
    evaluate,
    evaluate_points,
    is_analytic,
)
from uml2perf_runtime.errors import ParameterError

REPO = Path(__file__).resolve().parent.parent
CLUSTER = Machine(nodes=16, cores_per_node=4)

_counter = itertools.count()


def module(body: str, parameters: str = "()", elements: str = "") -> Any:
    """Compile a model module written in the generated-module contract; return its MODEL."""
    source = textwrap.dedent(
        """
        from uml2perf_runtime import model as rt
        from uml2perf_runtime.functions import ceil, floor, log2, sqrt, min, max, int, float
        E = [rt.Element(i, f"E{i}", kind, f"_e{i}", i + 1) for i, kind in enumerate(KINDS)]
        """
    )
    source = f"KINDS = {elements or repr(('action',) * 8)}\n" + source + textwrap.dedent(body)
    source += (
        f"\nMODEL = rt.ModelSpec(name='m', source='m.uml', elements=E, init=init_globals, "
        f"main=activity_main, parameters={parameters})\n"
    )
    mod = types.ModuleType(f"analytic_test_model_{next(_counter)}")
    exec(compile(source, mod.__name__, "exec"), mod.__dict__)  # noqa: S102 - test code
    return mod.MODEL


def simulated(spec: Any, machine: Machine, point: dict[str, Any], **fixed: Any) -> Any:
    params = {k: v for k, v in point.items() if k not in ("procs", "nodes")}
    return simulate(
        spec, machine, procs=point.get("procs"), nodes=point.get("nodes"), overrides={**fixed, **params}
    )


def assert_agrees(
    spec: Any, machine: Machine, grid: dict[str, list[Any]], **fixed: Any
) -> list[dict[str, Any]]:
    """Analytic rows equal the simulator's time and per-process means to 1e-9 relative."""
    table = evaluate(spec, machine, grid, overrides=fixed)
    assert len(table) == int(np.prod([len(v) for v in grid.values()]))
    for row in table.rows:
        point = {k: row[k] for k in grid}
        res = simulated(spec, machine, point, **fixed)
        assert row["time"] == pytest.approx(res.time, rel=1e-9, abs=1e-15), point
        per = res.to_dict()["per_process"]
        for ours, theirs in (("compute", "compute"), ("comm", "communication"), ("wait", "wait")):
            mean = sum(p[theirs] for p in per) / len(per)
            assert row[ours] == pytest.approx(mean, rel=1e-9, abs=1e-12), (point, ours)
        assert row["method"] == "analytic"
    return table.rows


BSP = """
def init_globals(p, v):
    v.NAT = p.param("NAT", 32)
    v.STEPS = p.param("STEPS", 3)
    v.PNAT = ceil(v.NAT / p.nprocs)

def activity_main(p, v):
    yield from p.compute(E[0], 1e-3 * log2(p.nprocs + 1))
    p.enter(E[1])
    for _ in range(v.STEPS):
        yield from p.compute(E[2], v.PNAT * 2e-3 * (1 + (p.pid % 3) / 4))
        yield from p.allreduce(E[3], 8 * v.NAT, 1e-5)
        yield from p.bcast(E[4], 0, 1024 * v.STEPS)
    p.leave(E[1])
    yield from p.barrier(E[5], 2e-6)
"""


def test_uniform_control_flow_is_evaluated_in_one_vector_run() -> None:
    spec = module(BSP, "(('NAT', 32), ('STEPS', 3))")
    rows = assert_agrees(spec, CLUSTER, {"procs": [1, 3, 8, 64], "NAT": [32, 64, 100]})
    assert [r["procs"] for r in rows[:4]] == [1, 1, 1, 3]  # grid order: last key fastest


def test_loop_count_that_differs_across_points_splits_the_batch() -> None:
    spec = module(BSP, "(('NAT', 32), ('STEPS', 3))")
    assert_agrees(spec, CLUSTER, {"procs": [4, 16], "STEPS": [1, 2, 5], "NAT": [8, 64]})


def test_branches_on_rank_and_parameter() -> None:
    spec = module(
        """
        def init_globals(p, v):
            v.N = p.param("N", 10)
            v.GV = p.param("GV", 0)

        def activity_main(p, v):
            v.GV = 1 if v.N > 20 else 0
            if p.pid == 0:
                yield from p.compute(E[0], 0.5)
            elif p.pid % 2 == 1 and v.GV == 1:
                yield from p.compute(E[1], v.N * 1e-3)
            else:
                yield from p.compute(E[2], sqrt(v.N) * 1e-2)
            yield from p.reduce(E[3], p.nprocs - 1, 64 * v.N, 1e-4)
            yield from p.compute(E[4], max(v.N, 15) * 1e-3 / (p.pid + 1))
            yield from p.gather(E[5], 0, 16, 0.0)
            yield from p.scatter(E[6], 1 % p.nprocs, 16, 0.0)
            yield from p.alltoall(E[7], 32, 0.0)
        """,
        "(('N', 10), ('GV', 0))",
    )
    assert_agrees(spec, CLUSTER, {"procs": [1, 2, 5, 12], "N": [10, 30]})


def test_allgather_and_nodes_sweep_use_the_network_model() -> None:
    spec = module(
        """
        def init_globals(p, v):
            v.SIZE = p.param("SIZE", 1000.0)

        def activity_main(p, v):
            yield from p.compute(E[0], 1e-3 * (p.node + 1))
            yield from p.allgather(E[1], v.SIZE)
            yield from p.allreduce(E[2], v.SIZE * 100)
        """,
        "(('SIZE', 1000.0),)",
    )
    gescher = Machine.from_toml(REPO / "samples" / "machines" / "gescher.toml")
    assert_agrees(spec, gescher, {"nodes": [1, 2, 4], "procs": [3, 4], "SIZE": [10.0, 1e5]})


def test_reductions_are_compute_in_both_paths() -> None:
    """A machine's reduce_cost is work on each rank's core: analytic and simulated agree on it."""
    spec = module(BSP, "(('NAT', 32), ('STEPS', 3))")
    gescher = Machine.from_toml(REPO / "samples" / "machines" / "gescher.toml")
    reducing = Machine.from_dict({**gescher.to_dict(), "collectives": {"reduce_cost": 1e-8}})
    grid = {"nodes": [1, 2], "procs": [4], "NAT": [32, 640]}
    rows = assert_agrees(spec, reducing, grid)
    plain = evaluate(spec, gescher, grid).rows
    assert all(r["compute"] > q["compute"] for r, q in zip(rows, plain, strict=True))


def test_while_loop_and_code_fragments() -> None:
    spec = module(
        """
        def init_globals(p, v):
            v.TOL = p.param("TOL", 0.01)
            v.err = 1.0

        def activity_main(p, v):
            p.enter(E[0])
            while v.err > v.TOL:
                p.iteration(E[0])
                yield from p.compute(E[1], 1e-3 + p.pid * 1e-4)
                yield from p.allreduce(E[2], 8)
                v.err = v.err / 2
            p.leave(E[0])
        """,
        "(('TOL', 0.01),)",
    )
    rows = assert_agrees(spec, CLUSTER, {"TOL": [0.1, 0.01, 1e-5], "procs": [2, 6]})
    assert rows[0]["time"] < rows[-1]["time"]


def test_speed_divides_costs() -> None:
    spec = module(BSP, "(('NAT', 32), ('STEPS', 3))")
    fast = Machine(nodes=4, cores_per_node=4, speed=2.5)
    assert_agrees(spec, fast, {"procs": [8]}, NAT=50)


def test_textual_values_take_the_parameter_type() -> None:
    spec = module(BSP, "(('NAT', 32), ('STEPS', 3))")
    table = evaluate(spec, CLUSTER, {"NAT": ["40", "48"]}, procs=4)
    assert [row["NAT"] for row in table.rows] == [40, 48]
    with pytest.raises(ParameterError, match="NAT"):
        evaluate(spec, CLUSTER, {"NAT": ["many"]}, procs=4)
    with pytest.raises(ParameterError, match="its parameters are: NAT, STEPS"):
        evaluate(spec, CLUSTER, {"NATS": [1]}, procs=4)


# ------------------------------------------------------------------------------ refusals


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("yield from p.send(E[0], (p.pid + 1) % p.nprocs, 8, 0, 0.0)", "send"),
        ("yield from p.compute(E[0], p.random())", "random"),
        ("yield from p.compute(E[0], -1.0)", "negative"),
        ("yield from (p.barrier(E[0]) if p.pid else p.allreduce(E[1], 8))", "different collectives"),
        ("yield from p.bcast(E[0], p.pid, 8)", "roots"),
        ("yield from (p.barrier(E[0]) if p.pid else p.compute(E[1], 1.0))", "finish while others wait"),
    ],
)
def test_what_needs_the_simulator_is_refused(body: str, reason: str) -> None:
    kinds = "('send', 'barrier') + ('action',) * 6" if "send" in body else ""
    spec = module(
        f"""
        def init_globals(p, v):
            pass

        def activity_main(p, v):
            {body}
        """,
        elements=kinds,
    )
    with pytest.raises(NotAnalytic, match=reason):
        evaluate(spec, CLUSTER, {"procs": [2, 3]})
    assert not is_analytic(spec, CLUSTER, procs=2)


def test_contention_is_left_to_the_simulator() -> None:
    spec = module(BSP, "(('NAT', 32), ('STEPS', 3))")
    small = Machine(nodes=1, cores_per_node=2)
    rows, reasons = evaluate_points(spec, small, [{"procs": 2}, {"procs": 4}, {"procs": 1}])
    assert rows[0] is not None and rows[2] is not None and rows[1] is None
    assert reasons and "share a node of 2 cores" in reasons[0]
    assert is_analytic(spec, small, procs=2) and not is_analytic(spec, small, procs=3)


def test_the_model_module_is_not_modified() -> None:
    spec = module(BSP, "(('NAT', 32), ('STEPS', 3))")
    before = dict(spec.main.__globals__)
    evaluate(spec, CLUSTER, {"NAT": [10, 20]}, procs=4)
    assert spec.main.__globals__ == before


def test_batch_converts_only_uniform_values() -> None:
    same = batch(np.full((3, 1), 7))
    assert int(same) == 7 and bool(same) and float(same) == 7.0 and list(range(same)) == list(range(7))
    rows = batch(np.array([[1], [2], [1]]))
    with pytest.raises(NonUniform) as info:
        bool(rows)
    assert info.value.groups == [[0, 2], [1]] and not info.value.across_processes
    with pytest.raises(NonUniform) as info:
        int(batch(np.arange(4)[None, :]))
    assert info.value.across_processes
    assert isinstance(rows * 2.0, Batch)
    with pytest.raises(TypeError):
        range(batch(np.full((2, 1), 2.5)))


# ------------------------------------------------------------------------------ real models


def spec_of(path: Path) -> Any:
    from uml2perf.api import load_spec

    return load_spec(path)


@pytest.mark.parametrize("procs", range(1, 9))
def test_prophet_sample_agrees_with_simulation(procs: int) -> None:
    spec = spec_of(REPO / "samples" / "prophet.uml")
    gescher = Machine.from_toml(REPO / "samples" / "machines" / "gescher.toml")
    assert is_analytic(spec, gescher, procs=procs)
    assert_agrees(spec, gescher, {"procs": [procs], "nodes": [2, 16]})


def test_synthetic_bsp_model_agrees_with_simulation(tmp_path: Path) -> None:
    import synthetic

    path = synthetic.write_model(
        tmp_path / "bsp.uml",
        synthetic.bsp_model(steps=2, collectives=("allreduce", "bcast", "barrier", "alltoall")),
    )
    spec = spec_of(path)
    assert_agrees(spec, CLUSTER, {"procs": [1, 4, 7, 16], "NAT": [16, 64], "STEPS": [1, 3]})


def test_synthetic_ring_is_not_analytic(tmp_path: Path) -> None:
    import synthetic

    spec = spec_of(synthetic.write_model(tmp_path / "ring.uml", synthetic.ring_model(3)))
    assert not is_analytic(spec, CLUSTER, procs=4)
    rows, reasons = evaluate_points(spec, CLUSTER, [{"procs": 4}])
    assert rows == [None] and "send" in reasons[0]


PREFIX = """
def init_globals(p, v):
    v.SIZE = p.param("SIZE", 1024)

def activity_main(p, v):
    yield from p.compute(E[0], 1e-4 * (1 + p.pid % 2))
    yield from p.reduce_scatter(E[1], v.SIZE)
    yield from p.scan(E[2], v.SIZE, 1e-6)
    yield from p.exscan(E[3], 8)
"""


def test_reduce_scatter_and_prefix_reductions_agree_with_simulation() -> None:
    """The new collectives go the schedules' way in both paths, with and without reduce_cost."""
    spec = module(PREFIX, "(('SIZE', 1024),)")
    gescher = Machine.from_toml(REPO / "samples" / "machines" / "gescher.toml")
    reducing = Machine.from_dict({**gescher.to_dict(), "collectives": {"reduce_cost": 1e-9}})
    grid = {"nodes": [2, 4], "procs": [3, 4, 8], "SIZE": [8.0, 65536.0]}
    assert_agrees(spec, gescher, grid)
    assert_agrees(spec, reducing, grid)
