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
becomes a plain view object (:mod:`uml2perf.handlers.python_views`) holding
what this handler computed: names, printed expressions, comment text,
ordering, where an empty block needs ``pass``.  The templates print them:
``templates/_statements.py.jinja`` has one section per statement kind, so the
shape of all generated code is read there, not here.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import Location, ModelError
from ..expressions import means_else
from ..model import Activity, CostFunction, Model, Node, NodeKind, Role, Variable
from ..navigation.structure import (
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
    Parallel,
    ParallelRegion,
    Pipeline,
    RecoveredModel,
    Repeat,
    Return,
    State,
    StateMachine,
    Statement,
    TaskPool,
    While,
)
from ..navigation.traversal import Lane
from .base import ContentHandler, GenerationJob
from .naming import Namer, is_identifier
from .python_views import (
    BREAK,
    CONTINUE,
    PASS,
    ActivityView,
    BlockView,
    BranchView,
    CallView,
    CodeView,
    CommView,
    ComputeView,
    ForkView,
    ForView,
    FunctionView,
    GotoView,
    IfView,
    NoGuardView,
    PipelineView,
    RepeatView,
    ReturnView,
    StateMachineView,
    StateView,
    StopView,
    ThreadsView,
    TransitionView,
    View,
    WhileView,
)

#: names the module defines or imports itself; model names never take them
RESERVED = frozenset({"rt", "p", "v", "MODEL", "ELEMENTS", "init_globals", "_u", "_state", "_ended", "_"})

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

#: communication roles → runtime method and its (argument, tag, default) list; None = required
_COMM: Mapping[Role, tuple[str, tuple[tuple[str, str | None], ...]]] = {
    Role.SEND: ("send", (("dest", None), ("size", "0"), ("tag", "0"))),
    Role.RECV: ("recv", (("source", "-1"), ("size", "0"), ("tag", "0"))),
    Role.ISEND: ("isend", (("dest", None), ("size", "0"), ("tag", "0"))),
    Role.IRECV: ("irecv", (("source", "-1"), ("size", "0"), ("tag", "0"))),
    Role.WAIT: ("wait", ()),
    Role.BARRIER: ("barrier", ()),
    Role.BCAST: ("bcast", (("root", "0"), ("size", "0"))),
    Role.REDUCE: ("reduce", (("root", "0"), ("size", "0"))),
    Role.ALLREDUCE: ("allreduce", (("size", "0"),)),
    Role.GATHER: ("gather", (("root", "0"), ("size", "0"))),
    Role.SCATTER: ("scatter", (("root", "0"), ("size", "0"))),
    Role.ALLGATHER: ("allgather", (("size", "0"),)),
    Role.ALLTOALL: ("alltoall", (("size", "0"),)),
}

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


def comment(text: str) -> str:
    """Model text made safe for a ``#`` comment (no line breaks, no control characters)."""
    return repr(str(text))[1:-1]


def quote(text: str) -> str:
    """A Python string literal for any text (JSON escaping is valid Python and ASCII only)."""
    text = str(text)
    if '"' not in text and "\\" not in text and text.isprintable() and text.isascii():  # cheapest tests first
        return f'"{text}"'
    return json.dumps(text)


