"""The performance profile: stereotypes, MARTE and the TOML sidecar, interpreted once.

The reader leaves stereotype applications as written.  :func:`apply_profile`
turns them into a :class:`~uml2perf.model.PerfSpec` per node and activity,
so later stages never look at raw stereotype names:

* the uml2perf profile (SPEC section 4): ``action+``, ``activity+``, the
  communication stereotypes, ``parallel+``, ``critical+``, ``loop+``,
  ``pipeline+``, ``taskpool+``; ``main``/``model+`` mark the main activity.
  ``clause+`` (``guard``, synonym ``condition``; ``probability``) goes on the
  test action of a ConditionalNode clause (or a body action of a clause
  without tests); it is an ``action+`` too (``cost``, ``repeat``, ``code``),
  and when the action also has another role stereotype it only adds its
  condition to that one;
  Names match case-insensitively ignoring ``_``, ``-`` and spaces, with
  ``Plus`` for ``+`` (:func:`uml2perf.model.normalise_name`);
* MARTE and profiles built on it: ``PaStep``/``GaStep`` (``hostDemand`` to
  cost, ``rep`` to repeat, ``prob`` to the probability of the flow that enters
  the step from a decision, or of the ConditionalNode clause whose test or
  body the step is), ``PaCommStep.msgSize`` to size, GRM
  ``ResourceUsage.execTime`` and DICE ``StormBolt.hostDemand`` to cost; VSL
  values are converted to seconds and bytes (:func:`parse_vsl_duration`,
  :func:`parse_vsl_size`);
* MARTE analysis contexts: ``GaAnalysisContext.context`` / ``contextParams``
  (``in$timeUpdate``, ``in$n=4``) declare variables of the activity the context
  is applied to (of every activity when it is applied to the model, a package
  or a class).  A parameter without a value is *required*: ``run`` stops and
  names it until ``--set`` or the sidecar's ``[variables]`` gives one.  VSL
  variables (``$x``) used in a MARTE value but declared nowhere are declared
  the same way, with a note;
* guards written as prose (``[Petición aceptada]``), which no expression reads,
  are kept as text for reports and the branch becomes a random choice, with a
  warning; a guard that looks like an expression but is wrong stays an error;
* a TOML sidecar for plain exports without any profile.

The sidecar
-----------
::

    [defaults]
    cost = "0.001"            # cost of every action that has none (optional)

    [elements."A1"]           # a node or flow, by name or xmi:id
    cost = "121/P"            # tags of the element's role (action+ unless it has one)
    code = "GV = 1"

    [elements."_x8f"]
    stereotype = "allreduce+" # give the element a role
    size = "8"

    [elements."to A2"]        # a flow: probability and guard
    probability = "0.3"

    [activities."MainActivity"]
    main = true               # the main activity
    repeat = "2"              # tags of activity+

    [functions]               # cost functions the model lacks
    FA1 = "121/P"
    FA4 = { parameters = ["P"], body = "3.14 + 2.71*P" }

    [globals]                 # global variables and their defaults
    GV = "0"

    [variables]               # values of model variables (wins over the model's own)
    timeUpdate = "0.02"       # e.g. a MARTE analysis-context parameter in$timeUpdate

Values are expressions (strings; numbers are accepted).  Sidecar entries win
over the model's own annotations.  ``[variables]`` sets the value of a variable
the model declares (an activity attribute, a global, a MARTE context
parameter) and declares it when the model does not; ``--set NAME=VALUE`` on the
command line wins over both.  A key naming no element, or a tag the role
does not know, is an error naming the sidecar file and the key.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path

from .errors import Diagnostic, Location, ModelError, Severity
from .model import (
    Activity,
    CostFunction,
    Edge,
    Model,
    Node,
    NodeKind,
    PerfSpec,
    Region,
    Role,
    StereotypeApplication,
    Variable,
    describe_contents,
    normalise_name,
    plain_assignments,
)

#: ``normalise_name`` memoised: a big model repeats the same few stereotype and tag names.
_norm = lru_cache(maxsize=4096)(normalise_name)

# --------------------------------------------------------------------------- the uml2perf profile

_COMM_P2P_SEND = ("dest", "size", "tag", "cost")
_COMM_P2P_RECV = ("source", "size", "tag", "cost")
_METADATA = ("id", "type")

#: normalised stereotype name -> (role, tags it accepts)
ROLES: dict[str, tuple[Role, tuple[str, ...]]] = {
    "action+": (
        Role.ACTION,
        ("cost", "repeat", "code", "flops", "bytes", "device", "copyin", "copyout") + _METADATA,
    ),
    "activity+": (Role.ACTIVITY, ("repeat", "cost") + _METADATA),
    "send+": (Role.SEND, _COMM_P2P_SEND + _METADATA),
    "recv+": (Role.RECV, _COMM_P2P_RECV + _METADATA),
    "isend+": (Role.ISEND, _COMM_P2P_SEND + _METADATA),
    "irecv+": (Role.IRECV, _COMM_P2P_RECV + _METADATA),
    "wait+": (Role.WAIT, ("cost",) + _METADATA),
    "barrier+": (Role.BARRIER, ("cost",) + _METADATA),
    "bcast+": (Role.BCAST, ("root", "size", "cost") + _METADATA),
    "reduce+": (Role.REDUCE, ("root", "size", "cost") + _METADATA),
    "allreduce+": (Role.ALLREDUCE, ("size", "cost") + _METADATA),
    "gather+": (Role.GATHER, ("root", "size", "cost") + _METADATA),
    "scatter+": (Role.SCATTER, ("root", "size", "cost") + _METADATA),
    "allgather+": (Role.ALLGATHER, ("size", "cost") + _METADATA),
    "alltoall+": (Role.ALLTOALL, ("size", "cost") + _METADATA),
    "parallel+": (Role.PARALLEL, ("threads",) + _METADATA),
    "critical+": (Role.CRITICAL, ("name",) + _METADATA),
    "loop+": (Role.LOOP, ("iterations", "while") + _METADATA),
    "clause+": (Role.ACTION, ("guard", "probability", "cost", "repeat", "code") + _METADATA),
    "pipeline+": (Role.PIPELINE, ("items", "overhead", "startup") + _METADATA),
    "taskpool+": (Role.TASKPOOL, ("threads", "items", "overhead", "startup") + _METADATA),
}
#: ``clause+`` adds a condition to whatever role the action has (see ``_Interpreter.own_spec``).
_CLAUSE_ENTRY = ROLES["clause+"]
#: Tags ``clause+`` contributes to the role stereotype it sits beside.
CLAUSE_TAGS = ("guard", "probability")
_ROLE_CACHE: dict[str, tuple[Role, tuple[str, ...]] | None] = {}
_TAG_CACHE: dict[str, str] = {}


def _role_of(stereotype: str) -> tuple[Role, tuple[str, ...]] | None:
    """``(role, known tags)`` of a stereotype name as written, or ``None``; memoised per spelling."""
    try:
        return _ROLE_CACHE[stereotype]
    except KeyError:
        entry = _ROLE_CACHE[stereotype] = ROLES.get(_norm(stereotype))
        return entry


def _tag_key(tag: str) -> str:
    """The normalised tag name with synonyms applied (``Time`` -> ``cost``); memoised per spelling."""
    try:
        return _TAG_CACHE[tag]
    except KeyError:
        key = _norm(tag)
        key = _TAG_CACHE[tag] = TAG_SYNONYMS.get(key, key)
        return key


#: role -> the tags it accepts (``action+``'s for ACTION: ``clause+`` shares the role, not its tags)
_ROLE_TAGS: dict[Role, tuple[str, ...]] = {role: tags for role, tags in reversed(ROLES.values())}
#: Tag synonyms, by normalised name.
TAG_SYNONYMS = {"time": "cost", "condition": "guard", "prob": "probability"}
#: Stereotypes that make an activity the main one.
MAIN_STEREOTYPES = frozenset({"main", "model+"})
#: Guards that mean "otherwise".
_ELSE_WORDS = frozenset({"else", "[else]", "otherwise"})
#: Characters that make a guard an attempted expression rather than prose.
_OPERATOR_CHARACTERS = re.compile(r"[=<>!+*/%()&|^~\-]")
#: Tags on a flow that give its branch probability.
PROBABILITY_TAGS = frozenset({"probability", "prob"})

# --------------------------------------------------------------------------- MARTE VSL

_DURATION_UNITS: dict[str, Decimal] = {
    "s": Decimal(1),
    "sec": Decimal(1),
    "second": Decimal(1),
    "seconds": Decimal(1),
    "ms": Decimal("0.001"),
    "us": Decimal("0.000001"),
    "µs": Decimal("0.000001"),
    "ns": Decimal("0.000000001"),
    "min": Decimal(60),
    "h": Decimal(3600),
    "hr": Decimal(3600),
    "hour": Decimal(3600),
}
#: MARTE's DataSizeUnitKind counts KB, MB and GB in powers of 1024 (like KiB...);
#: ``b``/``bit`` are bits.  ``kB`` is the SI kilobyte.
_SIZE_UNITS: dict[str, Decimal] = {
    "B": Decimal(1),
    "Byte": Decimal(1),
    "byte": Decimal(1),
    "bytes": Decimal(1),
    "b": Decimal("0.125"),
    "bit": Decimal("0.125"),
    "bits": Decimal("0.125"),
    "KB": Decimal(1024),
    "KiB": Decimal(1024),
    "kB": Decimal(1000),
    "MB": Decimal(1024**2),
    "MiB": Decimal(1024**2),
    "GB": Decimal(1024**3),
    "GiB": Decimal(1024**3),
}
_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_NUMBER_WITH_UNIT = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-zµ]+)$")
_VSL_VARIABLE = re.compile(r"\$(?=[A-Za-z_])")
_KEYED = re.compile(r"^([A-Za-z_]\w*)\s*=(?!=)\s*(.*)$", re.S)


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside parentheses: ``expr=max(a,b),unit=ms`` -> two parts."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts]


def _unwrap(text: str) -> str:
    text = text.strip()
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def _format_decimal(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text or "0"


def _vsl_parts(text: str) -> tuple[str, str | None]:
    """``(value-or-expression, unit)`` of a VSL value; the expression has ``$`` removed."""
    body = _unwrap(text)
    if not body:
        raise ValueError("empty value")
    match = _NUMBER_WITH_UNIT.match(body)
    if match:
        return match.group(1), match.group(2)
    value: str | None = None
    expr: str | None = None
    unit: str | None = None
    positional: list[str] = []
    for part in _split_top_level(body):
        keyed = _KEYED.match(part)
        if keyed:
            key, val = keyed.group(1).lower(), keyed.group(2).strip()
            if key == "value":
                value = val
            elif key == "expr":
                expr = val
            elif key == "unit":
                unit = val
            continue  # source, statQ, dir, precision: metadata
        if part:
            positional.append(part)
    for part in positional:
        if value is None and expr is None:
            value = part
        elif unit is None:
            unit = part
    chosen = expr if expr is not None else value
    if chosen is None or not chosen.strip():
        raise ValueError(f"no value in {text!r}")
    return _VSL_VARIABLE.sub("", chosen.strip()), unit


def _scaled(text: str, units: dict[str, Decimal], default_unit: str, what: str) -> str:
    number, unit = _vsl_parts(text)
    unit = (unit or default_unit).strip()
    factor = units.get(unit)
    if factor is None:
        factor = next((f for u, f in units.items() if u.lower() == unit.lower() and u != "b"), None)
    if factor is None:
        raise ValueError(f"unknown {what} unit {unit!r} (known: {', '.join(units)})")
    if _NUMBER.match(number):
        try:
            return _format_decimal(Decimal(number) * factor)
        except InvalidOperation as exc:  # pragma: no cover - guarded by the regex
            raise ValueError(f"bad number {number!r}") from exc
    if factor == 1:
        return number
    return f"({number})*{_format_decimal(factor)}"


def parse_vsl_duration(text: str) -> str:
    """A MARTE VSL duration as expression text in seconds.

    ``(5,ms)`` -> ``0.005``; ``(value=5,unit=ms)``, ``5ms`` and ``4.5,ms`` alike;
    ``(expr=$x,unit=s,source=est)`` -> ``x``; a unitless value is seconds.
    Raises :class:`ValueError` for an unknown unit or an empty value.
    """
    return _scaled(text, _DURATION_UNITS, "s", "time")


def parse_vsl_size(text: str) -> str:
    """A MARTE VSL data size as expression text in bytes: ``(4,KB)`` -> ``4096``, ``(8,b)`` -> ``1``."""
    return _scaled(text, _SIZE_UNITS, "B", "size")


def parse_vsl_real(text: str) -> str:
    """A unitless VSL value (``prob``, ``rep``) as expression text: ``(expr=1-$p,source=est)`` -> ``1-p``."""
    number, _unit = _vsl_parts(text)
    return number


#: MARTE-family stereotypes -> {tag: (PerfSpec tag, converter)}
MARTE: dict[str, dict[str, tuple[str, Callable[[str], str]]]] = {
    "pastep": {
        "hostdemand": ("cost", parse_vsl_duration),
        "rep": ("repeat", parse_vsl_real),
        "prob": ("probability", parse_vsl_real),
    },
    "gastep": {
        "hostdemand": ("cost", parse_vsl_duration),
        "rep": ("repeat", parse_vsl_real),
        "prob": ("probability", parse_vsl_real),
    },
    "pacommstep": {
        "hostdemand": ("cost", parse_vsl_duration),
        "rep": ("repeat", parse_vsl_real),
        "prob": ("probability", parse_vsl_real),
        "msgsize": ("size", parse_vsl_size),
    },
    "resourceusage": {"exectime": ("cost", parse_vsl_duration)},
    "stormbolt": {"hostdemand": ("cost", parse_vsl_duration)},
}

#: MARTE stereotypes whose context parameters declare the variables of an analysis.
ANALYSIS_CONTEXTS = frozenset({"gaanalysiscontext", "paanalysiscontext", "analysiscontext"})
#: Their tags that list parameters (MARTE 1.0 beta ``context``, MARTE 1.1+ ``contextParams``).
CONTEXT_TAGS = frozenset({"context", "contextparams", "contextparam", "parameters"})
#: Metaclasses whose analysis context applies to every activity of the file.
_FILE_WIDE_CONTEXTS = frozenset({"Model", "Package", "Class", "Component"})
_CONTEXT_PARAMETER = re.compile(
    r"^(?:(in|out|inout)\s*)?\$\s*([A-Za-z_]\w*)\s*(?::\s*[\w:]+\s*)?(?:=\s*(.*?))?$", re.S | re.I
)
_VSL_NAME = re.compile(r"\$([A-Za-z_]\w*)")


@dataclass(frozen=True, slots=True)
class ContextParameter:
    """One parameter of a MARTE analysis context: ``in$timeUpdate`` or ``in$n=4``."""

    name: str
    direction: str  # "in", "out" or "inout"
    value: str | None  # expression text (seconds / bytes when the value had a unit), None when absent


def _context_value(text: str) -> str:
    """The value of ``in$x=...``: a number, a VSL value with a unit, or an expression over ``$`` names."""
    _number, unit = _vsl_parts(text)
    if unit is None:
        return _number
    if unit in _DURATION_UNITS or unit.lower() in {u.lower() for u in _DURATION_UNITS}:
        return parse_vsl_duration(text)
    return parse_vsl_size(text)


def parse_context_parameters(text: str) -> list[ContextParameter]:
    """The parameters a ``context``/``contextParams`` value declares.

    Accepts one parameter per value (Papyrus writes one ``<context>`` element
    each) or a list (``[in$a, out$b, in$c=(5,ms)]``).  A direction-less
    ``$x`` is an input.  Raises :class:`ValueError` naming the part it cannot read.
    """
    body = text.strip()
    if len(body) >= 2 and body[0] + body[-1] in ("[]", "{}"):
        body = body[1:-1]
    found: list[ContextParameter] = []
    for part in _split_top_level(body):
        if not part:
            continue
        match = _CONTEXT_PARAMETER.match(part)
        if match is None:
            raise ValueError(f"{part!r} is not a context parameter (write in$name or in$name=value)")
        direction = (match.group(1) or "in").lower()
        raw = (match.group(3) or "").strip()
        found.append(ContextParameter(match.group(2), direction, _context_value(raw) if raw else None))
    return found


# --------------------------------------------------------------------------- sidecar


@dataclass
class Sidecar:
    """A parsed TOML sidecar; ``used`` records which element keys matched something."""

    path: str
    defaults: dict[str, str] = field(default_factory=dict)
    elements: dict[str, dict[str, object]] = field(default_factory=dict)
    activities: dict[str, dict[str, object]] = field(default_factory=dict)
    functions: dict[str, object] = field(default_factory=dict)
    globals: dict[str, object] = field(default_factory=dict)
    variables: dict[str, object] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)

    def error(self, message: str, hint: str | None = None) -> ModelError:
        return ModelError(message, Location(file=self.path), hint=hint)


_SIDECAR_TABLES = ("defaults", "elements", "activities", "functions", "globals", "variables")


def load_sidecar(path: str | os.PathLike[str]) -> Sidecar:
    """Read and check the shape of a sidecar file; :class:`ModelError` naming the file when wrong."""
    from uml2perf_runtime.files import InputFileError, read_text_input

    shown = str(path)
    try:
        data = tomllib.loads(read_text_input(path, what="sidecar file"))
    except InputFileError as exc:
        raise ModelError(exc.message, Location(file=shown), hint=exc.hint) from None
    except tomllib.TOMLDecodeError as exc:
        raise ModelError(f"sidecar is not valid TOML: {exc}", Location(file=shown)) from None
    car = Sidecar(path=shown)
    for key, value in data.items():
        if key not in _SIDECAR_TABLES:
            raise car.error(
                f"unknown table [{key}] in sidecar", hint="known tables: " + ", ".join(_SIDECAR_TABLES)
            )
        if not isinstance(value, dict):
            raise car.error(f"[{key}] must be a table")
    defaults = data.get("defaults", {})
    for key, value in defaults.items():
        if key != "cost":
            raise car.error(f"unknown key {key!r} in [defaults]", hint="known: cost")
        car.defaults[key] = _expression_text(value, car, f"defaults.{key}")
    for table in ("elements", "activities"):
        for name, entry in data.get(table, {}).items():
            if not isinstance(entry, dict):
                raise car.error(f"[{table}.{name!r}] must be a table of tags")
            getattr(car, table)[name] = entry
    car.functions = dict(data.get("functions", {}))
    car.globals = dict(data.get("globals", {}))
    car.variables = dict(data.get("variables", {}))
    for name in car.variables:
        if not name.isidentifier():
            raise car.error(
                f"[variables] key {name!r} is not a variable name", hint="use letters, digits and '_'"
            )
    return car


def _normalised_tags(tags: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Tags compared as the profile reads them: normalised names, trimmed values, empty ones dropped."""
    return tuple(sorted((_tag_key(name), value.strip()) for name, value in tags if value.strip()))


