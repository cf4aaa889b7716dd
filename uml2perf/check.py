"""The model checker behind ``uml2perf check``: every problem at once.

Conversion stops at the first error; a user fixing a model wants the whole
list.  The checker therefore validates every expression, name and reference of
the neutral model independently, adds what the reader noted while reading
(skipped elements, unknown tags), and finally runs the generator to catch
structural problems of the control flow.  Each finding is a
:class:`~uml2perf.errors.Diagnostic` with file, line, element id and name.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from .errors import Diagnostic, Location, ModelError, Severity, Uml2PerfError
from .expressions import ELSE_GUARDS as _GUARD_WORDS
from .handlers.naming import is_identifier
from .model import (
    COMMUNICATION_ROLES,
    Activity,
    CostFunction,
    Edge,
    Model,
    Node,
    NodeKind,
    PerfSpec,
    Role,
    Variable,
    runs_as_action,
)

#: Tags whose values are expressions (the rest, like ``name`` of critical+, are plain text).
_TEXT_TAGS = frozenset({"name", "id", "type", "code", "stereotype", "main", "device"})


class CheckReport:
    """All findings for one file, in a stable order.

    A plain class, not a dataclass: every ``convert`` imports this module (for its timing check),
    and making a dataclass runs generated code at import.
    """

    def __init__(
        self,
        source: str,
        diagnostics: list[Diagnostic] | None = None,
        actions: int = 0,
        actions_without_cost: int = 0,
    ) -> None:
        self.source = source
        self.diagnostics: list[Diagnostic] = [] if diagnostics is None else diagnostics
        self.actions = actions
        self.actions_without_cost = actions_without_cost

    def __repr__(self) -> str:
        return (
            f"CheckReport(source={self.source!r}, diagnostics={self.diagnostics!r}, "
            f"actions={self.actions!r}, actions_without_cost={self.actions_without_cost!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, CheckReport)
        return (self.source, self.diagnostics, self.actions, self.actions_without_cost) == (
            other.source,
            other.diagnostics,
            other.actions,
            other.actions_without_cost,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq

    @property
    def has_errors(self) -> bool:
        return any(d.severity == Severity.ERROR for d in self.diagnostics)

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.diagnostics if d.severity == severity)

    def summary(self, notes_hidden: bool = False) -> str:
        """One line of counts; ``notes_hidden`` says the notes were not printed (``check`` without -v)."""
        errors, warnings = self.count(Severity.ERROR), self.count(Severity.WARNING)
        notes = self.count(Severity.INFO)
        verdict = "problems found" if errors else "ok"
        costed = self.actions - self.actions_without_cost
        shown = " (--verbose lists them: skipped or reinterpreted material)" if notes_hidden and notes else ""
        return (
            f"{self.source}: {verdict}: {errors} error(s), {warnings} warning(s), {notes} note(s){shown}; "
            f"{costed} of {self.actions} actions have a cost"
        )


def _error(message: str, location: Location, hint: str | None = None) -> Diagnostic:
    return Diagnostic(Severity.ERROR, message, location, hint)


def _warning(message: str, location: Location, hint: str | None = None) -> Diagnostic:
    return Diagnostic(Severity.WARNING, message, location, hint)


def _from_exception(exc: Uml2PerfError) -> Diagnostic:
    return Diagnostic(Severity.ERROR, exc.message, exc.location, exc.hint)


def _findings_of(exc: Uml2PerfError) -> tuple[Diagnostic, ...]:
    """What a reading error says: every problem of a sidecar as a finding each, else the error."""
    from .profile.sidecar import SidecarError

    return exc.problems if isinstance(exc, SidecarError) else (_from_exception(exc),)


def check_file(
    path: str | Path,
    *,
    sidecar: str | Path | None = None,
    activity: str | None = None,
    default_cost: str | None = None,
) -> CheckReport:
    """Read and check one file; reading errors become the report's only finding."""
    from .reader import read_model

    report = CheckReport(source=str(path))
    try:
        model = read_model(path, sidecar=sidecar, default_cost=default_cost)
    except Uml2PerfError as exc:
        report.diagnostics.extend(_findings_of(exc))
        return report
    report.diagnostics.extend(model.diagnostics)
    report.diagnostics.extend(check_model(model, activity=activity, report=report))
    report.diagnostics = _unique(report.diagnostics)
    return report