def docstring(text: str) -> str:
    """A one-line docstring literal; falls back to an escaped literal for unusual text."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"""{text}"""'
    return quote(text)


def describe(node: Node) -> str:
    name = comment(node.name) if node.name else node.kind.value
    return f"{name} (xmi:id={comment(node.id)})"


def trace(node: Node) -> str:
    """The short trailing comment of a one-line statement (its ``E_`` name already says the name)."""
    return f"xmi:id={comment(node.id)}"


# ---------------------------------------------------------------------------- expressions


class ExpressionPrinter:
    """Validates model expressions once and prints them as Python for this module."""

    def __init__(self, model: Model, handler: PythonHandler) -> None:
        from .. import expressions as ex

        self.ex = ex
        self.handler = handler
        self.variables: dict[str, Variable] = {}
        self.functions: dict[str, CostFunction] = {}
        self.function_names: dict[str, str] = {}
        self.builtins_used: set[str] = set()
        self._parsed: dict[tuple[str, str], Any] = {}
        self._printed: dict[tuple[str, str, tuple[str, ...]], str] = {}
        self.rename: dict[str, str] = {n: f"p.{attr}" for n, attr in ex.SYSTEM_PARAMETERS.items()}

    def add_variable(self, variable: Variable, what: str) -> None:
        name = variable.name
        ex = self.ex
        problem = None
        if not is_identifier(name):
            problem = "is not a valid name for expressions"
        elif name in ex.SYSTEM_PARAMETERS:
            problem = "is the name of a system parameter"
        elif name in ex.BUILTIN_FUNCTIONS or name in ex.CONSTANTS:
            problem = "is the name of a built-in function or constant"
        elif name.startswith("_"):
            problem = "starts with '_', which generated code keeps for itself"
        if problem is not None:
            raise ModelError(
                f"{what} {name!r} {problem}",
                variable.location,
                hint="rename it to letters, digits and '_' (not starting with a digit or '_'),"
                " distinct from pid, nprocs, tid, nthreads, uid, node, nnodes, ppn and the functions",
            )
        self.variables.setdefault(name, variable)
        self.rename[name] = f"v.{name}"

    def parse(self, text: str, location: Location, what: str) -> Any:
        key = (text, what)
        found = self._parsed.get(key)
        if found is None:
            found = self.ex.parse_expression(text, location, what=what)
            self._parsed[key] = found
        return found

    def check(
        self,
        names: Iterable[str],
        calls: Iterable[str],
        text: str,
        location: Location,
        what: str,
        local: Iterable[str] = (),
    ) -> None:
        known_locals = set(local)
        for name in sorted(names):
            if name not in self.rename and name not in known_locals and name not in self.ex.CONSTANTS:
                raise ModelError(
                    f"{what} {text!r} uses {name!r}, which is neither a model variable nor a system parameter",
                    location,
                    hint="declare it as a global (an attribute of the main activity) or a local variable,"
                    " or use pid, nprocs, tid, nthreads, uid, node, nnodes, ppn",
                )
        for call in sorted(calls):
            if call in self.ex.BUILTIN_FUNCTIONS:
                self.builtins_used.add(call)
            elif call not in self.functions:
                raise ModelError(
                    f"{what} {text!r} calls {call}(), but no cost function of that name is defined",
                    location,
                    hint="define it as an OpaqueBehavior/FunctionBehavior with a body, or fix the name",
                )

    def _note_constants(self, tree: ast.AST) -> None:
        """Record the library names (functions and constants) the module must import."""
        for item in ast.walk(tree):
            if isinstance(item, ast.Name) and (
                item.id in self.ex.CONSTANTS or item.id in self.ex.BUILTIN_FUNCTIONS
            ):
                self.builtins_used.add(item.id)

    def expr(self, text: str, location: Location, what: str, params: Mapping[str, str] | None = None) -> str:
        """Python for an expression text (validated, names mapped)."""
        key = (text, what, tuple(sorted(params.items())) if params else ())
        printed = self._printed.get(key)
        if printed is not None:
            return printed
        parsed = self.parse(text, location, what)
        self.check(parsed.names, parsed.calls, text, location, what, params or ())
        self._note_constants(parsed.tree)
        rename = self.rename if not params else {**self.rename, **params}
        printed = self.ex.to_python(parsed, rename, self._leading(), function_names=self.function_names)
        self._printed[key] = printed
        return printed

    def code(self, text: str, location: Location, indent: str) -> list[str]:
        """Python statements for a code fragment."""
        fragment = self.ex.parse_code(text, location)
        self.check(fragment.names, fragment.calls, text, location, "code fragment", ())
        self._note_constants(fragment.tree)
        printed = self.ex.to_python(
            fragment, self.rename, self._leading(), indent, function_names=self.function_names
        )
        return printed.split("\n")

    def _leading(self) -> dict[str, tuple[str, ...]]:
        return {name: ("p", "v") for name in self.functions}


# ---------------------------------------------------------------------------- writer


@dataclass
class _Scope:
    """A function being written: tracks whether it calls the runtime (is a generator already)."""

    yielded: bool = False


@dataclass
class _IfState:
    stmt: If | None
    view: IfView | None = None
    index: int = 0
    cumulative: list[str] = field(default_factory=list)
    uvar: str = "_u"


@dataclass
class _Endings:
    """Where an activity final inside a fork branch must end its whole scope (see ``_mark_endings``).

    Keys are ``id()`` of statements of the recovered tree, which lives for the whole walk.
    """

    returns: set[int] = field(default_factory=set)  # Return statements that end their scope
    owners: set[int] = field(default_factory=set)  # constructs whose functions may end the scope
    setters: set[tuple[int, int]] = field(default_factory=set)  # (owner, function index) that set the flag
    scopes: set[int] = field(default_factory=set)  # ActivityBody / scoped Block defining the flag


class PythonHandler(ContentHandler):
    """Writes the executable model module (see ``docs/architecture.md``)."""

    name = "python"
    suffix = ".py"
    navigator = "structure"
    description = "executable Python performance model (imports only uml2perf_runtime)"

    # -- life cycle ------------------------------------------------------------

    def start(self, job: GenerationJob) -> None:
        super().start(job)
        if job.recovered is None:  # pragma: no cover - generation always recovers for this handler
            raise ValueError("the python handler needs the recovered statement tree")
        self.model = job.model
        self.namer = Namer(RESERVED)
        self.printer = ExpressionPrinter(self.model, self)
        self.body: list[View] = []
        self.bodies: list[list[View]] = []
        self.scopes: list[_Scope] = []
        self.ifs: list[_IfState] = []
        self.activities: list[ActivityView] = []
        self.activity_names: dict[str, str] = {}
        self.element_names: dict[str, str] = {}
        self.element_kinds: dict[str, str] = {}
        self.element_nodes: dict[str, Node] = {}
        self.file_order: dict[str, int] = {}
        self.counters: dict[str, int] = {}
        self.owners: list[ForkView | PipelineView] = []
        self.bracketed: list[str] = []
        self.blocks: list[BlockView] = []
        self.machines: list[tuple[StateMachineView, str]] = []
        self.endings = _Endings()
        self.owners_threads: list[ThreadsView] = []
        self._warned_finals: set[str] = set()
        self._prepare_names()
        self.globals_lines, self.parameters = self._globals()
        self.cost_functions = self._cost_functions()

    def _prepare_names(self) -> None:
        """Claim every module-level name up front, in file order, so names never depend on use."""
        ex = self.printer.ex
        self.namer.reserve(*ex.BUILTIN_FUNCTIONS, *ex.CONSTANTS)
        for function in self.model.functions:
            if not is_identifier(function.name):
                raise ModelError(
                    f"cost function name {function.name!r} is not a valid name",
                    function.location,
                    hint="rename it to letters, digits and '_', not starting with a digit",
                )
            if function.name.startswith("_") or function.name in _PYTHON_BUILTIN_NAMES:
                raise ModelError(
                    f"cost function name {function.name!r} is reserved: generated modules use it themselves"
                    if not function.name.startswith("_")
                    else f"cost function name {function.name!r} starts with '_', which generated code keeps for itself",
                    function.location,
                    hint="rename the cost function (e.g. F_" + function.name.strip("_") + ")",
                )
            if function.name in self.printer.functions:
                raise ModelError(
                    f"cost function {function.name!r} is defined twice",
                    function.location,
                    hint=f"the first definition is at {self.printer.functions[function.name].location}",
                )
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
        order = 0
        for activity in self.model.activities:
            self.file_order[activity.id] = order
            order += 1
            for node in activity.walk():
                self.file_order[node.id] = order
                order += 1

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

    def _globals(self) -> tuple[list[str], list[tuple[str, str]]]:
        globals_, locals_ = self._all_variables()
        for variable in globals_:
            self.printer.add_variable(variable, "variable")
        for _, variable in locals_:
            self.printer.add_variable(variable, "local variable")
        self._implicit_variables(globals_)
        ordered = self._dependency_order(globals_)
        lines: list[str] = []
        parameters: list[tuple[str, str]] = []
        for variable in ordered:
            default = self._default(variable)
            lines.append(f"v.{variable.name} = p.param({quote(variable.name)}, {default})")
            parameters.append((variable.name, self._literal_default(variable)))
        return lines, parameters

    def _implicit_variables(self, globals_: list[Variable]) -> None:
        """Names assigned by code fragments but never declared become globals (with a warning)."""
        for activity in self.model.activities:
            for node in activity.walk():
                text = _code_text(node)
                if text is None:
                    continue
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

    def _dependency_order(self, variables: list[Variable]) -> list[Variable]:
        by_name = {v.name: v for v in variables}
        deps: dict[str, list[str]] = {}
        for variable in variables:
            if variable.default is None:
                deps[variable.name] = []
                continue
            parsed = self.printer.parse(variable.default, variable.location, "default value")
            deps[variable.name] = sorted(n for n in parsed.names if n in by_name and n != variable.name)
            if variable.name in parsed.names:
                raise ModelError(
                    f"the default value of {variable.name!r} refers to itself",
                    variable.location,
                    hint="give it a value that uses only other variables and system parameters",
                )
        done: list[Variable] = []
        state: dict[str, int] = {}

        def visit(name: str, path: list[str]) -> None:
            mark = state.get(name)
            if mark == 2:
                return
            if mark == 1:
                cycle = path[path.index(name) :] + [name]
                raise ModelError(
                    "default values of variables depend on each other in a cycle: " + " -> ".join(cycle),
                    by_name[name].location,
                    hint="break the cycle by giving one of them a plain value",
                )
            state[name] = 1
            for dep in deps[name]:
                visit(dep, [*path, name])
            state[name] = 2
            done.append(by_name[name])

        for variable in variables:
            visit(variable.name, [])
        return done

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

    def _cost_functions(self) -> list[dict[str, Any]]:
        ex = self.printer.ex
        out: list[dict[str, Any]] = []
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
            self.printer._note_constants(parsed.tree)
            rename = {**self.printer.rename, **params}
            body = ex.to_python(
                parsed, rename, self.printer._leading(), function_names=self.printer.function_names
            )
            self.printer._printed[key] = body
            calls[function.name] = {c for c in parsed.calls if c in self.printer.functions}
            signature = ", ".join(["p", "v", *params.values()])
            out.append(
                {
                    "name": function.name,
                    "signature": signature,
                    "doc": docstring(f"Cost function {function.name} (xmi:id={comment(function.id or '')})."),
                    "body": body,
                }
            )
        self._check_recursion(calls)
        return out

    def _check_recursion(self, calls: Mapping[str, set[str]]) -> None:
        state: dict[str, int] = {}

        def visit(name: str, path: list[str]) -> None:
            if state.get(name) == 2:
                return
            if state.get(name) == 1:
                cycle = path[path.index(name) :] + [name]
                raise ModelError(
                    "cost functions call each other in a cycle: " + " -> ".join(cycle),
                    self.printer.functions[name].location,
                    hint="cost functions cannot be recursive; write the cost in closed form",
                )
            state[name] = 1
            for callee in sorted(calls.get(name, ())):
                visit(callee, [*path, name])
            state[name] = 2

        for name in calls:
            visit(name, [])

    # -- elements ---------------------------------------------------------------

    def element(self, node: Node, kind: str | None = None) -> str:
        """The ``E_`` name of ``node``; the node becomes part of ``ELEMENTS``."""
        name = self.element_names.get(node.id)
        if name is None:
            name = self.namer.claim(node.name or node.kind._value_, ("element", node.id), prefix="E_")
            self.element_names[node.id] = name
            self.element_nodes[node.id] = node
            if kind is None:
                # ``_value_`` is the plain attribute behind ``.value`` (a Python-level property of Enum)
                kind = (
                    node.perf.role._value_
                    if node.perf is not None
                    else _KIND_OF_NODE.get(node.kind, "action")
                )
            self.element_kinds[node.id] = kind
        return name

    def activity_element(self, activity: Activity, kind: str) -> str:
        pseudo = Node(activity.id, activity.name, NodeKind.FORK, "Activity", activity.location)
        return self.element(pseudo, kind)

    # -- writing helpers -----------------------------------------------------------
    # Statements become views (uml2perf/handlers/python_views.py) appended to the
    # body being written; a compound statement opens a nested body and closes it
    # when the walk leaves it.  templates/_statements.py.jinja prints them.

    def emit(self, view: View) -> None:
        self.body.append(view)

    def open_body(self, body: list[View]) -> None:
        """Write the following statements into ``body`` (a compound statement's block)."""
        self.bodies.append(self.body)
        self.body = body

    def close_body(self, *, pad: bool = True) -> None:
        """Back to the enclosing body; ``pad`` gives a block that stayed empty its ``pass``."""
        if pad and not self.body:
            self.body.append(PASS)
        self.body = self.bodies.pop()

    def called(self) -> None:
        """The function being written calls the runtime: it is a generator already."""
        self.scopes[-1].yielded = True

    def open_function(self, function: FunctionView) -> None:
        self.open_body(function.body)
        self.scopes.append(_Scope())

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
            _mark_endings(body.body, body, self.endings)

    def visit_ActivityBody(self, body: ActivityBody) -> None:
        activity = body.activity
        self._activity = activity
        self.counters = {}
        locals_ = [(variable.name, self._default(variable)) for variable in activity.variables]
        repeat = None
        if body.repeat is not None:
            repeat = count_range(self.expr(body.repeat, activity.location, "repeat tag"))
        view = ActivityView(
            self.activity_names[activity.id],
            docstring(f"Activity {comment(activity.name)} (xmi:id={comment(activity.id)})."),
            locals_,
            repeat,
            flag=ENDED if id(body) in self.endings.scopes else None,
        )
        self.activities.append(view)
        self.body = []
        self.bodies = []
        self.scopes = [_Scope()]
        self.open_body(view.body)

    def leave_ActivityBody(self, body: ActivityBody) -> None:
        view = self.activities[-1]
        if view.repeat is None:
            _drop_last_check(view.body)
        self.close_body(pad=view.repeat is not None)
        view.guard = not self.scopes.pop().yielded

    # -- simple statements ------------------------------------------------------------

    def visit_Exec(self, stmt: Exec) -> bool:
        node = stmt.node
        perf = node.perf
        text = _code_text(node)
        code = None
        if text is not None:
            code = CodeView(describe(node), self.printer.code(text, node.location, ""))
        role = perf.role if perf is not None else Role.ACTION
        element = self.element(node)
        cost = self._cost(node, stmt)
        self.scopes[-1].yielded = True  # self.called(), inlined: this runs once per action
        # `is` first: most statements are plain actions, and hashing an Enum member runs Python code
        if role is not Role.ACTION and role in _COMM:
            method, args = _COMM[role]
            if role is Role.WAIT:
                values = ["None"]  # every pending request of this process (see runtime/comm.py)
            else:
                values = [self.tag(node, arg, default) for arg, default in args]
            arguments = ", ".join([element, *values, cost])
            self.emit(CommView(method, arguments, comment(node.id), code))
        elif perf is not None and perf.role is Role.ACTION and any(perf.get(t) for t in _ROOFLINE_TAGS):
            self.emit(
                CommView("roofline", self._roofline_arguments(node, element, cost), comment(node.id), code)
            )
        else:
            self.body.append(ComputeView(element, cost, comment(node.id), code))  # self.emit, inlined
        return False

    def _roofline_arguments(self, node: Node, element: str, cost: str) -> str:
        """Arguments of ``p.roofline``: flops, bytes, copies as expressions; the device as a plain name."""
        parts = [element, cost]
        for name, keyword in (
            ("flops", "flops"),
            ("bytes", "bytes"),
            ("copyin", "copy_in"),
            ("copyout", "copy_out"),
        ):
            if node.perf is not None and node.perf.get(name):
                parts.append(f"{keyword}={self.tag(node, name, None)}")
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
            parts.append(f"device={quote(device)}")
        return ", ".join(parts)

    def _cost(self, node: Node, stmt: Exec) -> str:
        perf = node.perf
        text = None
        if perf is not None:
            text = perf.get("cost") or perf.get("time")
        if text is not None and text.strip():
            return self.printer.expr(text, node.location, "cost")
        if stmt.function is not None:
            if stmt.function.parameters:
                raise ModelError(
                    f"{node.name or node.id!r} calls cost function {stmt.function.name}, which needs"
                    f" {len(stmt.function.parameters)} argument(s)",
                    node.location,
                    hint=f"give the action a cost tag such as {stmt.function.name}(...)",
                )
            return f"{stmt.function.name}(p, v)"
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
                "activity final in a concurrent branch: reaching it ends the whole activity (or the structured"
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
            view = BlockView(describe(node), "one iteration (a final node ends it)", element, bracket=False)
        self.emit(view)
        self.blocks.append(view)
        self.bracketed.append(node.id)
        if stmt.scoped:
            view.function = FunctionView(
                self.local_name("block"), flag=ENDED if id(stmt) in self.endings.scopes else None
            )
            self.open_function(view.function)
        else:
            self.open_body(view.body)

    def leave_Block(self, stmt: Block) -> None:
        view = self.blocks.pop()
        self.bracketed.pop()
        if view.function is not None:
            self.close_function(view.function)
            self.called()
        else:
            self.close_body(pad=False)

    def visit_Repeat(self, stmt: Repeat) -> None:
        location = stmt.node.location if stmt.node is not None else Location()
        view = RepeatView(count_range(self.expr(stmt.count, location, "repeat tag")))
        self.emit(view)
        self.open_body(view.body)

    def leave_Repeat(self, stmt: Repeat) -> None:
        self.close_body()

    def _bracket(self, node: Node) -> bool:
        """A block or loop enters/leaves its element unless the construct around it, of the same node, does."""
        return not self.bracketed or self.bracketed[-1] != node.id

    def visit_For(self, stmt: For) -> None:
        element = self.element(stmt.node, "loop")
        count = self.expr(stmt.count, stmt.node.location, "iterations tag")
        view = ForView(describe(stmt.node), element, self._bracket(stmt.node), count_range(count))
        self.emit(view)
        self.bracketed.append(stmt.node.id)
        self.open_body(view.body)

    def leave_For(self, stmt: For) -> None:
        self.close_body()
        self.bracketed.pop()

    def visit_While(self, stmt: While) -> None:
        node = stmt.node
        assert node is not None
        element = self.element(node, "loop")
        bracket = (node.kind is NodeKind.LOOP or node.kind is NodeKind.STRUCTURED) and self._bracket(node)
        condition = self.condition(stmt.cond) if stmt.cond is not None else "True"
        view = WhileView(describe(node), element, bracket, condition)
        self.emit(view)
        self.bracketed.append(node.id)
        self.open_body(view.body)

    def leave_While(self, stmt: While) -> None:
        self.close_body(pad=False)  # never empty: the template counts each iteration first
        self.bracketed.pop()

    # -- choices ---------------------------------------------------------------------

    def condition(self, cond: Cond) -> str:
        text = cond.text or "True"
        printed = self.expr(text, cond.location, "guard" if cond.kind is CondKind.GUARD else "probability")
        return f"not ({printed})" if cond.negate else printed

    def visit_If(self, stmt: If) -> None:
        comment_ = (
            describe(stmt.node) if stmt.node is not None and stmt.node.kind is NodeKind.DECISION else None
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
        found = self.__dict__.get("_guards_by_source")
        if found is None:
            found = {}

            def collect(region: Any) -> None:
                for edge in region.edges:
                    if edge.kind == "control" or edge.guard is not None:
                        found.setdefault(edge.source, []).append(edge.guard)
                for node in region.nodes:
                    if node.region is not None:
                        collect(node.region)

            for activity in self.model.activities:
                collect(activity.region)
            self.__dict__["_guards_by_source"] = found
        return found

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

    def leave_StateMachine(self, stmt: StateMachine) -> None:
        self.machines.pop()

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

    # -- concurrency ------------------------------------------------------------------

    def _ended(self, stmt: Statement) -> str | None:
        return ENDED if id(stmt) in self.endings.owners else None

    def visit_Parallel(self, stmt: Parallel) -> None:
        base = self.local_name("fork")
        names = [f"{base}_{i + 1}" for i in range(len(stmt.branches))]
        view = ForkView(describe(stmt.node) if stmt.node is not None else None, names, flag=self._ended(stmt))
        self.emit(view)
        self.owners.append(view)

    def leave_Parallel(self, stmt: Parallel) -> None:
        view = self.owners.pop()
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

    def leave_Pipeline(self, stmt: Pipeline) -> None:
        view = self.owners.pop()
        assert isinstance(view, PipelineView)
        view.element = self.element(stmt.node, "pipeline")
        view.items = self.tag(stmt.node, "items", "1")
        view.extra = self._pattern_costs(stmt.node)
        self.called()

    def visit_Lane(self, lane: Lane) -> None:
        owner = self.owners[-1]
        setter = (id(lane.owner), lane.index) in self.endings.setters
        function = FunctionView(owner.names[lane.index], nonlocal_flag=ENDED if setter else None)
        owner.lanes.append(function)
        self.open_function(function)

    def leave_Lane(self, lane: Lane) -> None:
        function = self.owners[-1].lanes[-1]
        self.close_function(function)
        if isinstance(lane.owner, Parallel) and id(lane.owner) in self.endings.owners:
            function.body[:] = _with_stops(function.body)

    def _threads(self, kind: str, stem: str, stmt: ParallelRegion | Critical | TaskPool) -> None:
        function = FunctionView(
            self.local_name(stem), nonlocal_flag=ENDED if (id(stmt), 0) in self.endings.setters else None
        )
        view = ThreadsView(kind, describe(stmt.node), function, flag=self._ended(stmt))
        self.emit(view)
        self.owners_threads.append(view)
        self.open_function(function)

    def _threads_done(self) -> ThreadsView:
        view = self.owners_threads.pop()
        self.close_function(view.function)
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
        view.extra = self._pattern_costs(stmt.node)

    def _pattern_costs(self, node: Node) -> str:
        """``, overhead=..., startup=...`` for the tags a pipeline or task pool gives (else "")."""
        parts = [
            f", {name}={self.tag(node, name, None)}"
            for name in ("overhead", "startup")
            if node.perf is not None and node.perf.get(name)
        ]
        return "".join(parts)

    # -- output ---------------------------------------------------------------------

    def finish(self) -> str:
        from ..generation import render

        assert self.job is not None
        file_order = self.file_order
        order = sorted(self.element_names, key=lambda i: (file_order.get(i, 1 << 30), i))
        names, nodes, kinds = self.element_names, self.element_nodes, self.element_kinds
        kind_literals = {
            kind: quote(kind) for kind in set(kinds.values())
        }  # a handful, used thousands of times
        elements = []
        for index, node_id in enumerate(order):
            node = nodes[node_id]
            elements.append(
                f"{names[node_id]} = rt.Element({index}, {quote(node.name or node.kind._value_)}, "
                f"{kind_literals[kinds[node_id]]}, {quote(node.id)}, {node.location.line!r})"
            )
        main = self.job.main
        source = Path(self.model.source).name if self.model.source else ""
        name = self.model.name or (Path(source).stem if source else "model")
        activities_meta = [f"({quote(a.name)}, {quote(a.id)})," for a in self.model.activities]
        context = {
            "docstring": docstring(
                f"Performance model {comment(repr(name))}, generated by uml2perf from {comment(source)}."
                " Do not edit."
            ),
            "builtins": sorted(self.printer.builtins_used),
            "globals": self.globals_lines,
            "functions": self.cost_functions,
            "elements": elements,
            "element_names": [self.element_names[i] for i in order],
            "activities": self.activities,
            "model_name": quote(name),
            "source": quote(source),
            "main": self.activity_names[main.id] if main is not None else "None",
            "parameters": self.parameters,
            "activities_meta": activities_meta,
        }
        text = render("model_module.py.jinja", context)
        self._check_python_limits(text)
        return text

    def _check_python_limits(self, text: str) -> None:
        """Refuse a module Python could not compile, naming the innermost element (see :mod:`.python_limits`)."""
        from .python_limits import NestedTooDeeply, first_excess

        found = first_excess(text)
        if found is None:
            return
        problem, node_id = found
        node = self._node_by_id(node_id)
        raise NestedTooDeeply(
            f"the diagram is nested too deeply for a Python model: {problem}",
            node.location if node is not None else Location(file=self.model.source),
            hint="move the innermost part into its own activity (called with a CallBehaviorAction)",
        )

    def _node_by_id(self, node_id: str | None) -> Node | None:
        if node_id is None:
            return None
        found = self.element_nodes.get(node_id)
        if found is not None:
            return found
        for activity in self.model.activities:
            for node in activity.walk():
                if node.id == node_id:
                    return node
        return None


def _code_text(node: Node) -> str | None:
    text = node.perf.get("code") if node.perf is not None else None
    if text is None or not text.strip():
        text = node.code
    return text if text is not None and text.strip() else None


#: Names of Python's builtins (``range``, ``print``...): a cost function of that name would replace
#: the builtin the generated module itself relies on.
_PYTHON_BUILTIN_NAMES = frozenset(
    name for name in dir(__import__("builtins")) if not name.startswith("_")
) | {
    "rt",
    "p",
    "v",
    "MODEL",
    "ELEMENTS",
}


#: ``action+`` tags that make an action hardware-aware (``p.roofline`` instead of ``p.compute``).
_ROOFLINE_TAGS = ("flops", "bytes", "device", "copyin", "copyout")


def count_range(printed: str) -> str:
    """``range(...)`` over a count expression; computed counts are checked by ``rt.count``.

    A literal whole number needs no check (the checker bounds it); anything
    computed must be a whole number from 0 to the iteration limit at run time.
    """
    return f"range({printed})" if printed.isdigit() else f"range(rt.count({printed}))"


def _simple(text: str) -> bool:
    return text.replace(".", "").replace("_", "").isalnum()


_FUNCTION_OWNERS = frozenset({ParallelRegion, Critical, TaskPool})
_Path = tuple[tuple[Statement, int], ...]  # (construct, function index) from a statement out to its scope


def _mark_endings(root: Statement, root_scope: Statement, found: _Endings) -> None:
    """Find the activity finals that sit inside nested functions (fork branches, thread bodies).

    UML ends the whole activity at an ActivityFinal (a structured node, when the
    final belongs to it), every concurrent branch included.  In generated code a
    fork branch is a nested function whose ``return`` ends that branch alone, so
    such a final sets the scope's ``_ended`` flag before it returns; every
    construct on the way out checks the flag after its runtime call and returns
    too, and the sibling branches check it between their statements.  ``path``
    holds the (construct, function index) pairs between a statement and its scope.
    """
    stack: list[tuple[Statement, Statement, _Path]] = [(root, root_scope, ())]
    while stack:
        stmt, scope, path = stack.pop()
        kind = type(stmt)
        if kind is Exec or kind is Call:
            continue  # the common leaves first: a large model is mostly these
        if kind is Return:
            node = stmt.node  # type: ignore[attr-defined]
            if path and node is not None and node.kind is NodeKind.ACTIVITY_FINAL:
                found.returns.add(id(stmt))
                found.scopes.add(id(scope))
                found.setters.add((id(path[-1][0]), path[-1][1]))
                found.owners.update(id(owner) for owner, _ in path)
        elif kind is Block and stmt.scoped:  # type: ignore[attr-defined]
            stack.append((stmt.body, stmt, ()))  # type: ignore[attr-defined]
        elif kind is Parallel or kind is Pipeline:
            stack.extend((lane, scope, (*path, (stmt, index))) for index, lane in enumerate(stmt.children()))
        elif kind in _FUNCTION_OWNERS:
            stack.append((stmt.body, scope, (*path, (stmt, 0))))  # type: ignore[attr-defined]
        else:
            stack.extend((child, scope, path) for child in stmt.children())


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


__all__ = ["RESERVED", "ExpressionPrinter", "PythonHandler", "comment"]
