"""Graph facts of one region: successors, reachability, dominators, loop headers, conditions.

:class:`RegionGraph` holds what every recovery step asks of a region's graph
(``ENTRY`` and ``EXIT`` are virtual nodes before the start and after every end);
dominators are computed in :mod:`.dominators`; networkx is imported only for a region with a
cycle that never ends.  :class:`Shared` carries the model-wide lookups and the
diagnostics of one recovery run.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterator, Mapping
from itertools import islice
from operator import attrgetter
from typing import TYPE_CHECKING

from ..errors import Diagnostic, Location, ModelError, Severity
from ..expressions import means_else
from ..model import Activity, CostFunction, Edge, Model, Node, NodeKind, PerfSpec, Region, Role
from .dominators import immediate_dominators, reaching
from .ir import FINAL_KINDS, Cond, CondKind, Statement, _Printed, _set

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

ENTRY = "\x00entry"
EXIT = "\x00exit"

# --------------------------------------------------------------------------- recovery


class Unstructured(Exception):
    """Raised inside recovery when a region cannot be written with structured statements."""


# The three records below are plain classes, not dataclasses: every ``convert`` imports this
# module, and making a dataclass runs generated code at import (0.3-0.6 ms each).  The two frozen
# ones keep a frozen dataclass's behaviour: the statements' ``repr`` and refused assignment
# (:class:`.ir._Printed`), equality and hashing by their fields.


class _Frozen(_Printed):
    """Equality and hashing by the fields (the ``__slots__``), as a frozen dataclass has them."""

    __slots__ = ()

    def _fields(self) -> tuple[object, ...]:
        names: tuple[str, ...] = type(self).__slots__
        return tuple(getattr(self, name) for name in names)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, _Frozen)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())


class LoopContext(_Frozen):
    """A loop being recovered: its header, the nodes of its body, the node its exit leads to."""

    __slots__ = ("header", "body", "follow")

    header: str
    body: frozenset[str]
    follow: str | None

    def __init__(self, header: str, body: frozenset[str], follow: str | None) -> None:
        _set(self, "header", header)
        _set(self, "body", body)
        _set(self, "follow", follow)


class Barrier(_Frozen):
    """A scope (a branch function, a loop exit path) that must not leave through loops."""

    __slots__ = ("body", "headers")

    body: frozenset[str] | None
    headers: frozenset[str]

    def __init__(self, body: frozenset[str] | None, headers: frozenset[str]) -> None:
        _set(self, "body", body)
        _set(self, "headers", headers)


Context = tuple[LoopContext | Barrier, ...]


def _no_statement(node: Node, shared: Shared) -> Statement | None:
    return None


class Shared:
    """Model-wide lookups shared by the recovery of every region."""

    def __init__(
        self,
        model: Model,
        activities: Mapping[str, Activity],
        functions: Mapping[str, CostFunction],
        diagnostics: list[Diagnostic] | None = None,
        statement: Callable[[Node, Shared], Statement | None] = _no_statement,
        flat: bool = False,
        tokens: bool = False,
    ) -> None:
        self.model = model
        self.activities = activities
        self.functions = functions
        self.diagnostics: list[Diagnostic] = [] if diagnostics is None else diagnostics
        #: the statement of one executable node (:func:`.nodes.node_statement`)
        self.statement = statement
        #: recover every region as one flat state machine (for graphs whose structured form nests too deeply)
        self.flat = flat
        #: recover every region that is not a straight chain in token-flow form (to compare the forms)
        self.tokens = tokens

    def warn(self, message: str, location: Location, code: str, hint: str | None = None) -> None:
        self.diagnostics.append(Diagnostic(Severity.WARNING, message, location, hint, code))


def is_else(text: str | None) -> bool:
    """True for a guard that means "else" (the words are the expression language's)."""
    return means_else(text)


def tag(node: Node, name: str) -> str | None:
    return node.perf.get(name) if node.perf is not None else None


def repeat_text(perf: PerfSpec | None) -> str | None:
    if perf is None:
        return None
    text = perf.get("repeat")
    if text is None or text.strip() in {"", "1"}:
        return None
    return text


def plain_action(node: Node) -> bool:
    """True for an action that is one :class:`~.ir.Exec` of its own: no other role, no ``repeat``."""
    if node.kind is not NodeKind.ACTION:
        return False
    perf = node.perf
    return perf is None or (perf.role is Role.ACTION and repeat_text(perf) is None)


#: Structured nodes whose one node without incoming flows starts them without an initial node.
STARTS_WITHOUT_INITIAL = frozenset({"StructuredActivityNode", "ExpansionRegion", "SequenceNode"})


class RegionGraph:
    """The graph of one region (activity or structured node) and the facts recovery asks of it."""

    def __init__(self, region: Region, owner: Location, shared: Shared, *, section: bool = False) -> None:
        self.region = region
        self.owner = owner
        self.shared = shared
        #: a part of a loop or conditional node: UML gives those no initial node
        self.section = section
        #: the region's nodes in flow order when it is one straight chain (see ``recover``)
        self.chain = straight_chain(region)
        if self.chain is not None:
            return  # a chain needs none of the graph facts below: tens of thousands of nodes skip them
        self.nodes: dict[str, Node] = {n.id: n for n in region.nodes}
        self.order: dict[str, int] = {n.id: i for i, n in enumerate(region.nodes)}
        self.order[EXIT] = len(region.nodes) + 1
        self.order[ENTRY] = -1
        self.succ: dict[str, list[tuple[Edge | None, str]]] = {n.id: [] for n in region.nodes}
        self.pred: dict[str, list[str]] = {n.id: [] for n in region.nodes}
        self.succ[ENTRY] = []
        self.pred[EXIT] = []
        self.succ[EXIT] = []
        self.pred[ENTRY] = []
        for edge in region.edges:
            if edge.source not in self.nodes or edge.target not in self.nodes:
                shared.warn(
                    "flow connects an element outside this region; it is ignored",
                    edge.location,
                    "dangling-edge",
                )
                continue
            self.succ[edge.source].append((edge, edge.target))
            self.pred[edge.target].append(edge.source)
        self._emitted = 0
        self._ipdom: dict[str, str] | None = None
        self._idom: dict[str, str] | None = None
        self._headers: dict[str, frozenset[str]] | None = None
        self._irreducible: set[str] = set()
        self._concurrent: bool | None = None
        self._joins: frozenset[str] | None = None
        self._setup_entry()

    # ------------------------------------------------------------------ graph facts

    def _setup_entry(self) -> None:
        initials = [n.id for n in self.region.nodes if n.kind is NodeKind.INITIAL]
        if not initials:
            # nodes no flow reaches start the flow, except final nodes: no token ever gets there
            initials = [n.id for n in self.region.nodes if not self.pred[n.id] and n.kind not in FINAL_KINDS]
            if self.region.nodes and not initials:
                initials = [self.region.nodes[0].id]
            # A structured node starts the one node no flow reaches (UML enables nodes without
            # incoming flows when the structured node starts): nothing to warn about there.
            obvious = len(initials) == 1 and self.owner.uml_type in STARTS_WITHOUT_INITIAL
            if self.region.nodes and not self.section and not obvious:
                self.shared.warn(
                    "no initial node: the flow starts at "
                    + ", ".join(repr(self.nodes[i].name or i) for i in initials),
                    self.owner,
                    "no-initial",
                    hint="add an initial node so the start of the flow is explicit",
                )
        for node_id in initials:
            self.succ[ENTRY].append((None, node_id))
            self.pred[node_id].append(ENTRY)
        for node_id, outs in self.succ.items():
            node = self.nodes.get(node_id)
            if node_id != EXIT and (not outs or (node is not None and node.kind in FINAL_KINDS)):
                outs.append((None, EXIT))
                self.pred[EXIT].append(node_id)
        reachable = self._reachable(ENTRY)
        self._warn_joins_that_never_fire(reachable)
        # flows from nodes that never run do not make anything a merge or a loop entry
        self.pred = {n: [p for p in preds if p in reachable] for n, preds in self.pred.items()}
        self._warn_empty_start(initials, reachable)
        for node in self.region.nodes:
            if node.id not in reachable:
                self.shared.warn(
                    "element is not reachable from the start of the flow; it is never run",
                    node.location,
                    "unreachable",
                    hint="connect it with a control flow or delete it",
                )

    def _warn_empty_start(self, initials: list[str], reachable: set[str]) -> None:
        """One warning at the start when nothing but the initial nodes is reachable from it."""
        others = [n for n in self.region.nodes if n.id not in initials]
        if not others or any(n.id in reachable for n in others):
            return
        start = self.nodes[initials[0]]
        self.shared.warn(
            f"nothing is reachable from the initial node {start.name or start.id!r}: no flow leaves it, so "
            f"none of the {len(others)} other elements of {self.owner.name or 'this region'!r} ever runs",
            start.location,
            "empty-start",
            hint="draw a control flow from the initial node to the first action",
        )

    def _warn_joins_that_never_fire(self, reachable: set[str]) -> None:
        """Warn about each join that waits for a token no flow can bring.

        A join fires when every incoming flow carries a token.  Tokens are followed from the
        start, a join passing them on only once all its flows have one: a join fed from after
        itself (a cycle back into it) or from nodes that never run stays closed, and nothing
        after it runs.  Flows out of a decision count as all taken, so a join is never
        reported for a combination of branches that could happen.
        """
        joins = {n.id for n in self.region.nodes if n.kind is NodeKind.JOIN and n.id in reachable}
        if not joins:
            return
        arrived = dict.fromkeys(joins, 0)
        reached = {ENTRY}
        stack = [ENTRY]
        while stack:
            for _, target in self.succ[stack.pop()]:
                if target in reached:
                    continue
                if target in joins:
                    arrived[target] += 1
                    if arrived[target] < len(self.pred[target]):
                        continue
                reached.add(target)
                stack.append(target)
        for node in self.region.nodes:
            if node.id not in joins or node.id in reached:
                continue
            silent = sorted({p for p in self.pred[node.id] if p not in reached}, key=self.order.__getitem__)
            names = ", ".join(repr(self.nodes[p].name or p) for p in silent if p in self.nodes)
            self.shared.warn(
                f"join never fires: it waits for a token on each of its {len(self.pred[node.id])} incoming "
                f"flows, and the flows from {names or 'the start'} never bring one (they come after the "
                "join or from elements that never run); nothing after the join runs",
                node.location,
                "dead-join",
                hint="join only flows that run at the same time (the branches of one fork); where one "
                "token should pass, use a merge node",
            )

    def _reachable(self, start: str) -> set[str]:
        seen = {start}
        stack = [start]
        while stack:
            for _, target in self.succ[stack.pop()]:
                if target not in seen:
                    seen.add(target)
                    stack.append(target)
        return seen

    def _graph(self) -> nx.DiGraph:
        import networkx as nx

        graph = nx.DiGraph()
        graph.add_nodes_from(sorted(self.succ, key=self.order.__getitem__))
        for source in sorted(self.succ, key=self.order.__getitem__):
            for _, target in self.succ[source]:
                graph.add_edge(source, target)
        return graph

    def _successors(self) -> dict[str, list[str]]:
        """Node -> its targets, every flow of the region (the graph both dominator trees walk)."""
        return {source: [target for _, target in outs] for source, outs in self.succ.items()}

    @property
    def ipdom(self) -> dict[str, str]:
        """Immediate post-dominators (towards EXIT); cycles with no way out get a virtual exit."""
        if self._ipdom is None:
            successors = self._successors()
            backwards: dict[str, list[str]] = {node: [] for node in successors}
            for source, targets in successors.items():
                for target in targets:
                    backwards.setdefault(target, []).append(source)
            reach_exit = reaching(backwards, EXIT)
            if len(reach_exit) < len(backwards):
                self._exits_for_endless_cycles(reach_exit, successors, backwards)
            self._ipdom = immediate_dominators(backwards, EXIT)
        return self._ipdom

    def _exits_for_endless_cycles(
        self, reach_exit: set[str], successors: dict[str, list[str]], backwards: dict[str, list[str]]
    ) -> None:
        """Give every cycle with no way out a flow to EXIT (and warn), so post-dominance is defined.

        Rare (a model that never ends), so networkx finds the cycles' sink components here.
        """
        import networkx as nx

        graph = self._graph()
        stuck = [n for n in graph if n not in reach_exit]
        while stuck:
            sub = graph.subgraph(stuck)
            cond = nx.condensation(sub)
            for comp in cond:
                if cond.out_degree(comp) == 0:
                    members = sorted(cond.nodes[comp]["members"], key=self.order.__getitem__)
                    graph.add_edge(members[0], EXIT)
                    if EXIT not in successors[members[0]]:
                        successors[members[0]].append(EXIT)
                        backwards[EXIT].append(members[0])
                    self.shared.warn(
                        "this cycle has no exit: the loop never ends (the run stops at the iteration limit)",
                        self._location(members[0]),
                        "endless-loop",
                        hint="add a decision with a guard that leaves the loop",
                    )
            reach_exit = reaching(backwards, EXIT)
            stuck = [n for n in graph if n not in reach_exit]

    @property
    def idom(self) -> dict[str, str]:
        if self._idom is None:
            self._idom = immediate_dominators(self._successors(), ENTRY)
        return self._idom

    def dominates(self, a: str, b: str) -> bool:
        idom = self.idom
        while True:
            if a == b:
                return True
            parent = idom.get(b)
            if parent is None or parent == b:
                return False
            b = parent

    @property
    def headers(self) -> dict[str, frozenset[str]]:
        """Loop headers (targets of DFS back edges) → natural loop body (header included)."""
        if self._headers is None and not any(len(p) > 1 for p in self.pred.values()):
            self._headers = {}  # no node is entered twice: no cycle, no loop header
        if self._headers is None:
            back: dict[str, list[str]] = {}
            state: dict[str, int] = {}
            stack: list[tuple[str, Iterator[tuple[Edge | None, str]]]] = [(ENTRY, iter(self.succ[ENTRY]))]
            state[ENTRY] = 1
            while stack:
                node, it = stack[-1]
                advanced = False
                for _, target in it:
                    mark = state.get(target)
                    if mark is None:
                        state[target] = 1
                        stack.append((target, iter(self.succ[target])))
                        advanced = True
                        break
                    if mark == 1:
                        back.setdefault(target, []).append(node)
                if not advanced:
                    state[node] = 2
                    stack.pop()
            headers: dict[str, frozenset[str]] = {}
            for header, latches in back.items():
                body = {header}
                for latch in latches:
                    if not self.dominates(header, latch):
                        self._irreducible.add(header)
                    work = [latch]
                    while work:
                        current = work.pop()
                        if current in body:
                            continue
                        body.add(current)
                        work.extend(p for p in self.pred[current] if p != ENTRY)
                headers[header] = frozenset(body)
            self._headers = headers
        return self._headers

    def _location(self, node_id: str) -> Location:
        node = self.nodes.get(node_id)
        return node.location if node is not None else self.owner

    def _is_fork(self, cur: str) -> bool:
        if cur == ENTRY:
            return True
        node = self.nodes[cur]
        if node.kind is NodeKind.FORK:
            return True
        if node.kind is NodeKind.DECISION:
            return False
        return not any(
            e is not None and (e.guard is not None or e.probability is not None) for e, _ in self.succ[cur]
        )

    def _conditions(self, cur: str) -> list[tuple[Cond, str]]:
        """Outgoing flows as conditions: guards in file order, probabilities, ``else`` last."""
        node = self.nodes[cur]
        guarded: list[tuple[Cond, str]] = []
        probable: list[tuple[Cond, str]] = []
        otherwise: list[tuple[Cond, str]] = []
        bare: list[tuple[Edge, str]] = []
        for edge, target in self.succ[cur]:
            assert edge is not None
            if is_else(edge.guard):
                otherwise.append((Cond(CondKind.ELSE, None, edge.location, edge), target))
            elif edge.guard is not None:
                guarded.append((Cond(CondKind.GUARD, edge.guard, edge.location, edge), target))
            elif edge.probability is not None:
                probable.append((Cond(CondKind.PROBABILITY, edge.probability, edge.location, edge), target))
            else:
                bare.append((edge, target))
        if len(bare) == 1 and not otherwise and not probable:
            edge, target = bare[0]
            otherwise.append((Cond(CondKind.ELSE, None, edge.location, edge), target))
        elif bare:
            share = f"1 / {len(bare)}" if not probable else None
            self.shared.warn(
                f"{len(bare)} outgoing flows of this decision have neither a guard nor a probability;"
                + (" one of them is chosen at random" if share else " they are never taken"),
                node.location,
                "unguarded-decision",
                hint="give each outgoing flow a guard ([x > 0], [else]) or a probability tag",
            )
            if share is not None:
                for edge, target in bare:
                    probable.append((Cond(CondKind.PROBABILITY, share, edge.location, edge), target))
        if node.kind is not NodeKind.DECISION and len(self.succ[cur]) > 1:
            self._implicit_choice(node, [c for c, _ in guarded], bool(otherwise or probable), len(bare))
        if len(otherwise) > 1:
            raise ModelError(
                "more than one outgoing flow is guarded [else]",
                node.location,
                hint="keep one [else] flow and give the others guards",
            )
        return guarded + probable + otherwise

    def _implicit_choice(self, node: Node, guarded: list[Cond], settled: bool, bare: int) -> None:
        """Say how an action's guarded outgoing flows are read (UML: an implicit fork of guarded flows).

        UML gives every outgoing flow whose guard holds a token; when the
        guards exclude each other that is exactly one flow, a choice.
        ``settled``: an ``else`` flow or probabilities make it one anyway.
        """
        texts = [c.text or "" for c in guarded]
        if bare == 1:
            self.shared.diagnostics.append(
                Diagnostic(
                    Severity.INFO,
                    f"one outgoing flow of this {node.uml_type or 'action'} has no guard while the others"
                    " have: it is read as [else], a choice (UML would pass a token along it every time)",
                    node.location,
                    code="implicit-choice",
                )
            )
        elif settled or exclusive(texts):
            self.shared.diagnostics.append(
                Diagnostic(
                    Severity.INFO,
                    f"the {len(self.succ[node.id])} outgoing flows of this {node.uml_type or 'action'}"
                    " all carry guards or probabilities: UML reads that as an implicit fork whose guarded"
                    " flows pass only when their guard holds; as the guards exclude each other it is a"
                    " choice, like a decision",
                    node.location,
                    code="implicit-choice",
                )
            )
        else:
            self.shared.warn(
                f"the guards on the outgoing flows of this {node.uml_type or 'action'} ("
                + ", ".join(f"[{t}]" for t in texts)
                + ") may hold together: as UML says, each flow whose guard holds gets a token and"
                " they run concurrently (token-flow form); a decision would take only the first",
                node.location,
                "implicit-fork-guards",
                hint="if only one should run, make the guards exclude each other, add [else],"
                " or draw a decision node",
            )

    def guarded_fork(self, cur: str) -> bool:
        """A fork with guarded flows, or an action whose outgoing flows all carry guards that may hold
        together (UML's implicit fork).

        Each flow whose guard holds gets a token (the token-flow form offers them
        at run time); guards that exclude each other, an ``[else]`` flow or
        probabilities make the node a choice instead.
        """
        if cur in (ENTRY, EXIT):
            return False
        node = self.nodes[cur]
        outs = self.succ[cur]
        if node.kind is NodeKind.FORK:
            # guards on a fork's flows: a token passes only where its guard holds
            return any(e is not None and e.guard is not None and not is_else(e.guard) for e, _ in outs)
        if node.kind is NodeKind.DECISION or len(outs) < 2:
            return False
        edges = [e for e, _ in outs]
        if any(e is None or e.guard is None or is_else(e.guard) or e.probability is not None for e in edges):
            return False
        return not exclusive([e.guard or "" for e in edges if e is not None])

    def _terminates(self, node_id: str) -> bool:
        """True when the flow from ``node_id`` runs a plain chain into a final node."""
        seen = 0
        while seen < 64:
            node = self.nodes.get(node_id)
            if node is None:
                return node_id == EXIT
            if node.kind in FINAL_KINDS:
                return True
            outs = self.succ[node_id]
            if len(outs) != 1:
                return False
            node_id = outs[0][1]
            seen += 1
        return False

    def _seq(self, start: str, stop: str, ctx: Context, *, header: str | None = None) -> list[Statement]:
        """The statements from ``start`` up to ``stop`` (written by :class:`~.recovery.RegionRecovery`)."""
        raise NotImplementedError


def straight_chain(region: Region) -> list[Node] | None:
    """The region's nodes in flow order when the region is one straight chain, else ``None``.

    A chain is what long sequences are: one initial node, at most one flow
    into and out of each node, every node on the path from the initial node
    and a final node only at its end.  Recovery of a chain is its statements
    in order, so it needs none of the tables the general walk builds
    (successors, predecessors, reachability, loop headers); anything else,
    including every case the general walk would warn about, returns ``None``.
    """
    nodes = region.nodes
    if not nodes:
        return None
    if _chain_in_file_order(region):
        return list(nodes)
    by_id = {node.id: node for node in nodes}
    if len(by_id) != len(nodes):
        return None
    following: dict[str, str] = {}
    entered: set[str] = set()
    for edge in region.edges:
        source, sink = edge.source, edge.target
        if source in following or sink in entered or source not in by_id or sink not in by_id:
            return None
        following[source] = sink
        entered.add(sink)
    initials = [node for node in nodes if node.kind is NodeKind.INITIAL]
    if len(initials) != 1 or initials[0].id in entered:
        return None
    # no node is entered twice and the initial node not at all, so this walk cannot come back
    chain = [initials[0]]
    target = following.get(initials[0].id)
    while target is not None:
        if chain[-1].kind in FINAL_KINDS:
            return None  # a flow leaving a final node: the general rules decide
        chain.append(by_id[target])
        target = following.get(target)
    return chain if len(chain) == len(nodes) else None


def _chain_in_file_order(region: Region) -> bool:
    """Whether the region is a straight chain whose flow order is the file order.

    Exporters write a long sequence in the order it runs, so the general test of
    :func:`straight_chain` (tables of successors and predecessors, then a walk) is
    mostly confirming that.  Here each flow must lead from a node to the next one
    in the file, from a different node each time: with as many flows as nodes minus
    one, that links every node to its successor, so nothing branches, merges or is
    left out.  The first node must be the one initial node and no final node may
    stand before the last.  Anything else (a chain written in another order
    included) is left to the general test.
    """
    nodes = region.nodes
    if region.flow_count() != len(nodes) - 1:
        return False
    if not _flows_in_node_order(region):
        return _chain_by_positions(region)
    return _chain_kinds(nodes)


def _flows_in_node_order(region: Region) -> bool:
    """Whether the k-th flow leads from the k-th node to the next one, for every k (no table needed).

    Exporters usually write the flows of a sequence in the same order as its nodes. Distinct ids
    are still required (a repeated id is left to the general test).
    """
    nodes = region.nodes
    index = 0
    for source, target in region.flow_ends():
        if source != nodes[index].id or target != nodes[index + 1].id:
            return False
        index += 1
    return len({node.id for node in nodes}) == len(nodes)


def _chain_by_positions(region: Region) -> bool:
    """The test of :func:`_chain_in_file_order` for flows written in any order: a table of positions."""
    nodes = region.nodes
    position = {node.id: i for i, node in enumerate(nodes)}
    if len(position) != len(nodes):
        return False  # a repeated id: the general test refuses it
    left = bytearray(len(nodes))  # 1 where a flow already leaves the node at that position
    for source, target in region.flow_ends():  # the reader's rows: no flow record is built
        start = position.get(source)
        if start is None or position.get(target) != start + 1 or left[start]:
            return False
        left[start] = 1
    return _chain_kinds(nodes)


_KIND_OF = attrgetter("kind")


def _chain_kinds(nodes: tuple[Node, ...]) -> bool:
    """The first node is the one initial node and no final node stands before the last."""
    if nodes[0].kind is not NodeKind.INITIAL:
        return False
    kinds = list(map(_KIND_OF, nodes))  # the tests below run in C over tens of thousands of nodes
    if NodeKind.INITIAL in islice(kinds, 1, None):
        return False
    return not any(map(FINAL_KINDS.__contains__, islice(kinds, len(kinds) - 1)))


# --------------------------------------------------------------------------- exclusive guards

_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}


