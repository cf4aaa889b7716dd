"""The ``python`` content handler: the executable performance-model module.

The module has the shape fixed in ``docs/architecture.md``: globals in
``init_globals``, one function per cost function, one ``rt.Element`` per
element the code refers to, one generator function per activity, and
``MODEL``.  Everything the module says about the model comes from two safe
sources only: expressions and code fragments printed by
:func:`uml2perf.expressions.to_python` from their validated trees, and names
passed through :mod:`uml2perf.handlers.naming`.  Element names and ids appear
as ``repr()`` string literals, comments escape their text.

Statements are built while the traverser walks the recovered statement
tree: ``visit_<Kind>`` opens a construct, ``leave_<Kind>`` closes it.  Each
becomes a plain view record (:mod:`.views`) holding what this handler
computed: names, printed expressions, comment text, ordering, where an empty
block needs ``pass``.  The templates print them:
``templates/_statements.py.jinja`` has one section per statement kind, so the
shape of all generated code is read there, not here.  Functions a statement
runs (fork branches, pipeline stages, thread bodies, scoped blocks) are
collected at the start of the function that runs them, never inside a loop.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from uml2perf_runtime.operations.registry import OPERATIONS, Operation

from ...check import check_not_recursive, cost_function_name_error, ordered_by_defaults
from ...controlflow.finals import Endings, mark_endings
from ...controlflow.ir import (
    ActivityBody,
    Block,
    Branch,
    Break,
    Call,
    Cond,
    CondKind,
    Continue,
    Critical,
    Exec,
    For,
    If,
    Offer,
    Parallel,
    ParallelRegion,
    Pipeline,
    RecoveredModel,
    Repeat,
    Return,
    Run,
    State,
    StateMachine,
    Statement,
    TaskPool,
    TokenFlow,
    TokenNode,
    While,
)
from ...errors import Location, ModelError
from ...expressions import means_else
from ...model import Activity, CostFunction, Node, NodeKind, PerfSpec, Region, Role, Variable
from ...navigation.traversal import Lane
from ...profile import unset_variables
from ...profile.roles import PEER_NAME, PEER_TAGS, SENDER_TAG
from ..base import ContentHandler, GenerationJob
from ..naming import Namer
from ..templates import render
from .invariants import invariant
from .limits import MAX_NESTED_LOOPS, NestedTooDeeply, first_excess
from .literals import comment, describe, docstring, quote
from .printer import ExpressionPrinter
from .views import (
    BREAK,
    CONTINUE,
    PASS,
    ActivityView,
    Arg,
    BlockView,
    BranchView,
    CallView,
    CodeView,
    CommView,
    ComputeLine,
    ComputeView,
    CostFunctionView,
    ElementView,
    ForkView,
    ForView,
    FunctionView,
    GlobalView,
    GotoView,
    IfView,
    NoGuardView,
    NoteView,
    OfferView,
    PipelineView,
    RepeatView,
    ReturnView,
    RunView,
    SiteView,
    StateMachineView,
    StateView,
    StopView,
    ThreadsView,
    TokenFlowView,
    TransitionView,
    View,
    WhileView,
    fitting_lines,
)

#: names the module defines or imports itself; model names never take them
RESERVED = frozenset(
    {"rt", "tokens", "p", "v", "MODEL", "ELEMENTS", "init_globals", "_u", "_state", "_ended", "_"}
)

#: the flag an activity final in a fork branch sets to end its whole scope (activity or structured node)
ENDED = "_ended"

_TYPE_DEFAULTS = {
    "integer": "0",
    "int": "0",
    "long": "0",
    "unlimitednatural": "0",
    "real": "0.0",
    "double": "0.0",
    "float": "0.0",
    "boolean": "False",
    "bool": "False",
}

#: communication roles → their operation in the runtime's table (runtime/operations/registry.py)
_COMM = {role: OPERATIONS[role.value] for role in Role if role.value in OPERATIONS}

#: the cost every runtime call takes last, and its default there (runtime/engine/context.py)
_COST_DEFAULTS = frozenset({"0", "0.0"})

#: operations whose calls with unchanging arguments are call sites made once (runtime/engine/sites.py),
#: with the argument they must name: a receive from any source (the default) never takes the site's route
_SITE_OPERATIONS = {"send": "dest", "recv": "source"}
#: operations whose ``sender`` tag names the variable that takes the source they matched
_RECEIVES = frozenset({"recv", "irecv", "sendrecv"})

#: the pending requests a wait completes: every request of the process (see
#: runtime/operations/point_to_point.py).  The runtime's ``wait`` takes no default for them yet, so generated
#: calls always name them.
_EVERY_REQUEST: Arg = ("requests", "None")

_KIND_OF_NODE = {
    NodeKind.ACTION: "action",
    NodeKind.CALL: "activity",
    NodeKind.STRUCTURED: "structured",
    NodeKind.LOOP: "loop",
    NodeKind.CONDITIONAL: "conditional",
    NodeKind.FORK: "fork",
    NodeKind.DECISION: "loop",
    NodeKind.MERGE: "loop",
}


#: what a node of a token flow is, for the comment that opens its function
_TOKEN_KINDS = {
    NodeKind.INITIAL: "initial node, a token on each outgoing flow",
    NodeKind.FORK: "fork, a token on every outgoing flow",
    NodeKind.JOIN: "join",
    NodeKind.MERGE: "merge, passes each token on",
    NodeKind.DECISION: "decision, one token on the first flow whose guard holds",
    NodeKind.ACTIVITY_FINAL: "activity final, ends the whole flow",
    NodeKind.FLOW_FINAL: "flow final, the token ends here",
}


def _always_offers(body: list[View]) -> bool:
    """True when every path through ``body`` ends by offering tokens (no bare ``return`` needed)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, OfferView):
        return True
    return (
        isinstance(last, IfView)
        and any(not branch.condition for branch in last.branches)
        and all(_always_offers(branch.body) for branch in last.branches)
    )


# ---------------------------------------------------------------------------- writer


# _Scope and _IfState are plain classes, not dataclasses: making a dataclass runs generated code at
# import (about 0.25 ms each), and every ``convert`` imports this module.


class _Scope:
    """A function being written: whether it calls the runtime (is a generator already), and where
    the functions it runs are defined (at its start)."""

    __slots__ = ("functions", "loops", "sites", "yielded")

    def __init__(
        self, functions: list[FunctionView], sites: list[SiteView], yielded: bool = False, loops: int = 0
    ) -> None:
        self.functions = functions
        #: the call sites made at its start (sends and receives whose arguments never change there)
        self.sites = sites
        self.yielded = yielded
        #: loops of this function around the statement being written (a call inside one is repeated
        #: in one run of the function: only then does a site made once save anything)
        self.loops = loops


class _IfState:
    """A choice being written: its statement, its view, the branch reached and the shares so far."""

    __slots__ = ("cumulative", "index", "stmt", "uvar", "view")

    def __init__(self, stmt: If | None) -> None:
        self.stmt = stmt
        self.view: IfView | None = None
        self.index = 0
        self.cumulative: list[str] = []
        self.uvar = "_u"


