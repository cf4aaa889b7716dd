"""Plain view records the python handler hands to the templates.

The handler decides everything a generated statement says (names, printed
expressions, comment text, ordering, where ``pass`` is needed); the templates
(``templates/_statements.py.jinja`` and ``templates/model_module.py.jinja``)
decide how it is laid out, line breaks included.  One view class per statement
kind, each with a ``kind`` the template dispatches on.  They are slotted
classes rather than dicts because Jinja reads attributes of slotted objects
about ten times faster than it looks up keys of dicts through
``StrictUndefined``, and a large model renders tens of thousands of them.

Arguments of runtime calls are :data:`Arg` pairs: a keyword (``None`` for a
positional argument) and the printed value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

#: One argument of a runtime call: its keyword (None when positional) and its printed value.
Arg = tuple[str | None, str]


@dataclass(slots=True)
class CodeView:
    """A code fragment run before an action's cost: the comment naming the action, its statements.

    The comment carries the action's xmi id (the runtime reads it to name the
    action when a statement of the fragment fails), so the action's own line
    carries none (its ``xmi_id`` is empty).
    """

    describe: str
    lines: list[str]


@dataclass(slots=True)
class ComputeView:
    """``yield from p.compute(E, cost)``."""

    kind: ClassVar[str] = "compute"
    element: str
    cost: str
    xmi_id: str
    code: CodeView | None = None


#: The line of an action that only computes: its element's name, its printed cost and its xmi id.
ComputeLine = tuple[str, str, str]


@dataclass(slots=True)
class RunView:
    """Consecutive actions that only compute: ``yield from p.compute(E, cost)`` each, one per line."""

    kind: ClassVar[str] = "run"
    lines: list[ComputeLine]


@dataclass(slots=True)
class CommView:
    """``yield from p.<method>(E, name=value, ...)``: point-to-point, collective, wait or roofline."""

    kind: ClassVar[str] = "comm"
    method: str
    args: list[Arg]
    xmi_id: str
    code: CodeView | None = None


@dataclass(slots=True)
class CallView:
    """A call of another activity, bracketed by enter/leave of the calling element."""

    kind: ClassVar[str] = "call"
    describe: str
    activity: str
    element: str
    function: str


@dataclass(slots=True)
class KeywordView:
    """A one-word statement: ``break``, ``continue`` or ``pass`` (``kind`` is the word)."""

    kind: str


@dataclass(slots=True)
class ReturnView:
    """``return`` at a final node; ``flag`` set when it ends the enclosing scope from a branch."""

    kind: ClassVar[str] = "return"
    describe: str | None
    flag: str | None = None


@dataclass(slots=True)
class NoGuardView:
    """A decision none of whose guards holds: under UML the token stays, so the run stops and says why.

    ``where`` is a string literal naming the decision (it is not an element of
    the profile: it takes no time), ``values`` the printed dict of the
    variables the guards read.
    """

    kind: ClassVar[str] = "no_guard"
    where: str
    values: str


@dataclass(slots=True)
class StopView:
    """A branch gives up once another branch reached an activity final (``flag`` is set)."""

    kind: ClassVar[str] = "stop"
    flag: str


@dataclass(slots=True)
class FunctionView:
    """A generator function of its own (fork branch, pipeline stage, thread body, scoped block).

    It is defined at the start of the function that runs it (never inside a
    loop), after the functions of its own nested parts in ``functions``.

    ``guard`` adds the unreachable ``yield`` that keeps a body without any
    runtime call a generator function (after a ``return`` unless ``returns``
    says the body ends with one already); ``nonlocal_flag`` is declared when
    the body sets the scope's end flag; ``flag`` is defined when the function
    is itself the scope an activity final ends.
    """

    name: str
    body: list[View] = field(default_factory=list)
    functions: list[FunctionView] = field(default_factory=list)
    guard: bool = False
    returns: bool = False
    nonlocal_flag: str | None = None
    flag: str | None = None


@dataclass(slots=True)
class BlockView:
    """A structured node: inline between enter/leave, or (``function`` set) its own scope.

    ``bracket`` is false for one iteration of a loop over the same element,
    which the loop already enters and leaves (and names: ``describe`` is then None).
    """

    kind: ClassVar[str] = "block"
    describe: str | None
    what: str
    element: str
    bracket: bool = True
    body: list[View] = field(default_factory=list)
    function: str | None = None


@dataclass(slots=True)
class RepeatView:
    """A ``repeat`` tag: ``for _ in range(count)``; ``checked`` counts go through ``rt.count``."""

    kind: ClassVar[str] = "repeat"
    count: str
    checked: bool
    body: list[View] = field(default_factory=list)


@dataclass(slots=True)
class ForView:
    """A counted loop; ``bracket`` says whether it enters/leaves (and names) its element itself."""

    kind: ClassVar[str] = "for"
    describe: str | None
    element: str
    bracket: bool
    count: str
    checked: bool
    body: list[View] = field(default_factory=list)


@dataclass(slots=True)
class WhileView:
    """A ``while`` loop counting its iterations on ``element``."""

    kind: ClassVar[str] = "while"
    describe: str | None
    element: str
    bracket: bool
    condition: str
    body: list[View] = field(default_factory=list)


@dataclass(slots=True)
class BranchView:
    """One ``if``/``elif``/``else`` part; ``condition`` is empty for ``else``."""

    keyword: str
    condition: str
    body: list[View] = field(default_factory=list)


@dataclass(slots=True)
class IfView:
    """A decision: optional comment, optional random draw into ``draw``, the branches."""

    kind: ClassVar[str] = "if"
    describe: str | None
    draw: str | None
    branches: list[BranchView] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """True when the view would print nothing at all."""
        return self.describe is None and self.draw is None and not self.branches


@dataclass(slots=True)
class GotoView:
    """Move a state machine to state ``target`` (−1 leaves it); ``iteration`` counts a jump back."""

    target: int
    iteration: str | None = None


@dataclass(slots=True)
class TransitionView:
    """One guarded way out of a state."""

    keyword: str
    condition: str
    goto: GotoView


@dataclass(slots=True)
class StateView:
    """One numbered state: its statements, then ``goto`` or ``transitions`` (neither after a return)."""

    keyword: str
    index: int
    names: str
    body: list[View] = field(default_factory=list)
    goto: GotoView | None = None
    draw: str | None = None
    transitions: list[TransitionView] = field(default_factory=list)


@dataclass(slots=True)
class StateMachineView:
    """An unstructured region run as ``while state >= 0`` over numbered states."""

    kind: ClassVar[str] = "state_machine"
    describe: str
    var: str
    states: list[StateView] = field(default_factory=list)


@dataclass(slots=True)
class ForkView:
    """Fork/join: ``p.fork`` over the branch functions; ``flag`` checked after the join."""

    kind: ClassVar[str] = "fork"
    describe: str | None
    names: list[str]
    element: str = ""
    flag: str | None = None


@dataclass(slots=True)
class PipelineView:
    """A pipeline: ``p.pipeline`` over the stage functions."""

    kind: ClassVar[str] = "pipeline"
    describe: str
    names: list[str]
    element: str = ""
    items: str = ""
    flag: str | None = None
    #: the overhead and startup tags, as keyword arguments
    options: list[Arg] = field(default_factory=list)


@dataclass(slots=True)
class ThreadsView:
    """A body function run by the runtime: ``kind`` is ``parallel``, ``critical`` or ``taskpool``.

    ``threads`` and ``items`` are printed expressions, ``lock`` a string literal;
    each kind uses the ones its runtime call takes.
    """

    kind: str
    describe: str
    function: str
    element: str = ""
    threads: str = ""
    items: str = ""
    lock: str = ""
    flag: str | None = None
    #: the overhead and startup tags of a task pool, as keyword arguments
    options: list[Arg] = field(default_factory=list)


@dataclass(slots=True)
class ActivityView:
    """One activity's generator function."""

    name: str
    doc: str
    locals: list[tuple[str, str]]
    repeat: str | None
    checked: bool = False
    body: list[View] = field(default_factory=list)
    functions: list[FunctionView] = field(default_factory=list)
    guard: bool = False
    flag: str | None = None


