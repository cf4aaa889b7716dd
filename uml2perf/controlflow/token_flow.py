"""The token-flow form: any flow graph as one function per node passing tokens along its flows.

Structured recovery writes a fork as ``Parallel`` branches that meet at one
join, and a loop as ``while``.  Diagrams as people draw them do not always fit:
a fork whose branches loop back before it, a join reached by only some
branches of a fork, several initial nodes, a flow that leaves a loop from
inside a fork.  For a region with concurrency and no structured form, this
module builds a :class:`~.ir.TokenFlow` that plays UML's token game itself:

* every node becomes one :class:`~.ir.TokenNode`: its own statement (what
  :mod:`.nodes` says, exactly as in the structured form), then an
  :class:`~.ir.Offer` of tokens along its outgoing flows;
* a fork, an initial node and an action whose outgoing flows carry no guard
  offer a token on every flow; a decision (or an action whose outgoing flows
  all carry guards that exclude each other, or probabilities) offers one token
  on the first flow whose guard holds, as an :class:`~.ir.If` of offers,
  ``else`` last; an action whose guards may hold together offers a token on
  each flow whose guard holds (UML's implicit fork of guarded flows);
* a join waits for a token on each of its incoming flows (``inputs``); any
  other node runs once per token that reaches it (several incoming flows
  merge, as in the structured form);
* an activity final ends the whole flow; a flow final consumes its token.

The runtime (``uml2perf_runtime.tokens``) runs every token as a thread of the
process, so concurrent branches compete for cores as ``p.fork`` branches do.
"""

from __future__ import annotations

from ..model import NodeKind
from .graph import ENTRY, EXIT, RegionGraph, is_else
from .ir import Branch, Cond, CondKind, If, Offer, Sequence, Statement, TokenFlow, TokenNode


def token_flow(graph: RegionGraph, reason: str, *, keep_final: bool = False) -> TokenFlow:
    """The token-flow form of the region ``graph`` describes (its successors, entry and conditions).

    ``keep_final``: an activity final ends more than this region (a loop node's section ends the
    whole loop node), so the flow says whether one ended it.
    """
    shared = graph.shared
    # the nodes in flow order (breadth first from the start, ties in file order): the order a reader follows
    seen = {ENTRY}
    order: list[str] = []
    frontier = [ENTRY]
    while frontier:
        following: list[str] = []
        for current in frontier:
            for _, target in graph.succ[current]:
                if target not in seen and target != EXIT:
                    seen.add(target)
                    order.append(target)
                    following.append(target)
        frontier = following
    region_nodes = [graph.nodes[n] for n in order]
    index = {node.id: i for i, node in enumerate(region_nodes)}
    # the input index of each flow at its target: a join tells its incoming flows apart
    joining, inputs = joined_flows(graph)
    ports: dict[tuple[str, int], int] = {}
    for source in order:
        for position, (_, target) in enumerate(graph.succ[source]):
            port = joining.get((source, target))
            if port is not None:
                ports[(source, position)] = port

    def offer(source: str, position: int, target: str) -> tuple[int, int]:
        if inputs.get(target, 1) < 2:
            return index[target], 0
        return index[target], ports.get((source, position), -1)

    token_nodes: list[TokenNode] = []
    for node in region_nodes:
        body: list[Statement] = []
        if node.kind is NodeKind.ACTIVITY_FINAL:
            body.append(Offer(end=True, node=node))
        elif node.kind is NodeKind.FLOW_FINAL:
            body.append(Offer(node=node))
        else:
            own = shared.statement(node, shared)
            if own is not None:
                body.append(own)
            outs = [(pos, target) for pos, (_, target) in enumerate(graph.succ[node.id]) if target != EXIT]
            if graph.guarded_fork(node.id):
                # a token on each flow whose guard holds (and on each unguarded flow of a fork)
                for pos, (edge, target) in enumerate(graph.succ[node.id]):
                    if target == EXIT or edge is None:
                        continue
                    keep = Offer((offer(node.id, pos, target),), keep=True)
                    if edge.guard is None or is_else(edge.guard):
                        body.append(keep)
                    else:
                        cond = Cond(CondKind.GUARD, edge.guard, edge.location, edge)
                        body.append(If(None, (Branch(cond, Sequence((keep,))),)))
                body.append(Offer(kept=True))
            elif len(outs) > 1 and not graph._is_fork(node.id):
                positions = {id(edge): pos for pos, (edge, _) in enumerate(graph.succ[node.id])}
                branches = []
                for cond, target in graph._conditions(node.id):
                    pos = positions[id(cond.edge)]
                    branches.append(Branch(cond, Sequence((Offer((offer(node.id, pos, target),)),))))
                body.append(If(node, tuple(branches)))
            else:
                body.append(Offer(tuple(offer(node.id, pos, target) for pos, target in outs)))
        token_nodes.append(TokenNode(index[node.id], node, Sequence(tuple(body)), inputs.get(node.id, 1)))
    starts = tuple(index[target] for _, target in graph.succ[ENTRY] if target in index)
    owner = next((n for n in region_nodes if n.kind in (NodeKind.FORK, NodeKind.JOIN)), None)
    ends_scope = keep_final and any(n.kind is NodeKind.ACTIVITY_FINAL for n in region_nodes)
    return TokenFlow(owner, tuple(token_nodes), starts, reason, ends_scope)


