"""Per-call collective overhead and reduction arithmetic from the machine file (``[collectives]``)."""

from __future__ import annotations

import pytest

from uml2perf_runtime.errors import MachineError
from uml2perf_runtime.platform.machine import Machine
from uml2perf_runtime.platform.network import CollectiveModel


def _machine(**collectives) -> Machine:
    return Machine.from_dict(
        {
            "nodes": 1,
            "cores_per_node": 4,
            "network": {"intra_node": {"latency": 1e-6, "bandwidth": 1e9}},
            "collectives": {"allreduce": "recursive_doubling", **collectives},
        }
    )


def test_without_the_keys_nothing_changes():
    plain = CollectiveModel.for_machine(_machine(), [0, 0])
    # recursive doubling on 2 ranks: one exchange of 1000 B = 1e-6 + 1000 / 1e9 = 2e-6 s
    assert plain.duration("allreduce", 0, 1000.0) == pytest.approx(2e-6)
    assert "overhead" not in _machine().to_dict()["collectives"]


def test_overhead_is_paid_once_per_call_by_every_rank():
    model = CollectiveModel.for_machine(_machine(overhead=5e-6), [0, 0, 0, 0])
    plain = CollectiveModel.for_machine(_machine(), [0, 0, 0, 0])
    with_overhead = model.offsets("allreduce", 0, 1000.0)
    for a, b in zip(with_overhead, plain.offsets("allreduce", 0, 1000.0), strict=True):
        assert a == pytest.approx(b + 5e-6)
    assert model.duration("barrier", 0, 0.0) == pytest.approx(plain.duration("barrier", 0, 0.0) + 5e-6)


def test_reduction_arithmetic_costs_per_byte_combined():
    # recursive doubling on 2 ranks: one step; each rank combines the 1000 B it received
    model = CollectiveModel.for_machine(_machine(reduce_cost=1e-9), [0, 0])
    assert model.duration("allreduce", 0, 1000.0) == pytest.approx(2e-6 + 1000 * 1e-9)
    # a broadcast combines nothing
    plain = CollectiveModel.for_machine(_machine(), [0, 0])
    assert model.duration("bcast", 0, 1000.0) == pytest.approx(plain.duration("bcast", 0, 1000.0))


@pytest.mark.parametrize("bad", [-1e-6, "fast", float("inf")])
def test_bad_values_are_errors(bad):
    with pytest.raises(MachineError, match=r"\[collectives\] overhead must be a number"):
        _machine(overhead=bad)


# -- the reduction's arithmetic is work on the rank's core ------------------------------------------


def _simulate_allreduce(procs: int, cores: int, reduce_cost: float, size: float = 1000.0):
    from uml2perf_runtime import Element, ModelSpec, simulate

    coll = Element(0, "AR", "collective")

    def main(p, v):
        yield from p.allreduce(coll, size=size)

    mach = Machine.from_dict(
        {
            "nodes": 1,
            "cores_per_node": cores,
            "network": {"intra_node": {"latency": 1e-6, "bandwidth": 1e9}},
            "collectives": {"allreduce": "recursive_doubling", "reduce_cost": reduce_cost},
        }
    )
    return simulate(ModelSpec("reduce", "test", (coll,), main=main), mach, procs=procs)


def test_reduction_is_compute_with_the_same_time_when_every_rank_has_a_core():
    # 4 ranks, recursive doubling: 2 rounds of (exchange 1000 B, combine 1000 B)
    r = _simulate_allreduce(4, 4, 1e-9)
    assert r.time == pytest.approx(2 * (2e-6 + 1000 * 1e-9))
    for row in r.per_process:
        assert row["compute"] == pytest.approx(2 * 1000 * 1e-9)  # combining is work on the core
        assert row["communication"] == pytest.approx(2 * 2e-6)
    plain = _simulate_allreduce(4, 4, 0.0)
    assert plain.time == pytest.approx(2 * 2e-6) and plain.per_process[0]["compute"] == 0.0


