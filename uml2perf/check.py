"""The model checker behind ``uml2perf check``: every problem at once.

Conversion stops at the first error; a user fixing a model wants the whole
list.  The checker therefore validates every expression, name and reference of
the neutral model independently, adds what the reader noted while reading
(skipped elements, unknown tags), and finally runs the generator to catch
structural problems of the control flow.  Each finding is a
:class:`~uml2perf.errors.Diagnostic` with file, line, element id and name.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import Diagnostic, Location, Severity, Uml2PerfError
from .expressions import ELSE_GUARDS as _GUARD_WORDS
from .model import COMMUNICATION_ROLES, Activity, Model, Node, NodeKind, PerfSpec, Role

#: Tags whose values are expressions (the rest, like ``name`` of critical+, are plain text).
_TEXT_TAGS = frozenset({"name", "id", "type", "code", "stereotype", "main", "device"})


@dataclass
class CheckReport:
    """All findings for one file, in a stable order."""

    source: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    actions: int = 0
    actions_without_cost: int = 0

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


def check_file(
    path: str | Path, *, sidecar: str | Path | None = None, activity: str | None = None
) -> CheckReport:
    """Read and check one file; reading errors become the report's only finding."""
    from .reader import read_model

    report = CheckReport(source=str(path))
    try:
        model = read_model(path, sidecar=sidecar)
    except Uml2PerfError as exc:
        report.diagnostics.append(_from_exception(exc))
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
    for act in model.activities:
        findings.extend(_check_variables(act))
        for node in act.walk():
            findings.extend(_check_node(node, known, functions))
            if report is not None and node.kind == NodeKind.ACTION and _is_plain_action(node):
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
    if not any(d.severity == Severity.ERROR for d in findings):
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
    for act in model.activities:
        if act.perf is not None and _cost_of(act.perf) is not None:
            timed = True
        for node in act.walk():
            perf = node.perf
            if perf is not None and (perf.role in COMMUNICATION_ROLES or _cost_of(perf) is not None):
                timed = True
            if node.kind == NodeKind.ACTION and _is_plain_action(node):
                actions += 1
                if _cost_of(perf) is None:
                    untimed += 1
    return actions, untimed, timed


def _is_plain_action(node: Node) -> bool:
    return node.perf is None or node.perf.role == Role.ACTION


def _cost_of(perf: PerfSpec | None) -> str | None:
    """What times an action: its cost, or the flops and bytes of a hardware-aware action."""
    if perf is None:
        return None
    return perf.get("cost") or perf.get("time") or perf.get("flops") or perf.get("bytes")


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
            from uml2perf_runtime.limits import LimitExceeded, current

            name = "threads" if tag == "threads" else "iterations"
            try:
                current().check(name, int(value), what)
            except LimitExceeded as exc:
                yield _error(exc.message, location, exc.hint)


def _check_node(node: Node, known: set[str], functions: dict) -> Iterator[Diagnostic]:
    from .expressions import parse_code

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
        yield from _check_expression(value, node.location, f"tag {tag!r}", known, functions)
    if perf.role == Role.SEND and perf.get("dest") is None:
        yield _error(
            "send+ has no 'dest' tag", node.location, "add dest = <rank expression>, e.g. (pid+1) % nprocs"
        )
    if perf.role in COMMUNICATION_ROLES and node.kind not in (NodeKind.ACTION, NodeKind.CALL):
        yield _warning(f"{perf.role.value}+ on a {node.uml_type}: treated as an action", node.location)


def _check_edges(act: Activity, known: set[str], functions: dict) -> Iterator[Diagnostic]:
    from .model import walk_region

    regions = [act.region] + [n.region for n in walk_region(act.region) if n.region is not None]
    for region in regions:
        for edge in region.edges:
            if edge.guard and edge.guard.strip().lower() not in _GUARD_WORDS:
                yield from _check_expression(edge.guard, edge.location, "guard", known, functions)
            if edge.probability:
                yield from _check_expression(edge.probability, edge.location, "probability", known, functions)


def _check_generation(model: Model, activity: str | None) -> Iterator[Diagnostic]:
    """Run the Python generator: it finds structural problems of the control flow."""
    from .generation import generate

    try:
        result = generate(model, "python", activity=activity)
    except Uml2PerfError as exc:
        yield _from_exception(exc)
        return
    yield from getattr(result, "diagnostics", ()) or ()
