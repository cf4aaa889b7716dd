"""The statement IR: the structured statements control-flow recovery produces and handlers print.

A region of an activity becomes a :class:`Sequence` of statements (``Exec`` for an
action, ``If``, ``While``, ``For``, ``Parallel``, a ``StateMachine`` for flow with no
structured form, ...); an activity becomes an :class:`ActivityBody`, a model a
:class:`RecoveredModel`.  The statements are frozen and compared by identity.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from enum import StrEnum

from ..errors import Diagnostic, Location
from ..model import Activity, CostFunction, Edge, Model, Node, NodeKind

FINAL_KINDS = frozenset({NodeKind.ACTIVITY_FINAL, NodeKind.FLOW_FINAL})

# --------------------------------------------------------------------------- statements


class _Printed:
    """``Name(field=value, ...)``, as a dataclass prints itself, for the records of this module.

    The records below are declared with ``repr=False`` and share this one method: a
    dataclass would compile a ``__repr__`` of its own for each of them when the module is
    imported (about 4 ms of every command that converts).
    """

    __slots__ = ()

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)  # type: ignore[arg-type]
        return f"{type(self).__qualname__}({shown})"


class Statement(_Printed):
    """Base of every recovered statement; ``kind`` names it for handler dispatch."""

    __slots__ = ()

    @property
    def kind(self) -> str:
        return type(self).__name__

    def children(self) -> tuple[Statement, ...]:
        """Direct sub-statements in execution order (used by navigators)."""
        return ()


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Sequence(Statement):
    """Statements run one after the other."""

    body: tuple[Statement, ...] = ()

    def children(self) -> tuple[Statement, ...]:
        return self.body

    def __len__(self) -> int:
        return len(self.body)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Exec(Statement):
    """Run one element: an action or a communication (what its ``perf.role`` says)."""

    node: Node
    function: CostFunction | None = None  # a CallBehaviorAction that calls a cost function


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Run(Statement):
    """Plain actions run one after the other: most of a large model.

    Each node is what an :class:`Exec` of it says (an action of no other role,
    no ``repeat``, no cost function call).  Recovery keeps a straight chain's
    consecutive plain actions as one run, so that neither it nor a handler
    that takes runs whole does work per action beyond the action's own; a
    handler without a ``visit_Run`` is given the run's ``Exec`` statements.
    """

    nodes: tuple[Node, ...]

    def children(self) -> tuple[Statement, ...]:
        return tuple(Exec(node) for node in self.nodes)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Call(Statement):
    """Run another activity (CallBehaviorAction, ``activity+`` call) as a generator function."""

    node: Node
    activity: Activity


@dataclass(frozen=True, slots=True, eq=False, repr=False)
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


class CondKind(StrEnum):
    GUARD = "guard"
    ELSE = "else"
    PROBABILITY = "probability"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Cond(_Printed):
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


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Branch(_Printed):
    cond: Cond
    body: Sequence


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class If(Statement):
    """A choice: guards in order, probabilities (one draw of ``p.random()``), ``else`` last."""

    node: Node | None
    branches: tuple[Branch, ...]

    @property
    def is_random(self) -> bool:
        return any(b.cond.kind is CondKind.PROBABILITY for b in self.branches)

    def children(self) -> tuple[Statement, ...]:
        return tuple(b.body for b in self.branches)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class While(Statement):
    """A loop; ``cond`` None means ``while True`` left by a :class:`Break`.

    ``node`` is the element whose ``p.iteration`` counter limits runaway loops.
    """

    node: Node | None
    cond: Cond | None
    body: Sequence

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class For(Statement):
    """A counted loop (``loop+`` with ``iterations``)."""

    node: Node
    count: str
    body: Sequence

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Repeat(Statement):
    """A ``repeat`` tag: the wrapped statement runs ``count`` times."""

    node: Node | None
    count: str
    body: Sequence

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Break(Statement):
    """Leave the innermost loop."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Continue(Statement):
    """Start the next iteration of the innermost loop."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Return(Statement):
    """The flow ends here (activity final or flow final not at the end of its scope)."""

    node: Node | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Parallel(Statement):
    """Fork/join: the branches run concurrently inside the process; all are awaited."""

    node: Node | None
    branches: tuple[Sequence, ...]

    def children(self) -> tuple[Statement, ...]:
        return self.branches


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ParallelRegion(Statement):
    """``parallel+``: the body runs once per thread (``threads`` expression or the default)."""

    node: Node
    threads: str | None
    body: Sequence

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Critical(Statement):
    """``critical+``: the body runs under the named lock of the process."""

    node: Node
    name: str
    body: Sequence

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Pipeline(Statement):
    """``pipeline+``: the stages (child nodes in flow order) over a stream of ``items``."""

    node: Node
    items: str | None
    stages: tuple[Sequence, ...]

    def children(self) -> tuple[Statement, ...]:
        return self.stages


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TaskPool(Statement):
    """``taskpool+``: ``items`` tasks (each the body) served by ``threads`` workers."""

    node: Node
    threads: str | None
    items: str | None
    body: Sequence

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Transition(_Printed):
    """A state machine edge; ``target`` −1 leaves the state machine."""

    cond: Cond | None
    target: int


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class State(_Printed):
    """One numbered state: a chain of nodes, then its outgoing transitions."""

    index: int
    nodes: tuple[Node, ...]
    body: Sequence
    transitions: tuple[Transition, ...]

    @property
    def is_random(self) -> bool:
        return any(t.cond is not None and t.cond.kind is CondKind.PROBABILITY for t in self.transitions)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class StateMachine(Statement):
    """Fallback for an unstructured region: ``while _state >= 0`` dispatching numbered states."""

    node: Node
    states: tuple[State, ...]

    def children(self) -> tuple[Statement, ...]:
        return tuple(s.body for s in self.states)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Offer(Statement):
    """Token-flow form: the node passes its token on along flows, then its function returns.

    ``targets`` are ``(node index, input index)`` pairs (the input index tells a
    join which of its incoming flows the token arrives on); ``end`` is an
    activity final, which ends the whole flow; no targets and no end is a flow
    final (the token is consumed).
    """

    targets: tuple[tuple[int, int], ...] = ()
    end: bool = False
    node: Node | None = None
    #: add the targets to the node's offers instead of returning (a flow whose guard holds)
    keep: bool = False
    #: return the offers kept so far
    kept: bool = False


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TokenNode(_Printed):
    """One node of a :class:`TokenFlow`: its own statement, then the :class:`Offer` (or a choice of them).

    ``inputs`` above one makes the node a join: it runs once a token has
    arrived on each of its incoming flows.
    """

    index: int
    node: Node
    body: Sequence
    inputs: int = 1


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TokenFlow(Statement):
    """A region run by the token game itself: one function per node, tokens offered along the flows.

    The form of any flow graph, used where no structured form fits a region
    with concurrency (forks whose branches loop back, joins reached by only
    some branches, flows that leave a loop from inside a fork, ...).  Every
    token runs as a thread of the process; ``starts`` get the first tokens.
    ``node`` is the element the runtime accounts the flow to (its first fork
    or join; None: the activity).
    """

    node: Node | None
    nodes: tuple[TokenNode, ...]
    starts: tuple[int, ...]
    reason: str = ""
    #: an activity final that ends the flow ends the enclosing scope too (a loop node's section)
    ends_scope: bool = False

    def children(self) -> tuple[Statement, ...]:
        return tuple(n.body for n in self.nodes)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
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


def spread(statements: Iterable[Statement]) -> tuple[Statement, ...]:
    """``statements`` with each :class:`Run` replaced by the :class:`Exec` of each of its actions."""
    return tuple(s for item in statements for s in (item.children() if isinstance(item, Run) else (item,)))


def strip_tail(body: list[Statement], *, keep_final: bool = False) -> list[Statement]:
    """Drop a ``return`` that ends its scope anyway (also inside tail if-branches).

    ``keep_final`` keeps the return of an activity final: at the end of a fork
    branch it ends more than the branch (the whole activity, every branch).
    """
    if not body:
        return body
    last = body[-1]
    if isinstance(last, Return):
        if keep_final and is_activity_final(last):
            return body
        return body[:-1]
    if isinstance(last, If):
        branches = tuple(
            Branch(b.cond, Sequence(tuple(strip_tail(list(b.body.body), keep_final=keep_final))))
            for b in last.branches
        )
        return [*body[:-1], If(last.node, branches)]
    return body


def is_activity_final(stmt: Return) -> bool:
    return stmt.node is not None and stmt.node.kind is NodeKind.ACTIVITY_FINAL


#: statements whose bodies the handlers write as nested functions run by the runtime
_THREAD_BODIES = (ParallelRegion, Critical, TaskPool, Pipeline)


def has_return(statement: Statement) -> bool:
    """A return that would leave more than the current scope.

    Returns inside nested functions (scoped blocks, thread bodies) end only
    those; inside fork branches only an activity final ends more than its branch.
    """
    stack: list[tuple[Statement, bool]] = [(statement, False)]
    while stack:
        item, in_branch = stack.pop()
        if isinstance(item, Return):
            if not in_branch or is_activity_final(item):
                return True
        elif isinstance(item, TokenFlow):
            if item.ends_scope:
                return True  # its node functions are scopes of their own
        elif isinstance(item, Block) and item.scoped or isinstance(item, _THREAD_BODIES):
            continue
        else:
            branch = in_branch or isinstance(item, Parallel)
            stack.extend((child, branch) for child in item.children())
    return False