def test_ranks_that_share_a_core_share_the_reduction():
    # 4 ranks on 2 cores: the network part is the same, the 2 us of combining per rank take
    # twice as long, since two ranks combine on each core at once
    alone = _simulate_allreduce(4, 4, 1e-9)
    crowded = _simulate_allreduce(4, 2, 1e-9)
    assert crowded.time == pytest.approx(alone.time + 2 * 1000 * 1e-9)


# -- reduction costs by the size of the reduced buffer ----------------------------------------------

RANGES = [{"up_to": 4096, "cost": 1e-10}, {"cost": 1e-9}]


def test_a_reduction_is_priced_by_its_sizes_range():
    model = CollectiveModel.for_machine(_machine(reduce_cost=RANGES), [0, 0])
    # recursive doubling on 2 ranks: one exchange, then each rank combines the bytes it received
    assert model.duration("allreduce", 0, 1000.0) == pytest.approx(2e-6 + 1000 * 1e-10)
    assert model.duration("allreduce", 0, 4096.0) == pytest.approx(1e-6 + 4096 / 1e9 + 4096 * 1e-10)
    assert model.duration("allreduce", 0, 8192.0) == pytest.approx(1e-6 + 8192 / 1e9 + 8192 * 1e-9)
    machine = _machine(reduce_cost=RANGES)
    assert machine.reduce_cost == 1e-9 and CollectiveModel.for_machine(machine, [0, 0]).gamma_at(100) == 1e-10
    again = Machine.from_dict(machine.to_dict())
    assert again.reduce_ranges == ((4096.0, 1e-10), (float("inf"), 1e-9))


@pytest.mark.parametrize("size", [1000.0, 65536.0])
def test_the_simulator_and_the_closed_form_take_the_same_range(size):
    from uml2perf_runtime import Element, ModelSpec, simulate
    from uml2perf_runtime.analysis.analytic import evaluate_points

    coll = Element(0, "AR", "collective")

    def main(p, v):
        yield from p.allreduce(coll, size=size)

    spec = ModelSpec("reduce", "test", (coll,), main=main)
    machine = _machine(reduce_cost=RANGES)
    simulated = simulate(spec, machine, procs=2).time
    model = CollectiveModel.for_machine(machine, [0, 0])
    assert simulated == pytest.approx(model.duration("allreduce", 0, size))
    rows, _ = evaluate_points(spec, machine, [{}], procs=2)
    if rows[0] is not None:
        assert rows[0]["time"] == pytest.approx(simulated)


@pytest.mark.parametrize(
    ("ranges", "words"),
    [
        ([{"cost": 1e-9}, {"cost": 1e-10}], "needs 'up_to'"),
        ([{"up_to": 10, "cost": 1e-9}, {"up_to": 20, "cost": 1e-10}], "must not have 'up_to'"),
        ([{"up_to": 10}, {"cost": 1e-10}], "needs 'cost'"),
        ([{"up_to": 20, "cost": 1e-9}, {"up_to": 10, "cost": 1e-9}, {"cost": 1e-9}], "not above"),
        ([{"up_to": 10, "cost": -1.0}, {"cost": 1e-10}], "cost must be seconds per byte"),
        ([], "needs 1 to"),
        ([{"up_to": 10, "cots": 1e-9}, {"cost": 1e-10}], "did you mean 'cost'"),
    ],
)
def test_bad_reduction_ranges_are_named(ranges, words):
    with pytest.raises(MachineError, match=words):
        _machine(reduce_cost=ranges)


def test_reduction_ranges_take_intervals():
    import tomllib

    text = (
        'name = "m"\nnodes = 1\ncores_per_node = 2\n[collectives]\n'
        'reduce_cost = [{ up_to = "4 MiB", cost = { value = 1e-10, low = 8e-11, high = 2e-10 } },'
        " { cost = 3e-10 }]\n"
    )
    machine = Machine.from_dict(tomllib.loads(text))
    assert machine.reduce_ranges == ((4194304.0, 1e-10), (float("inf"), 3e-10))
    assert machine.uncertain.names == ["collectives.reduce_cost[1].cost"]
    drawn = machine.uncertain.draw([2e-10])
    assert CollectiveModel.for_machine(drawn, [0, 0]).gamma_at(1000) == pytest.approx(2e-10)