@dataclass(slots=True)
class GlobalView:
    """One model variable set in ``init_globals``: its name, name literal and printed default."""

    name: str
    literal: str
    default: str


@dataclass(slots=True)
class CostFunctionView:
    """One cost function: its name, parameter names, docstring literal and printed body."""

    name: str
    parameters: list[str]
    doc: str
    body: str


#: One ``rt.Element``: its ``E_`` name and the literals of its name, kind, xmi id and line.  Its index is
#: its place in ``ELEMENTS`` (the template counts it).  A plain tuple, which the template unpacks.
ElementView = tuple[str, str, str, str, str]


View = (
    ComputeView
    | RunView
    | CommView
    | CallView
    | KeywordView
    | ReturnView
    | NoGuardView
    | StopView
    | BlockView
    | RepeatView
    | ForView
    | WhileView
    | IfView
    | StateMachineView
    | ForkView
    | PipelineView
    | ThreadsView
)

PASS = KeywordView("pass")
BREAK = KeywordView("break")
CONTINUE = KeywordView("continue")

__all__ = [
    "BREAK",
    "Arg",
    "CONTINUE",
    "PASS",
    "ActivityView",
    "BlockView",
    "CostFunctionView",
    "ElementView",
    "GlobalView",
    "BranchView",
    "CallView",
    "CodeView",
    "CommView",
    "ComputeLine",
    "ComputeView",
    "ForView",
    "ForkView",
    "FunctionView",
    "GotoView",
    "IfView",
    "KeywordView",
    "PipelineView",
    "RepeatView",
    "ReturnView",
    "RunView",
    "StateMachineView",
    "StateView",
    "StopView",
    "ThreadsView",
    "TransitionView",
    "View",
    "WhileView",
]