def _unique(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Each finding once: the generator repeats the reader's notes in its own list."""
    seen: set[Diagnostic] = set()
    result: list[Diagnostic] = []
    for diagnostic in diagnostics:
        if diagnostic not in seen:
            seen.add(diagnostic)
            result.append(diagnostic)
    return result


def check_model(
    model: Model, *, activity: str | None = None, report: CheckReport | None = None
) -> list[Diagnostic]:
    """Every problem of a read model, errors first per element, in file order."""
    findings: list[Diagnostic] = []
    findings.extend(_check_main(model, activity))
    findings.extend(_check_unset_variables(model, activity))
    known = _known_names(model)
    functions = {f.name: f for f in model.functions}
    findings.extend(_check_functions(model))
    activity_ids = frozenset(a.id for a in model.activities)
    from .structure_checks import check_structure

    findings.extend(check_structure(model))
    for act in model.activities:
        findings.extend(_check_variables(act))
        for node in act.walk():
            findings.extend(_check_node(node, known, functions))
            if report is not None and runs_as_action(node, activity_ids) and _is_plain_action(node):
                report.actions += 1
                if _cost_of(node.perf) is None:
                    report.actions_without_cost += 1
                    findings.append(
                        _warning(
                            "action has no cost: it will take no time",
                            node.location,
                            "add an action+ stereotype with a cost tag, a MARTE PaStep hostDemand, "
                            "or a cost in a --sidecar file",
                        )
                    )
        findings.extend(_check_edges(act, known, functions))
    mistyped = any(d.code == "mistyped-guard" for d in model.diagnostics)  # the generator would say it again
    if not mistyped and not any(d.severity == Severity.ERROR for d in findings):
        findings.extend(_check_generation(model, activity))
    return findings


def timing_summary(model: Model) -> tuple[int, int, bool]:
    """``(actions, actions without a cost, whether anything in the model takes time)``.

    Something takes time when an element has a cost (or flops or bytes), or
    communicates: a model where nothing does would predict 0 s, which is never
    what its author meant.
    """
    actions = untimed = 0
    timed = False
    activity_ids = frozenset(a.id for a in model.activities)
    # identical stereotype applications share one PerfSpec: each is looked at once
    seen: dict[int, tuple[bool, bool, bool]] = {}
    for act in model.activities:
        if act.perf is not None and _cost_of(act.perf) is not None:
            timed = True
        for node in act.walk():
            perf = node.perf
            known = seen.get(id(perf))
            if known is None:
                costed = _cost_of(perf) is not None
                known = seen[id(perf)] = (
                    perf is not None and (perf.role in COMMUNICATION_ROLES or costed),
                    perf is None or perf.role == Role.ACTION,  # a plain action
                    costed,
                )
            takes_time, plain, costed = known
            if takes_time:
                timed = True
            # an action runs as one (runs_as_action asks that first): no call for most nodes
            if plain and (node.kind is NodeKind.ACTION or runs_as_action(node, activity_ids)):
                actions += 1
                if not costed:
                    untimed += 1
    return actions, untimed, timed


def _is_plain_action(node: Node) -> bool:
    return node.perf is None or node.perf.role == Role.ACTION


#: Tags that give an action a time: a cost, or what a hardware-aware action does (its host costs too).
_TIMING_TAGS = ("cost", "time", "flops", "bytes", "fresh", "calls", "operations")


def _cost_of(perf: PerfSpec | None) -> str | None:
    """What times an action: its cost, or the work of a hardware-aware action."""
    if perf is None:
        return None
    for tag in _TIMING_TAGS:
        found = perf.get(tag)
        if found:
            return found
    return None


def _check_main(model: Model, activity: str | None) -> Iterator[Diagnostic]:
    from .profile import main_activity

    try:
        main_activity(model, activity)
    except Uml2PerfError as exc:
        severity = Severity.ERROR if not model.activities or activity else Severity.WARNING
        yield Diagnostic(severity, exc.message, exc.location, exc.hint or "pass --activity NAME to 'run'")


def _check_unset_variables(model: Model, activity: str | None) -> Iterator[Diagnostic]:
    """Variables declared without a value: ``run`` will ask for them, so say so now."""
    from .profile import main_activity, unset_variables

    try:
        main = main_activity(model, activity) if model.activities else None
    except Uml2PerfError:
        main = None
    for variable in unset_variables(model, main):
        yield Diagnostic(
            Severity.WARNING,
            f"variable {variable.name!r} has no value; 'run' needs one",
            variable.location,
            f"pass --set {variable.name}=VALUE, or add it to the [variables] table of a --sidecar file",
            "unset-variable",
        )


def _known_names(model: Model) -> set[str]:
    """Names an expression may read: variables, code-fragment targets, system parameters."""
    from .expressions import CONSTANTS, SYSTEM_PARAMETERS

    names: set[str] = set(SYSTEM_PARAMETERS) | set(CONSTANTS)
    names.update(v.name for v in model.globals)
    for act in model.activities:
        names.update(v.name for v in act.attributes)
        names.update(v.name for v in act.variables)
        for node in act.walk():
            for text in _code_texts(node):
                try:
                    from .expressions import parse_code

                    names.update(parse_code(text, node.location).assigned)
                except Uml2PerfError:
                    pass
    return names


def _code_texts(node: Node) -> Iterable[str]:
    if node.code:
        yield node.code
    if node.perf is not None:
        code = node.perf.get("code")
        if code:
            yield code


def _check_functions(model: Model) -> Iterator[Diagnostic]:
    from .expressions import parse_function_body

    seen: dict[str, Location] = {}
    for function in model.functions:
        if function.name in seen:
            yield _warning(
                f"cost function {function.name!r} is defined twice (also at {seen[function.name]})",
                function.location,
                "rename one of them; the first definition is used",
            )
        seen.setdefault(function.name, function.location)
        if not function.name.isidentifier():
            yield _error(f"cost function name {function.name!r} is not an identifier", function.location)
            continue
        try:
            parse_function_body(function.body, function.parameters, function.location)
        except Uml2PerfError as exc:
            yield _from_exception(exc)


def _check_variables(act: Activity) -> Iterator[Diagnostic]:
    from .expressions import parse_expression

    for variable in (*act.attributes, *act.variables):
        if not variable.name.isidentifier() or variable.name.startswith("_"):
            yield _error(
                f"variable name {variable.name!r} is not a valid identifier",
                variable.location,
                "use letters, digits and '_' (not first), e.g. 'num_atoms'",
            )
        if variable.default:
            try:
                parse_expression(variable.default, variable.location, what="default value")
            except Uml2PerfError as exc:
                yield _from_exception(exc)


def _check_expression(
    text: str, location: Location, what: str, known: set[str], functions: dict, params: Iterable[str] = ()
) -> Iterator[Diagnostic]:
    from .expressions import parse_expression

    try:
        expr = parse_expression(text, location, what=what)
    except Uml2PerfError as exc:
        yield _from_exception(exc)
        return
    unknown = sorted(set(expr.names) - known - set(params))
    if unknown:
        yield _error(
            f"{what} {text!r} uses unknown name(s) {', '.join(unknown)}",
            location,
            "declare them as attributes of the main activity or assign them in a code fragment",
        )
    missing = sorted(set(expr.calls) - set(functions))
    if missing:
        yield _error(
            f"{what} {text!r} calls undefined cost function(s) {', '.join(missing)}",
            location,
            "define them as OpaqueBehavior/FunctionBehavior with an expression body",
        )
    yield from _check_constant(expr, location, what)


#: Tags whose constant value must be a whole number of at least 0 (counts).
_COUNT_TAGS = frozenset({"repeat", "iterations", "threads", "items"})


def _check_constant(expr: object, location: Location, what: str) -> Iterator[Diagnostic]:
    """Fold a constant expression under the run's bounds: finite, bounded, whole where a count is meant."""
    from .expressions import constant_value, is_constant

    if not is_constant(expr):  # type: ignore[arg-type]
        return
    try:
        value = constant_value(expr)  # type: ignore[arg-type]
    except Uml2PerfError as exc:
        yield _from_exception(exc)
        return
    tag = what.removeprefix("tag ").strip("'")
    if tag in ("cost", "time") and not isinstance(value, bool) and value < 0:
        yield _error(f"{what} is {value}: a cost must be a non-negative number of seconds", location)
    if tag in _COUNT_TAGS and not isinstance(value, bool):
        if value < 0 or value != int(value):
            yield _error(f"{what} is {value}: it must be a whole number of at least 0", location)
        else:
            from uml2perf_runtime.engine.limits import LimitExceeded, current

            name = "threads" if tag == "threads" else "iterations"
            try:
                current().check(name, int(value), what)
            except LimitExceeded as exc:
                yield _error(exc.message, location, exc.hint)


def _check_node(node: Node, known: set[str], functions: dict) -> Iterator[Diagnostic]:
    from .expressions import parse_code
    from .profile.roles import PEER_NAME, PEER_TAGS

    for text in _code_texts(node):
        try:
            parse_code(text, node.location)
        except Uml2PerfError as exc:
            yield _from_exception(exc)
    perf = node.perf
    if perf is None:
        return
    for tag, value in perf.tags:
        if tag in _TEXT_TAGS or value is None or value == "":
            continue
        if tag == "operations":
            yield from _check_operations(value, node.location, known, functions)
            continue
        peer = (PEER_NAME,) if (perf.role.value, tag) in PEER_TAGS else ()
        yield from _check_expression(value, node.location, f"tag {tag!r}", known, functions, peer)
    if perf.role == Role.SEND and perf.get("dest") is None:
        yield _error(
            "send+ has no 'dest' tag", node.location, "add dest = <rank expression>, e.g. (pid+1) % nprocs"
        )
    if perf.role in COMMUNICATION_ROLES and node.kind not in (NodeKind.ACTION, NodeKind.CALL):
        yield _warning(f"{perf.role.value}+ on a {node.uml_type}: treated as an action", node.location)


def _check_operations(
    text: str, location: Location, known: set[str], functions: dict
) -> Iterator[Diagnostic]:
    """An ``operations`` tag: ``name: elements`` pairs, each name an operation, each count an expression."""
    from uml2perf_runtime.platform.array_operations import OPERATIONS_TAG_HINT, parse_operations_tag

    try:
        pairs = parse_operations_tag(text)
    except ValueError as exc:
        yield _error(
            f"tag 'operations' {text!r}: {exc}",
            location,
            OPERATIONS_TAG_HINT,
        )
        return
    for name, elements, runs in pairs:
        for count in (elements, runs):
            yield from _check_expression(count, location, f"tag 'operations' ({name})", known, functions)


def _check_edges(act: Activity, known: set[str], functions: dict) -> Iterator[Diagnostic]:
    from .model import walk_region

    regions = [act.region] + [n.region for n in walk_region(act.region) if n.region is not None]
    for region in regions:
        for edge in region.edges:
            if edge.guard and edge.guard.strip().lower() not in _GUARD_WORDS:
                yield from _check_guard(edge, known, functions)
            if edge.probability:
                yield from _check_expression(edge.probability, edge.location, "probability", known, functions)


def _check_guard(edge: Edge, known: set[str], functions: dict) -> Iterator[Diagnostic]:
    """A guard the profile kept is an expression (or a mistyped one, which the profile reported)."""
    from .profile.guards import GuardKind, read_guard

    assert edge.guard is not None
    reading = read_guard(edge.guard, known, functions)
    if reading is None or reading.kind is GuardKind.MISTYPED:
        return
    if reading.kind is GuardKind.EXPRESSION:
        yield from _check_expression(edge.guard, edge.location, "guard", known, functions)
    if edge.name.strip().strip("[]").strip() != reading.text:  # a guard read from the name has its note
        label = repr(edge.name) if edge.name else f"(xmi:id={edge.id})"
        yield Diagnostic(
            Severity.INFO,
            f"guard {reading.text!r} of flow {label} read as {reading.describe()}",
            edge.location,
            code="guard-reading",
        )


def _check_generation(model: Model, activity: str | None) -> Iterator[Diagnostic]:
    """Run the Python generator: it finds structural problems of the control flow."""
    from .generation import generate

    try:
        result = generate(model, "python", activity=activity)
    except Uml2PerfError as exc:
        yield _from_exception(exc)
        return
    yield from getattr(result, "diagnostics", ()) or ()


# ---------------------------------------------------------------------------- rules generated code relies on
# The python handler refuses a model that breaks one of these (the first problem, as a ModelError);
# ``check`` reports them through its run of the generator.

#: Names of Python's builtins (``range``, ``print``...) and of the module's own globals: a cost
#: function of that name would replace what the generated module itself relies on.
PYTHON_BUILTIN_NAMES = frozenset(name for name in dir(builtins) if not name.startswith("_")) | {
    "rt",
    "p",
    "v",
    "MODEL",
    "ELEMENTS",
}


def cost_function_name_error(
    function: CostFunction, defined: Mapping[str, CostFunction]
) -> ModelError | None:
    """What is wrong with the name of ``function``, if anything; ``defined`` holds those before it."""
    name = function.name
    if not is_identifier(name):
        return ModelError(
            f"cost function name {name!r} is not a valid name",
            function.location,
            hint="rename it to letters, digits and '_', not starting with a digit",
        )
    if name.startswith("_") or name in PYTHON_BUILTIN_NAMES:
        return ModelError(
            f"cost function name {name!r} is reserved: generated modules use it themselves"
            if not name.startswith("_")
            else f"cost function name {name!r} starts with '_', which generated code keeps for itself",
            function.location,
            hint="rename the cost function (e.g. F_" + name.strip("_") + ")",
        )
    if name in defined:
        return ModelError(
            f"cost function {name!r} is defined twice",
            function.location,
            hint=f"the first definition is at {defined[name].location}",
        )
    return None


def variable_name_error(variable: Variable, what: str) -> ModelError | None:
    """What is wrong with the name of a model variable, if anything (``what`` names its kind)."""
    from .expressions import BUILTIN_FUNCTIONS, CONSTANTS, SYSTEM_PARAMETERS

    name = variable.name
    problem = None
    if not is_identifier(name):
        problem = "is not a valid name for expressions"
    elif name in SYSTEM_PARAMETERS:
        problem = "is the name of a system parameter"
    elif name in BUILTIN_FUNCTIONS or name in CONSTANTS:
        problem = "is the name of a built-in function or constant"
    elif name.startswith("_"):
        problem = "starts with '_', which generated code keeps for itself"
    if problem is None:
        return None
    return ModelError(
        f"{what} {name!r} {problem}",
        variable.location,
        hint="rename it to letters, digits and '_' (not starting with a digit or '_'),"
        " distinct from pid, nprocs, tid, nthreads, uid, node, nnodes, ppn and the functions",
    )


def ordered_by_defaults(
    variables: list[Variable], names_in_default: Callable[[Variable], Iterable[str]]
) -> list[Variable]:
    """``variables`` in an order where each default reads only variables set before it.

    Raises a :class:`ModelError` for a default that reads its own variable, or
    defaults that depend on each other in a cycle.
    """
    by_name = {v.name: v for v in variables}
    deps: dict[str, list[str]] = {}
    for variable in variables:
        if variable.default is None:
            deps[variable.name] = []
            continue
        names = set(names_in_default(variable))
        deps[variable.name] = sorted(n for n in names if n in by_name and n != variable.name)
        if variable.name in names:
            raise ModelError(
                f"the default value of {variable.name!r} refers to itself",
                variable.location,
                hint="give it a value that uses only other variables and system parameters",
            )
    done: list[Variable] = []
    state: dict[str, int] = {}
    for variable in variables:
        _visit_in_order(variable.name, deps, state, done.append, by_name)
    return done


def _visit_in_order(
    start: str,
    deps: Mapping[str, list[str]],
    state: dict[str, int],
    emit: Callable[[Variable], None],
    by_name: Mapping[str, Variable],
) -> None:
    """Depth-first from ``start``: dependencies first; a name met again on the way is a cycle."""
    path: list[str] = []
    stack: list[tuple[str, int]] = [(start, 0)]
    while stack:
        name, next_dep = stack.pop()
        if next_dep == 0:
            mark = state.get(name)
            if mark == 2:
                continue
            if mark == 1:
                cycle = path[path.index(name) :] + [name]
                raise ModelError(
                    "default values of variables depend on each other in a cycle: " + " -> ".join(cycle),
                    by_name[name].location,
                    hint="break the cycle by giving one of them a plain value",
                )
            state[name] = 1
            path.append(name)
        if next_dep < len(deps[name]):
            stack.append((name, next_dep + 1))
            stack.append((deps[name][next_dep], 0))
        else:
            state[name] = 2
            path.pop()
            emit(by_name[name])


def check_not_recursive(calls: Mapping[str, set[str]], functions: Mapping[str, CostFunction]) -> None:
    """Raise a :class:`ModelError` when cost functions call each other in a cycle."""
    state: dict[str, int] = {}
    for start in calls:
        path: list[str] = []
        stack: list[tuple[str, int]] = [(start, 0)]
        while stack:
            name, next_callee = stack.pop()
            callees = sorted(calls.get(name, ()))
            if next_callee == 0:
                if state.get(name) == 2:
                    continue
                if state.get(name) == 1:
                    cycle = path[path.index(name) :] + [name]
                    raise ModelError(
                        "cost functions call each other in a cycle: " + " -> ".join(cycle),
                        functions[name].location,
                        hint="cost functions cannot be recursive; write the cost in closed form",
                    )
                state[name] = 1
                path.append(name)
            if next_callee < len(callees):
                stack.append((name, next_callee + 1))
                stack.append((callees[next_callee], 0))
            else:
                state[name] = 2
                path.pop()
