"""The dominator trees recovery uses are networkx's, computed without importing networkx."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from uml2perf.controlflow.dominators import immediate_dominators, reaching

edges = st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=40)


def _successors(pairs: list[tuple[int, int]]) -> dict[int, list[int]]:
    successors: dict[int, list[int]] = {n: [] for n in range(12)}
    for a, b in pairs:
        successors[a].append(b)  # duplicates kept: a region may hold two flows between two nodes
    return successors


@settings(max_examples=300, deadline=None)
@given(edges)
def test_immediate_dominators_equal_networkx(pairs: list[tuple[int, int]]) -> None:
    graph = nx.DiGraph()
    graph.add_nodes_from(range(12))
    graph.add_edges_from(pairs)
    assert immediate_dominators(_successors(pairs), 0) == nx.immediate_dominators(graph, 0)


@settings(max_examples=200, deadline=None)
@given(edges)
def test_reaching_equals_networkx_ancestors(pairs: list[tuple[int, int]]) -> None:
    graph = nx.DiGraph()
    graph.add_nodes_from(range(12))
    graph.add_edges_from(pairs)
    backwards: dict[int, list[int]] = {n: [] for n in range(12)}
    for a, b in pairs:
        backwards[b].append(a)
    assert reaching(backwards, 5) == nx.ancestors(graph, 5) | {5}


def test_a_diamond_and_a_loop() -> None:
    successors = {"s": ["a", "b"], "a": ["j"], "b": ["j"], "j": ["s", "e"], "e": []}
    assert immediate_dominators(successors, "s") == {"a": "s", "b": "s", "j": "s", "e": "j"}
