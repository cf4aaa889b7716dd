"""Control-flow recovery: from activity graphs to a tree of structured statements.

UML activities are graphs; generated code wants ``if``/``while``/``for``.  This
module turns each region (an activity, or the inside of a structured node) into
a small statement tree that handlers print:

* a chain of nodes becomes a :class:`Sequence`;
* a decision becomes an :class:`If` whose branches end at the decision's
  immediate post-dominator (the merge), ``else`` last;
* a cycle through a merge becomes a :class:`While` (natural loops found with
  dominators, tested at the top or at the bottom), with ``break``/``continue``
  where edges leave the loop or return to its header;
* a fork becomes a :class:`Parallel` whose branches end at the fork's
  immediate post-dominator (the join);
* structured nodes, loop nodes, conditional nodes, ``repeat`` tags and the
  thread/pattern roles (``parallel+``, ``critical+``, ``pipeline+``,
  ``taskpool+``) become their own statements.

A UML LoopNode runs its setup once, then iterates: ``loop+ iterations`` (or
``while``) on the node, else the condition its test computes (a ``while``
when ``isTestedFirst``, a do-while otherwise), else MARTE ``rep``; a loop
with none of them runs once, with a warning.  A ConditionalNode becomes an
``if``/``elif``/``else`` over its clauses in ``predecessorClause`` order: a
clause's condition is a ``clause+`` guard on its test (or body) action, else
the condition its test computes, else a ``probability`` (``clause+`` or MARTE
``prob``) for a seeded random choice; a last clause without tests is the
``else``.  Clauses with no condition at all are chosen at random, 1/N each,
with a warning.  Tests cost what their actions cost: a clause's test runs
when every clause before it failed (in a random choice, all tests run
first).  Sections of loop and conditional nodes have no initial node by
design, so they do not get the missing-initial warning.

Graphs that no structured form describes (irreducible loops, jumps out of
nested loops) still generate correct code: the smallest single-entry region
around the problem becomes a :class:`StateMachine` (numbered states and a
dispatch loop) while everything else stays structured.

Recovery works on ids and keeps ties in file order, so the same model always
gives the same tree.  networkx is imported only when a region has cycles or
branches; plain chains never pay for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from ..errors import Diagnostic, Location, ModelError, Severity
from ..expressions import means_else as _is_else
from ..model import Activity, Clause, CostFunction, Edge, Model, Node, NodeKind, PerfSpec, Region, Role

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

ENTRY = "\x00entry"
EXIT = "\x00exit"

FINAL_KINDS = frozenset({NodeKind.ACTIVITY_FINAL, NodeKind.FLOW_FINAL})
PASS_KINDS = frozenset({NodeKind.INITIAL, NodeKind.MERGE, NodeKind.JOIN, NodeKind.OBJECT})


# --------------------------------------------------------------------------- statements


class Statement:
    """Base of every recovered statement; ``kind`` names it for handler dispatch."""

    __slots__ = ()

    @property
    def kind(self) -> str:
        return type(self).__name__

    def children(self) -> tuple[Statement, ...]:
        """Direct sub-statements in execution order (used by navigators)."""
        return ()


@dataclass(frozen=True, slots=True, eq=False)
class Sequence(Statement):
    """Statements run one after the other."""

    body: tuple[Statement, ...] = ()

    def children(self) -> tuple[Statement, ...]:
        return self.body

    def __len__(self) -> int:
        return len(self.body)


@dataclass(frozen=True, slots=True, eq=False)
class Exec(Statement):
    """Run one element: an action or a communication (what its ``perf.role`` says)."""

    node: Node
    function: CostFunction | None = None  # a CallBehaviorAction that calls a cost function


@dataclass(frozen=True, slots=True, eq=False)
class Call(Statement):
    """Run another activity (CallBehaviorAction, ``activity+`` call) as a generator function."""

    node: Node
    activity: Activity


@dataclass(frozen=True, slots=True, eq=False)
class Block(Statement):
    """A structured activity node inlined: its nested region, bracketed by enter/leave.

    ``scoped`` is true when the region ends early somewhere (a final node that
    is not at its end): UML ends only the structured node there, so handlers
    must give the body its own scope (a nested function) instead of inlining.
    """

    node: Node
    body: Sequence
    scoped: bool = False

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


class CondKind(str, Enum):
    GUARD = "guard"
    ELSE = "else"
    PROBABILITY = "probability"


@dataclass(frozen=True, slots=True, eq=False)
class Cond:
    """A branch condition: a guard expression, ``else``, or a probability.

    ``negate`` is set when a loop's exit guard became a ``while`` condition.
    ``location`` points at the flow (or node) that wrote the text.
    """

    kind: CondKind
    text: str | None = None
    location: Location = Location()
    edge: Edge | None = None
    negate: bool = False

    def negated(self) -> Cond:
        return Cond(self.kind, self.text, self.location, self.edge, not self.negate)


@dataclass(frozen=True, slots=True, eq=False)
class Branch:
    cond: Cond
    body: Sequence


@dataclass(frozen=True, slots=True, eq=False)
class If(Statement):
    """A choice: guards in order, probabilities (one draw of ``p.random()``), ``else`` last."""

    node: Node | None
    branches: tuple[Branch, ...]

    @property
    def is_random(self) -> bool:
        return any(b.cond.kind is CondKind.PROBABILITY for b in self.branches)

    def children(self) -> tuple[Statement, ...]:
        return tuple(b.body for b in self.branches)


@dataclass(frozen=True, slots=True, eq=False)
class While(Statement):
    """A loop; ``cond`` None means ``while True`` left by a :class:`Break`.

    ``node`` is the element whose ``p.iteration`` counter limits runaway loops.
    """

    node: Node | None
    cond: Cond | None
    body: Sequence

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


@dataclass(frozen=True, slots=True, eq=False)
class For(Statement):
    """A counted loop (``loop+`` with ``iterations``)."""

    node: Node
    count: str
    body: Sequence

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


@dataclass(frozen=True, slots=True, eq=False)
class Repeat(Statement):
    """A ``repeat`` tag: the wrapped statement runs ``count`` times."""

    node: Node | None
    count: str
    body: Sequence

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


@dataclass(frozen=True, slots=True, eq=False)
class Break(Statement):
    """Leave the innermost loop."""


@dataclass(frozen=True, slots=True, eq=False)
class Continue(Statement):
    """Start the next iteration of the innermost loop."""


@dataclass(frozen=True, slots=True, eq=False)
class Return(Statement):
    """The flow ends here (activity final or flow final not at the end of its scope)."""

    node: Node | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Parallel(Statement):
    """Fork/join: the branches run concurrently inside the process; all are awaited."""

    node: Node | None
    branches: tuple[Sequence, ...]

    def children(self) -> tuple[Statement, ...]:
        return self.branches


@dataclass(frozen=True, slots=True, eq=False)
class ParallelRegion(Statement):
    """``parallel+``: the body runs once per thread (``threads`` expression or the default)."""

    node: Node
    threads: str | None
    body: Sequence

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


@dataclass(frozen=True, slots=True, eq=False)
class Critical(Statement):
    """``critical+``: the body runs under the named lock of the process."""

    node: Node
    name: str
    body: Sequence

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


@dataclass(frozen=True, slots=True, eq=False)
class Pipeline(Statement):
    """``pipeline+``: the stages (child nodes in flow order) over a stream of ``items``."""

    node: Node
    items: str | None
    stages: tuple[Sequence, ...]

    def children(self) -> tuple[Statement, ...]:
        return self.stages


@dataclass(frozen=True, slots=True, eq=False)
class TaskPool(Statement):
    """``taskpool+``: ``items`` tasks (each the body) served by ``threads`` workers."""

    node: Node
    threads: str | None
    items: str | None
    body: Sequence

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


@dataclass(frozen=True, slots=True, eq=False)
class Transition:
    """A state machine edge; ``target`` −1 leaves the state machine."""

    cond: Cond | None
    target: int


@dataclass(frozen=True, slots=True, eq=False)
class State:
    """One numbered state: a chain of nodes, then its outgoing transitions."""

    index: int
    nodes: tuple[Node, ...]
    body: Sequence
    transitions: tuple[Transition, ...]

    @property
    def is_random(self) -> bool:
        return any(t.cond is not None and t.cond.kind is CondKind.PROBABILITY for t in self.transitions)


@dataclass(frozen=True, slots=True, eq=False)
class StateMachine(Statement):
    """Fallback for an unstructured region: ``while _state >= 0`` dispatching numbered states."""

    node: Node
    states: tuple[State, ...]

    def children(self) -> tuple[Statement, ...]:
        return tuple(s.body for s in self.states)


@dataclass(frozen=True, slots=True, eq=False)
class ActivityBody(Statement):
    """The recovered body of one activity (the root a generator function is made of)."""

    activity: Activity
    body: Sequence
    repeat: str | None = None

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


@dataclass(frozen=True, slots=True)
class RecoveredModel:
    """Every activity of a model with its statement tree, in file order."""

    model: Model
    activities: tuple[ActivityBody, ...]
    main: Activity | None
    diagnostics: tuple[Diagnostic, ...] = ()

    def body(self, activity_id: str) -> ActivityBody | None:
        for item in self.activities:
            if item.activity.id == activity_id:
                return item
        return None


def walk(statement: Statement) -> Iterator[Statement]:
    """Every statement of a tree, depth first, in execution order."""
    stack = [statement]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children()))


# --------------------------------------------------------------------------- recovery


class Unstructured(Exception):
    """Raised inside recovery when a region cannot be written with structured statements."""


@dataclass(frozen=True, slots=True)
class _LoopCtx:
    header: str
    body: frozenset[str]
    follow: str | None


@dataclass(frozen=True, slots=True)
class _Barrier:
    """A scope (a branch function, a loop exit path) that must not leave through loops."""

    body: frozenset[str] | None
    headers: frozenset[str]


_Ctx = tuple[_LoopCtx | _Barrier, ...]


@dataclass
class _Shared:
    """Model-wide lookups shared by the recovery of every region."""

    model: Model
    activities: Mapping[str, Activity]
    functions: Mapping[str, CostFunction]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: recover every region as one flat state machine (for graphs whose structured form nests too deeply)
    flat: bool = False

    def warn(self, message: str, location: Location, code: str, hint: str | None = None) -> None:
        self.diagnostics.append(Diagnostic(Severity.WARNING, message, location, hint, code))


def _tag(node: Node, name: str) -> str | None:
    return node.perf.get(name) if node.perf is not None else None


def _repeat_text(perf: PerfSpec | None) -> str | None:
    if perf is None:
        return None
    text = perf.get("repeat")
    if text is None or text.strip() in {"", "1"}:
        return None
    return text


class RegionRecovery:
    """Recovers one region (activity or structured node) into a :class:`Sequence`."""

    #: above this many statements per node the structured form is duplicating too much
    DUPLICATION_LIMIT = 4

    def __init__(self, region: Region, owner: Location, shared: _Shared, *, section: bool = False) -> None:
        self.region = region
        self.owner = owner
        self.shared = shared
        #: a part of a loop or conditional node: UML gives those no initial node
        self.section = section
        #: the region's nodes in flow order when it is one straight chain (see ``recover``)
        self.chain = _straight_chain(region)
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
        self._setup_entry()

    # ------------------------------------------------------------------ graph facts

    def _setup_entry(self) -> None:
        initials = [n.id for n in self.region.nodes if n.kind is NodeKind.INITIAL]
        if not initials:
            # nodes no flow reaches start the flow, except final nodes: no token ever gets there
            initials = [n.id for n in self.region.nodes if not self.pred[n.id] and n.kind not in FINAL_KINDS]
            if self.region.nodes and not initials:
                initials = [self.region.nodes[0].id]
            if self.region.nodes and not self.section:
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
        # flows from nodes that never run do not make anything a merge or a loop entry
        self.pred = {n: [p for p in preds if p in reachable] for n, preds in self.pred.items()}
        for node in self.region.nodes:
            if node.id not in reachable:
                self.shared.warn(
                    "element is not reachable from the start of the flow; it is never run",
                    node.location,
                    "unreachable",
                    hint="connect it with a control flow or delete it",
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

    @property
    def ipdom(self) -> dict[str, str]:
        """Immediate post-dominators (towards EXIT); cycles with no way out get a virtual exit."""
        if self._ipdom is None:
            import networkx as nx

            graph = self._graph()
            reach_exit = nx.ancestors(graph, EXIT) | {EXIT}
            stuck = [n for n in graph if n not in reach_exit]
            while stuck:
                # a cycle with no exit: give its sink component an exit so post-dominance is defined
                sub = graph.subgraph(stuck)
                cond = nx.condensation(sub)
                for comp in cond:
                    if cond.out_degree(comp) == 0:
                        members = sorted(cond.nodes[comp]["members"], key=self.order.__getitem__)
                        graph.add_edge(members[0], EXIT)
                        self.shared.warn(
                            "this cycle has no exit: the loop never ends (the run stops at the iteration limit)",
                            self._location(members[0]),
                            "endless-loop",
                            hint="add a decision with a guard that leaves the loop",
                        )
                reach_exit = nx.ancestors(graph, EXIT) | {EXIT}
                stuck = [n for n in graph if n not in reach_exit]
            self._ipdom = nx.immediate_dominators(graph.reverse(copy=False), EXIT)
        return self._ipdom

    @property
    def idom(self) -> dict[str, str]:
        if self._idom is None:
            import networkx as nx

            self._idom = nx.immediate_dominators(self._graph(), ENTRY)
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

    # ------------------------------------------------------------------ entry point

    def recover(self, *, keep_final: bool = False) -> Sequence:
        """The whole region as a statement sequence (tail returns removed).

        ``keep_final`` keeps the return of an activity final at the end: a loop
        node's section ends there, but a final node ends the whole loop node.

        Object flows carry data; where they also order the flow with a
        structured (or state-machine) form they are kept.  fUML-style data
        flow through forks into loops has neither, so such a region is
        recovered once more from its control flows alone, with a note.
        """
        if self.chain is not None:
            return self._recover_chain(self.chain, keep_final)
        mark = len(self.shared.diagnostics)
        try:
            return self._recover(keep_final)
        except (Unstructured, RecursionError):
            control = tuple(e for e in self.region.edges if e.kind != "object")
            if len(control) == len(self.region.edges):
                raise ModelError(
                    "this flow has no form uml2perf can generate (a fork whose branches loop back before it)",
                    self.owner,
                    hint="draw concurrent branches that end in a join, and loops through a decision and a merge",
                ) from None
        del self.shared.diagnostics[mark:]
        body = RegionRecovery(
            Region(self.region.nodes, control), self.owner, self.shared, section=self.section
        )._recover(keep_final)
        dropped = len(self.region.edges) - len(control)
        self.shared.diagnostics.append(
            Diagnostic(
                Severity.INFO,
                f"{dropped} object flow{'s' if dropped != 1 else ''} ignored: this data flow has no structured form, "
                "so the control flows alone order the region",
                self.owner,
                code="object-flows-ignored",
            )
        )
        return body

    def _recover_chain(self, chain: list[Node], keep_final: bool) -> Sequence:
        """What :meth:`_seq` gives for a straight chain, in one pass: its statements in order.

        The walk ends at a final node (a ``return``) or at a node without a
        successor (leaving the region, a bare ``return``); the tail return is
        then dropped exactly as for any other region.
        """
        shared = self.shared
        body: list[Statement] = []
        for node in chain:
            stmt = node_statement(node, shared)
            if stmt is not None:
                body.append(stmt)
        last = chain[-1]
        body.append(Return(last) if last.kind in FINAL_KINDS else Return())
        return Sequence(tuple(_strip_tail(body, keep_final=keep_final)))

    def _recover(self, keep_final: bool = False) -> Sequence:
        try:
            if self.shared.flat:
                raise Unstructured(ENTRY)
            body = self._seq(ENTRY, EXIT, ())
        except Unstructured:
            self._emitted = 0
            body = [self._state_machine(ENTRY, (), follow=EXIT)]
        except RecursionError:
            self._emitted = 0
            body = [self._state_machine(ENTRY, (), follow=EXIT)]
            self.shared.warn(
                "this flow is nested too deeply for structured code: generated as a flat state machine instead "
                "(same behaviour, less readable code)",
                self.owner,
                "flat-state-machine",
                hint="split deeply nested parts into activities of their own for structured code",
            )
        return Sequence(tuple(_strip_tail(body, keep_final=keep_final)))

    # ------------------------------------------------------------------ the walk

    def _arrive(self, node_id: str, ctx: _Ctx) -> list[Statement] | None:
        """Statements ending the walk when ``node_id`` is a loop jump, else None."""
        if not ctx:
            return None
        top = ctx[-1]
        if isinstance(top, _Barrier):
            if node_id in top.headers or (
                top.body is not None and node_id not in top.body and not self._terminates(node_id)
            ):
                raise Unstructured(node_id)
            return None
        if node_id == top.header:
            return [Continue()]
        if node_id in top.body:
            return None
        if node_id == top.follow:
            return [Break()]
        # leaving the loop somewhere else: run that path, then leave
        outer = [c for c in ctx[:-1] if isinstance(c, _LoopCtx)]
        barrier = _Barrier(
            outer[-1].body if outer else None,
            frozenset(c.header for c in outer),
        )
        stop = top.follow if top.follow is not None else EXIT
        path, ended = self._seq_ended(node_id, stop, (*ctx[:-1], barrier))
        return path if ended else [*path, Break()]

    def _seq_ended(self, start: str, stop: str, ctx: _Ctx) -> tuple[list[Statement], bool]:
        body = self._seq(start, stop, ctx)
        return body, bool(body) and isinstance(body[-1], (Return, Break, Continue))

    def _seq(self, start: str, stop: str, ctx: _Ctx, *, header: str | None = None) -> list[Statement]:
        out: list[Statement] = []
        cur = start
        first = True
        while True:
            if not (first and cur == header):
                jump = self._arrive(cur, ctx)
                if jump is not None:
                    out.extend(jump)
                    return out
                if cur == stop:
                    return out
                if cur == EXIT:
                    out.append(Return())
                    return out
                if cur in self.headers and not any(isinstance(c, _LoopCtx) and c.header == cur for c in ctx):
                    stmt, follow = self._guarded(cur, ctx, self._loop)
                    out.append(stmt)
                    if follow is None:
                        return out
                    cur = follow
                    continue
            first = False
            self._emitted += 1
            if self._emitted > self.DUPLICATION_LIMIT * (len(self.nodes) + 8):
                raise Unstructured(cur)
            node = self.nodes.get(cur)
            if node is not None:
                if node.kind in FINAL_KINDS:
                    out.append(Return(node))
                    return out
                stmt = node_statement(node, self.shared)
                if stmt is not None:
                    out.append(stmt)
            outs = self.succ[cur]
            if len(outs) == 1:
                cur = outs[0][1]
                continue
            if not outs:
                return out
            stmt2, follow = self._guarded(
                cur, ctx, lambda c, x: self._diverge(c, stop, x), emitted=node is not None
            )
            out.append(stmt2)
            if follow is None:
                return out
            cur = follow

    def _guarded(
        self, cur: str, ctx: _Ctx, build: Any, *, emitted: bool = False
    ) -> tuple[Statement, str | None]:
        """Build a construct at ``cur``; on failure fall back to a state machine there.

        ``emitted`` says the node's own statement is already out, so the state
        machine must not run it a second time.
        """
        try:
            return build(cur, ctx)
        except Unstructured:
            follow = self._sm_follow(cur)
            return self._state_machine(cur, ctx, emitted=emitted, follow=follow), follow

    def _diverge(self, cur: str, stop: str, ctx: _Ctx) -> tuple[Statement, str | None]:
        """A node with several successors: a decision (If) or a fork (Parallel)."""
        outs = self.succ[cur]
        node = self.nodes.get(cur)
        follow = self.ipdom.get(cur, EXIT)
        loop = next((c for c in reversed(ctx) if isinstance(c, _LoopCtx)), None)
        if self._is_fork(cur):
            inner_ctx: _Ctx = ()
            if ctx and isinstance(ctx[-1], _Barrier):
                inner_ctx = (ctx[-1],)
            elif loop is not None:
                headers = frozenset(c.header for c in ctx if isinstance(c, _LoopCtx))
                inner_ctx = (_Barrier(loop.body, headers),)
            branches = tuple(
                Sequence(tuple(_strip_tail(self._seq(target, follow, inner_ctx), keep_final=True)))
                for _, target in outs
            )
            return Parallel(node, branches), follow
        if ctx and isinstance(ctx[-1], _LoopCtx):
            top = ctx[-1]
            if follow == top.header or follow not in top.body:
                branch_stop: str | None = None
            else:
                branch_stop = follow
        else:
            branch_stop = follow if follow != EXIT else stop
        branches_out: list[Branch] = []
        for cond, target in self._conditions(cur):
            body = self._seq(target, branch_stop if branch_stop is not None else "\x00none", ctx)
            branches_out.append(Branch(cond, Sequence(tuple(body))))
        return If(node, tuple(branches_out)), branch_stop

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
            if _is_else(edge.guard):
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
        if len(otherwise) > 1:
            raise ModelError(
                "more than one outgoing flow is guarded [else]",
                node.location,
                hint="keep one [else] flow and give the others guards",
            )
        return guarded + probable + otherwise

    # ------------------------------------------------------------------ loops

    def _loop_follow(self, header: str, body: frozenset[str]) -> str | None:
        exits = []
        for member in sorted(body, key=self.order.__getitem__):
            for _, target in self.succ[member]:
                if target not in body and target not in exits:
                    exits.append(target)
        if not exits:
            return None
        if len(exits) == 1:
            return exits[0]
        lasting = [t for t in exits if not self._terminates(t)]
        if len(lasting) == 1:
            return lasting[0]
        return self.ipdom.get(header, EXIT)

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

    def _loop(self, header: str, ctx: _Ctx) -> tuple[Statement, str | None]:
        if header in self._irreducible:
            raise Unstructured(header)
        body_nodes = self.headers[header]
        follow = self._loop_follow(header, body_nodes)
        if follow is None:
            self.ipdom  # noqa: B018 - records the endless-loop warning
        loop_ctx = _LoopCtx(header, body_nodes, follow)
        body = self._seq(header, "\x00none", (*ctx, loop_ctx), header=header)
        stmt = _shape_loop(self.nodes.get(header), body)
        return stmt, follow if follow is not None else None

    # ------------------------------------------------------------------ state machine fallback

    def _sm_follow(self, start: str) -> str:
        """Where a state machine started at ``start`` hands back to structured code.

        The nearest post-dominator of ``start`` from which the flow can never
        come back into the state machine's region.
        """
        follow = self.ipdom.get(start, EXIT)
        while follow != EXIT:
            region = set(self._sm_region(start, follow))
            if not (self._reachable(follow) & region):
                break
            follow = self.ipdom.get(follow, EXIT)
        return follow

    def _sm_region(self, start: str, follow: str) -> list[str]:
        seen = {start}
        order = [start]
        stack = [start]
        while stack:
            current = stack.pop()
            for _, target in self.succ[current]:
                if target != follow and target != EXIT and target not in seen:
                    seen.add(target)
                    order.append(target)
                    stack.append(target)
        return sorted(order, key=self.order.__getitem__)

    def _state_machine(
        self, start: str, ctx: _Ctx, *, emitted: bool = False, follow: str | None = None
    ) -> Statement:
        if follow is None:
            follow = self._sm_follow(start)
        members = self._sm_region(start, follow)
        member_set = set(members)
        for member in members:
            if member != start and any(p not in member_set for p in self.pred[member]):
                raise Unstructured(member)
        if ctx:
            top = ctx[-1]
            body = top.body
            headers = {top.header} if isinstance(top, _LoopCtx) else set(top.headers)
            outside = member_set - body if body is not None else set()
            if member_set & headers or any(not self._terminates(m) for m in outside):
                raise Unstructured(start)
        # states: maximal chains, numbered in walk order from the start
        index: dict[str, int] = {}
        chains: list[list[str]] = []
        pending = [start]
        while pending:
            head = pending.pop(0)
            if head in index:
                continue
            chain = [head]
            index[head] = len(chains)
            current = head
            while True:
                outs = self.succ[current]
                node = self.nodes.get(current)
                if len(outs) != 1 or (node is not None and node.kind in FINAL_KINDS):
                    break
                nxt = outs[0][1]
                if nxt not in member_set or nxt in index or len(self.pred[nxt]) != 1 or nxt == start:
                    break
                chain.append(nxt)
                index[nxt] = len(chains)
                current = nxt
            chains.append(chain)
            for _, target in self.succ[chain[-1]]:
                if target in member_set and target not in index:
                    pending.append(target)
            if self._is_fork(chain[-1]) and len(self.succ[chain[-1]]) > 1:
                join = self.ipdom.get(chain[-1], EXIT)
                if join in member_set and join not in index:
                    pending.append(join)
        states: list[State] = []
        for number, chain in enumerate(chains):
            body: list[Statement] = []
            nodes: list[Node] = []
            for member in chain:
                node = self.nodes.get(member)
                if node is None:
                    continue
                nodes.append(node)
                if member == start and emitted and number == 0:
                    continue
                if node.kind in FINAL_KINDS:
                    body.append(Return(node))
                else:
                    stmt = node_statement(node, self.shared)
                    if stmt is not None:
                        body.append(stmt)
            last = chain[-1]
            last_node = self.nodes.get(last)
            transitions: list[Transition] = []
            if last_node is not None and last_node.kind in FINAL_KINDS:
                pass
            elif len(self.succ[last]) > 1 and self._is_fork(last):
                join = self.ipdom.get(last, EXIT)
                barrier = _Barrier(frozenset(member_set), frozenset())
                branches = tuple(
                    Sequence(tuple(_strip_tail(self._seq(t, join, (barrier,)), keep_final=True)))
                    for _, t in self.succ[last]
                )
                body.append(Parallel(last_node, branches))
                transitions.append(Transition(None, index.get(join, -1)))
            elif len(self.succ[last]) > 1:
                for cond, target in self._conditions(last):
                    transitions.append(Transition(cond, index.get(target, -1)))
            else:
                target = self.succ[last][0][1]
                transitions.append(Transition(None, index.get(target, -1)))
            states.append(State(number, tuple(nodes), Sequence(tuple(body)), tuple(transitions)))
        first = self.nodes.get(start) or next(iter(self.nodes.values()))
        self.shared.diagnostics.append(
            Diagnostic(
                Severity.INFO,
                "this part of the flow has no structured form (jumps into or out of loops or branches);"
                " it is generated as a state machine",
                first.location,
                code="state-machine",
            )
        )
        return StateMachine(first, tuple(states))


def _shape_loop(header: Node | None, body: list[Statement]) -> While:
    """Give a recovered ``while True`` its readable form (test at top or at bottom)."""
    body = list(body)
    while body and isinstance(body[-1], Continue):
        body.pop()
    if body and isinstance(body[0], If) and len(body[0].branches) == 2:
        first = body[0]
        exit_index = [i for i, b in enumerate(first.branches) if _only(b.body, Break)]
        if len(exit_index) == 1 and all(b.cond.kind is not CondKind.PROBABILITY for b in first.branches):
            stay = first.branches[1 - exit_index[0]]
            leave = first.branches[exit_index[0]]
            cond = stay.cond if stay.cond.kind is CondKind.GUARD else leave.cond.negated()
            if cond.kind is CondKind.GUARD:
                rest = [*stay.body.body, *body[1:]]
                while rest and isinstance(rest[-1], Continue):
                    rest.pop()
                return While(header, cond, Sequence(tuple(rest)))
    if body and isinstance(body[-1], If) and len(body[-1].branches) == 2:
        last = body[-1]
        kinds = [(_only(b.body, Break), _only(b.body, Continue) or not b.body.body) for b in last.branches]
        if sorted(kinds) == [(False, True), (True, False)] and not last.is_random:
            leave = last.branches[0] if kinds[0][0] else last.branches[1]
            stay = last.branches[1] if kinds[0][0] else last.branches[0]
            cond = leave.cond if leave.cond.kind is CondKind.GUARD else stay.cond.negated()
            if cond.kind is CondKind.GUARD:
                body[-1] = If(last.node, (Branch(cond, Sequence((Break(),))),))
    return While(header, None, Sequence(tuple(body)))


def _only(seq: Sequence, kind: type) -> bool:
    return len(seq.body) == 1 and isinstance(seq.body[0], kind)


def _strip_tail(body: list[Statement], *, keep_final: bool = False) -> list[Statement]:
    """Drop a ``return`` that ends its scope anyway (also inside tail if-branches).

    ``keep_final`` keeps the return of an activity final: at the end of a fork
    branch it ends more than the branch (the whole activity, every branch).
    """
    if not body:
        return body
    last = body[-1]
    if isinstance(last, Return):
        if keep_final and _is_activity_final(last):
            return body
        return body[:-1]
    if isinstance(last, If):
        branches = tuple(
            Branch(b.cond, Sequence(tuple(_strip_tail(list(b.body.body), keep_final=keep_final))))
            for b in last.branches
        )
        return [*body[:-1], If(last.node, branches)]
    return body


def _is_activity_final(stmt: Return) -> bool:
    return stmt.node is not None and stmt.node.kind is NodeKind.ACTIVITY_FINAL


#: statements whose bodies the handlers write as nested functions run by the runtime
_THREAD_BODIES = (ParallelRegion, Critical, TaskPool, Pipeline)


def _straight_chain(region: Region) -> list[Node] | None:
    """The region's nodes in flow order when the region is one straight chain, else ``None``.

    A chain is what long sequences are: one initial node, at most one flow
    into and out of each node, every node on the path from the initial node
    and a final node only at its end.  Recovery of a chain is its statements
    in order, so it needs none of the tables the general walk builds
    (successors, predecessors, reachability, loop headers); anything else,
    including every case the general walk would warn about, returns ``None``.
    """
    nodes = region.nodes
    by_id = {node.id: node for node in nodes}
    if not nodes or len(by_id) != len(nodes):
        return None
    following: dict[str, str] = {}
    entered: set[str] = set()
    for edge in region.edges:
        source, target = edge.source, edge.target
        if source in following or target in entered or source not in by_id or target not in by_id:
            return None
        following[source] = target
        entered.add(target)
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


def _has_return(statement: Statement) -> bool:
    """A return that would leave more than the current scope.

    Returns inside nested functions (scoped blocks, thread bodies) end only
    those; inside fork branches only an activity final ends more than its branch.
    """
    stack: list[tuple[Statement, bool]] = [(statement, False)]
    while stack:
        item, in_branch = stack.pop()
        if isinstance(item, Return):
            if not in_branch or _is_activity_final(item):
                return True
        elif isinstance(item, Block) and item.scoped or isinstance(item, _THREAD_BODIES):
            continue
        else:
            branch = in_branch or isinstance(item, Parallel)
            stack.extend((child, branch) for child in item.children())
    return False


def _own_scope(node: Node, stmt: Statement) -> Statement:
    """A region-owning node (loop, conditional) whose flow ends early somewhere gets its own scope.

    A final node inside it ends the node only (UML), and its enter/leave
    bracket must hold on every way out: the returns then leave a nested
    function, and the bracket stays around its call.
    """
    if not _has_return(stmt):
        return stmt
    if isinstance(stmt, Block) and stmt.node is node:
        return Block(node, stmt.body, scoped=True)  # a loop node's setup block: scope it, do not nest it
    return Block(node, Sequence((stmt,)), scoped=True)


# --------------------------------------------------------------------------- node statements


def node_statement(node: Node, shared: _Shared) -> Statement | None:
    """The statement for one executable node, wrapped in its role and ``repeat``."""
    stmt = _core_statement(node, shared)
    if stmt is None:
        return None
    repeat = _repeat_text(node.perf)
    if repeat is not None and not (node.kind is NodeKind.LOOP and _loop_source(node) == "repeat"):
        stmt = Repeat(node, repeat, Sequence((stmt,)))
    return stmt


def _recover_nested(node: Node, region: Region, shared: _Shared) -> tuple[Sequence, bool]:
    body = RegionRecovery(region, node.location, shared).recover()
    return body, _has_return(body)


def _subset_region(region: Region, ids: Iterable[str]) -> Region:
    wanted = set(ids)
    return Region(
        tuple(n for n in region.nodes if n.id in wanted),
        tuple(e for e in region.edges if e.source in wanted and e.target in wanted),
    )


def _core_statement(node: Node, shared: _Shared) -> Statement | None:
    kind = node.kind
    role = node.perf.role if node.perf is not None else None
    if kind is NodeKind.ACTION and (role is None or role is Role.ACTION):
        return Exec(node)  # the common case, decided before the set lookups below
    if kind in CONTROL_NO_STATEMENT:
        return None
    if kind is NodeKind.CALL:
        stmt = _call_statement(node, shared)
    elif kind is NodeKind.LOOP:
        return _own_scope(node, _loop_node(node, shared))
    elif kind is NodeKind.CONDITIONAL:
        return _own_scope(node, _conditional_node(node, shared))
    elif kind is NodeKind.STRUCTURED and node.region is not None:
        body, scoped = _recover_nested(node, node.region, shared)
        if role is Role.LOOP:
            return _tagged_loop(node, _iteration(node, body))
        if role is Role.PIPELINE:
            return Pipeline(node, _tag(node, "items"), tuple(Sequence((s,)) for s in body.body))
        stmt = Block(node, body, scoped)
        if role in WRAPPING_ROLES:
            return _wrap_role(node, role, body if not scoped else Sequence((stmt,)))
        return stmt
    else:
        stmt = Exec(node)
    if role in WRAPPING_ROLES:
        return _wrap_role(node, role, Sequence((stmt,)))
    return stmt


CONTROL_NO_STATEMENT = frozenset(
    {
        NodeKind.INITIAL,
        NodeKind.MERGE,
        NodeKind.JOIN,
        NodeKind.FORK,
        NodeKind.DECISION,
        NodeKind.OBJECT,
        NodeKind.ACTIVITY_FINAL,
        NodeKind.FLOW_FINAL,
    }
)
WRAPPING_ROLES = frozenset({Role.PARALLEL, Role.CRITICAL, Role.PIPELINE, Role.TASKPOOL})


def _wrap_role(node: Node, role: Role | None, body: Sequence) -> Statement:
    if role is Role.PARALLEL:
        return ParallelRegion(node, _tag(node, "threads"), body)
    if role is Role.CRITICAL:
        return Critical(node, _tag(node, "name") or node.name or node.id, body)
    if role is Role.PIPELINE:
        return Pipeline(node, _tag(node, "items"), (body,))
    return TaskPool(node, _tag(node, "threads"), _tag(node, "items"), body)


def _call_statement(node: Node, shared: _Shared) -> Statement:
    target = node.behavior
    if target is not None and target in shared.activities:
        return Call(node, shared.activities[target])
    if target is not None and target in shared.functions:
        return Exec(node, shared.functions[target])
    if target is not None:
        activity = shared.model.activity(target)
        if activity is not None:
            return Call(node, activity)
    shared.warn(
        "call of a behavior that is not in this file; it is treated as a plain action",
        node.location,
        "unknown-behavior",
        hint="export the called activity too, or give the call a cost",
    )
    return Exec(node)


def _tagged_loop(node: Node, body: Sequence) -> Statement:
    iterations = _tag(node, "iterations")
    condition = _tag(node, "while")
    if iterations is not None:
        return For(node, iterations, body)
    if condition is not None:
        return While(node, Cond(CondKind.GUARD, condition, node.location), body)
    return While(node, None, body)


def _iteration(node: Node, body: Sequence) -> Sequence:
    """The region of a loop whose region is its body: one run of the region is one iteration.

    A final node ends the run of the region it belongs to, so a final before
    the end of the region ends that iteration: the body gets its own scope.
    """
    if _has_return(body):
        return Sequence((Block(node, body, scoped=True),))
    return body


def _with_setup(node: Node, setup: Sequence, loop: Statement) -> Statement:
    """A loop node's setup section runs once, before the loop, inside the node's bracket."""
    if not setup.body:
        return loop
    return Block(node, Sequence((*setup.body, loop)))


def _loop_source(node: Node) -> str:
    """Where a LoopNode's iteration count comes from, in the order a modeller would expect.

    ``tagged``: a ``loop+`` stereotype with ``iterations`` or ``while``;
    ``decider``: the condition its test section computes (read by the reader
    from the decider's test action); ``repeat``: a MARTE ``rep`` (a ``repeat``
    tag), which on a loop node counts iterations instead of repeating the
    whole loop; ``once``: nothing says, the loop runs once.
    """
    role = node.perf.role if node.perf is not None else None
    if role is Role.LOOP and (_tag(node, "iterations") or _tag(node, "while")):
        return "tagged"
    spec = node.loop
    if spec is not None and (spec.setup or spec.test or spec.body) and spec.decider is not None:
        return "decider"
    repeat = _tag(node, "repeat")
    if repeat is not None and repeat.strip():
        return "repeat"
    return "once"


def _section(
    node: Node, region: Region, ids: Iterable[str], shared: _Shared, *, keep_final: bool
) -> Sequence:
    """One part of a loop or conditional node (setup, test, body), recovered on its own."""
    recovery = RegionRecovery(_subset_region(region, ids), node.location, shared, section=True)
    return recovery.recover(keep_final=keep_final)


def _loop_node(node: Node, shared: _Shared) -> Statement:
    region = node.region or Region()
    spec = node.loop
    source = _loop_source(node)
    if spec is None or not (spec.setup or spec.test or spec.body):
        body, _ = _recover_nested(node, region, shared)
        return _counted_loop(node, source, _iteration(node, body), shared)
    # a final node in a section ends the whole loop node (see _own_scope), not just its section
    setup, test, body = (
        _section(node, region, part, shared, keep_final=True)
        for part in _with_control_nodes(region, (spec.setup, spec.test, spec.body))
    )
    if source != "decider":
        return _with_setup(node, setup, _counted_loop(node, source, Sequence(test.body + body.body), shared))
    assert spec.decider is not None
    cond = Cond(CondKind.GUARD, spec.decider, _decider_location(node, region, spec.test))
    if not test.body and spec.tested_first:
        return _with_setup(node, setup, While(node, cond, body))
    leave = If(None, (Branch(cond.negated(), Sequence((Break(),))),))
    if spec.tested_first:
        loop = While(node, None, Sequence((*test.body, leave, *body.body)))
    else:
        loop = While(node, None, Sequence((*body.body, *test.body, leave)))
    return _with_setup(node, setup, loop)


def _counted_loop(node: Node, source: str, body: Sequence, shared: _Shared) -> Statement:
    """A loop node iterating by a tag (``loop+``, MARTE ``rep``), or once when nothing gives a count."""
    if source == "tagged":
        return _tagged_loop(node, body)
    if source == "repeat":
        return For(node, _tag(node, "repeat") or "1", body)
    shared.warn(
        f"loop {node.name or node.id!r} has no iteration count: it runs once; add loop+ iterations=N",
        node.location,
        "loop-runs-once",
        hint="or loop+ while=<condition>, a test action whose python body is the condition (i < n), "
        "or a MARTE PaStep rep on the loop node",
    )
    return For(node, "1", body)


def _decider_location(node: Node, region: Region, test: tuple[str, ...]) -> Location:
    """Where a loop's condition was written: its last test action, else the loop node."""
    for ident in reversed(test):
        found = region.node(ident)
        if found is not None:
            return found.location
    return node.location