def _expression_text(value: object, car: Sidecar, key: str) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise car.error(
                f"{key} is {value}: values must be finite numbers",
                hint="infinite or not-a-number values would make every time meaningless",
            )
        return repr(value)
    if isinstance(value, str):
        return value.strip()
    raise car.error(f"{key} must be an expression (a string or a number), not {type(value).__name__}")


# --------------------------------------------------------------------------- interpretation


class _Interpreter:
    """Applies the profile and the sidecar to one model, collecting diagnostics."""

    def __init__(self, model: Model, sidecar: Sidecar | None, *, fresh: bool = False):
        self.model = model
        self.car = sidecar
        self.fresh = fresh
        self.diagnostics: list[Diagnostic] = []
        #: VSL variables (``$x``) used by the activity being interpreted -> where first seen
        self.vsl_used: dict[str, Location] = {}
        self.vsl_by_activity: list[tuple[str, dict[str, Location]]] = []
        self.activity_ids: frozenset[str] | None = None
        #: ``node_spec`` results by the node's stereotype applications: a large model repeats a
        #: handful of distinct applications (same stereotype, same tags) thousands of times, and
        #: their interpretation depends on nothing else unless it warns or records a VSL variable
        self.spec_memo: dict[tuple[StereotypeApplication, ...], tuple[PerfSpec | None, str | None]] = {}
        self.vsl_seen = False

    def warn(
        self, message: str, location: Location, code: str, severity: Severity = Severity.WARNING
    ) -> None:
        self.diagnostics.append(Diagnostic(severity, message, location, code=code))

    # ------------------------------------------------------------------ stereotypes -> PerfSpec

    def own_spec(
        self, stereotypes: Iterable[StereotypeApplication], owner: str, location: Location
    ) -> PerfSpec | None:
        """The PerfSpec from our own profile, first role stereotype wins.

        ``clause+`` is the exception: beside another role stereotype (a test
        action that is also ``send+``, or ``action+`` with its cost) it does
        not compete for the role but adds its ``guard``/``probability``.
        """
        first: PerfSpec | None = None
        clause: PerfSpec | None = None
        first_seen: tuple[str, tuple[tuple[str, str], ...]] | None = None
        for stereotype in stereotypes:
            entry = _role_of(stereotype.name)
            if entry is None:
                continue
            is_clause = entry is _CLAUSE_ENTRY
            if (clause if is_clause else first) is not None:
                if not is_clause and first_seen is not None:
                    self.refuse_second_role(stereotype, first_seen, owner, location)
                continue
            if not is_clause:
                first_seen = (_norm(stereotype.name), _normalised_tags(stereotype.tags))
            role, known = entry
            tags: dict[str, str] = {}
            for name, value in stereotype.tags:
                key = _tag_key(name)
                if key not in known:
                    self.warn(
                        f"unknown tag {name!r} on {_norm(stereotype.name)} of {owner!r}; known: {', '.join(known)}",
                        location,
                        "unknown-tag",
                        Severity.ERROR,  # a misspelt tag would silently lose a cost: stop here
                    )
                    continue
                value = value.strip()
                if value and key in tags and tags[key] != value:
                    self.warn(
                        f"{_norm(stereotype.name)} of {owner!r} gives {key!r} twice ({tags[key]!r} and {value!r})",
                        location,
                        "conflicting-tag",
                        Severity.ERROR,
                    )
                if value and key not in tags:
                    tags[key] = value
            if key_is_else(tags.get("guard")):
                tags["guard"] = "True"  # an else clause: always true where it stands
            spec = PerfSpec(role, tuple(tags.items()), "profile")
            if is_clause:
                clause = spec
            else:
                first = spec
        if clause is None or first is None:
            return first or clause
        extra = tuple((k, v) for k, v in clause.tags if k in CLAUSE_TAGS and first.get(k) is None)
        return PerfSpec(first.role, first.tags + extra, first.origin) if extra else first

    def refuse_second_role(
        self,
        stereotype: StereotypeApplication,
        first: tuple[str, tuple[tuple[str, str], ...]],
        owner: str,
        location: Location,
    ) -> None:
        """A second performance stereotype on one element is an error unless it repeats the first exactly.

        Which of two disagreeing applications a tool writes first is arbitrary:
        using one and dropping the other would silently predict the wrong thing.
        """
        second = (_norm(stereotype.name), _normalised_tags(stereotype.tags))
        if second == first:
            return

        def shown(app: tuple[str, tuple[tuple[str, str], ...]]) -> str:
            return app[0] + "(" + ", ".join(f"{k}={v}" for k, v in app[1]) + ")"

        self.warn(
            f"{owner!r} carries two performance stereotypes that disagree: {shown(first)} and {shown(second)}",
            location,
            "conflicting-stereotypes",
            Severity.ERROR,
        )

    def marte_tags(
        self, stereotypes: Iterable[StereotypeApplication], owner: str, location: Location
    ) -> list[tuple[str, str]]:
        tags: list[tuple[str, str]] = []
        for stereotype in stereotypes:
            table = MARTE.get(_norm(stereotype.name))
            if table is None:
                continue
            for name, value in stereotype.tags:
                target = table.get(_norm(name))
                if target is None or not value.strip():
                    continue
                key, convert = target
                if "$" in value:
                    self.vsl_seen = True
                    for name in _VSL_NAME.findall(value):
                        self.vsl_used.setdefault(name, location)
                try:
                    converted = convert(value)
                except ValueError as exc:
                    self.warn(
                        f"{stereotype.name}.{name} of {owner!r}: {exc}; value {value!r} ignored",
                        location,
                        "bad-vsl",
                    )
                    continue
                if all(k != key for k, _ in tags):
                    tags.append((key, converted))
        return tags

    def node_spec(self, node: Node) -> tuple[PerfSpec | None, str | None]:
        """``(perf, marte_probability)`` for a node from its stereotypes.

        Memoised by the applications (see ``spec_memo``); a result that warned
        (the message names the node) or used a VSL variable (recorded per
        activity) is computed afresh each time.
        """
        memo = self.spec_memo.get(node.stereotypes)
        if memo is not None:
            return memo
        warnings = len(self.diagnostics)
        self.vsl_seen = False
        result = self._node_spec(node)
        # bounded: a file of all-different applications gains nothing from the memo and should not grow it
        if len(self.diagnostics) == warnings and not self.vsl_seen and len(self.spec_memo) < 4096:
            self.spec_memo[node.stereotypes] = result
        return result

    def _node_spec(self, node: Node) -> tuple[PerfSpec | None, str | None]:
        owner = node.name or node.id
        spec = self.own_spec(node.stereotypes, owner, node.location)
        marte = self.marte_tags(node.stereotypes, owner, node.location)
        probability = next((v for k, v in marte if k == "probability"), None) if marte else None
        if spec is None:
            tags = tuple((k, v) for k, v in marte if k != "probability")
            if tags:
                spec = PerfSpec(role=Role.ACTION, tags=tags, origin="marte")
            else:
                spec = _plain_tagged_values(node.stereotypes)
        elif marte:
            # MARTE fills what our stereotype leaves open: a send+ with a PaCommStep.msgSize has its size
            known = _ROLE_TAGS[spec.role]
            extra = tuple((k, v) for k, v in marte if k in known and spec.get(k) is None)
            if extra:
                spec = PerfSpec(spec.role, spec.tags + extra, spec.origin)
        return spec, probability

    # ------------------------------------------------------------------ sidecar

    def sidecar_entry(self, *keys: str) -> tuple[str, dict[str, object]] | None:
        if self.car is None:
            return None
        for key in keys:
            if key and key in self.car.elements:
                self.car.used.add(key)
                return key, self.car.elements[key]
        return None

    def apply_sidecar_node(self, node: Node, spec: PerfSpec | None) -> PerfSpec | None:
        found = self.sidecar_entry(node.id, node.name)
        if found is None:
            return spec
        key, entry = found
        assert self.car is not None
        role: Role | None = None
        known: tuple[str, ...] = ()
        if "stereotype" in entry:
            stereo = _norm(str(entry["stereotype"]))
            if stereo not in ROLES:
                raise self.car.error(
                    f"[elements.{key!r}] stereotype {entry['stereotype']!r} is not a uml2perf stereotype",
                    hint="known: " + ", ".join(ROLES),
                )
            role, known = ROLES[stereo]  # clause+ shares action+'s role but has tags of its own
        if role is None:
            role = spec.role if spec is not None else _default_role(node.kind)
            known = _ROLE_TAGS[role]
        base = dict(spec.tags) if spec is not None and spec.role is role else {}
        for name, value in entry.items():
            if name == "stereotype":
                continue
            tag = TAG_SYNONYMS.get(_norm(name), _norm(name))
            if tag not in known:
                raise self.car.error(
                    f"unknown key {name!r} in [elements.{key!r}] for role {role.value}",
                    hint="known: stereotype, " + ", ".join(known),
                )
            base[tag] = _expression_text(value, self.car, f"elements.{key}.{name}")
        if key_is_else(base.get("guard")):
            base["guard"] = "True"  # an else clause: always true where it stands
        return PerfSpec(role=role, tags=tuple(base.items()), origin="sidecar")

    def runs_as_action(self, node: Node) -> bool:
        """Actions, and calls of behaviours this file does not hold (they run as plain actions)."""
        if node.kind is NodeKind.ACTION:
            return True
        if node.kind is NodeKind.CALL:
            if self.activity_ids is None:
                self.activity_ids = frozenset(a.id for a in self.model.activities)
            return node.behavior not in self.activity_ids
        return False

    def apply_sidecar_edge(self, edge: Edge) -> Edge:
        found = self.sidecar_entry(edge.id, edge.name)
        if found is None:
            return edge
        key, entry = found
        assert self.car is not None
        probability, guard = edge.probability, edge.guard
        for name, value in entry.items():
            tag = _norm(name)
            if tag in PROBABILITY_TAGS:
                probability = _expression_text(value, self.car, f"elements.{key}.{name}")
            elif tag == "guard":
                guard = _expression_text(value, self.car, f"elements.{key}.{name}")
            else:
                raise self.car.error(
                    f"unknown key {name!r} in [elements.{key!r}] for a flow", hint="known: probability, guard"
                )
        return replace(edge, probability=probability, guard=guard)

    # ------------------------------------------------------------------ regions

    def region(self, region: Region, clause_nodes: frozenset[str] = frozenset()) -> Region:
        """Interpret every node and flow of a region.

        A MARTE ``prob`` belongs on the flow entering its step from a decision;
        in a ConditionalNode (``clause_nodes``: ids of its clauses' tests and
        bodies) it is the probability of the step's clause instead, kept as
        the step's ``probability`` tag for navigation.
        """
        nodes: list[Node] = []
        node_probability: dict[str, tuple[str, Node]] = {}
        for node in region.nodes:
            new_node, probability = self.node(node)
            nodes.append(new_node)
            if probability is not None:
                node_probability[node.id] = (probability, new_node)
        kinds = {n.id: n.kind for n in nodes} if node_probability else {}
        edges: list[Edge] = []
        placed: set[str] = set()
        plain = self.car is None
        for edge in region.edges:
            if plain and edge.guard is None and not edge.stereotypes and edge.target not in node_probability:
                edges.append(edge)  # nothing to interpret
                continue
            probability = edge.probability or self.edge_probability(edge)
            if (
                probability is None
                and edge.target in node_probability
                and kinds.get(edge.source) is NodeKind.DECISION
            ):
                probability = node_probability[edge.target][0]
                placed.add(edge.target)
            edge = replace(edge, probability=probability) if probability != edge.probability else edge
            if edge.guard is not None:
                edge = self.prose_guard(edge)
            edges.append(self.apply_sidecar_edge(edge))
        for node_id, (_prob, node) in node_probability.items():
            if node_id not in placed and node_id in clause_nodes:
                index = next(i for i, n in enumerate(nodes) if n.id == node_id)
                nodes[index] = _with_tag(nodes[index], "probability", _prob)
            elif node_id not in placed:
                self.warn(
                    f"branch probability on {node.name or node.id!r} ignored: no flow enters it from a decision",
                    node.location,
                    "unplaced-probability",
                    Severity.INFO,
                )
        if all(a is b for a, b in zip(nodes, region.nodes)) and all(
            a is b for a, b in zip(edges, region.edges)
        ):
            return region
        return Region(nodes=tuple(nodes), edges=tuple(edges))

    def prose_guard(self, edge: Edge) -> Edge:
        """Drop a guard written as prose (``[Petición aceptada]``), with a warning; keep every other guard.

        Only text without any operator character counts as prose, so a
        mistyped expression (``x => 1``) still stops conversion with its error.
        """
        text = edge.guard.strip() if edge.guard else ""
        if not text or text.lower() in _ELSE_WORDS or _OPERATOR_CHARACTERS.search(text):
            return edge
        from .errors import ExpressionError
        from .expressions import parse_expression

        try:
            parse_expression(text, edge.location, what="guard")
        except ExpressionError:
            self.warn(
                f"guard {text!r} is prose, not an expression: the branch is chosen at random "
                "(write the guard as an expression over model variables, or give the flow a probability)",
                edge.location,
                "prose-guard",
            )
            return replace(edge, guard=None)
        return edge

    def edge_probability(self, edge: Edge) -> str | None:
        for stereotype in edge.stereotypes:
            for name, value in stereotype.tags:
                if _norm(name) in PROBABILITY_TAGS and value.strip():
                    for variable in _VSL_NAME.findall(value):
                        self.vsl_used.setdefault(variable, edge.location)
                    try:
                        return parse_vsl_real(value)
                    except ValueError:
                        return value.strip()
        return None

    def node(self, node: Node) -> tuple[Node, str | None]:
        if not node.stereotypes and self.car is None and node.region is None and node.code is None:
            return node, None  # nothing to interpret: most nodes of a plain export
        spec, probability = self.node_spec(node)
        if self.car is not None:
            spec = self.apply_sidecar_node(node, spec)
            if spec is None and "cost" in self.car.defaults and self.runs_as_action(node):
                spec = PerfSpec(
                    role=Role.ACTION, tags=(("cost", self.car.defaults["cost"]),), origin="default"
                )
            elif spec is not None and spec.role is Role.ACTION and spec.get("cost") is None:
                if "cost" in self.car.defaults:
                    spec = replace(spec, tags=spec.tags + (("cost", self.car.defaults["cost"]),))
        code = node.code
        if spec is not None:
            tag_code = spec.get("code")
            if (
                tag_code is not None
                and code is not None
                and (plain_assignments(tag_code) or tag_code) != code
            ):
                self.warn(
                    f"{node.name or node.id!r} has both a code tag and an opaque body; the code tag is used",
                    node.location,
                    "code-conflict",
                )
            if tag_code is not None:
                code = plain_assignments(tag_code) or tag_code
                spec = replace(spec, tags=tuple((k, code if k == "code" else v) for k, v in spec.tags))
            elif code is not None and spec.role is Role.ACTION:
                spec = replace(spec, tags=spec.tags + (("code", code),))
        region = self.region(node.region, _clause_members(node)) if node.region is not None else None
        if spec is node.perf and code == node.code and region is node.region:
            return node, probability
        if self.fresh:
            _finish_in_place(node, spec, code, region)
            return node, probability
        return replace(node, perf=spec, code=code, region=region), probability

    # ------------------------------------------------------------------ activities

    def activity(self, activity: Activity) -> Activity:
        owner = activity.name or activity.id
        spec = self.own_spec(activity.stereotypes, owner, activity.location)
        is_main = activity.is_main or any(_norm(s.name) in MAIN_STEREOTYPES for s in activity.stereotypes)
        entry = None
        if self.car is not None:
            for key in (activity.id, activity.name):
                if key and key in self.car.activities:
                    self.car.used.add("activities." + key)
                    entry = (key, self.car.activities[key])
                    break
        if entry is not None:
            assert self.car is not None
            key, table = entry
            known = ROLES["activity+"][1]
            tags = dict(spec.tags) if spec is not None else {}
            for name, value in table.items():
                tag = _norm(name)
                if tag == "main":
                    is_main = bool(value)
                elif tag in known:
                    tags[tag] = _expression_text(value, self.car, f"activities.{key}.{name}")
                else:
                    raise self.car.error(
                        f"unknown key {name!r} in [activities.{key!r}]",
                        hint="known: main, " + ", ".join(known),
                    )
            spec = (
                PerfSpec(role=Role.ACTIVITY, tags=tuple(tags.items()), origin="sidecar")
                if tags or spec
                else spec
            )
        self.vsl_used = {}
        region = self.region(activity.region)
        self.vsl_by_activity.append((activity.id, self.vsl_used))
        declared = {v.name for v in activity.attributes}
        extra = _unique(
            v
            for v in self.context_variables(activity.stereotypes, owner, activity.location)
            if v.name not in declared
        )
        attributes = activity.attributes + extra
        return replace(activity, region=region, perf=spec, is_main=is_main, attributes=attributes)

    # ------------------------------------------------------------------ variables

    def context_variables(
        self, stereotypes: Iterable[StereotypeApplication], owner: str, location: Location
    ) -> list[Variable]:
        """Variables declared by the input parameters of MARTE analysis contexts."""
        found: list[Variable] = []
        for stereotype in stereotypes:
            if _norm(stereotype.name) not in ANALYSIS_CONTEXTS:
                continue
            for tag, value in stereotype.tags:
                if _norm(tag) not in CONTEXT_TAGS or not value.strip():
                    continue
                try:
                    parameters = parse_context_parameters(value)
                except ValueError as exc:
                    self.warn(
                        f"{stereotype.name}.{tag} of {owner!r}: {exc}; ignored", location, "bad-context"
                    )
                    continue
                for parameter in parameters:
                    if parameter.direction == "out":
                        continue  # a result the analysis computes, not an input of the model
                    found.append(
                        Variable(
                            parameter.name, location, None, parameter.value, None, parameter.value is None
                        )
                    )
        return found

    def file_wide_variables(self) -> tuple[Variable, ...]:
        """Parameters of analysis contexts applied to the model, a package or a class."""
        found: list[Variable] = []
        for element in self.model.annotations:
            if not any(_norm(s.name) in ANALYSIS_CONTEXTS for s in element.stereotypes):
                continue
            owner = element.name or element.element_id
            if element.metaclass not in _FILE_WIDE_CONTEXTS:
                self.warn(
                    f"analysis context on {element.metaclass} {owner!r}, which is not an activity: "
                    "its parameters are not used",
                    element.location,
                    "unused-context",
                    Severity.INFO,
                )
                continue
            found.extend(self.context_variables(element.stereotypes, owner, element.location))
        return _unique(found)

    def declare_vsl_variables(self, activities: list[Activity], declared: set[str]) -> None:
        """Declare ``$x`` names used in MARTE values but declared nowhere, as variables without a value."""
        position = {a.id: i for i, a in enumerate(activities)}
        for activity_id, used in self.vsl_by_activity:
            missing = [name for name in used if name not in declared]
            if not missing:
                continue
            index = position[activity_id]
            activity = activities[index]
            added = tuple(Variable(name, used[name], None, None, None, True) for name in missing)
            declared.update(missing)
            activities[index] = replace(activity, attributes=activity.attributes + added)
            self.warn(
                "VSL variable(s) "
                + ", ".join(f"${n}" for n in missing)
                + f" used in {activity.name or activity.id!r} but declared by no analysis context: "
                "they become variables without a value",
                used[missing[0]],
                "vsl-variable",
                Severity.INFO,
            )

    def apply_variables(
        self, activities: list[Activity], globals_: tuple[Variable, ...]
    ) -> tuple[Variable, ...]:
        """Give the sidecar's ``[variables]`` values to the variables of those names (declaring the others)."""
        assert self.car is not None
        values = {
            name: _expression_text(value, self.car, f"variables.{name}")
            for name, value in self.car.variables.items()
        }
        if not values:
            return globals_
        matched: set[str] = set()

        def give(variables: tuple[Variable, ...]) -> tuple[Variable, ...]:
            if not any(v.name in values for v in variables):
                return variables
            result = []
            for variable in variables:
                if variable.name in values:
                    matched.add(variable.name)
                    variable = replace(variable, default=values[variable.name], required=False)
                result.append(variable)
            return tuple(result)

        for index, activity in enumerate(activities):
            attributes, local = give(activity.attributes), give(activity.variables)
            if attributes is not activity.attributes or local is not activity.variables:
                activities[index] = replace(activity, attributes=attributes, variables=local)
        globals_ = give(globals_)
        where = Location(file=self.car.path)
        self.warn_near_miss_variables(set(values) - matched, activities, globals_, where)
        return globals_ + tuple(
            Variable(name, where, None, value) for name, value in values.items() if name not in matched
        )

    def warn_near_miss_variables(
        self, unmatched: set[str], activities: list[Activity], globals_: tuple[Variable, ...], where: Location
    ) -> None:
        """A sidecar variable that only differs from a model variable in case (or a typo) is a warning.

        It still becomes a new variable (a sidecar may declare variables), but
        one that nothing reads is almost always a misspelt name whose value
        would be silently ignored.
        """
        if not unmatched:
            return
        import difflib

        known = {v.name for v in globals_}
        for activity in activities:
            known.update(v.name for v in activity.attributes)
            known.update(v.name for v in activity.variables)
        by_case = {name.casefold(): name for name in known}
        for name in sorted(unmatched):
            close = by_case.get(name.casefold()) or next(
                iter(difflib.get_close_matches(name, known, 1, 0.8)), None
            )
            if close is not None and close != name:
                self.warn(
                    f"sidecar [variables] {name!r} matches no model variable; did you mean {close!r}? "
                    f"(names are case-sensitive: the model keeps its own value of {close!r})",
                    where,
                    "sidecar-variable-near-miss",
                )

    # ------------------------------------------------------------------ whole model

    def run(self) -> Model:
        activities = [self.activity(a) for a in self.model.activities]
        functions = self.model.functions
        known = {v.name for v in self.model.globals}
        globals_ = self.model.globals + tuple(v for v in self.file_wide_variables() if v.name not in known)
        if self.car is not None:
            self.check_unused()
            functions = functions + self.sidecar_functions()
            globals_ = globals_ + self.sidecar_globals()
        if any(used for _, used in self.vsl_by_activity):
            declared = {v.name for v in globals_}
            for activity in activities:
                declared.update(v.name for v in activity.attributes)
                declared.update(v.name for v in activity.variables)
            if self.car is not None:
                declared.update(self.car.variables)
            self.declare_vsl_variables(activities, declared)
        if self.car is not None:
            globals_ = self.apply_variables(activities, globals_)
        return replace(
            self.model,
            activities=tuple(activities),
            functions=functions,
            globals=globals_,
            diagnostics=self.model.diagnostics + tuple(self.diagnostics),
        )

    def check_unused(self) -> None:
        assert self.car is not None
        for key in self.car.elements:
            if key not in self.car.used:
                raise self.car.error(
                    f"[elements.{key!r}] names no node or flow of {Path(self.model.source).name}",
                    hint="use an element's name or xmi:id exactly as in the model",
                )
        for key in self.car.activities:
            if "activities." + key not in self.car.used:
                names = ", ".join(repr(a.name or a.id) for a in self.model.activities) or "none"
                raise self.car.error(
                    f"[activities.{key!r}] names no activity of {Path(self.model.source).name}",
                    hint=f"activities: {names}",
                )

    def sidecar_functions(self) -> tuple[CostFunction, ...]:
        assert self.car is not None
        result: list[CostFunction] = []
        where = Location(file=self.car.path)
        for name, value in self.car.functions.items():
            if isinstance(value, dict):
                unknown = set(value) - {"parameters", "body"}
                if unknown or "body" not in value:
                    raise self.car.error(
                        f"[functions] {name!r} needs 'body' (and optional 'parameters')",
                        hint=f"unexpected: {', '.join(sorted(unknown))}" if unknown else None,
                    )
                params = value.get("parameters", [])
                if not isinstance(params, list) or not all(isinstance(p, str) for p in params):
                    raise self.car.error(f"[functions] {name!r}: parameters must be a list of names")
                body = _expression_text(value["body"], self.car, f"functions.{name}.body")
                result.append(CostFunction(name, tuple(params), body, where, "python"))
            else:
                result.append(
                    CostFunction(
                        name, (), _expression_text(value, self.car, f"functions.{name}"), where, "python"
                    )
                )
        return tuple(result)

    def sidecar_globals(self) -> tuple[Variable, ...]:
        assert self.car is not None
        where = Location(file=self.car.path)
        return tuple(
            Variable(name, where, None, _expression_text(value, self.car, f"globals.{name}"))
            for name, value in self.car.globals.items()
        )


