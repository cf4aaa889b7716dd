"""Checks of a model's structure that decide whether a run can end properly, for ``uml2perf check``.

* every element has its own ``xmi:id`` (a duplicated id makes messages, sidecar entries and
  calls name the wrong element);
* no activity calls itself, directly or through others (the run would recurse until Python's
  limit);
* from the start of an activity, some path reaches an end: a final node or an action whose
  tokens go nowhere (otherwise the tokens circulate until the events limit or ``--max-time``
  stops the run). This one is a warning: a classifier behaviour may be meant to run for ever.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .errors import Diagnostic, Location, Severity
from .model import Activity, Edge, Model, Node, NodeKind, Region, walk_region

__all__ = ["check_structure"]

_FINALS = frozenset({NodeKind.ACTIVITY_FINAL, NodeKind.FLOW_FINAL})


def check_structure(model: Model) -> Iterator[Diagnostic]:
    """Every structural problem of ``model`` (see the module documentation)."""
    yield from _duplicated_ids(model)
    yield from _recursive_calls(model)
    for activity in model.activities:
        yield from _endless(activity)


def _regions(activity: Activity) -> list[Region]:
    return [activity.region] + [n.region for n in walk_region(activity.region) if n.region is not None]


def _duplicated_ids(model: Model) -> Iterator[Diagnostic]:
    seen: dict[str, Location] = {}
    for activity in model.activities:
        elements: list[tuple[str, Location]] = [(activity.id, activity.location)]
        elements += [(node.id, node.location) for node in activity.walk()]
        elements += [(edge.id, edge.location) for region in _regions(activity) for edge in region.edges]
        for element_id, location in elements:
            if not element_id:
                continue
            first = seen.setdefault(element_id, location)
            if first != location:
                yield Diagnostic(
                    Severity.ERROR,
                    f"xmi:id {element_id!r} is used by two elements (the other: {first})",
                    location,
                    "give every element its own xmi:id (export the model again from the UML tool)",
                    "duplicated-id",
                )


def _calls(model: Model) -> dict[str, list[tuple[str, Node]]]:
    """activity id -> (called activity id, the call node) for every call of another activity."""
    ids = {activity.id for activity in model.activities}
    return {
        activity.id: [
            (node.behavior, node)
            for node in activity.walk()
            if node.kind is NodeKind.CALL and node.behavior in ids and node.behavior is not None
        ]
        for activity in model.activities
    }


def _recursive_calls(model: Model) -> Iterator[Diagnostic]:
    """Each call that closes a cycle of activity calls, found by a walk without recursion."""
    calls = _calls(model)
    names = {activity.id: activity.name or activity.id for activity in model.activities}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in calls:
        if state.get(start):
            continue
        path = [start]
        stack: list[Iterator[tuple[str, Node]]] = [iter(calls[start])]
        state[start] = 1
        while stack:
            step = next(stack[-1], None)
            if step is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            callee, node = step
            if state.get(callee) == 1:
                cycle = path[path.index(callee) :] + [callee]
                chain = " -> ".join(repr(names[a]) for a in cycle)
                yield Diagnostic(
                    Severity.ERROR,
                    f"activity {names[path[-1]]!r} calls {names[callee]!r} again ({chain}): "
                    "the calls recurse without end",
                    node.location,
                    "uml2perf runs no recursive activities: repeat the work with a loop or a repeat count",
                    "recursive-call",
                )
            elif not state.get(callee):
                state[callee] = 1
                path.append(callee)
                stack.append(iter(calls[callee]))


def _endless(activity: Activity) -> Iterator[Diagnostic]:
    """An activity whose flow from its start never reaches an end: a final node or a dead end."""
    region = activity.region
    starts = [n for n in region.nodes if n.kind is NodeKind.INITIAL]
    if not starts:
        return
    targets = _successors(region.edges)
    reached = _reachable((n.id for n in starts), targets)
    nodes = {n.id: n for n in region.nodes}
    for node_id in reached:
        node = nodes.get(node_id)
        if node is None or node.kind in _FINALS or not targets.get(node_id):
            return  # an end is reachable (a node outside the region counts as one: it is left)
    yield Diagnostic(
        Severity.WARNING,
        f"no final node is reachable from the start of activity {activity.name or activity.id!r}, "
        "and every path returns: a run of it ends only at the events limit or --max-time",
        activity.location,
        "add an ActivityFinal node and a flow (or a guarded exit of the loop) that reaches it; "
        "a behaviour meant to run for ever needs --max-time",
        "no-reachable-final",
    )


def _successors(edges: Iterable[Edge]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for edge in edges:
        found.setdefault(edge.source, []).append(edge.target)
    return found


def _reachable(starts: Iterable[str], successors: dict[str, list[str]]) -> set[str]:
    seen = set(starts)
    todo = list(seen)
    while todo:
        for target in successors.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen
