"""The statement IR: the structured statements control-flow recovery produces and handlers print.

A region of an activity becomes a :class:`Sequence` of statements (``Exec`` for an
action, ``If``, ``While``, ``For``, ``Parallel``, a ``StateMachine`` for flow with no
structured form, ...); an activity becomes an :class:`ActivityBody`, a model a
:class:`RecoveredModel`.  The statements are frozen and compared by identity.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import FrozenInstanceError, dataclass
from enum import StrEnum

from ..errors import Diagnostic, Location
from ..model import Activity, CostFunction, Edge, Model, Node, NodeKind

FINAL_KINDS = frozenset({NodeKind.ACTIVITY_FINAL, NodeKind.FLOW_FINAL})

# --------------------------------------------------------------------------- statements


_NOWHERE = Location()

#: how a record's ``__init__`` sets its fields past the frozen ``__setattr__`` below
_set = object.__setattr__


class _Printed:
    """Immutable records of this module: ``Name(field=value, ...)`` as a dataclass prints itself,
    and no assignment after ``__init__`` (``dataclasses.FrozenInstanceError``, as a frozen dataclass).

    The records below are plain slotted classes, each with its own ``__init__`` written out, and share
    these three methods: ``@dataclass`` would compile an ``__init__``, ``__setattr__`` and
    ``__delattr__`` for each of them whenever the module is imported (about 8 ms of every command that
    converts).  A record's fields are its ``__slots__``, in order.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        names: tuple[str, ...] = type(self).__slots__
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__qualname__}({shown})"

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


class Statement(_Printed):
    """Base of every recovered statement; ``kind`` names it for handler dispatch."""

    __slots__ = ()

    @property
    def kind(self) -> str:
        return type(self).__name__

    def children(self) -> tuple[Statement, ...]:
        """Direct sub-statements in execution order (used by navigators)."""
        return ()


class Sequence(Statement):
    """Statements run one after the other."""

    __slots__ = ("body",)

    body: tuple[Statement, ...]

    def __init__(self, body: tuple[Statement, ...] = ()) -> None:
        _set(self, "body", body)

    def children(self) -> tuple[Statement, ...]:
        return self.body

    def __len__(self) -> int:
        return len(self.body)


class Exec(Statement):
    """Run one element: an action or a communication (what its ``perf.role`` says)."""

    __slots__ = ("node", "function")

    node: Node
    function: CostFunction | None  # a CallBehaviorAction that calls a cost function

    def __init__(self, node: Node, function: CostFunction | None = None) -> None:
        _set(self, "node", node)
        _set(self, "function", function)


class Run(Statement):
    """Plain actions run one after the other: most of a large model.

    Each node is what an :class:`Exec` of it says (an action of no other role,
    no ``repeat``, no cost function call).  Recovery keeps a straight chain's
    consecutive plain actions as one run, so that neither it nor a handler
    that takes runs whole does work per action beyond the action's own; a
    handler without a ``visit_Run`` is given the run's ``Exec`` statements.
    """

    __slots__ = ("nodes",)

    nodes: tuple[Node, ...]

    def __init__(self, nodes: tuple[Node, ...]) -> None:
        _set(self, "nodes", nodes)

    def children(self) -> tuple[Statement, ...]:
        return tuple(Exec(node) for node in self.nodes)


class Call(Statement):
    """Run another activity (CallBehaviorAction, ``activity+`` call) as a generator function."""

    __slots__ = ("node", "activity")

    node: Node
    activity: Activity

    def __init__(self, node: Node, activity: Activity) -> None:
        _set(self, "node", node)
        _set(self, "activity", activity)


class Block(Statement):
    """A structured activity node inlined: its nested region, bracketed by enter/leave.

    ``scoped`` is true when the region ends early somewhere (a final node that
    is not at its end): UML ends only the structured node there, so handlers
    must give the body its own scope (a nested function) instead of inlining.
    """

    __slots__ = ("node", "body", "scoped")

    node: Node
    body: Sequence
    scoped: bool

    def __init__(self, node: Node, body: Sequence, scoped: bool = False) -> None:
        _set(self, "node", node)
        _set(self, "body", body)
        _set(self, "scoped", scoped)

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


class CondKind(StrEnum):
    GUARD = "guard"
    ELSE = "else"
    PROBABILITY = "probability"


class Cond(_Printed):
    """A branch condition: a guard expression, ``else``, or a probability.

    ``negate`` is set when a loop's exit guard became a ``while`` condition.
    ``location`` points at the flow (or node) that wrote the text.
    """

    __slots__ = ("kind", "text", "location", "edge", "negate")

    kind: CondKind
    text: str | None
    location: Location
    edge: Edge | None
    negate: bool

    def __init__(
        self,
        kind: CondKind,
        text: str | None = None,
        location: Location = _NOWHERE,
        edge: Edge | None = None,
        negate: bool = False,
    ) -> None:
        _set(self, "kind", kind)
        _set(self, "text", text)
        _set(self, "location", location)
        _set(self, "edge", edge)
        _set(self, "negate", negate)

    def negated(self) -> Cond:
        return Cond(self.kind, self.text, self.location, self.edge, not self.negate)