def _finish_in_place(node: Node, perf: PerfSpec | None, code: str | None, region: Region | None) -> None:
    """Give a node the reader has just built, and nobody else has seen, its interpretation.

    Only :func:`apply_profile` with ``fresh=True`` calls this, before the model
    is handed out; from then on nobody changes the node.
    """
    node.perf = perf
    node.code = code
    node.region = region


def key_is_else(text: str | None) -> bool:
    """Whether a guard text means "otherwise" (``else``, ``[else]``, ``otherwise``)."""
    return text is not None and text.strip().lower() in _ELSE_WORDS


def _clause_members(node: Node) -> frozenset[str]:
    """Ids of the test and body nodes of a ConditionalNode's clauses (empty for any other node)."""
    if not node.clauses:
        return frozenset()
    return frozenset(ident for clause in node.clauses for ident in (*clause.test, *clause.body))


def _with_tag(node: Node, key: str, value: str) -> Node:
    """``node`` with tag ``key`` added to its PerfSpec (a MARTE-only action when it had none)."""
    perf = node.perf
    if perf is None:
        perf = PerfSpec(role=Role.ACTION, tags=((key, value),), origin="marte")
    elif perf.get(key) is None:
        perf = PerfSpec(perf.role, perf.tags + ((key, value),), perf.origin)
    else:
        return node
    return replace(node, perf=perf)


