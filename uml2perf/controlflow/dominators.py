"""Immediate dominators and reachability of a region's graph, without a graph library.

Recovery asks every region with branches or loops for its dominators and post-dominators.
networkx answers both, but importing it costs more than converting a small model does
(about 80 ms of a 0.2 s convert), so the two questions every such region asks are answered
here in a few lines; networkx is still used for the rare region with a cycle that never ends.

The immediate dominator of a node is unique (the dominator tree is a property of the graph,
not of an algorithm), so any correct algorithm gives the same answer as networkx's;
``tests/test_controlflow_dominators.py`` compares them on random graphs.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import TypeVar

N = TypeVar("N", bound=Hashable)

__all__ = ["immediate_dominators", "reaching"]


def _postorder(successors: Mapping[N, Iterable[N]], start: N) -> list[N]:
    """The nodes reachable from ``start`` in depth-first post-order (iterative: no recursion limit)."""
    seen = {start}
    order: list[N] = []
    stack = [(start, iter(successors.get(start, ())))]
    while stack:
        node, children = stack[-1]
        for child in children:
            if child not in seen:
                seen.add(child)
                stack.append((child, iter(successors.get(child, ()))))
                break
        else:
            order.append(node)
            stack.pop()
    return order


def immediate_dominators(successors: Mapping[N, Iterable[N]], start: N) -> dict[N, N]:
    """Immediate dominator of every node reachable from ``start`` except ``start`` itself.

    The same mapping as ``networkx.immediate_dominators(graph, start)`` for the graph whose edges
    are ``successors``.  Cooper, Harvey and Kennedy's iteration ("A simple, fast dominance
    algorithm", 2006): visit the nodes in reverse post-order, set each node's dominator to the
    nearest common dominator of its processed predecessors, until nothing changes.
    """
    order = _postorder(successors, start)
    number = {node: i for i, node in enumerate(order)}  # post-order number: start has the highest
    predecessors: dict[N, list[N]] = {node: [] for node in order}
    for node in order:
        for child in successors.get(node, ()):
            if child in number and node not in predecessors[child]:
                predecessors[child].append(node)
    idom: dict[N, N] = {start: start}

    def common(a: N, b: N) -> N:
        # walk the higher-numbered tree upwards from the lower-numbered node until they meet
        while a != b:
            while number[a] < number[b]:
                a = idom[a]
            while number[b] < number[a]:
                b = idom[b]
        return a

    ordered = order[-2::-1]  # reverse post-order without start
    changed = True
    while changed:
        changed = False
        for node in ordered:
            new: N | None = None
            for pred in predecessors[node]:
                if pred in idom:
                    new = pred if new is None else common(new, pred)
            if new is not None and idom.get(node) != new:
                idom[node] = new
                changed = True
    del idom[start]
    return idom


def reaching(predecessors: Mapping[N, Iterable[N]], target: N) -> set[N]:
    """Every node with a path to ``target``, ``target`` included (``nx.ancestors | {target}``)."""
    seen = {target}
    stack = [target]
    while stack:
        for pred in predecessors.get(stack.pop(), ()):
            if pred not in seen:
                seen.add(pred)
                stack.append(pred)
    return seen