class Branch(_Printed):
    __slots__ = ("cond", "body")
    cond: Cond
    body: Sequence

    def __init__(self, cond: Cond, body: Sequence) -> None:
        _set(self, "cond", cond)
        _set(self, "body", body)


class If(Statement):
    """A choice: guards in order, probabilities (one draw of ``p.random()``), ``else`` last."""

    __slots__ = ("node", "branches")

    node: Node | None
    branches: tuple[Branch, ...]

    def __init__(self, node: Node | None, branches: tuple[Branch, ...]) -> None:
        _set(self, "node", node)
        _set(self, "branches", branches)

    @property
    def is_random(self) -> bool:
        return any(b.cond.kind is CondKind.PROBABILITY for b in self.branches)

    def children(self) -> tuple[Statement, ...]:
        return tuple(b.body for b in self.branches)


class While(Statement):
    """A loop; ``cond`` None means ``while True`` left by a :class:`Break`.

    ``node`` is the element whose ``p.iteration`` counter limits runaway loops.
    """

    __slots__ = ("node", "cond", "body")

    node: Node | None
    cond: Cond | None
    body: Sequence

    def __init__(self, node: Node | None, cond: Cond | None, body: Sequence) -> None:
        _set(self, "node", node)
        _set(self, "cond", cond)
        _set(self, "body", body)

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


class For(Statement):
    """A counted loop (``loop+`` with ``iterations``)."""

    __slots__ = ("node", "count", "body")

    node: Node
    count: str
    body: Sequence

    def __init__(self, node: Node, count: str, body: Sequence) -> None:
        _set(self, "node", node)
        _set(self, "count", count)
        _set(self, "body", body)

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


class Repeat(Statement):
    """A ``repeat`` tag: the wrapped statement runs ``count`` times."""

    __slots__ = ("node", "count", "body")

    node: Node | None
    count: str
    body: Sequence

    def __init__(self, node: Node | None, count: str, body: Sequence) -> None:
        _set(self, "node", node)
        _set(self, "count", count)
        _set(self, "body", body)

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


class Break(Statement):
    """Leave the innermost loop."""

    __slots__ = ()


class Continue(Statement):
    """Start the next iteration of the innermost loop."""

    __slots__ = ()


class Return(Statement):
    """The flow ends here (activity final or flow final not at the end of its scope)."""

    __slots__ = ("node",)

    node: Node | None

    def __init__(self, node: Node | None = None) -> None:
        _set(self, "node", node)


class Parallel(Statement):
    """Fork/join: the branches run concurrently inside the process; all are awaited."""

    __slots__ = ("node", "branches")

    node: Node | None
    branches: tuple[Sequence, ...]

    def __init__(self, node: Node | None, branches: tuple[Sequence, ...]) -> None:
        _set(self, "node", node)
        _set(self, "branches", branches)

    def children(self) -> tuple[Statement, ...]:
        return self.branches


class ParallelRegion(Statement):
    """``parallel+``: the body runs once per thread (``threads`` expression or the default)."""

    __slots__ = ("node", "threads", "body")

    node: Node
    threads: str | None
    body: Sequence

    def __init__(self, node: Node, threads: str | None, body: Sequence) -> None:
        _set(self, "node", node)
        _set(self, "threads", threads)
        _set(self, "body", body)

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


class Critical(Statement):
    """``critical+``: the body runs under the named lock of the process."""

    __slots__ = ("node", "name", "body")

    node: Node
    name: str
    body: Sequence

    def __init__(self, node: Node, name: str, body: Sequence) -> None:
        _set(self, "node", node)
        _set(self, "name", name)
        _set(self, "body", body)

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


class Pipeline(Statement):
    """``pipeline+``: the stages (child nodes in flow order) over a stream of ``items``."""

    __slots__ = ("node", "items", "stages")

    node: Node
    items: str | None
    stages: tuple[Sequence, ...]

    def __init__(self, node: Node, items: str | None, stages: tuple[Sequence, ...]) -> None:
        _set(self, "node", node)
        _set(self, "items", items)
        _set(self, "stages", stages)

    def children(self) -> tuple[Statement, ...]:
        return self.stages


class TaskPool(Statement):
    """``taskpool+``: ``items`` tasks (each the body) served by ``threads`` workers."""

    __slots__ = ("node", "threads", "items", "body")

    node: Node
    threads: str | None
    items: str | None
    body: Sequence

    def __init__(self, node: Node, threads: str | None, items: str | None, body: Sequence) -> None:
        _set(self, "node", node)
        _set(self, "threads", threads)
        _set(self, "items", items)
        _set(self, "body", body)

    def children(self) -> tuple[Statement, ...]:
        return (self.body,)


