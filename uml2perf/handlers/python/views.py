"""Plain view records the python handler hands to the templates.

The handler decides everything a generated statement says (names, printed
expressions, comment text, ordering, where ``pass`` is needed); the templates
(``templates/_statements.py.jinja`` and ``templates/model_module.py.jinja``)
decide how it is laid out, line breaks included.  One view class per statement
kind, each with a ``kind`` the template dispatches on.  They are plain slotted
classes: Jinja reads their attributes about ten times faster than it looks up
keys of dicts through ``StrictUndefined`` (a large model renders tens of
thousands of them), and unlike dataclasses they cost nothing to define when
the module is imported.

Arguments of runtime calls are :data:`Arg` pairs: a keyword (``None`` for a
positional argument) and the printed value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, TypeVar

T = TypeVar("T")

#: The longest line the templates print as it is (``ruff format``'s line length in pyproject.toml).
LINE_LENGTH = 110

#: One argument of a runtime call: its keyword (None when positional) and its printed value.
Arg = tuple[str | None, str]


class CodeView:
    """A code fragment run before an action's cost: the comment naming the action, its statements.

    The comment carries the action's xmi id (the runtime reads it to name the
    action when a statement of the fragment fails), so the action's own line
    carries none (its ``xmi_id`` is empty).
    """

    __slots__ = ("describe", "lines")

    def __init__(self, describe: str, lines: list[str]) -> None:
        self.describe = describe
        self.lines = lines


class ComputeView:
    """``yield from p.compute(E, cost)``."""

    __slots__ = ("element", "cost", "xmi_id", "code")
    kind: ClassVar[str] = "compute"

    def __init__(self, element: str, cost: str, xmi_id: str, code: CodeView | None = None) -> None:
        self.element = element
        self.cost = cost
        self.xmi_id = xmi_id
        self.code = code


#: The line of an action that only computes: its element's name, its printed cost and its xmi id.
ComputeLine = tuple[str, str, str]


class RunView:
    """Consecutive actions that only compute: ``yield from p.compute(E, cost)`` each, one per line."""

    __slots__ = ("lines",)
    kind: ClassVar[str] = "run"

    def __init__(self, lines: list[ComputeLine]) -> None:
        self.lines = lines

    def chunks(self, indent: str) -> list[str | ComputeLine]:
        """The lines at ``indent``, for the template: lines that fit are joined into one string per
        stretch; a line too long stays its tuple, which the template's ``call`` macro breaks.

        A sequence of 20,000 actions is one run; one ``%`` and one ``join`` here cost a fraction of a
        template loop over its lines (the same text: ``_statements.py.jinja`` printed each line so).
        """
        return fitting_lines(
            [f"{indent}yield from p.compute({e}, {c})  # xmi:id={x}" for e, c, x in self.lines],
            self.lines.__getitem__,
        )


class CommView:
    """``yield from p.<method>(E, name=value, ...)``: point-to-point, collective, wait or roofline.

    ``site`` names the call site made at the start of the function when the arguments never change
    there (:class:`SiteView`): the statement is then ``yield from <site>()``.
    """

    __slots__ = ("method", "args", "xmi_id", "code", "site", "after")
    kind: ClassVar[str] = "comm"

    def __init__(
        self,
        method: str,
        args: list[Arg],
        xmi_id: str,
        code: CodeView | None = None,
        site: str | None = None,
        after: str = "",
    ) -> None:
        self.method = method
        self.args = args
        self.xmi_id = xmi_id
        self.code = code
        self.site = site
        #: a statement after the call: a receive's ``sender`` tag sets its variable there
        self.after = after


class SiteView:
    """``name = p.<method>_site(E, name=value, ...)`` at the start of a function: a send or receive
    whose arguments are the same at every call in one run of the function, checked once by the
    runtime (``runtime/engine/sites.py``)."""

    __slots__ = ("name", "method", "args")

    def __init__(self, name: str, method: str, args: list[Arg]) -> None:
        self.name = name
        self.method = method
        self.args = args


class CallView:
    """A call of another activity, bracketed by enter/leave of the calling element."""

    __slots__ = ("describe", "activity", "element", "function")
    kind: ClassVar[str] = "call"

    def __init__(self, describe: str, activity: str, element: str, function: str) -> None:
        self.describe = describe
        self.activity = activity
        self.element = element
        self.function = function


class KeywordView:
    """A one-word statement: ``break``, ``continue`` or ``pass`` (``kind`` is the word)."""

    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind


class ReturnView:
    """``return`` at a final node; ``flag`` set when it ends the enclosing scope from a branch."""

    __slots__ = ("describe", "flag")
    kind: ClassVar[str] = "return"

    def __init__(self, describe: str | None, flag: str | None = None) -> None:
        self.describe = describe
        self.flag = flag


class NoGuardView:
    """A decision none of whose guards holds: under UML the token stays, so the run stops and says why.

    ``where`` is a string literal naming the decision (it is not an element of
    the profile: it takes no time), ``values`` the printed dict of the
    variables the guards read.
    """

    __slots__ = ("where", "values")
    kind: ClassVar[str] = "no_guard"

    def __init__(self, where: str, values: str) -> None:
        self.where = where
        self.values = values


class StopView:
    """A branch gives up once another branch reached an activity final (``flag`` is set)."""

    __slots__ = ("flag",)
    kind: ClassVar[str] = "stop"

    def __init__(self, flag: str) -> None:
        self.flag = flag


class NoteView:
    """A comment line of its own (what a node of a token flow is), or a plain assignment ``assign``."""

    __slots__ = ("text", "assign")
    kind: ClassVar[str] = "note"

    def __init__(self, text: str, assign: str = "") -> None:
        self.text = text
        self.assign = assign


class OfferView:
    """A node of a token flow hands its token on: ``return`` of the ``(function, input)`` pairs.

    ``end`` returns ``tokens.END`` (an activity final ends the whole flow); no
    targets returns ``()`` (a flow final, or a node without outgoing flows);
    ``keep``/``kept`` collect the flows whose guards hold in ``offers``.
    """

    __slots__ = ("targets", "end", "describe", "keep", "kept")
    kind: ClassVar[str] = "offer"

    def __init__(
        self,
        targets: list[str],
        end: bool = False,
        describe: str | None = None,
        keep: bool = False,
        kept: bool = False,
    ) -> None:
        self.targets = targets
        self.end = end
        self.describe = describe
        self.keep = keep  # offers.append(...) for a flow whose guard holds
        self.kept = kept  # return the offers kept


class TokenFlowView:
    """A region run as a token flow: ``tokens.flow`` over the node functions defined before it."""

    __slots__ = ("describe", "element", "starts", "joins", "ends")
    kind: ClassVar[str] = "token_flow"

    def __init__(
        self, describe: str | None, element: str, starts: list[str], joins: str, ends: bool = False
    ) -> None:
        self.describe = describe
        self.element = element
        self.starts = starts
        self.joins = joins
        self.ends = ends  # an activity final that ends the flow ends the enclosing scope too


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

    __slots__ = ("name", "body", "functions", "guard", "returns", "nonlocal_flag", "flag", "sites")

    def __init__(
        self,
        name: str,
        body: list[View] | None = None,
        functions: list[FunctionView] | None = None,
        guard: bool = False,
        returns: bool = False,
        nonlocal_flag: str | None = None,
        flag: str | None = None,
    ) -> None:
        self.name = name
        self.body: list[View] = [] if body is None else body
        self.functions: list[FunctionView] = [] if functions is None else functions
        self.guard = guard
        self.returns = returns
        self.nonlocal_flag = nonlocal_flag
        self.flag = flag
        #: the call sites made at its start, after its functions (:class:`SiteView`)
        self.sites: list[SiteView] = []


class BlockView:
    """A structured node: inline between enter/leave, or (``function`` set) its own scope.

    ``bracket`` is false for one iteration of a loop over the same element,
    which the loop already enters and leaves (and names: ``describe`` is then None).
    """

    __slots__ = ("describe", "what", "element", "bracket", "body", "function")
    kind: ClassVar[str] = "block"

    def __init__(
        self,
        describe: str | None,
        what: str,
        element: str,
        bracket: bool = True,
        body: list[View] | None = None,
        function: str | None = None,
    ) -> None:
        self.describe = describe
        self.what = what
        self.element = element
        self.bracket = bracket
        self.body: list[View] = [] if body is None else body
        self.function = function


class RepeatView:
    """A ``repeat`` tag: ``for _ in range(count)``; ``checked`` counts go through ``rt.count``."""

    __slots__ = ("count", "checked", "body")
    kind: ClassVar[str] = "repeat"

    def __init__(self, count: str, checked: bool, body: list[View] | None = None) -> None:
        self.count = count
        self.checked = checked
        self.body: list[View] = [] if body is None else body


class ForView:
    """A counted loop; ``bracket`` says whether it enters/leaves (and names) its element itself."""

    __slots__ = ("describe", "element", "bracket", "count", "checked", "body", "target")
    kind: ClassVar[str] = "for"

    def __init__(
        self,
        describe: str | None,
        element: str,
        bracket: bool,
        count: str,
        checked: bool,
        body: list[View] | None = None,
        target: str = "_",
    ) -> None:
        self.describe = describe
        self.element = element
        self.bracket = bracket
        self.count = count
        self.checked = checked
        self.body: list[View] = [] if body is None else body
        #: what each iteration's index is bound to: ``_``, or the model variable of a ``counter`` tag
        self.target = target


class WhileView:
    """A ``while`` loop counting its iterations on ``element``."""

    __slots__ = ("describe", "element", "bracket", "condition", "body")
    kind: ClassVar[str] = "while"

    def __init__(
        self,
        describe: str | None,
        element: str,
        bracket: bool,
        condition: str,
        body: list[View] | None = None,
    ) -> None:
        self.describe = describe
        self.element = element
        self.bracket = bracket
        self.condition = condition
        self.body: list[View] = [] if body is None else body


class BranchView:
    """One ``if``/``elif``/``else`` part; ``condition`` is empty for ``else``."""

    __slots__ = ("keyword", "condition", "body")

    def __init__(self, keyword: str, condition: str, body: list[View] | None = None) -> None:
        self.keyword = keyword
        self.condition = condition
        self.body: list[View] = [] if body is None else body


class IfView:
    """A decision: optional comment, optional random draw into ``draw``, the branches."""

    __slots__ = ("describe", "draw", "branches")
    kind: ClassVar[str] = "if"

    def __init__(
        self, describe: str | None, draw: str | None, branches: list[BranchView] | None = None
    ) -> None:
        self.describe = describe
        self.draw = draw
        self.branches: list[BranchView] = [] if branches is None else branches

    @property
    def empty(self) -> bool:
        """True when the view would print nothing at all."""
        return self.describe is None and self.draw is None and not self.branches


class GotoView:
    """Move a state machine to state ``target`` (−1 leaves it); ``iteration`` counts a jump back."""

    __slots__ = ("target", "iteration")

    def __init__(self, target: int, iteration: str | None = None) -> None:
        self.target = target
        self.iteration = iteration


class TransitionView:
    """One guarded way out of a state."""

    __slots__ = ("keyword", "condition", "goto")

    def __init__(self, keyword: str, condition: str, goto: GotoView) -> None:
        self.keyword = keyword
        self.condition = condition
        self.goto = goto


class StateView:
    """One numbered state: its statements, then ``goto`` or ``transitions`` (neither after a return)."""

    __slots__ = ("keyword", "index", "names", "body", "goto", "draw", "transitions")

    def __init__(
        self,
        keyword: str,
        index: int,
        names: str,
        body: list[View] | None = None,
        goto: GotoView | None = None,
        draw: str | None = None,
        transitions: list[TransitionView] | None = None,
    ) -> None:
        self.keyword = keyword
        self.index = index
        self.names = names
        self.body: list[View] = [] if body is None else body
        self.goto = goto
        self.draw = draw
        self.transitions: list[TransitionView] = [] if transitions is None else transitions


class StateMachineView:
    """An unstructured region run as ``while state >= 0`` over numbered states."""

    __slots__ = ("describe", "var", "states")
    kind: ClassVar[str] = "state_machine"

    def __init__(self, describe: str, var: str, states: list[StateView] | None = None) -> None:
        self.describe = describe
        self.var = var
        self.states: list[StateView] = [] if states is None else states


class ForkView:
    """Fork/join: ``p.fork`` over the branch functions; ``flag`` checked after the join."""

    __slots__ = ("describe", "names", "element", "flag")
    kind: ClassVar[str] = "fork"

    def __init__(
        self, describe: str | None, names: list[str], element: str = "", flag: str | None = None
    ) -> None:
        self.describe = describe
        self.names = names
        self.element = element
        self.flag = flag


class PipelineView:
    """A pipeline: ``p.pipeline`` over the stage functions; ``options`` its overhead and startup tags."""

    __slots__ = ("describe", "names", "element", "items", "flag", "options")
    kind: ClassVar[str] = "pipeline"

    def __init__(
        self,
        describe: str,
        names: list[str],
        element: str = "",
        items: str = "",
        flag: str | None = None,
        options: list[Arg] | None = None,
    ) -> None:
        self.describe = describe
        self.names = names
        self.element = element
        self.items = items
        self.flag = flag
        self.options: list[Arg] = [] if options is None else options


class ThreadsView:
    """A body function run by the runtime: ``kind`` is ``parallel``, ``critical`` or ``taskpool``.

    ``threads`` and ``items`` are printed expressions, ``lock`` a string literal;
    each kind uses the ones its runtime call takes.  ``options`` are the overhead
    and startup tags of a task pool, as keyword arguments.
    """

    __slots__ = ("kind", "describe", "function", "element", "threads", "items", "lock", "flag", "options")

    def __init__(
        self,
        kind: str,
        describe: str,
        function: str,
        element: str = "",
        threads: str = "",
        items: str = "",
        lock: str = "",
        flag: str | None = None,
        options: list[Arg] | None = None,
    ) -> None:
        self.kind = kind
        self.describe = describe
        self.function = function
        self.element = element
        self.threads = threads
        self.items = items
        self.lock = lock
        self.flag = flag
        self.options: list[Arg] = [] if options is None else options


class ActivityView:
    """One activity's generator function."""

    __slots__ = ("name", "doc", "locals", "repeat", "checked", "body", "functions", "guard", "flag", "sites")

    def __init__(
        self,
        name: str,
        doc: str,
        locals: list[tuple[str, str]],
        repeat: str | None,
        checked: bool = False,
        body: list[View] | None = None,
        functions: list[FunctionView] | None = None,
        guard: bool = False,
        flag: str | None = None,
    ) -> None:
        self.name = name
        self.doc = doc
        self.locals = locals
        self.repeat = repeat
        self.checked = checked
        self.body: list[View] = [] if body is None else body
        self.functions: list[FunctionView] = [] if functions is None else functions
        self.guard = guard
        self.flag = flag
        #: the call sites made at its start, after its functions (:class:`SiteView`)
        self.sites: list[SiteView] = []

    @property
    def count(self) -> str | None:
        """The repeat count as the ``count`` macro of the statements reads it (as for a ``Repeat``)."""
        return self.repeat


