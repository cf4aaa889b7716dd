"""Cost formulas of the network model, checked against hand-computed closed forms.

Notation: alpha = latency, beta = 1/bandwidth, p processes, n bytes, L = ceil(log2 p).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uml2perf_runtime.platform.machine import DEFAULT_EAGER_LIMIT
from uml2perf_runtime.platform.network import (
    ALGORITHMS,
    COLLECTIVE_KINDS,
    CollectiveModel,
    ceil_log2,
    resolve_algorithm,
    schedule,
    transfer_time,
)

A_IN, B_IN = 1e-6, 1e-10  # intra-node: 1 us, 10 GB/s
A_EX, B_EX = 2e-5, 1e-9  # inter-node: 20 us, 1 GB/s
N = 1000.0
PROCS = (1, 2, 3, 8, 64)


@dataclass(frozen=True)
class Link:
    latency: float
    bandwidth: float


def two_level(a: int, b: int) -> Link:
    return Link(A_IN, 1 / B_IN) if a == b else Link(A_EX, 1 / B_EX)


def single_node(p: int, algorithms: dict[str, str] | None = None, gamma: float = 0.0) -> CollectiveModel:
    return CollectiveModel([0] * p, two_level, algorithms, gamma)


def blocks(p: int, ppn: int, algorithms: dict[str, str] | None = None) -> CollectiveModel:
    return CollectiveModel([r // ppn for r in range(p)], two_level, algorithms)


def cost(kind: str, algorithm: str, p: int, n: float = N, gamma: float = 0.0, root: int = 0) -> float:
    return single_node(p, {kind: algorithm}, gamma).duration(kind, root, n)


def log2_floor_pow2(p: int) -> tuple[int, int]:
    p2 = 1 << (p.bit_length() - 1)
    return p2, p2.bit_length() - 1


# -- point to point ------------------------------------------------------------------------------


def test_transfer_time_is_latency_plus_size_over_bandwidth() -> None:
    assert transfer_time(1e-6, 1e9, 1000) == pytest.approx(1e-6 + 1e-6)
    assert transfer_time(5e-6, 1e9, 0) == 5e-6
    assert transfer_time(5e-6, math.inf, 10**9) == 5e-6
    assert DEFAULT_EAGER_LIMIT == 65536


@pytest.mark.parametrize("p, expected", [(1, 0), (2, 1), (3, 2), (4, 2), (5, 3), (8, 3), (64, 6), (65, 7)])
def test_ceil_log2(p: int, expected: int) -> None:
    assert ceil_log2(p) == expected


# -- every collective at p = 1 ------------------------------------------------------------------


@pytest.mark.parametrize("kind", COLLECTIVE_KINDS)
def test_single_process_collectives_cost_nothing(kind: str) -> None:
    for algorithm in ALGORITHMS[kind]:
        assert single_node(1, {kind: algorithm}).offsets(kind, 0, N) == [0.0]


# -- closed forms on one node ---------------------------------------------------------------------


@pytest.mark.parametrize("p", PROCS)
def test_barrier_formulas(p: int) -> None:
    L = ceil_log2(p)
    assert cost("barrier", "dissemination", p) == pytest.approx(L * A_IN)
    assert cost("barrier", "tree", p) == pytest.approx(2 * L * A_IN)


@pytest.mark.parametrize("p", PROCS)
def test_bcast_formulas(p: int) -> None:
    L = ceil_log2(p)
    assert cost("bcast", "binomial", p) == pytest.approx(L * (A_IN + N * B_IN))
    assert cost("bcast", "linear", p) == pytest.approx((p - 1) * (A_IN + N * B_IN))
    chunk = N / p
    expected = L * A_IN + (p - 1) * chunk * B_IN + (p - 1) * (A_IN + chunk * B_IN)
    assert cost("bcast", "scatter_allgather", p) == pytest.approx(expected)


@pytest.mark.parametrize("p", PROCS)
def test_reduce_formulas_with_and_without_reduction_time(p: int) -> None:
    L = ceil_log2(p)
    gamma = 2e-9
    assert cost("reduce", "binomial", p) == pytest.approx(L * (A_IN + N * B_IN))
    assert cost("reduce", "binomial", p, gamma=gamma) == pytest.approx(L * (A_IN + N * B_IN + N * gamma))
    assert cost("reduce", "linear", p, gamma=gamma) == pytest.approx((p - 1) * (A_IN + N * B_IN + N * gamma))


@pytest.mark.parametrize("p", PROCS)
def test_allreduce_formulas(p: int) -> None:
    p2, levels = log2_floor_pow2(p)
    fold = 0 if p == p2 else 1
    unit = A_IN + N * B_IN
    assert cost("allreduce", "recursive_doubling", p) == pytest.approx((levels + 2 * fold) * unit)
    gamma = 1e-9
    assert cost("allreduce", "recursive_doubling", p, gamma=gamma) == pytest.approx(
        (levels + 2 * fold) * unit + (levels + fold) * N * gamma
    )
    ring = 2 * (p - 1) * (A_IN + N / p * B_IN)
    assert cost("allreduce", "ring", p) == pytest.approx(ring)
    raben = 2 * fold * unit + 2 * levels * A_IN + 2 * (p2 - 1) / p2 * N * B_IN
    assert cost("allreduce", "rabenseifner", p) == pytest.approx(raben)
    L = ceil_log2(p)
    assert cost("allreduce", "reduce_bcast", p) == pytest.approx(2 * L * unit)


@pytest.mark.parametrize("p", PROCS)
@pytest.mark.parametrize("kind", ["gather", "scatter"])
def test_gather_scatter_formulas_use_per_process_blocks(kind: str, p: int) -> None:
    L = ceil_log2(p)
    assert cost(kind, "binomial", p) == pytest.approx(L * A_IN + (p - 1) * N * B_IN)
    assert cost(kind, "linear", p) == pytest.approx((p - 1) * (A_IN + N * B_IN))


@pytest.mark.parametrize("p", PROCS)
def test_allgather_formulas(p: int) -> None:
    L = ceil_log2(p)
    assert cost("allgather", "ring", p) == pytest.approx((p - 1) * (A_IN + N * B_IN))
    assert cost("allgather", "bruck", p) == pytest.approx(L * A_IN + (p - 1) * N * B_IN)
    # recursive doubling on a power of two; Bruck (same cost shape) otherwise
    assert cost("allgather", "recursive_doubling", p) == pytest.approx(L * A_IN + (p - 1) * N * B_IN)


@pytest.mark.parametrize("p", PROCS)
def test_alltoall_formulas(p: int) -> None:
    L = ceil_log2(p)
    assert cost("alltoall", "pairwise", p) == pytest.approx((p - 1) * (A_IN + N * B_IN))
    blocks_per_round = [sum(1 for i in range(p) if i >> k & 1) for k in range(L)]
    expected = sum(A_IN + b * N * B_IN for b in blocks_per_round)
    assert cost("alltoall", "bruck", p) == pytest.approx(expected)


@pytest.mark.parametrize("p", PROCS)
def test_reduce_scatter_formulas(p: int) -> None:
    gamma = 1e-9
    ring = (p - 1) * (A_IN + N * B_IN + N * gamma)
    assert cost("reduce_scatter", "ring", p, gamma=gamma) == pytest.approx(ring)
    if p & (p - 1):  # not a power of two: recursive halving falls back to the ring
        assert cost("reduce_scatter", "recursive_halving", p, gamma=gamma) == pytest.approx(ring)
    else:  # rounds of p/2, p/4, ... 1 blocks: (p - 1) blocks in all, in log2 p rounds
        halving = ceil_log2(p) * A_IN + (p - 1) * N * (B_IN + gamma)
        assert cost("reduce_scatter", "recursive_halving", p, gamma=gamma) == pytest.approx(halving)


@pytest.mark.parametrize("p", PROCS)
@pytest.mark.parametrize("kind", ["scan", "exscan"])
def test_prefix_reduction_formulas(kind: str, p: int) -> None:
    gamma = 1e-9
    unit = A_IN + N * B_IN + N * gamma
    assert cost(kind, "recursive_doubling", p, gamma=gamma) == pytest.approx(ceil_log2(p) * unit)
    assert cost(kind, "linear", p, gamma=gamma) == pytest.approx((p - 1) * unit)


def test_a_prefix_reduction_finishes_rank_by_rank() -> None:
    """In the linear scan rank r passes its prefix on in round r + 1: the last rank, which only
    receives, finishes with the rank before it."""
    unit = A_IN + N * B_IN
    offsets = single_node(4, {"scan": "linear"}).offsets("scan", 0, N)
    assert offsets == pytest.approx([unit, 2 * unit, 3 * unit, 3 * unit])


# -- who finishes when ----------------------------------------------------------------------------


def test_binomial_bcast_finish_times_per_rank_and_rotated_root() -> None:
    unit = A_IN + N * B_IN
    model = single_node(5, {"bcast": "binomial"})
    # virtual ranks: round 0: 0->1; round 1: 0->2, 1->3; round 2: 0->4
    assert model.offsets("bcast", 0, N) == pytest.approx([3 * unit, 2 * unit, 2 * unit, 2 * unit, 3 * unit])
    # root 2: virtual rank v is real rank (v + 2) % 5
    assert model.offsets("bcast", 2, N) == pytest.approx([2 * unit, 3 * unit, 3 * unit, 2 * unit, 2 * unit])


def test_binomial_reduce_leaves_finish_first() -> None:
    unit = A_IN + N * B_IN
    offsets = single_node(8, {"reduce": "binomial"}).offsets("reduce", 0, N)
    assert offsets == pytest.approx([3 * unit, unit, 2 * unit, unit, 3 * unit, unit, 2 * unit, unit])


def test_linear_bcast_serves_ranks_in_order() -> None:
    unit = A_IN + N * B_IN
    assert single_node(4, {"bcast": "linear"}).offsets("bcast", 0, N) == pytest.approx(
        [3 * unit, unit, 2 * unit, 3 * unit]
    )


def test_symmetric_algorithms_finish_together() -> None:
    for kind, algorithm in [
        ("allreduce", "ring"),
        ("allgather", "ring"),
        ("alltoall", "pairwise"),
        ("barrier", "dissemination"),
    ]:
        offsets = single_node(6, {kind: algorithm}).offsets(kind, 0, N)
        assert len(set(offsets)) == 1, (kind, algorithm, offsets)


def test_recursive_doubling_serves_folded_ranks_last() -> None:
    unit = A_IN + N * B_IN
    assert len(set(single_node(8, {"allreduce": "recursive_doubling"}).offsets("allreduce", 0, N))) == 1
    # p = 6: ranks 4, 5 fold into 0, 1 (round 1), 0..3 exchange (rounds 2, 3), 0, 1 serve 4, 5 (round 4)
    offsets = single_node(6, {"allreduce": "recursive_doubling"}).offsets("allreduce", 0, N)
    assert offsets == pytest.approx([4 * unit, 4 * unit, 3 * unit, 3 * unit, 4 * unit, 4 * unit])


# -- several nodes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("p, ppn", [(8, 4), (64, 16), (64, 8)])
def test_multi_node_steps_crossing_nodes_cost_the_inter_node_link(p: int, ppn: int) -> None:
    L = ceil_log2(p)
    local = ceil_log2(ppn)
    unit_in, unit_ex = A_IN + N * B_IN, A_EX + N * B_EX
    m = blocks(
        p,
        ppn,
        {
            "bcast": "binomial",
            "allreduce": "recursive_doubling",
            "gather": "binomial",
            "allgather": "ring",
            "barrier": "dissemination",
        },
    )
    # binomial steps at distance >= ppn leave the node
    assert m.duration("bcast", 0, N) == pytest.approx(local * unit_in + (L - local) * unit_ex)
    assert m.duration("allreduce", 0, N) == pytest.approx(local * unit_in + (L - local) * unit_ex)
    gather = sum(A_IN + (1 << k) * N * B_IN for k in range(local)) + sum(
        A_EX + (1 << k) * N * B_EX for k in range(local, L)
    )
    assert m.duration("gather", 0, N) == pytest.approx(gather)
    # every ring round and every dissemination round has a pair that crosses a node boundary
    assert m.duration("allgather", 0, N) == pytest.approx((p - 1) * unit_ex)
    assert m.duration("barrier", 0, N) == pytest.approx(L * A_EX)
    assert m.duration("alltoall", 0, N) == pytest.approx((p - 1) * unit_ex)


def test_three_processes_on_two_nodes() -> None:
    m = CollectiveModel([0, 0, 1], two_level, {"bcast": "binomial"})
    unit_in, unit_ex = A_IN + N * B_IN, A_EX + N * B_EX
    # round 0: 0->1 on node 0; round 1: 0->2 across
    assert m.offsets("bcast", 0, N) == pytest.approx([unit_in + unit_ex, unit_in, unit_in + unit_ex])


def test_round_robin_placement_crosses_nodes_at_once() -> None:
    m = CollectiveModel([r % 2 for r in range(8)], two_level, {"bcast": "binomial"})
    assert m.duration("bcast", 0, N) == pytest.approx(A_EX + N * B_EX + 2 * (A_IN + N * B_IN))


def test_link_function_is_asked_once_per_node_pair_and_results_are_cached() -> None:
    calls: list[tuple[int, int]] = []

    def link(a: int, b: int) -> Link:
        calls.append((a, b))
        return two_level(a, b)

    m = CollectiveModel([r // 4 for r in range(16)], link)
    first = m.offsets("alltoall", 0, N)
    assert len(calls) == len(set(calls)) <= 16
    before = len(calls)
    assert m.offsets("alltoall", 0, N) is first
    assert len(calls) == before


# -- algorithm choice -------------------------------------------------------------------------------


def test_auto_choices_follow_message_size_and_process_count() -> None:
    assert resolve_algorithm("bcast", None, 64, 1024) == "binomial"
    assert resolve_algorithm("bcast", "auto", 64, 1 << 20) == "scatter_allgather"
    assert resolve_algorithm("bcast", "auto", 4, 1 << 20) == "binomial"
    assert resolve_algorithm("allreduce", None, 64, 8) == "recursive_doubling"
    assert resolve_algorithm("allreduce", None, 64, 1 << 20) == "rabenseifner"
    assert resolve_algorithm("allgather", None, 8, 100) == "recursive_doubling"
    assert resolve_algorithm("allgather", None, 6, 100) == "bruck"
    assert resolve_algorithm("allgather", None, 64, 1 << 20) == "ring"
    assert resolve_algorithm("alltoall", None, 64, 10) == "pairwise"
    assert resolve_algorithm("bcast", "Scatter-Allgather", 64, 10) == "scatter_allgather"


def test_unknown_algorithm_names_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown allreduce algorithm 'butterfly'.*recursive_doubling"):
        resolve_algorithm("allreduce", "butterfly", 8, 10)
    with pytest.raises(ValueError, match="unknown bcast algorithm"):
        CollectiveModel([0, 0], two_level, {"bcast": "flooding"})
    with pytest.raises(ValueError, match="unknown collective 'scatterv'"):
        resolve_algorithm("scatterv", None, 8, 10)


def test_schedules_only_use_valid_ranks() -> None:
    for p in (2, 3, 5, 7, 8, 12):
        for kind, algorithms in ALGORITHMS.items():
            for algorithm in algorithms:
                for root in {0, p - 1}:
                    for step in schedule(kind, algorithm, p, N, root):
                        assert all(0 <= r < p for r in step.src), (kind, algorithm, p)
                        assert all(0 <= r < p for r in step.dst), (kind, algorithm, p)
                        assert all(a != b for a, b in zip(step.src, step.dst, strict=True)), (
                            kind,
                            algorithm,
                            p,
                        )


def test_two_level_fast_path_agrees_with_the_general_lookup() -> None:
    from uml2perf_runtime.platform.machine import Link as MachineLink
    from uml2perf_runtime.platform.machine import Machine

    mach = Machine(
        nodes=4,
        cores_per_node=4,
        intra_node=MachineLink(A_IN, 1 / B_IN),
        inter_node=MachineLink(A_EX, 1 / B_EX),
    )
    placement = [r % 4 for r in range(13)]  # round robin, p not a power of two
    fast = CollectiveModel.for_machine(mach, placement)
    general = CollectiveModel(placement, mach.link)
    assert fast._costs.levels is not None and general._costs.levels is None
    for kind, algorithms in ALGORITHMS.items():
        for algorithm in algorithms:
            fast.algorithms[kind] = general.algorithms[kind] = algorithm
            assert fast.offsets(kind, 3, N) == pytest.approx(general.offsets(kind, 3, N)), (kind, algorithm)
            fast._cache.clear()
            general._cache.clear()


def test_machine_with_its_own_link_rule_gets_the_general_lookup() -> None:
    from uml2perf_runtime.platform.machine import Machine

    class Torus(Machine):
        def link(self, node_a: int, node_b: int) -> Link:  # type: ignore[override]
            hops = min(abs(node_a - node_b), 4 - abs(node_a - node_b))
            return Link(A_IN + hops * A_EX, 1 / B_IN)

    model = CollectiveModel.for_machine(Torus(nodes=4, cores_per_node=1), [0, 1, 2, 3])
    assert model._costs.levels is None
    # binomial bcast: 0->1 (one hop), then 0->2 (two hops) and 1->3 (two hops)
    assert model.duration("bcast", 0, 0.0) == pytest.approx((A_IN + A_EX) + (A_IN + 2 * A_EX))


@settings(max_examples=200, deadline=None)
@given(
    p=st.integers(2, 70),
    data=st.data(),
    size=st.sampled_from([0.0, 8.0, 1000.0, 65536.0, 3e6]),
    gamma=st.sampled_from([0.0, 1e-9]),
    two_level=st.booleans(),
)
def test_plain_and_numpy_evaluations_of_a_schedule_agree(
    p: int, data: st.DataObject, size: float, gamma: float, two_level: bool
) -> None:
    """Small schedules are added up in plain Python, large ones in numpy: to the same bits."""
    from uml2perf_runtime.platform.machine import Link as MachineLink
    from uml2perf_runtime.platform.network import _finish_offsets_numpy, _finish_offsets_plain, _PairCosts

    kind = data.draw(st.sampled_from(sorted(ALGORITHMS)))
    algorithm = data.draw(st.sampled_from(sorted(ALGORITHMS[kind])))
    root = data.draw(st.integers(0, p - 1))
    per_node = data.draw(st.integers(1, 5))
    node_of = [r // per_node for r in range(p)]
    intra, inter = MachineLink(1e-6, 1e10), MachineLink(5e-5, 1.25e7)

    def link(a: int, b: int) -> MachineLink:
        return intra if a == b else MachineLink(inter.latency * (1 + abs(a - b)), inter.bandwidth)

    costs = _PairCosts(node_of, link, (intra, inter) if two_level else None)
    steps = schedule(kind, algorithm, p, size, root)
    assert (
        _finish_offsets_plain(steps, p, costs, gamma)
        == _finish_offsets_numpy(steps, p, costs, gamma).tolist()
    )