def _with_control_nodes(region: Region, parts: tuple[tuple[str, ...], ...]) -> list[tuple[str, ...]]:
    """Loop node sections with the control nodes their flows reach.

    UML sections list executable nodes only; the decisions, merges and final
    nodes between them belong to the loop node's region and to no section.
    Each section takes the ones connected to it through control nodes alone.
    """
    listed = {node_id for part in parts for node_id in part}
    free = {n.id for n in region.nodes if n.id not in listed and n.kind in CONTROL_NO_STATEMENT}
    if not free:
        return list(parts)
    links: dict[str, list[str]] = {}
    for edge in region.edges:
        links.setdefault(edge.source, []).append(edge.target)
        links.setdefault(edge.target, []).append(edge.source)
    out = []
    for part in parts:
        wanted = set(part)
        stack = list(part)
        while stack:
            for other in links.get(stack.pop(), ()):
                if other in free and other not in wanted:
                    wanted.add(other)
                    stack.append(other)
        out.append((*part, *sorted(wanted - set(part))))
    return out


def _conditional_node(node: Node, shared: _Shared) -> Statement:
    """A ConditionalNode as ``if``/``elif``/``else`` over its clauses (see the module docstring)."""
    region = node.region or Region()
    if not node.clauses:
        shared.warn(
            f"conditional node {node.name or node.id!r} has no clauses: nothing in it runs",
            node.location,
            "empty-conditional",
            hint="add clauses (test and body) to the conditional node in the UML tool",
        )
        return Block(node, Sequence(()))
    items: list[tuple[Cond, Sequence, Sequence]] = []
    for number, (clause, cond) in enumerate(zip(node.clauses, _clause_conditions(node, shared), strict=True)):
        tests = _section(node, region, clause.test, shared, keep_final=False) if clause.test else Sequence(())
        body = _section(node, region, clause.body, shared, keep_final=False)
        items.append((cond, tests, body))
        if cond.kind is CondKind.ELSE:
            if number != len(node.clauses) - 1:
                shared.warn(
                    f"clause {number + 1} has no guard, so the clauses after it are never chosen",
                    node.location,
                    "unguarded-clause",
                    hint="give the clause a guard, or make it the last one",
                )
            break
    if any(cond.kind is CondKind.PROBABILITY for cond, _, _ in items):
        # one draw decides among the clauses, so every test is evaluated first
        statements = [s for _, tests, _ in items for s in tests.body]
        statements.append(If(node, tuple(Branch(cond, body) for cond, _, body in items)))
    else:
        statements = _clause_chain(node, items, 0)
    if len(statements) == 1:
        return statements[0]
    return Block(node, Sequence(tuple(statements)))