def _plain_tagged_values(stereotypes: Iterable[StereotypeApplication]) -> PerfSpec | None:
    """``cost``/``time``/``repeat``/``code`` tagged values on an element with no stereotype at all.

    UML 1.x tools (ArgoUML, Poseidon) let a user type a tagged value without
    applying a stereotype; the reader keeps those in an application with an
    empty name.  Tags of a named foreign stereotype are never read this way.
    """
    known = ROLES["action+"][1]
    for stereotype in stereotypes:
        if stereotype.name:
            continue
        tags: list[tuple[str, str]] = []
        for name, value in stereotype.tags:
            key = TAG_SYNONYMS.get(_norm(name), _norm(name))
            if key in known and key not in _METADATA and value.strip() and all(k != key for k, _ in tags):
                tags.append((key, value.strip()))
        if tags:
            return PerfSpec(role=Role.ACTION, tags=tuple(tags), origin="profile")
    return None


def _unique(variables: Iterable[Variable]) -> tuple[Variable, ...]:
    """Variables with the first of each name kept, in order."""
    seen: set[str] = set()
    result: list[Variable] = []
    for variable in variables:
        if variable.name not in seen:
            seen.add(variable.name)
            result.append(variable)
    return tuple(result)


def effective_variables(model: Model, main: Activity | None = None) -> tuple[Variable, ...]:
    """The global variables of a run, one per name, as generated code declares them.

    Model globals (a ``globals`` class, the sidecar, file-wide analysis contexts)
    come first, then the main activity's attributes, then the other activities';
    the first declaration of a name wins.
    """
    ordered: list[Variable] = list(model.globals)
    if main is not None:
        ordered.extend(main.attributes)
    for activity in model.activities:
        if activity is not main:
            ordered.extend(activity.attributes)
    return _unique(ordered)


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
#: PerfSpec tags whose values are plain text, not expressions.
_TEXT_TAGS = frozenset({"name", "id", "type"})


