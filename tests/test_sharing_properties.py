"""Max-min sharing against a plain reference: random flows on random links, rates compared.

The reference raises every unfixed flow's rate in proportion to its weight until a link is full
(or a flow reaches its bound), fixes the flows that stopped, and repeats: the textbook progressive
filling, one small step of arithmetic at a time, written independently of ``sharing.py``.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from uml2perf_runtime.platform.sharing import Flow, LinkSharing


def reference(flows: list[tuple[tuple[int, ...], float, float]], capacity: list[float]) -> list[float]:
    """Rates of ``(links, weight, bound)`` flows by progressive filling."""
    rate = [0.0] * len(flows)
    fixed = [False] * len(flows)
    while not all(fixed):
        # the largest common increase t (rate += t * weight) before a link fills or a bound is met
        limits = []
        for link, cap in enumerate(capacity):
            users = [i for i, f in enumerate(flows) if link in f[0]]
            free = [i for i in users if not fixed[i]]
            if free:
                used = sum(rate[i] for i in users)
                limits.append((cap - used) / sum(flows[i][1] for i in free))
        for i, (_, weight, bound) in enumerate(flows):
            if not fixed[i] and bound < math.inf:
                limits.append((bound - rate[i]) / weight)
        step = max(0.0, min(limits))
        for i, (_, weight, _) in enumerate(flows):
            if not fixed[i]:
                rate[i] += step * weight
        for link, cap in enumerate(capacity):
            users = [i for i, f in enumerate(flows) if link in f[0]]
            if users and sum(rate[i] for i in users) >= cap * (1 - 1e-12):
                for i in users:
                    fixed[i] = True
        for i, (_, _, bound) in enumerate(flows):
            if rate[i] >= bound * (1 - 1e-12):
                fixed[i] = True
    return rate


flow_strategy = st.tuples(
    st.lists(st.integers(0, 5), min_size=1, max_size=4, unique=True).map(tuple),
    st.sampled_from([1.0, 0.5, 2.0, 1 / 3]),
    st.sampled_from([math.inf, math.inf, 0.3e9, 1e9]),
)


@settings(max_examples=150, deadline=None)
@given(
    flows=st.lists(flow_strategy, min_size=1, max_size=8),
    capacity=st.lists(st.sampled_from([1e9, 2e9, 0.5e9, 1.25e9]), min_size=6, max_size=6),
)
def test_rates_are_the_max_min_fair_ones(
    flows: list[tuple[tuple[int, ...], float, float]], capacity: list[float]
) -> None:
    sharing = LinkSharing(list(capacity))
    made = []
    for links, weight, bound in flows:
        flow = Flow(links, 1e9, weight, 0.0, 1.0)
        flow.bound = bound
        sharing.add(flow, 0.0)
        made.append(flow)
    sharing.solve(range(len(capacity)), 0.0)
    expected = reference(flows, list(capacity))
    for flow, want in zip(made, expected, strict=True):
        assert math.isclose(flow.rate, want, rel_tol=1e-9), (flow.rate, want)
    for link, cap in enumerate(capacity):  # no link carries more than it can
        assert sum(f.rate for f in made if link in f.links) <= cap * (1 + 1e-9)


@settings(max_examples=100, deadline=None)
@given(
    flows=st.lists(flow_strategy, min_size=2, max_size=10),
    leaving=st.lists(st.integers(0, 9), max_size=5),
    capacity=st.lists(st.sampled_from([1e9, 2e9, 0.5e9]), min_size=6, max_size=6),
)
def test_solving_only_what_a_change_touches_gives_the_rates_of_a_full_solve(
    flows: list[tuple[tuple[int, ...], float, float]], leaving: list[int], capacity: list[float]
) -> None:
    sharing = LinkSharing(list(capacity))
    made = []
    for links, weight, bound in flows:
        flow = Flow(links, 1e9, weight, 0.0, 1.0)
        flow.bound = bound
        sharing.add(flow, 0.0)
        made.append(flow)
    sharing.solve(range(len(capacity)), 0.0)
    for index in leaving:
        if index < len(made) and made[index] is not None:
            gone = made[index]
            made[index] = None  # type: ignore[call-overload]
            sharing.remove(gone, 0.0)
            sharing.solve(gone.links, 0.0)  # what a flow's end re-solves
    alive = [(f, spec) for f, spec in zip(made, flows, strict=True) if f is not None]
    expected = reference([spec for _, spec in alive], list(capacity))
    for (flow, _), want in zip(alive, expected, strict=True):
        assert math.isclose(flow.rate, want, rel_tol=1e-9), (flow.rate, want)