def _clause_chain(node: Node, items: list[tuple[Cond, Sequence, Sequence]], start: int) -> list[Statement]:
    """Clauses from ``start`` on: a clause's test runs only once every clause before it failed.

    Clauses without test statements join the same ``if``/``elif``; one with
    tests opens an ``else`` holding its tests and the rest of the chain.
    """
    out: list[Statement] = list(items[start][1].body)
    branches: list[Branch] = []
    for index in range(start, len(items)):
        cond, tests, body = items[index]
        if index > start and tests.body:
            rest = Sequence(tuple(_clause_chain(node, items, index)))
            branches.append(Branch(Cond(CondKind.ELSE, None, node.location), rest))
            break
        branches.append(Branch(cond, body))
    out.append(If(node, tuple(branches)))
    return out


def _clause_conditions(node: Node, shared: _Shared) -> list[Cond]:
    """The condition of every clause, in clause order; clauses saying nothing share a random choice."""
    region = node.region or Region()
    members = {n.id: n for n in region.nodes}
    clauses = node.clauses
    last = len(clauses) - 1
    conds: list[Cond | None] = [_clause_condition(node, clause, members) for clause in clauses]
    final = conds[last]
    if final is None and (not clauses[last].test or _is_else(clauses[last].guard)):
        conds[last] = Cond(CondKind.ELSE, None, node.location)  # the default clause (or isAssured)
    elif final is not None and final.kind is CondKind.GUARD and (final.text or "").strip() == "True":
        conds[last] = Cond(CondKind.ELSE, None, final.location)  # an always-true last test: the default
    unknown = [i for i, cond in enumerate(conds) if cond is None]
    if unknown:
        share = _unknown_share(conds, len(unknown))
        _warn_random_clauses(node, unknown, members, share, shared)
        for i in unknown:
            conds[i] = Cond(CondKind.PROBABILITY, share, node.location)
    return [cond for cond in conds if cond is not None]