class GlobalView:
    """One model variable set in ``init_globals``: its name, name literal and printed default."""

    __slots__ = ("name", "literal", "default")

    def __init__(self, name: str, literal: str, default: str) -> None:
        self.name = name
        self.literal = literal
        self.default = default


class CostFunctionView:
    """One cost function: its name, parameter names, docstring literal and printed body."""

    __slots__ = ("name", "parameters", "doc", "body")

    def __init__(self, name: str, parameters: list[str], doc: str, body: str) -> None:
        self.name = name
        self.parameters = parameters
        self.doc = doc
        self.body = body


def fitting_lines(lines: list[str], row_of: Callable[[int], T]) -> list[str | T]:
    """``lines`` as the templates print them: each stretch of lines of at most 110 characters joined
    into one string, and in place of each longer line ``row_of(its index)``, the values the template
    needs to break it (its ``call`` macro lays out long calls as ``ruff format`` does).
    """
    if max(map(len, lines), default=0) <= LINE_LENGTH:  # the common case: every line fits
        return ["\n".join(lines)] if lines else []
    out: list[str | T] = []
    stretch: list[str] = []
    for index, line in enumerate(lines):
        if len(line) <= LINE_LENGTH:
            stretch.append(line)
            continue
        if stretch:
            out.append("\n".join(stretch))
            stretch = []
        out.append(row_of(index))
    if stretch:
        out.append("\n".join(stretch))
    return out


#: One ``rt.Element``: its ``E_`` name, its name (the text), the literal of its kind, its xmi id (the text)
#: and its line.  Its index is its place in ``ELEMENTS``.  The handler prints the rows (its
#: ``_element_lines``), quoting the name and the id there.
ElementView = tuple[str, str, str, str, int | None]


View = (
    ComputeView
    | RunView
    | CommView
    | CallView
    | KeywordView
    | ReturnView
    | NoGuardView
    | StopView
    | NoteView
    | OfferView
    | TokenFlowView
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
    "LINE_LENGTH",
    "fitting_lines",
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
    "SiteView",
    "StateMachineView",
    "StateView",
    "StopView",
    "ThreadsView",
    "TokenFlowView",
    "TransitionView",
    "View",
    "WhileView",
]