def _reachable_activities(model: Model, main: Activity | None) -> list[Activity]:
    """``main`` and every activity it calls, directly or not; every activity when there is no main."""
    if main is None:
        return list(model.activities)
    by_id = {a.id: a for a in model.activities}
    found: dict[str, Activity] = {main.id: main}
    stack = [main]
    while stack:
        for node in stack.pop().walk():
            callee = by_id.get(node.behavior) if node.behavior else None
            if callee is not None and callee.id not in found:
                found[callee.id] = callee
                stack.append(callee)
    return list(found.values())


def used_names(model: Model, main: Activity | None = None) -> set[str]:
    """Every identifier the texts of a run may read: tags, code, guards, probabilities, defaults, functions.

    A cheap superset (identifiers found by a regular expression), used to ask
    only for the variables a run needs.
    """
    texts: list[str] = [f.body for f in model.functions]
    for activity in _reachable_activities(model, main):
        if activity.perf is not None:
            texts.extend(v for k, v in activity.perf.tags if k not in _TEXT_TAGS)
        for node in activity.walk():
            if node.perf is not None:
                texts.extend(v for k, v in node.perf.tags if k not in _TEXT_TAGS)
            if node.code:
                texts.append(node.code)
            for clause in node.clauses:
                if clause.guard:
                    texts.append(clause.guard)
            if node.loop is not None and node.loop.decider:
                texts.append(node.loop.decider)
        regions = [activity.region] + [n.region for n in activity.walk() if n.region is not None]
        for region in regions:
            for edge in region.edges:
                texts.extend(t for t in (edge.guard, edge.probability) if t)
    texts.extend(v.default for v in effective_variables(model, main) if v.default)
    names: set[str] = set()
    for text in texts:
        names.update(_IDENTIFIER.findall(text))
    return names