def _clause_condition(node: Node, clause: Clause, members: Mapping[str, Node]) -> Cond | None:
    """One clause's condition: a guard tag, the computed test, a probability, or None."""
    annotated = [members[i] for i in (*clause.test, *clause.body) if i in members]
    for member in annotated:
        guard = _tag(member, "guard")
        if guard is not None and guard.strip():
            if _is_else(guard):
                return Cond(CondKind.ELSE, None, member.location)
            return Cond(CondKind.GUARD, guard, member.location)
    if clause.guard is not None and not _is_else(clause.guard):
        tests = [members[i] for i in clause.test if i in members]
        return Cond(CondKind.GUARD, clause.guard, tests[-1].location if tests else node.location)
    for member in annotated:
        probability = _tag(member, "probability")
        if probability is not None and probability.strip():
            return Cond(CondKind.PROBABILITY, probability, member.location)
    return None


def _unknown_share(conds: list[Cond | None], unknown: int) -> str:
    """Probability of each clause without a condition: 1/N, or an equal part of what the given ones leave."""
    given = [c.text or "0" for c in conds if c is not None and c.kind is CondKind.PROBABILITY]
    if not given:
        return f"1 / {len(conds)}"
    rest = "1 - " + " - ".join(f"({text})" for text in given)
    return rest if unknown == 1 else f"({rest}) / {unknown}"