class Transition(_Printed):
    """A state machine edge; ``target`` −1 leaves the state machine."""

    __slots__ = ("cond", "target")

    cond: Cond | None
    target: int

    def __init__(self, cond: Cond | None, target: int) -> None:
        _set(self, "cond", cond)
        _set(self, "target", target)


class State(_Printed):
    """One numbered state: a chain of nodes, then its outgoing transitions."""

    __slots__ = ("index", "nodes", "body", "transitions")

    index: int
    nodes: tuple[Node, ...]
    body: Sequence
    transitions: tuple[Transition, ...]

    def __init__(
        self, index: int, nodes: tuple[Node, ...], body: Sequence, transitions: tuple[Transition, ...]
    ) -> None:
        _set(self, "index", index)
        _set(self, "nodes", nodes)
        _set(self, "body", body)
        _set(self, "transitions", transitions)

    @property
    def is_random(self) -> bool:
        return any(t.cond is not None and t.cond.kind is CondKind.PROBABILITY for t in self.transitions)


class StateMachine(Statement):
    """Fallback for an unstructured region: ``while _state >= 0`` dispatching numbered states."""

    __slots__ = ("node", "states")

    node: Node
    states: tuple[State, ...]

    def __init__(self, node: Node, states: tuple[State, ...]) -> None:
        _set(self, "node", node)
        _set(self, "states", states)

    def children(self) -> tuple[Statement, ...]:
        return tuple(s.body for s in self.states)


class Offer(Statement):
    """Token-flow form: the node passes its token on along flows, then its function returns.

    ``targets`` are ``(node index, input index)`` pairs (the input index tells a
    join which of its incoming flows the token arrives on); ``end`` is an
    activity final, which ends the whole flow; no targets and no end is a flow
    final (the token is consumed).
    """

    __slots__ = ("targets", "end", "node", "keep", "kept")

    targets: tuple[tuple[int, int], ...]
    end: bool
    node: Node | None
    #: add the targets to the node's offers instead of returning (a flow whose guard holds)
    keep: bool
    #: return the offers kept so far
    kept: bool

    def __init__(
        self,
        targets: tuple[tuple[int, int], ...] = (),
        end: bool = False,
        node: Node | None = None,
        keep: bool = False,
        kept: bool = False,
    ) -> None:
        _set(self, "targets", targets)
        _set(self, "end", end)
        _set(self, "node", node)
        _set(self, "keep", keep)
        _set(self, "kept", kept)


class TokenNode(_Printed):
    """One node of a :class:`TokenFlow`: its own statement, then the :class:`Offer` (or a choice of them).

    ``inputs`` above one makes the node a join: it runs once a token has
    arrived on each of its incoming flows.
    """

    __slots__ = ("index", "node", "body", "inputs")

    index: int
    node: Node
    body: Sequence
    inputs: int

    def __init__(self, index: int, node: Node, body: Sequence, inputs: int = 1) -> None:
        _set(self, "index", index)
        _set(self, "node", node)
        _set(self, "body", body)
        _set(self, "inputs", inputs)


class TokenFlow(Statement):
    """A region run by the token game itself: one function per node, tokens offered along the flows.

    The form of any flow graph, used where no structured form fits a region
    with concurrency (forks whose branches loop back, joins reached by only
    some branches, flows that leave a loop from inside a fork, ...).  Every
    token runs as a thread of the process; ``starts`` get the first tokens.
    ``node`` is the element the runtime accounts the flow to (its first fork
    or join; None: the activity).
    """

    __slots__ = ("node", "nodes", "starts", "reason", "ends_scope")

    node: Node | None
    nodes: tuple[TokenNode, ...]
    starts: tuple[int, ...]
    reason: str
    #: an activity final that ends the flow ends the enclosing scope too (a loop node's section)
    ends_scope: bool

    def __init__(
        self,
        node: Node | None,
        nodes: tuple[TokenNode, ...],
        starts: tuple[int, ...],
        reason: str = "",
        ends_scope: bool = False,
    ) -> None:
        _set(self, "node", node)
        _set(self, "nodes", nodes)
        _set(self, "starts", starts)
        _set(self, "reason", reason)
        _set(self, "ends_scope", ends_scope)

    def children(self) -> tuple[Statement, ...]:
        return tuple(n.body for n in self.nodes)


class ActivityBody(Statement):
    """The recovered body of one activity (the root a generator function is made of)."""

    __slots__ = ("activity", "body", "repeat")

    activity: Activity
    body: Sequence
    repeat: str | None

    def __init__(self, activity: Activity, body: Sequence, repeat: str | None = None) -> None:
        _set(self, "activity", activity)
        _set(self, "body", body)
        _set(self, "repeat", repeat)

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