def unset_variables(model: Model, main: Activity | None = None, given: Iterable[str] = ()) -> list[Variable]:
    """Variables a run of ``main`` reads that have no value (see :attr:`Variable.required`) and ``given`` lacks.

    Parameters of an analysis context that nothing in the run reads are not
    asked for: a value for them could not change the prediction.
    """
    supplied = set(given)
    missing = [v for v in effective_variables(model, main) if v.required and v.name not in supplied]
    if not missing:
        return []
    used = used_names(model, main)
    return [v for v in missing if v.name in used]


def unset_variables_error(model: Model, missing: list[Variable]) -> ModelError:
    """The error ``run`` gives before simulating when variables have no value."""
    names = [v.name for v in missing]
    shown = ", ".join(names)
    settings = " ".join(f"--set {n}=VALUE" for n in names[:6]) + (" ..." if len(names) > 6 else "")
    table = "\n".join(f'    {n} = "VALUE"' for n in names[:6]) + ("\n    ..." if len(names) > 6 else "")
    return ModelError(
        f"{len(names)} variable{'s' if len(names) > 1 else ''} without a value: {shown} "
        "(declared by a MARTE analysis context or used as $name in a MARTE value, with no value given)",
        missing[0].location,
        hint=f"give each a value on the command line: {settings}\n"
        f"  or in a sidecar file passed with --sidecar FILE.toml:\n    [variables]\n{table}",
    )