def _warn_random_clauses(
    node: Node, unknown: list[int], members: Mapping[str, Node], share: str, shared: _Shared
) -> None:
    """Name the clauses chosen at random and what to add; point at test bodies in unread languages."""
    labels = []
    foreign = []
    for i in unknown:
        tests = [members[t] for t in node.clauses[i].test if t in members]
        names = ", ".join(repr(t.name or t.id) for t in tests)
        labels.append(f"{i + 1} (test {names})" if names else str(i + 1))
        foreign.extend(t for t in tests if t.body_text and t.code is None)
    many = len(unknown) > 1
    message = (
        f"conditional node {node.name or node.id!r}: clause{'s' if many else ''} {', '.join(labels)} "
        f"{'have' if many else 'has'} no condition uml2perf can read, so {'each is' if many else 'it is'} "
        f"chosen at random with probability {share}"
    )
    if foreign:
        first = foreign[0]
        message += (
            f"; the body of test {first.name or first.id!r} is in {first.body_language or 'no language'!s}, "
            "not python"
        )
    shared.warn(
        message,
        node.location,
        "random-clause",
        hint="give each clause a condition: a clause+ guard tag on its test action, a test OpaqueAction whose "
        "python body is an expression (x > 0), a ValueSpecificationAction on the clause's decider, or a "
        "probability (clause+ probability or MARTE prob); a last clause without tests is the else",
    )