class PythonHandler(ContentHandler):
    """Writes the executable model module (see ``docs/architecture.md``)."""

    name = "python"
    suffix = ".py"
    needs = "controlflow"
    description = "executable Python performance model (imports only uml2perf_runtime)"

    # -- life cycle ------------------------------------------------------------

    def start(self, job: GenerationJob) -> None:
        super().start(job)
        if job.recovered is None:  # pragma: no cover - generation always recovers for this handler
            raise ValueError("the python handler needs the recovered statement tree")
        self.model = job.model
        self.namer = Namer(RESERVED)
        self.printer = ExpressionPrinter()
        self.body: list[View] = []
        self.bodies: list[list[View]] = []
        self.scopes: list[_Scope] = []
        self.ifs: list[_IfState] = []
        self.activities: list[ActivityView] = []
        self.activity_names: dict[str, str] = {}
        #: every element the code refers to, by xmi id: its row of ``ELEMENTS`` (without the index)
        self.elements: dict[str, ElementView] = {}
        self.kind_literals: dict[str, str] = {}  # a handful of kinds, used thousands of times
        self.annotations: dict[int, _Annotation] = {}  # by id() of the shared PerfSpec
        #: by id() of the shared PerfSpec (or of None): ``(element kind, printed cost)`` of the actions
        #: annotated so that only compute, once one of them was written (see :meth:`visit_Run`)
        self.compute_only: dict[int, tuple[str | None, str]] = {}
        self.file_order: dict[str, int] = {}
        #: every node with a code fragment and its text, in file order (found by _prepare_names)
        self.fragments: list[tuple[Node, str]] = []
        #: the variables ``loop+ counter`` tags name (set by their loops, never constant)
        self.loop_counters: set[str] = set()
        #: the array operations the actions' ``operations`` tags name (the spec lists them)
        self.operations_named: set[str] = set()
        self.counters: dict[str, int] = {}
        self.owners: list[ForkView | PipelineView] = []
        self.lanes: list[list[FunctionView]] = []  # the functions of the fork or pipeline being written
        self.bracketed: list[str] = []
        self.blocks: list[tuple[BlockView, FunctionView | None]] = []
        self.machines: list[tuple[StateMachineView, str]] = []
        self.endings = Endings()
        self.owners_threads: list[tuple[ThreadsView, FunctionView]] = []
        self._warned_finals: set[str] = set()
        self.flows: list[tuple[TokenFlowView, dict[int, str]]] = []
        #: the diagram nodes whose token-flow functions are being written (their comment names them)
        self.token_nodes: list[Node] = []
        self.token_names: set[str] = set()  # node function names taken in the activity being written
        self.uses_tokens = False
        self.deepest = 0  # the most bodies open at once: bounds the nesting of the module
        self._guards_by_source: dict[str, list[str | None]] | None = None
        self._prepare_names()
        self.globals, self.parameters = self._globals()
        self.constants = self._constant_variables()
        self.cost_functions = self._cost_functions()

    def _prepare_names(self) -> None:
        """Claim every module-level name up front, in file order, so names never depend on use."""
        ex = self.printer.ex
        self.namer.reserve(*ex.BUILTIN_FUNCTIONS, *ex.CONSTANTS)
        for function in self.model.functions:
            problem = cost_function_name_error(function, self.printer.functions)
            if problem is not None:
                raise problem
            if not self.namer.claim_exact(function.name, ("function", function.name)):
                raise ModelError(
                    f"cost function name {function.name!r} is reserved in generated modules",
                    function.location,
                    hint="rename the cost function",
                )
            self.printer.functions[function.name] = function
        for index, activity in enumerate(self.model.activities):
            self.activity_names[activity.id] = self.namer.claim(
                activity.name, ("activity", activity.id), prefix="activity_", fallback=f"{index + 1}"
            )
        # one walk over every node (a large model has hundreds of thousands): the file order, and the
        # code fragments that _implicit_variables and _constant_variables read
        file_order = self.file_order
        fragments = self.fragments
        code_text = self.code_text
        #: id() of each shared PerfSpec (or of None) whose annotation has no code tag: a node annotated
        #: so, without a code body of its own, has no fragment (code_text would say None)
        no_code: set[int] = set()
        for activity in self.model.activities:  # (ELEMENTS follow the order of file_order's keys)
            file_order[activity.id] = len(file_order)
            for node in activity.walk():
                file_order[node.id] = len(file_order)
                perf = node.perf
                if perf is not None and perf.role is Role.LOOP and perf.get("counter"):
                    self.loop_counters.add((perf.get("counter") or "").strip())
                if perf is not None and perf.role.value in _RECEIVES and perf.get(SENDER_TAG):
                    self.loop_counters.add((perf.get(SENDER_TAG) or "").strip())  # the receive sets it
                if node.code is None and id(perf) in no_code:
                    continue
                text = code_text(node)
                if text is not None:
                    fragments.append((node, text))
                elif node.code is None:
                    no_code.add(id(node.perf))

    # -- globals and cost functions ----------------------------------------------------

    def _all_variables(self) -> tuple[list[Variable], list[tuple[Activity, Variable]]]:
        main = self.job.main if self.job else None
        globals_: list[Variable] = list(self.model.globals)
        if main is not None:
            globals_.extend(main.attributes)
        for activity in self.model.activities:
            if activity is not main:
                globals_.extend(activity.attributes)
        seen: dict[str, Variable] = {}
        unique: list[Variable] = []
        for variable in globals_:
            if variable.name in seen:
                continue
            seen[variable.name] = variable
            unique.append(variable)
        locals_ = [(a, var) for a in self.model.activities for var in a.variables]
        return unique, locals_

    def _globals(self) -> tuple[list[GlobalView], list[tuple[str, str]]]:
        globals_, locals_ = self._all_variables()
        for variable in globals_:
            self.printer.add_variable(variable, "variable")
        for _, variable in locals_:
            self.printer.add_variable(variable, "local variable")
        self._implicit_variables(globals_)
        ordered = ordered_by_defaults(
            globals_, lambda v: self.printer.parse(v.default or "", v.location, "default value").names
        )
        views: list[GlobalView] = []
        parameters: list[tuple[str, str]] = []
        for variable in ordered:
            literal = quote(variable.name)
            views.append(GlobalView(variable.name, literal, self._default(variable)))
            parameters.append((literal, self._literal_default(variable)))
        return views, parameters

    def _constant_variables(self) -> frozenset[str]:
        """The model variables nothing assigns after ``init_globals``: no code fragment, no activity's
        local variables (call arguments that are such a variable can be evaluated once per function)."""
        assigned = {variable.name for _, variable in self._all_variables()[1]}
        for node, text in self.fragments:
            assigned.update(self.printer.ex.parse_code(text, node.location).assigned)
        assigned.update(self.loop_counters)  # each iteration of their loops sets them
        return frozenset(view.name for view in self.globals if view.name not in assigned)

    def _implicit_variables(self, globals_: list[Variable]) -> None:
        """Names assigned by code fragments but never declared become globals (with a warning)."""
        for node, text in self.fragments:
            fragment = self.printer.ex.parse_code(text, node.location)
            for name in fragment.assigned:
                if name in self.printer.rename:
                    continue
                variable = Variable(name, node.location, None, None, None)
                self.printer.add_variable(variable, "variable")
                globals_.append(variable)
                self.warn(
                    f"code of {node.name or node.id!r} assigns {name!r}, which is not declared:"
                    " it becomes a global variable starting at 0",
                    node.location,
                    code="implicit-variable",
                    hint="declare it as an attribute of the main activity or a local variable",
                )

    def _default(self, variable: Variable) -> str:
        if variable.default is None or not variable.default.strip():
            return _TYPE_DEFAULTS.get((variable.type_name or "").strip().lower(), "0")
        return self.printer.expr(variable.default, variable.location, "default value")

    def _literal_default(self, variable: Variable) -> str:
        ex = self.printer.ex
        if variable.default is not None and variable.default.strip():
            parsed = self.printer.parse(variable.default, variable.location, "default value")
            if ex.is_constant(parsed):
                return repr(ex.constant_value(parsed))
            return "None"
        return _TYPE_DEFAULTS.get((variable.type_name or "").strip().lower(), "0")

    def _cost_functions(self) -> list[CostFunctionView]:
        ex = self.printer.ex
        out: list[CostFunctionView] = []
        calls: dict[str, set[str]] = {}
        for function in self.model.functions:
            parsed = ex.parse_function_body(function.body, function.parameters, function.location)
            params: dict[str, str] = {}
            local_namer = Namer(
                {"p", "v", *RESERVED, *self.printer.functions, *ex.BUILTIN_FUNCTIONS, *ex.CONSTANTS}
            )
            for parameter in function.parameters:
                params[parameter] = local_namer.claim(parameter, parameter)
            key = (function.body, "cost function body", tuple(sorted(params.items())))
            self.printer.check(
                parsed.names, parsed.calls, function.body, function.location, "cost function body", params
            )
            self.printer.note_constants(parsed.tree)
            rename = {**self.printer.rename, **params}
            body = ex.to_python(
                parsed, rename, self.printer.leading(), function_names=self.printer.function_names
            )
            self.printer.remember(key, body)
            calls[function.name] = {c for c in parsed.calls if c in self.printer.functions}
            out.append(
                CostFunctionView(
                    function.name,
                    list(params.values()),
                    docstring(f"Cost function {function.name} (xmi:id={comment(function.id or '')})."),
                    body,
                )
            )
        check_not_recursive(calls, self.printer.functions)
        return out

    # -- elements ---------------------------------------------------------------

    def element(self, node: Node, kind: str | None = None) -> str:
        """The ``E_`` name of ``node``; the node becomes part of ``ELEMENTS``."""
        nid = node.id
        row = self.elements.get(nid)
        if row is not None:
            return row[0]  # its E_ name
        text = node.name or node.kind.value
        name = self.namer.unique(text, prefix="E_")  # named once: self.elements is the table by id
        if kind is None:
            kind = node.perf.role.value if node.perf is not None else _KIND_OF_NODE.get(node.kind, "action")
        literal = self.kind_literals.get(kind)
        if literal is None:
            literal = self.kind_literals[kind] = quote(kind)
        self.elements[nid] = (name, text, literal, nid, node.line)  # quoted when printed: _element_lines
        return name

    def activity_element(self, activity: Activity, kind: str) -> str:
        pseudo = Node(activity.id, activity.name, NodeKind.FORK, "Activity", activity.location)
        return self.element(pseudo, kind)

    # -- writing helpers -----------------------------------------------------------
    # Statements become views (uml2perf/handlers/python/views.py) appended to the
    # body being written; a compound statement opens a nested body and closes it
    # when the walk leaves it.  templates/_statements.py.jinja prints them.

    def emit(self, view: View) -> None:
        self.body.append(view)

    def open_body(self, body: list[View]) -> None:
        """Write the following statements into ``body`` (a compound statement's block)."""
        self.bodies.append(self.body)
        self.body = body
        if len(self.bodies) > self.deepest:
            self.deepest = len(self.bodies)

    def close_body(self, *, pad: bool = True) -> None:
        """Back to the enclosing body; ``pad`` gives a block that stayed empty its ``pass``."""
        if pad and not self.body:
            self.body.append(PASS)
        self.body = self.bodies.pop()

    def called(self) -> None:
        """The function being written calls the runtime: it is a generator already."""
        self.scopes[-1].yielded = True

    def open_function(self, function: FunctionView) -> None:
        """Write into ``function``, defined at the start of the function being written."""
        self.scopes[-1].functions.append(function)
        self.open_body(function.body)
        self.scopes.append(_Scope(function.functions, function.sites))

    def close_function(self, function: FunctionView) -> None:
        function.guard = not self.scopes.pop().yielded
        function.returns = bool(function.body) and isinstance(function.body[-1], ReturnView)
        _drop_last_check(function.body)
        self.close_body(pad=False)

    def local_name(self, stem: str) -> str:
        count = self.counters.get(stem, 0) + 1
        self.counters[stem] = count
        return f"_{stem}_{count}" if stem != "state" or count > 1 else "_state"

    def expr(self, text: str, location: Location, what: str) -> str:
        return self.printer.expr(text, location, what)

    def tag(self, node: Node, name: str, default: str | None, what: str | None = None) -> str:
        text = node.perf.get(name) if node.perf is not None else None
        if text is None or not text.strip():
            if default is None:
                role = node.perf.role.value if node.perf is not None else "action"
                raise ModelError(
                    f"{role}+ element {node.name or node.id!r} has no {name!r} tag",
                    node.location,
                    hint=f"add the tag {name} to the {role}+ stereotype of this element",
                )
            return default
        return self.expr(text, node.location, what or f"{name} tag")

    # -- model and activities -----------------------------------------------------------

    def visit_RecoveredModel(self, model: RecoveredModel) -> None:
        for body in model.activities:
            mark_endings(body.body, body, self.endings)

    def visit_ActivityBody(self, body: ActivityBody) -> None:
        activity = body.activity
        self._activity = activity
        self.counters = {}
        locals_ = [(variable.name, self._default(variable)) for variable in activity.variables]
        repeat = None
        if body.repeat is not None:
            repeat = self.expr(body.repeat, activity.location, "repeat tag")
        view = ActivityView(
            self.activity_names[activity.id],
            docstring(f"Activity {comment(activity.name)} (xmi:id={comment(activity.id)})."),
            locals_,
            repeat,
            checked=repeat is not None and not repeat.isdigit(),
            flag=ENDED if id(body) in self.endings.scopes else None,
        )
        self.activities.append(view)
        self.token_names = set()
        self.body = []
        self.bodies = []
        self.scopes = [_Scope(view.functions, view.sites, loops=int(repeat is not None))]
        self.open_body(view.body)

    def leave_ActivityBody(self, body: ActivityBody) -> None:
        view = self.activities[-1]
        if view.repeat is None:
            _drop_last_check(view.body)
        self.close_body(pad=view.repeat is not None)
        view.guard = not self.scopes.pop().yielded

    # -- simple statements ------------------------------------------------------------

    def visit_Run(self, run: Run) -> bool:
        """Consecutive plain actions, taken in one visit: those that only compute are one :class:`RunView`.

        A large model repeats a handful of annotations thousands of times.  Once an action that only
        computes has been written, every later action sharing its ``PerfSpec`` and without a code
        fragment of its own has the same kind and the same printed cost (the cost is printed from the
        shared spec alone), so its line needs only its element and its id; the first of each goes
        through :meth:`_action`, which checks and prints.
        """
        lines: list[ComputeLine] = []
        known = self.compute_only
        scope = self.scopes[-1]
        rows, element = self.elements, self.element
        for node in run.nodes:
            same = known.get(id(node.perf))
            nid = node.id
            if same is not None and nid and (node.code is None or not node.code.strip()):
                row = rows.get(nid)
                # the comment of its id: literals.comment, written out (20,000 actions, 20,000 calls)
                lines.append(
                    (row[0] if row is not None else element(node, same[0]), same[1], repr(nid)[1:-1])
                )
                scope.yielded = True  # as _action records: the function calls the runtime
                continue
            view = self._action(node)
            if isinstance(view, tuple):
                if node.code is None:  # its spec alone made it compute only
                    annotation = self.annotations[id(node.perf)]
                    known[id(node.perf)] = (annotation.kind, view[1])
                lines.append(view)
                continue
            if lines:
                self.body.append(RunView(lines))
                lines = []
            self.body.append(view)
        if lines:
            self.body.append(RunView(lines))
        return False

    def visit_Exec(self, stmt: Exec) -> bool:
        view = self._action(stmt.node, stmt.function)
        self.body.append(ComputeView(*view) if isinstance(view, tuple) else view)
        return False

    def _action(self, node: Node, function: CostFunction | None = None) -> ComputeLine | View:
        """The statement of one action: the line of one that only computes, else the view of its code
        fragment and its cost or its communication."""
        perf = node.perf
        annotation = self.annotations.get(id(perf)) or self._annotation(perf)
        text = self.code_text(node, annotation)
        code = None
        if text is not None:
            code = CodeView(describe(node), self.printer.code(text, node.location, ""))
        xmi_id = "" if code is not None else comment(node.id)  # the code's comment names it then
        element = self.element(node, annotation.kind)
        cost = self._cost(node, function, annotation)
        self.scopes[-1].yielded = True
        operation = annotation.operation
        if operation is not None:
            args: list[Arg] = [(None, element)]
            if annotation.role is Role.WAIT:
                args.append(_EVERY_REQUEST)
            else:
                for parameter in operation.parameters:
                    if operation.scope == "collective" and parameter.name == "size":
                        value = self._per_destination(node, operation.name, parameter.name, parameter.default)
                    else:
                        value = self.tag(node, parameter.name, parameter.default)
                    if value != parameter.default:
                        args.append((parameter.name, value))
            if cost not in _COST_DEFAULTS:
                args.append(("cost", cost))
            after = self._sender(node, operation.name)
            named = _SITE_OPERATIONS.get(operation.name)
            if named is not None and self.scopes[-1].loops and len(args) > 1 and args[1][0] == named:
                constants = self.constants
                if all(invariant(value, constants) for _, value in args[1:]):
                    site = self.local_name(operation.name)
                    self.scopes[-1].sites.append(SiteView(site, operation.name, args))
                    return CommView(operation.name, args, xmi_id, code, site, after)
            return CommView(operation.name, args, xmi_id, code, after=after)
        if annotation.roofline:
            return CommView("roofline", self._roofline_arguments(node, element, cost), xmi_id, code)
        if code is not None or not xmi_id:
            return ComputeView(element, cost, xmi_id, code)
        return element, cost, xmi_id

    def _annotation(self, perf: PerfSpec | None) -> _Annotation:
        """What the python handler reads of one (shared) ``PerfSpec``, worked out once."""
        if perf is None:
            annotation = _Annotation(Role.ACTION, None, None, None, False, None)
        else:
            tags = dict(perf.tags)
            code = tags.get("code")
            cost = tags.get("cost") or tags.get("time")
            annotation = _Annotation(
                perf.role,
                perf.role.value,
                code if code is not None and code.strip() else None,
                cost if cost is not None and cost.strip() else None,
                perf.role is Role.ACTION and any(tags.get(t) for t in _ROOFLINE_TAGS),
                _COMM.get(perf.role),
            )
        self.annotations[id(perf)] = annotation
        return annotation

    def code_text(self, node: Node, annotation: _Annotation | None = None) -> str | None:
        """The code fragment of an action: its ``code`` tag, else the body of its opaque action."""
        if annotation is None:
            annotation = self.annotations.get(id(node.perf)) or self._annotation(node.perf)
        if annotation.code is not None:
            return annotation.code
        text = node.code
        return text if text is not None and text.strip() else None

    def _roofline_arguments(self, node: Node, element: str, cost: str) -> list[Arg]:
        """Arguments of ``p.roofline``: flops, bytes, copies as expressions; the device as a plain name."""
        parts: list[Arg] = [(None, element)]
        if cost not in _COST_DEFAULTS:
            parts.append(("cost", cost))
        for name, keyword in (
            ("flops", "flops"),
            ("bytes", "bytes"),
            ("copyin", "copy_in"),
            ("copyout", "copy_out"),
            ("footprint", "footprint"),
            ("fresh", "fresh"),
            ("allocation", "allocation"),
            ("calls", "calls"),
        ):
            if node.perf is not None and node.perf.get(name):
                parts.append((keyword, self.tag(node, name, None)))
        if node.perf is not None and (node.perf.get("operations") or "").strip():
            parts.append(("operations", self._operations(node)))
        device = (
            (node.perf.get("device") or "").strip().strip('"').strip("'") if node.perf is not None else ""
        )
        if device:
            if not device.isidentifier():
                raise ModelError(
                    f"device {device!r} of {node.name or node.id!r} is not a plain name",
                    node.location,
                    hint='give a [devices.NAME] key of the machine file, "cpu" or "auto" (not an expression)',
                )
            parts.append(("device", quote(device)))
        return parts

    def _operations(self, node: Node) -> str:
        """The ``operations`` tag as the tuple ``((name, elements, runs), ...)`` the runtime prices."""
        from uml2perf_runtime.platform.array_operations import OPERATIONS_TAG_HINT, parse_operations_tag

        assert node.perf is not None
        text = node.perf.get("operations") or ""
        try:
            entries = parse_operations_tag(text)
        except ValueError as exc:
            raise ModelError(
                f"operations tag {text!r} of {node.name or node.id!r}: {exc}",
                node.location,
                hint=OPERATIONS_TAG_HINT,
            ) from None
        self.operations_named.update(name for name, _, _ in entries)
        items = []
        for name, count, runs in entries:
            what = f"operations tag ({name})"
            elements = self.expr(count, node.location, what)
            times = self.expr(runs, node.location, what)
            items.append(f"({quote(name)}, {elements}, {times})")
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

    def _cost(self, node: Node, function: CostFunction | None, annotation: _Annotation) -> str:
        text = annotation.cost
        if text is not None:
            printed = self.printer.printed(text, "cost")
            return printed if printed is not None else self.printer.expr(text, node.location, "cost")
        if function is not None:
            if function.parameters:
                raise ModelError(
                    f"{node.name or node.id!r} calls cost function {function.name}, which needs"
                    f" {len(function.parameters)} argument(s)",
                    node.location,
                    hint=f"give the action a cost tag such as {function.name}(...)",
                )
            return f"{function.name}(p, v)"
        return "0"

    def visit_Call(self, stmt: Call) -> bool:
        element = self.element(stmt.node, "activity")
        self.called()
        self.emit(
            CallView(
                describe(stmt.node),
                comment(stmt.activity.name),
                element,
                self.activity_names[stmt.activity.id],
            )
        )
        return False

    def visit_Break(self, stmt: Break) -> bool:
        self.emit(BREAK)
        return False

    def visit_Continue(self, stmt: Continue) -> bool:
        self.emit(CONTINUE)
        return False

    def visit_Return(self, stmt: Return) -> bool:
        node = stmt.node
        where = describe(node) if node is not None else None
        ends_all = id(stmt) in self.endings.returns
        if ends_all and node is not None and node.id not in self._warned_finals:
            self._warned_finals.add(node.id)
            self.warn(
                "activity final in a concurrent branch: reaching it ends the whole activity"
                " (or the structured"
                " node that holds it), and the other branches stop at their next step",
                node.location,
                code="final-ends-branches",
                hint="use a flow final node where only this branch should end",
            )
        self.emit(ReturnView(where, ENDED if ends_all else None))
        return False

    # -- blocks -------------------------------------------------------------------

    def visit_Block(self, stmt: Block) -> None:
        node = stmt.node
        element = self.element(node)
        if self._bracket(node):
            view = BlockView(describe(node), f"{node.kind.value} node", element)
        else:
            view = BlockView(None, "one iteration (a final node ends it)", element, bracket=False)
        self.emit(view)
        self.blocks.append((view, None))
        self.bracketed.append(node.id)
        if stmt.scoped:
            function = FunctionView(
                self.local_name("block"), flag=ENDED if id(stmt) in self.endings.scopes else None
            )
            view.function = function.name
            self.blocks[-1] = (view, function)
            self.open_function(function)
        else:
            self.open_body(view.body)

    def leave_Block(self, stmt: Block) -> None:
        view, function = self.blocks.pop()
        self.bracketed.pop()
        if function is not None:
            self.close_function(function)
            self.called()
        else:
            self.close_body(pad=False)

    def visit_Repeat(self, stmt: Repeat) -> None:
        location = stmt.node.location if stmt.node is not None else Location()
        count = self.expr(stmt.count, location, "repeat tag")
        view = RepeatView(count, checked=not count.isdigit())
        self.emit(view)
        self.open_body(view.body)
        self.scopes[-1].loops += 1

    def leave_Repeat(self, stmt: Repeat) -> None:
        self.close_body()
        self.scopes[-1].loops -= 1

    def _bracket(self, node: Node) -> bool:
        """A block or loop enters/leaves its element, unless the construct around it (same node) does."""
        return not self.bracketed or self.bracketed[-1] != node.id

    def visit_For(self, stmt: For) -> None:
        element = self.element(stmt.node, "loop")
        count = self.expr(stmt.count, stmt.node.location, "iterations tag")
        bracket = self._bracket(stmt.node)
        target = self._counter(stmt.node)
        view = ForView(
            describe(stmt.node) if bracket else None,
            element,
            bracket,
            count,
            not count.isdigit(),
            target=target,
        )
        self.emit(view)
        self.bracketed.append(stmt.node.id)
        self.open_body(view.body)
        self.scopes[-1].loops += 1

    def leave_For(self, stmt: For) -> None:
        self.close_body()
        self.bracketed.pop()
        self.scopes[-1].loops -= 1

    def _counter(self, node: Node) -> str:
        """The loop variable of a counted loop: ``_``, or ``v.NAME`` for a ``counter = "NAME"`` tag.

        The counter must be a declared model variable (an attribute or local variable of an
        activity), so that the expressions reading it are checked like any other; each iteration
        sets it to the iteration's index, 0 first, and after the loop it keeps the last index.
        """
        name = (node.perf.get("counter") or "").strip() if node.perf is not None else ""
        if not name:
            return "_"
        return self._variable_tag(node, "counter", name, f"loop {node.name or node.id!r}", "K")

    def _variable_tag(self, node: Node, tag: str, name: str, what: str, example: str) -> str:
        """``v.NAME`` for a tag that names a model variable to set (``counter``, ``sender``).

        The name must be a declared variable (an attribute of the main activity or a local one):
        anything else stops the conversion with the element and what to declare.
        """
        problem = f"{tag} {name!r} of {what} is not a model variable"
        if not name.isidentifier() or name not in self._declared_names():
            raise ModelError(
                problem,
                node.location,
                hint="declare it as an attribute of the main activity or a local variable "
                f'(e.g. {example} with default 0) and give its name: {tag}="{example}"',
            )
        printed = self.expr(name, node.location, f"{tag} tag")
        if not printed.startswith("v."):
            raise ModelError(problem, node.location)  # pragma: no cover - declared names print as v.NAME
        return printed

    def _per_destination(self, node: Node, operation: str, name: str, default: str | None) -> str:
        """An ``alltoall+`` tag that may read ``dest``: one value per destination when it does.

        ``size = "8 * counts(pid, dest)"`` prints as ``[8 * counts(p.pid, dest) for dest in
        range(p.nprocs)]``: each rank gives the bytes of its block for every rank (its
        ``MPI_Alltoallv`` send counts).  A model variable named ``dest`` keeps its meaning.
        """
        text = node.perf.get(name) if node.perf is not None else None
        if text is None or not text.strip() or PEER_NAME in self.printer.rename:
            return self.tag(node, name, default)
        parsed = self.printer.parse(text, node.location, f"{name} tag")
        if PEER_NAME not in parsed.names:
            return self.tag(node, name, default)
        if (operation, name) not in PEER_TAGS:
            raise ModelError(
                f"{name} tag {text!r} of {operation}+ {node.name or node.id!r} reads {PEER_NAME!r}, "
                f"the rank a block goes to, which only alltoall+ has",
                node.location,
                hint=f"a {operation}+ block is each rank's own: write its size over pid "
                "(e.g. 8 * (N + pid)); "
                f"or declare {PEER_NAME} as a model variable if it is one",
            )
        printed = self.printer.expr(text, node.location, f"{name} tag", {PEER_NAME: PEER_NAME})
        return f"[{printed} for {PEER_NAME} in range(p.nprocs)]"

    def _sender(self, node: Node, operation: str) -> str:
        """The statement that stores the rank a receive matched, for a ``sender = "W"`` tag, or "".

        A blocking receive sets the variable as it returns (``v.W = p.sender``); an ``irecv`` hands
        the variable to its request, which the wait that completes it sets (``MPI_Wait``'s status).
        As with a loop's ``counter``, the name must be a declared model variable.
        """
        name = (node.perf.get(SENDER_TAG) or "").strip() if node.perf is not None else ""
        if not name or operation not in _RECEIVES:
            return ""
        printed = self._variable_tag(node, "sender", name, f"{operation}+ {node.name or node.id!r}", "W")
        if operation == "irecv":
            return f"p.sender_to(v, {name!r})"
        return f"{printed} = p.sender"

    def _declared_names(self) -> set[str]:
        globals_, locals_ = self._all_variables()
        return {variable.name for variable in globals_} | {variable.name for _, variable in locals_}

    def visit_While(self, stmt: While) -> None:
        node = stmt.node
        assert node is not None
        if node.perf is not None and (node.perf.get("counter") or "").strip():
            raise ModelError(
                f"loop {node.name or node.id!r} has a counter but no iterations tag",
                node.location,
                hint="a counter numbers the iterations of a loop+ with iterations; a loop with a condition "
                "can count with a code fragment (K = K + 1)",
            )
        element = self.element(node, "loop")
        own = self._bracket(node)  # not one part of a construct of the same node, which names it already
        bracket = (node.kind is NodeKind.LOOP or node.kind is NodeKind.STRUCTURED) and own
        condition = self.condition(stmt.cond) if stmt.cond is not None else "True"
        view = WhileView(describe(node) if own else None, element, bracket, condition)
        self.emit(view)
        self.bracketed.append(node.id)
        self.open_body(view.body)
        self.scopes[-1].loops += 1

    def leave_While(self, stmt: While) -> None:
        self.close_body(pad=False)  # never empty: the template counts each iteration first
        self.bracketed.pop()
        self.scopes[-1].loops -= 1

    # -- choices ---------------------------------------------------------------------

    def condition(self, cond: Cond) -> str:
        text = cond.text or "True"
        printed = self.expr(text, cond.location, "guard" if cond.kind is CondKind.GUARD else "probability")
        return f"not ({printed})" if cond.negate else printed

    def visit_If(self, stmt: If) -> None:
        node = stmt.node
        named = self.token_nodes and self.token_nodes[-1] is node  # its function's comment names it
        comment_ = (
            describe(node) if node is not None and node.kind is NodeKind.DECISION and not named else None
        )
        state = _IfState(stmt)
        state.view = IfView(comment_, state.uvar if stmt.is_random else None)
        self.emit(state.view)
        self.ifs.append(state)

    def leave_If(self, stmt: If) -> None:
        state = self.ifs.pop()
        self._else_when_no_guard_holds(stmt, state)
        if state.view is not None and state.view.empty and self.body and self.body[-1] is state.view:
            self.body.pop()  # nothing to say: no comment, no draw, no branch

    def _else_when_no_guard_holds(self, stmt: If, state: _IfState) -> None:
        """Guards that may all be false get an ``else`` that stops the run naming the decision and values.

        UML keeps the token on a decision none of whose guards holds; falling
        through to the next action instead would predict a program that does
        not exist.
        """
        view = state.view
        if view is None or stmt.node is None or not stmt.branches or stmt.is_random:
            return
        if any(b.cond.kind is not CondKind.GUARD for b in stmt.branches):
            return
        outgoing = self._outgoing_guards().get(stmt.node.id)
        if not outgoing or any(
            g is None or means_else(g) or g.strip().lower() in ("true", "1") for g in outgoing
        ):
            return  # the decision has an else (or an unguarded) flow: some branch is always taken
        names: list[str] = []
        for branch in stmt.branches:
            parsed = self.printer.parse(branch.cond.text or "True", branch.cond.location, "guard")
            names.extend(n for n in sorted(parsed.names) if n not in names and n in self.printer.rename)
        values = "{" + ", ".join(f"{json.dumps(n)}: {self.printer.rename[n]}" for n in names) + "}"
        node = stmt.node
        where = (
            f"decision {node.name or node.kind.value!r} (xmi:id={node.id}, line {node.location.line or '?'})"
        )
        view.branches.append(
            BranchView("else", "", [NoGuardView(json.dumps(where, ensure_ascii=False), values)])
        )

    def _outgoing_guards(self) -> dict[str, list[str | None]]:
        """Guards of the control flows leaving each node, over every region of the model (built once)."""
        if self._guards_by_source is None:
            found: dict[str, list[str | None]] = {}
            regions: list[Region] = [activity.region for activity in reversed(self.model.activities)]
            while regions:
                region = regions.pop()
                for edge in region.edges:
                    if edge.kind == "control" or edge.guard is not None:
                        found.setdefault(edge.source, []).append(edge.guard)
                regions.extend(node.region for node in reversed(region.nodes) if node.region is not None)
            self._guards_by_source = found
        return self._guards_by_source

    def visit_Branch(self, branch: Branch) -> bool:
        state = self.ifs[-1]
        assert state.stmt is not None and state.view is not None
        if branch.cond.kind is CondKind.ELSE and not branch.body.body and state.index > 0:
            return False  # an empty else says nothing
        keyword, condition = self._branch_header(state, branch.cond, len(state.stmt.branches))
        view = BranchView(keyword, condition)
        state.view.branches.append(view)
        self.open_body(view.body)
        return True

    def _branch_header(self, state: _IfState, cond: Cond, count: int) -> tuple[str, str]:
        """``(keyword, condition)`` of the next branch; the condition is empty for ``else``."""
        first = state.index == 0
        last = state.index == count - 1
        state.index += 1
        keyword = "if" if first else "elif"
        if cond.kind is CondKind.ELSE:
            return ("if", "True") if first else ("else", "")
        if cond.kind is CondKind.PROBABILITY:
            share = self.expr(cond.text or "0", cond.location, "probability")
            state.cumulative.append(share if _simple(share) else f"({share})")
            if last and not first:
                return "else", ""
            return keyword, f"{state.uvar} < {' + '.join(state.cumulative)}"
        return keyword, self.condition(cond)

    def leave_Branch(self, branch: Branch) -> None:
        self.close_body()

    # -- state machines --------------------------------------------------------------

    def visit_StateMachine(self, stmt: StateMachine) -> None:
        var = self.local_name("state")
        view = StateMachineView(describe(stmt.node), var)
        self.machines.append((view, self.element(stmt.node, "loop")))
        self.emit(view)
        self.scopes[-1].loops += 1  # its states run in a dispatch loop

    def leave_StateMachine(self, stmt: StateMachine) -> None:
        self.machines.pop()
        self.scopes[-1].loops -= 1

    def visit_State(self, state: State) -> None:
        machine = self.machines[-1][0]
        names = ", ".join(comment(n.name or n.id) for n in state.nodes) or "start"
        view = StateView("if" if state.index == 0 else "elif", state.index, names)
        machine.states.append(view)
        self.open_body(view.body)

    def leave_State(self, state: State) -> None:
        view = self.machines[-1][0].states[-1]
        element = self.machines[-1][1]
        self.close_body(pad=False)  # a state always ends with a return or a move

        def goto(target: int) -> GotoView:
            return GotoView(target, element if 0 <= target <= state.index else None)

        if state.body.body and isinstance(state.body.body[-1], Return):
            return
        if len(state.transitions) == 1 and state.transitions[0].cond is None:
            view.goto = goto(state.transitions[0].target)
        elif state.transitions:
            if state.is_random:
                view.draw = "_u"
            ifs = _IfState(None)
            has_else = False
            for transition in state.transitions:
                cond = transition.cond
                assert cond is not None
                has_else = has_else or cond.kind is CondKind.ELSE
                keyword, condition = self._branch_header(ifs, cond, len(state.transitions))
                view.transitions.append(TransitionView(keyword, condition, goto(transition.target)))
            if not has_else and not state.is_random:
                view.transitions.append(TransitionView("else", "", GotoView(-1)))
        else:
            view.goto = GotoView(-1)

    # -- token flows -------------------------------------------------------------------

    def visit_TokenFlow(self, stmt: TokenFlow) -> None:
        """One function per node (named after it), then ``tokens.flow`` over them.

        Names are unique in the whole activity function: two token flows of
        structured nodes inlined in one function define their nodes side by side.
        """
        taken = self.token_names
        names: dict[int, str] = {}
        for item in stmt.nodes:
            node = item.node
            stem = "".join(c if c.isalnum() else "_" for c in (node.name or node.kind.value)).strip("_")
            if not stem.isascii() or not stem:
                stem = node.kind.value
            name = f"node_{stem}"
            count = 1
            while name in taken:
                count += 1
                name = f"node_{stem}_{count}"
            taken.add(name)
            names[item.index] = name
        joins = [(names[n.index], n.inputs) for n in stmt.nodes if n.inputs > 1]
        element = (
            self.element(stmt.node, "fork")
            if stmt.node is not None
            else self.activity_element(self._activity, "fork")
        )
        view = TokenFlowView(
            describe(stmt.node) if stmt.node is not None else None,
            element,
            [names[i] for i in stmt.starts],
            "{" + ", ".join(f"{name}: {count}" for name, count in joins) + "}",
            stmt.ends_scope,
        )
        self.flows.append((view, names))
        self.uses_tokens = True

    def leave_TokenFlow(self, stmt: TokenFlow) -> None:
        view, _ = self.flows.pop()
        self.emit(view)
        self.called()

    def visit_TokenNode(self, item: TokenNode) -> None:
        names = self.flows[-1][1]
        function = FunctionView(names[item.index])
        self.open_function(function)
        node = item.node
        self.token_nodes.append(node)
        what = _TOKEN_KINDS.get(node.kind, "action")
        if item.inputs > 1:
            what = f"join, waits for a token on each of its {item.inputs} incoming flows"
        collects = any(isinstance(s, Offer) and s.kept for s in item.body.body)
        if collects:
            what = "fork" if node.kind is NodeKind.FORK else "action"
            what += ", a token on each flow whose guard holds"
        self.emit(NoteView(f"{describe(node)}: {what}"))
        if collects:
            self.emit(NoteView("", assign="offers = []"))

    def leave_TokenNode(self, item: TokenNode) -> None:
        self.token_nodes.pop()
        function = self.scopes[-2].functions[-1]  # the node's function, in the scope that defines it
        self.close_function(function)
        function.returns = _always_offers(function.body)

    def visit_Offer(self, stmt: Offer) -> bool:
        names = self.flows[-1][1]
        targets = [f"({names[index]}, {port})" for index, port in stmt.targets]
        where = describe(stmt.node) if stmt.node is not None else None
        self.emit(OfferView(targets, stmt.end, where, stmt.keep, stmt.kept))
        return False

    # -- concurrency ------------------------------------------------------------------

    def _ended(self, stmt: Statement) -> str | None:
        return ENDED if id(stmt) in self.endings.owners else None

    def visit_Parallel(self, stmt: Parallel) -> None:
        base = self.local_name("fork")
        names = [f"{base}_{i + 1}" for i in range(len(stmt.branches))]
        view = ForkView(describe(stmt.node) if stmt.node is not None else None, names, flag=self._ended(stmt))
        self.emit(view)
        self.owners.append(view)
        self.lanes.append([])

    def leave_Parallel(self, stmt: Parallel) -> None:
        view = self.owners.pop()
        self.lanes.pop()
        if stmt.node is not None:
            view.element = self.element(stmt.node, "fork")
        else:
            view.element = self.activity_element(self._activity, "fork")
        self.called()

    def visit_Pipeline(self, stmt: Pipeline) -> None:
        base = self.local_name("stage")
        names = [f"{base}_{i + 1}" for i in range(len(stmt.stages))]
        view = PipelineView(describe(stmt.node), names, flag=self._ended(stmt))
        self.emit(view)
        self.owners.append(view)
        self.lanes.append([])

    def leave_Pipeline(self, stmt: Pipeline) -> None:
        view = self.owners.pop()
        self.lanes.pop()
        assert isinstance(view, PipelineView)
        view.element = self.element(stmt.node, "pipeline")
        view.items = self.tag(stmt.node, "items", "1")
        view.options = self._pattern_costs(stmt.node) + self._stage_threads(stmt)
        self.called()

    def _stage_threads(self, stmt: Pipeline) -> list[Arg]:
        """``threads`` (workers per stage) and ``pools`` (stages that are task pools), when a stage says.

        A stage that is a ``taskpool+`` runs on that pool's ``threads`` workers; an
        action stage with a ``threads`` tag on that many; every other stage on one.
        """
        counts: list[str] = []
        pools: list[str] = []
        out: list[Arg] = []
        for index, stage in enumerate(stmt.stages):
            inner = stage.body[0] if len(stage.body) == 1 else None
            if isinstance(inner, TaskPool):
                counts.append(self.tag(inner.node, "threads", "p.nthreads"))
                pools.append(str(index))
            elif isinstance(inner, Exec) and inner.node.perf is not None and inner.node.perf.get("threads"):
                counts.append(self.tag(inner.node, "threads", "1"))
            else:
                counts.append("1")
        if pools or any(count != "1" for count in counts):
            out.append(("threads", f"({', '.join(counts)},)"))
        if pools:
            out.append(("pools", f"({', '.join(pools)},)"))
        if stmt.node.perf is not None and stmt.node.perf.get("ordered"):
            out.append(("ordered", self.tag(stmt.node, "ordered", None)))
        return out

    def visit_Lane(self, lane: Lane) -> None:
        owner = self.owners[-1]
        setter = (id(lane.owner), lane.index) in self.endings.setters
        function = FunctionView(owner.names[lane.index], nonlocal_flag=ENDED if setter else None)
        self.lanes[-1].append(function)
        self.open_function(function)

    def leave_Lane(self, lane: Lane) -> None:
        function = self.lanes[-1][-1]
        self.close_function(function)
        if isinstance(lane.owner, Parallel) and id(lane.owner) in self.endings.owners:
            function.body[:] = _with_stops(function.body)

    def _threads(self, kind: str, stem: str, stmt: ParallelRegion | Critical | TaskPool) -> None:
        function = FunctionView(
            self.local_name(stem), nonlocal_flag=ENDED if (id(stmt), 0) in self.endings.setters else None
        )
        view = ThreadsView(kind, describe(stmt.node), function.name, flag=self._ended(stmt))
        self.emit(view)
        self.owners_threads.append((view, function))
        self.open_function(function)

    def _threads_done(self) -> ThreadsView:
        view, function = self.owners_threads.pop()
        self.close_function(function)
        self.called()
        return view

    def visit_ParallelRegion(self, stmt: ParallelRegion) -> None:
        self._threads("parallel", "parallel", stmt)

    def leave_ParallelRegion(self, stmt: ParallelRegion) -> None:
        view = self._threads_done()
        view.threads = self.tag(stmt.node, "threads", "p.nthreads")
        view.element = self.element(stmt.node, "parallel")

    def visit_Critical(self, stmt: Critical) -> None:
        self._threads("critical", "critical", stmt)

    def leave_Critical(self, stmt: Critical) -> None:
        view = self._threads_done()
        view.element = self.element(stmt.node, "critical")
        view.lock = quote(stmt.name)

    def visit_TaskPool(self, stmt: TaskPool) -> None:
        self._threads("taskpool", "task", stmt)

    def leave_TaskPool(self, stmt: TaskPool) -> None:
        view = self._threads_done()
        view.threads = self.tag(stmt.node, "threads", "p.nthreads")
        view.items = self.tag(stmt.node, "items", "1")
        view.element = self.element(stmt.node, "taskpool")
        view.options = self._pattern_costs(stmt.node)

    def _pattern_costs(self, node: Node) -> list[Arg]:
        """The overhead and startup tags a pipeline or task pool gives, as keyword arguments."""
        return [
            (name, self.tag(node, name, None))
            for name in ("overhead", "startup", "handoff")
            if node.perf is not None and node.perf.get(name)
        ]

    # -- output ---------------------------------------------------------------------

    def finish(self) -> str:
        assert self.job is not None
        rows = self.elements
        elements = [rows[i] for i in self.file_order if i in rows]  # ELEMENTS are in file order
        if len(elements) < len(rows):  # elements the walk of the activities did not reach, by id
            elements.extend(rows[i] for i in sorted(rows.keys() - self.file_order.keys()))
        main = self.job.main
        source = Path(self.model.source).name if self.model.source else ""
        name = self.model.name or (Path(source).stem if source else "model")
        # (name, id, function): a generated module can run any of its activities (--activity NAME)
        activities_meta = [
            (quote(a.name), quote(a.id), self.activity_names[a.id])
            for a in self.model.activities
            if a.id in self.activity_names
        ]
        # variables without a value, for each activity a run may start from (--activity), with where
        # each is declared, the file by its name only (as ``source``: the module does not depend
        # on the path the export was given by)
        declared = (*self.model.globals, *(v for a in self.model.activities for v in a.attributes))
        required = (
            [
                (quote(v.name), quote(str(self._shown_location(v.location))), quote(a.id))
                for a in self.model.activities
                if a.id in self.activity_names
                for v in unset_variables(self.model, a)
            ]
            if any(v.required for v in declared)  # most models: no variable without a value
            else []
        )
        context = {
            "docstring": docstring(
                f"Performance model {comment(repr(name))}, generated by uml2perf from {comment(source)}."
                " Do not edit."
            ),
            "builtins": sorted(self.printer.builtins_used),
            "tokens": self.uses_tokens,
            "globals": self.globals,
            "functions": self.cost_functions,
            "elements": elements,
            # the rows printed here, not in the template's loop: see templates/_elements.py.jinja
            "element_lines": _element_lines(elements),
            "element_names": "\n".join([f"    {row[0]}," for row in elements]),
            "activities": self.activities,
            "model_name": quote(name),
            "source": quote(source),
            "main": self.activity_names[main.id] if main is not None else "None",
            "parameters": self.parameters,
            "activities_meta": activities_meta,
            "required": required,
            "operations": [quote(name) for name in sorted(self.operations_named)],
        }
        text = render("model_module.py.jinja", context)
        self._check_python_limits(text)
        return text

    @staticmethod
    def _shown_location(location: Location) -> Location:
        return location._replace(file=Path(location.file).name) if location.file else location

    def _check_python_limits(self, text: str) -> None:
        """Refuse a module Python could not compile, naming the innermost element (see :mod:`.limits`)."""
        # every open body adds at most two levels of indentation (a state: its loop and its test),
        # so a shallow tree cannot reach the limits and its text needs no reading
        if 2 * self.deepest + 3 < MAX_NESTED_LOOPS:
            return
        found = first_excess(text)
        if found is None:
            return
        problem, node_id = found
        raise NestedTooDeeply(
            f"the diagram is nested too deeply for a Python model: {problem}",
            self._location_of(node_id),
            hint="move the innermost part into its own activity (called with a CallBehaviorAction)",
        )

    def _location_of(self, xmi_id: str | None) -> Location:
        """Where the activity or node ``xmi_id`` is written (the model's file when it is neither)."""
        if xmi_id is not None:
            for activity in self.model.activities:
                if activity.id == xmi_id:
                    return activity.location
                for node in activity.walk():
                    if node.id == xmi_id:
                        return node.location
        return Location(file=self.model.source)