def exclusive(texts: list[str]) -> bool:
    """True when no two of the guard expressions ``texts`` can hold at once (checked, not guessed).

    Two guards exclude each other when one is ``not`` the other, or when both
    compare the same name with a number and the ranges they allow do not
    overlap (``n > 2`` and ``n <= 2``, ``mode == 1`` and ``mode == 2``).
    """

    ranges: list[tuple[str, float, bool, float, bool] | None] = []
    trees: list[ast.expr | None] = []
    from ..expressions import parse_expression

    for text in texts:
        try:
            tree: ast.expr | None = parse_expression(text, what="guard").tree.body
        except ModelError:
            tree = None
        trees.append(tree)
        ranges.append(_range(tree) if tree is not None else None)
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            if not _apart(trees[i], trees[j], ranges[i], ranges[j]):
                return False
    return True


def _apart(
    a: ast.expr | None,
    b: ast.expr | None,
    ra: tuple[str, float, bool, float, bool] | None,
    rb: tuple[str, float, bool, float, bool] | None,
) -> bool:
    if a is None or b is None:
        return False
    for x, y in ((a, b), (b, a)):
        if isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.Not) and ast.dump(x.operand) == ast.dump(y):
            return True
        if (
            isinstance(x, ast.Compare)
            and isinstance(y, ast.Compare)
            and [type(o) for o in x.ops] == [ast.NotEq]
            and [type(o) for o in y.ops] == [ast.Eq]
            and ast.dump(x.left) == ast.dump(y.left)
            and ast.dump(x.comparators[0]) == ast.dump(y.comparators[0])
        ):
            return True
    if ra is None or rb is None or ra[0] != rb[0]:
        return False
    _, lo_a, lo_in_a, hi_a, hi_in_a = ra
    _, lo_b, lo_in_b, hi_b, hi_in_b = rb
    if hi_a < lo_b or hi_b < lo_a:
        return True
    if hi_a == lo_b and not (hi_in_a and lo_in_b):
        return True
    return hi_b == lo_a and not (hi_in_b and lo_in_a)


def _range(tree: ast.expr) -> tuple[str, float, bool, float, bool] | None:
    """``name op number`` as (name, low, low included, high, high included), else None."""
    if not isinstance(tree, ast.Compare) or len(tree.ops) != 1:
        return None
    left, right = tree.left, tree.comparators[0]
    symbol = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "=="}.get(type(tree.ops[0]))
    if symbol is None:
        return None
    if isinstance(left, ast.Constant) and not isinstance(right, ast.Constant):
        left, right, symbol = right, left, _FLIPPED[symbol]
    if not isinstance(right, ast.Constant) or isinstance(right.value, bool):
        return None
    if not isinstance(right.value, (int, float)):
        return None
    name = ast.dump(left)
    value = float(right.value)
    if symbol == "==":
        return name, value, True, value, True
    if symbol in ("<", "<="):
        return name, -math.inf, False, value, symbol == "<="
    return name, value, symbol == ">=", math.inf, False