def concurrent(graph: RegionGraph) -> bool:
    """True when the region forks: a fork node, several starts, or a node offering tokens on several flows."""
    if len(graph.succ[ENTRY]) > 1:
        return True
    for node in graph.region.nodes:
        if node.kind in (NodeKind.FORK, NodeKind.JOIN) or graph.guarded_fork(node.id):
            return True
        outs = graph.succ.get(node.id, ())
        if len([t for _, t in outs if t != EXIT]) > 1 and node.kind is not NodeKind.DECISION:
            if graph._is_fork(node.id):
                return True
    return False


def joined_flows(graph: RegionGraph) -> tuple[dict[tuple[str, str], int], dict[str, int]]:
    """Which flows a node waits for together: ``(source, target)`` → input, and the inputs per node.

    A join waits for a token on each incoming flow from a node that can run
    (UML's rule).  Any other node whose incoming flows come from concurrent
    branches (their nearest common dominator is a fork, an action's implicit
    fork or the start of several initial nodes) waits for one token from each
    of those branches, as the structured form reads it and as UML's implicit
    join of an action's incoming flows says; flows that come from the branches
    of a decision, or back round a loop, pass straight in, as through a merge.
    """
    ports: dict[tuple[str, str], int] = {}
    inputs: dict[str, int] = {}
    for node in graph.region.nodes:
        if node.kind is NodeKind.JOIN:
            sources = [p for p in graph.pred[node.id] if p != ENTRY]
            if len(sources) > 1:
                for number, source in enumerate(sources):
                    ports.setdefault((source, node.id), number)
                inputs[node.id] = len(sources)
    for node in graph.region.nodes:
        meet = node.id
        if meet in inputs:
            continue
        forward = [p for p in graph.pred[meet] if p != ENTRY and not graph.dominates(meet, p)]
        if len(forward) < 2:
            continue
        fork = _common_dominator(graph, forward)
        if fork is None or not _forks(graph, fork):
            # the flows come from the branches of a decision: a merge; say so where a fork feeds it too
            if _fed_concurrently(graph, meet, forward):
                graph.shared.warn(
                    "the incoming flows of this node come both from alternatives of a decision and from"
                    " concurrent branches; UML would make the node wait for a token on every flow (an"
                    " implicit join), uml2perf runs it once per token (a merge)",
                    node.location,
                    "ambiguous-merge",
                    hint="draw an explicit merge node or join node in front of it",
                )
            continue
        branches = [_reach(graph, target, meet) for _, target in graph.succ[fork]]
        found: dict[str, int] = {}
        for source in forward:
            if source == fork:
                number = next(i for i, (_, t) in enumerate(graph.succ[fork]) if t == meet)
            else:
                number = next((i for i, members in enumerate(branches) if source in members), -1)
            if number >= 0:
                found[source] = number
        numbers = sorted(set(found.values()))
        if len(numbers) > 1:
            for source, number in found.items():
                ports[(source, meet)] = numbers.index(number)
            inputs[meet] = len(numbers)
    return ports, inputs


def _forks(graph: RegionGraph, node_id: str) -> bool:
    """Whether ``node_id`` starts concurrent branches: several starts, a fork, an action's implicit fork."""
    outs = [t for _, t in graph.succ[node_id] if t != EXIT]
    return len(outs) > 1 and graph._is_fork(node_id)


def _common_dominator(graph: RegionGraph, members: list[str]) -> str | None:
    """The nearest node every path from the start to each of ``members`` passes."""
    idom = graph.idom

    def chain(node_id: str) -> list[str]:
        found = [node_id]
        while idom.get(found[-1], found[-1]) != found[-1]:
            found.append(idom[found[-1]])
        return found

    common = set(chain(members[0]))
    for member in members[1:]:
        common &= set(chain(member))
    return next((n for n in chain(members[0]) if n in common), None)


def _fed_concurrently(graph: RegionGraph, meet: str, forward: list[str]) -> bool:
    """Whether two of ``forward`` (the flows into ``meet``) can carry tokens at once: different
    branches of one fork reach them."""
    for fork in [ENTRY, *(n.id for n in graph.region.nodes)]:
        if not _forks(graph, fork):
            continue
        hits = set()
        for number, (_, target) in enumerate(graph.succ[fork]):
            if target == meet and fork in forward:
                hits.add(number)
            elif target != meet and _reach(graph, target, meet) & set(forward):
                hits.add(number)
        if len(hits) > 1:
            return True
    return False


def _reach(graph: RegionGraph, start: str, stop: str) -> set[str]:
    """The nodes reachable from ``start`` without passing ``stop``."""
    seen: set[str] = set()
    stack = [start]
    while stack:
        current = stack.pop()
        if current in seen or current in (stop, EXIT):
            continue
        seen.add(current)
        stack.extend(target for _, target in graph.succ[current])
    return seen