class _Annotation(NamedTuple):
    """What the python handler reads of one ``PerfSpec`` (the profile shares one per distinct annotation)."""

    role: Role
    kind: str | None  # the element kind of a node annotated so (its role's name; None: by its node kind)
    code: str | None  # the code tag, when it says something
    cost: str | None  # the cost (or time) tag, when it says something
    roofline: bool  # a hardware-aware action (p.roofline instead of p.compute)
    operation: Operation | None  # the runtime's communication operation it stands for


#: ``action+`` tags that make an action hardware-aware (``p.roofline`` instead of ``p.compute``).
_ROOFLINE_TAGS = (
    "flops",
    "bytes",
    "device",
    "copyin",
    "copyout",
    "footprint",
    "fresh",
    "allocation",
    "calls",
    "operations",
)


def _element_lines(elements: list[ElementView]) -> list[str | tuple[int, str, str, str, str, str]]:
    """The ``E_name = rt.Element(index, name, kind, xmi id, line)`` lines, as the template prints them
    (see :func:`.views.fitting_lines`; a longer line's row holds the printed values).

    Names and ids are printed with :func:`.literals.quote`, which writes plain text (printable ASCII
    without ``"`` or ``\\``) between double quotes.  Whether every name and id is plain is one test of
    all of them joined, so a large model's lines are formatted directly, without a call per value.
    """
    every = "".join([text + xmi_id for _, text, _, xmi_id, _ in elements])
    if '"' not in every and "\\" not in every and every.isprintable() and every.isascii():
        lines = [
            f'{name} = rt.Element({index}, "{text}", {kind}, "{xmi_id}", {line!r})'
            for index, (name, text, kind, xmi_id, line) in enumerate(elements)
        ]
    else:
        lines = [
            f"{name} = rt.Element({index}, {quote(text)}, {kind}, {quote(xmi_id)}, {line!r})"
            for index, (name, text, kind, xmi_id, line) in enumerate(elements)
        ]

    def row(index: int) -> tuple[int, str, str, str, str, str]:
        name, text, kind, xmi_id, line = elements[index]
        return index, name, quote(text), kind, quote(xmi_id), repr(line)

    return fitting_lines(lines, row)


def _simple(text: str) -> bool:
    return text.replace(".", "").replace("_", "").isalnum()


def _drop_last_check(body: list[View]) -> None:
    """A flag check as the last statement of a function has nothing left to skip."""
    if body and isinstance(body[-1], (ForkView, PipelineView, ThreadsView)):
        body[-1].flag = None


def _with_stops(body: list[View]) -> list[View]:
    """A fork branch of a construct that may end its scope: check the flag between its statements."""
    if len(body) < 2:
        return body
    stop = StopView(ENDED)
    out: list[View] = [body[0]]
    for view in body[1:]:
        if not isinstance(view, ReturnView):  # a return ends the branch anyway
            out.append(stop)
        out.append(view)
    return out


__all__ = ["RESERVED", "PythonHandler"]