# --------------------------------------------------------------------------- model level


def recover_activity(activity: Activity, shared: _Shared) -> ActivityBody:
    body = RegionRecovery(activity.region, activity.location, shared).recover()
    return ActivityBody(activity, body, _repeat_text(activity.perf))


def recover_model(model: Model, *, main: Activity | None = None, flat: bool = False) -> RecoveredModel:
    """Recover every activity of ``model``; diagnostics come back as data.

    ``flat`` recovers each region as one state machine (one loop over numbered
    states) instead of nested if/while blocks: the same behaviour, at constant
    nesting depth, for diagrams nested deeper than Python accepts.
    """
    shared = _Shared(
        model,
        {a.id: a for a in model.activities},
        {f.id: f for f in model.functions if f.id is not None},
        flat=flat,
    )
    bodies = tuple(recover_activity(activity, shared) for activity in model.activities)
    return RecoveredModel(model, bodies, main, _unique(shared.diagnostics))


def _unique(diagnostics: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    """Drop repeats (recovery may visit a node more than once) keeping first-seen order."""
    return tuple(dict.fromkeys(diagnostics))


def recover_region(region: Region, model: Model | None = None) -> tuple[Sequence, list[Diagnostic]]:
    """Recover a single region (handy for tests and third-party tools)."""
    shared = _Shared(model or Model(source="", dialect=""), {}, {})
    if model is not None:
        shared.activities = {a.id: a for a in model.activities}
        shared.functions = {f.id: f for f in model.functions if f.id is not None}
    return RegionRecovery(region, Location(), shared).recover(), list(_unique(shared.diagnostics))