def _default_role(kind: NodeKind) -> Role:
    if kind in (NodeKind.CALL, NodeKind.STRUCTURED, NodeKind.CONDITIONAL):
        return Role.ACTIVITY
    if kind is NodeKind.LOOP:
        return Role.LOOP
    return Role.ACTION


def apply_profile(
    model: Model, sidecar: str | os.PathLike[str] | None = None, *, fresh: bool = False
) -> Model:
    """Interpret stereotypes (uml2perf, MARTE) and the optional TOML sidecar into ``PerfSpec``s.

    Fills ``Node.perf``, ``Node.code`` (from a ``code`` tag), ``Edge.probability``,
    ``Activity.perf`` and ``Activity.is_main``; appends warnings (unknown tags,
    unreadable VSL values) to ``Model.diagnostics``.  ``model`` is left as it
    was and a new model is returned.

    ``fresh`` is for the reader alone: its model was built a moment ago and no
    one else holds it, so nodes are finished in place instead of being built a
    second time (a 20,000-action model would otherwise build every node twice).
    """
    car = load_sidecar(sidecar) if sidecar is not None else None
    return _Interpreter(model, car, fresh=fresh).run()


# --------------------------------------------------------------------------- main activity


def no_activity_error(model: Model) -> ModelError:
    """The error for a file without activities, naming what it holds instead."""
    return ModelError(
        f"no activity found; the file holds {describe_contents(model.contents)}",
        Location(file=Path(model.source).name if model.source else None),
        hint="uml2perf reads activity diagrams: add an activity to the model, or export the package that holds it",
    )


def _called_ids(model: Model) -> set[str]:
    called: set[str] = set()
    for activity in model.activities:
        for node in activity.walk():
            if node.behavior:
                called.add(node.behavior)
    return called


def _describe(activities: Iterable[Activity]) -> str:
    return ", ".join(f"{a.name or '<unnamed>'!r} [xmi:id={a.id}]" for a in activities)


def main_activity(model: Model, name: str | None = None) -> Activity:
    """The activity ``run`` executes (SPEC section 4).

    In order: the one ``name`` gives (by name or id); the one stereotyped
    ``main``/``model+``; the one named ``main``/``MainActivity``; the only
    non-empty activity no other activity calls.  Otherwise a
    :class:`ModelError` lists the candidates with their ids.
    """
    where = Location(file=Path(model.source).name if model.source else None)
    if not model.activities:
        raise no_activity_error(model)
    if name is not None:
        found = model.activity(name)
        if found is None:
            raise ModelError(
                f"no activity named {name!r}",
                where,
                hint=f"activities in the file: {_describe(model.activities)}",
            )
        return found
    marked = [a for a in model.activities if a.is_main]
    if len(marked) == 1:
        return marked[0]
    if len(marked) > 1:
        raise ModelError(
            f"{len(marked)} activities are stereotyped main/model+: {_describe(marked)}",
            where,
            hint="keep the stereotype on one activity, or choose with --activity NAME",
        )
    named = [a for a in model.activities if a.name.strip().lower() in ("main", "mainactivity")]
    if len(named) == 1:
        return named[0]
    called = _called_ids(model)
    roots = [a for a in model.activities if a.id not in called and a.region.nodes]
    if len(roots) == 1:
        return roots[0]
    candidates = named or roots or list(model.activities)
    raise ModelError(
        f"cannot tell which activity is the main one; candidates: {_describe(candidates)}",
        where,
        hint="stereotype one activity «main», name it MainActivity, or choose with --activity NAME",
    )


__all__ = [
    "MARTE",
    "ROLES",
    "Sidecar",
    "ContextParameter",
    "apply_profile",
    "effective_variables",
    "load_sidecar",
    "main_activity",
    "no_activity_error",
    "parse_context_parameters",
    "parse_vsl_duration",
    "parse_vsl_real",
    "parse_vsl_size",
    "unset_variables",
    "unset_variables_error",
]
