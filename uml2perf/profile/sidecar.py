"""The TOML sidecar: costs, roles, functions and variables for exports without a profile."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import Diagnostic, Location, ModelError, Severity
from .roles import tag_key

# --------------------------------------------------------------------------- sidecar


class SidecarError(ModelError):
    """Every problem of a sidecar at once; ``problems`` holds each as a diagnostic for ``check``."""

    def __init__(self, path: str, problems: list[Diagnostic]):
        where = Location(file=path)
        if len(problems) == 1:
            super().__init__(problems[0].message, where, problems[0].hint)
        else:
            lines = [f"the sidecar has {len(problems)} problems:"]
            lines.extend(
                "  " + problem.message + (f" ({problem.hint})" if problem.hint else "")
                for problem in problems
            )
            super().__init__("\n".join(lines), where, "fix them all; 'uml2perf check' lists them too")
        self.problems = tuple(problems)


@dataclass
class Sidecar:
    """A parsed TOML sidecar; ``used`` records which element keys matched something.

    Problems are collected in ``problems`` as they are found, so that one
    run names every one of them (:meth:`raise_problems`).
    """

    path: str
    defaults: dict[str, str] = field(default_factory=dict)
    elements: dict[str, dict[str, object]] = field(default_factory=dict)
    activities: dict[str, dict[str, object]] = field(default_factory=dict)
    functions: dict[str, object] = field(default_factory=dict)
    globals: dict[str, object] = field(default_factory=dict)
    variables: dict[str, object] = field(default_factory=dict)
    #: (normalised stereotype name or "" for any, normalised tag) -> (our role or None, our tag)
    tags: dict[tuple[str, str], tuple[str | None, str]] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    problems: list[Diagnostic] = field(default_factory=list)
    #: inputs given as intervals ``{ value, low, high }``: variables and element costs (the
    #: tables above hold their values)
    uncertain: list[SidecarInterval] = field(default_factory=list)

    def error(self, message: str, hint: str | None = None) -> ModelError:
        return ModelError(message, Location(file=self.path), hint=hint)

    def problem(self, message: str, hint: str | None = None) -> None:
        """Note a problem and go on: all of them are raised together by :meth:`raise_problems`."""
        diagnostic = Diagnostic(Severity.ERROR, message, Location(file=self.path), hint, "sidecar")
        if diagnostic not in self.problems:
            self.problems.append(diagnostic)

    def raise_problems(self) -> None:
        if self.problems:
            raise SidecarError(self.path, self.problems)


@dataclass(frozen=True)
class SidecarInterval:
    """A sidecar input given as ``{ value, low, high }``: ``kind`` "variable" or "cost", and whose.

    The three are expression texts (numbers are texts too); a cost's interval is sampled as
    the factor ``low/value`` .. ``high/value`` it has at the run's variables.
    """

    kind: str
    name: str
    value: str
    low: str
    high: str

    @property
    def label(self) -> str:
        return f"variables.{self.name}" if self.kind == "variable" else f'elements."{self.name}".cost'


def _interval_value(car: Sidecar, kind: str, name: str, value: object, key: str) -> object:
    """The value of an interval table (noting the interval on ``car``); other values as they are."""
    from uml2perf_runtime.platform.uncertain import INTERVAL_KEYS, is_interval

    if not isinstance(value, dict):
        return value
    if not is_interval(value):
        car.problem(
            f"{key} is a table with keys {', '.join(sorted(map(str, value)))}: an interval has "
            "value, low and high",
            hint="e.g. { value = 0.2, low = 0.18, high = 0.25 } (low/high: 5th and 95th percentiles)",
        )
        return 0
    texts = {k: expression_text(value.get(k, value["value"]), car, f"{key}.{k}") for k in INTERVAL_KEYS}
    if len(set(texts.values())) > 1:
        car.uncertain.append(SidecarInterval(kind, name, texts["value"], texts["low"], texts["high"]))
    return value["value"]


_SIDECAR_TABLES = ("defaults", "elements", "activities", "functions", "globals", "variables", "tags")


def suggestion(word: str, known: Iterable[str], *, prefix: str = "did you mean ") -> str | None:
    """``did you mean 'x'?`` for the known word closest to ``word`` (case and spelling), else None."""
    import difflib

    choices = sorted(set(known))
    folded = {c.casefold(): c for c in choices}
    close = folded.get(word.casefold())
    if close is None:
        matches = difflib.get_close_matches(word, choices, 1, 0.6)
        close = matches[0] if matches else None
    return f"{prefix}{close!r}?" if close is not None and close != word else None


def with_suggestion(hint: str, word: str, known: Iterable[str]) -> str:
    """``hint`` preceded by a "did you mean" for ``word`` when one of ``known`` is close."""
    mean = suggestion(word, known)
    return f"{mean} {hint}" if mean else hint


def load_sidecar(path: str | os.PathLike[str]) -> Sidecar:
    """Read and check the shape of a sidecar file.

    A file that is not TOML is a :class:`ModelError` at once; every other
    problem is collected in :attr:`Sidecar.problems`, to be raised together
    once the model has been matched against the sidecar too.
    """
    import tomllib  # here, not at the top: most runs read no sidecar

    from uml2perf_runtime.output.files import InputFileError, read_text_input
    from uml2perf_runtime.output.structured import StructureError, loads_toml

    shown = str(path)
    try:
        data = loads_toml(read_text_input(path, what="sidecar file"), "sidecar file")
    except (InputFileError, StructureError) as exc:
        raise ModelError(exc.message, Location(file=shown), hint=exc.hint) from None
    except tomllib.TOMLDecodeError as exc:
        raise ModelError(f"sidecar is not valid TOML: {exc}", Location(file=shown)) from None
    car = Sidecar(path=shown)
    tables: dict[str, dict[str, object]] = {}
    for key, value in data.items():
        if key not in _SIDECAR_TABLES:
            car.problem(
                f"unknown table [{key}] in sidecar",
                hint=with_suggestion("known tables: " + ", ".join(_SIDECAR_TABLES), key, _SIDECAR_TABLES),
            )
        elif not isinstance(value, dict):
            car.problem(f"[{key}] must be a table", hint=f"write [{key}] on a line of its own, then its keys")
        else:
            tables[key] = value
    for key, value in tables.get("defaults", {}).items():
        if key != "cost":
            car.problem(
                f"unknown key {key!r} in [defaults]", hint=with_suggestion("known: cost", key, ["cost"])
            )
        else:
            car.defaults[key] = expression_text(value, car, f"defaults.{key}")
    for table in ("elements", "activities"):
        for name, entry in tables.get(table, {}).items():
            if not isinstance(entry, dict):
                car.problem(
                    f"[{table}.{name!r}] must be a table of tags",
                    hint=f'write [{table}."{name}"] on a line of its own, then its tags',
                )
                continue
            if table == "elements" and "cost" in entry:
                entry = {
                    **entry,
                    "cost": _interval_value(car, "cost", name, entry["cost"], f"[elements.{name!r}] cost"),
                }
            getattr(car, table)[name] = entry
    car.functions = dict(tables.get("functions", {}))
    car.globals = dict(tables.get("globals", {}))
    car.variables = {
        name: _interval_value(car, "variable", name, value, f"[variables] {name}")
        for name, value in tables.get("variables", {}).items()
    }
    for name in car.variables:
        if not name.isidentifier():
            car.problem(
                f"[variables] key {name!r} is not a variable name", hint="use letters, digits and '_'"
            )
    _read_tag_map(car, tables.get("tags", {}))
    return car


def _read_tag_map(car: Sidecar, table: dict[str, object]) -> None:
    """``[tags]``: tags of another profile read as ours.

    ``"Timed.time" = "cost"`` reads tag ``time`` of stereotype ``Timed`` as our
    ``cost``; ``"time" = "cost"`` reads it on any stereotype that is neither
    ours nor MARTE (and on tagged values without a stereotype);
    ``"Msg.bytes" = "send+.size"`` also gives the element the role ``send+``.
    Stereotype names may be qualified (``MyProfile::Timed``).
    """
    from ..model import normalise_name
    from .roles import ROLE_TAGS, ROLES

    ours = sorted({tag for tags in ROLE_TAGS.values() for tag in tags} | {"probability", "guard"})
    for key, value in table.items():
        if not isinstance(value, str) or not value.strip():
            car.problem(
                f"[tags] {key!r} must name one of our tags as a string",
                hint='e.g. "Timed.time" = "cost"',
            )
            continue
        stereotype, _, tag = key.rpartition(".")
        stereotype = stereotype.rpartition("::")[2]
        if not tag.strip():
            car.problem(f"[tags] key {key!r} names no tag", hint='write "Stereotype.tag" or "tag"')
            continue
        role_name, _, target = value.strip().rpartition(".")
        target_key = tag_key(target)
        role: str | None = None
        if role_name:
            role = normalise_name(role_name)
            if role not in ROLES:
                car.problem(
                    f"[tags] {key!r} = {value!r}: {role_name!r} is not a uml2perf stereotype",
                    hint=with_suggestion("known: " + ", ".join(ROLES), role, ROLES),
                )
                continue
            if target_key not in ROLES[role][1]:
                car.problem(
                    f"[tags] {key!r} = {value!r}: {role_name} has no tag {target!r}",
                    hint=with_suggestion("known: " + ", ".join(ROLES[role][1]), target_key, ROLES[role][1]),
                )
                continue
        elif target_key not in ours:
            car.problem(
                f"[tags] {key!r} = {value!r}: {target!r} is not a tag of the uml2perf profile",
                hint=with_suggestion("known: " + ", ".join(ours), target_key, ours),
            )
            continue
        car.tags[(normalise_name(stereotype), normalise_name(tag))] = (role, target_key)


def normalised_tags(tags: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Tags compared as the profile reads them: normalised names, trimmed values, empty ones dropped."""
    return tuple(sorted((tag_key(name), value.strip()) for name, value in tags if value.strip()))


#: Words Python's float() reads as infinite or not a number: never a value of a sidecar.
_NON_FINITE_WORDS = frozenset({"nan", "inf", "infinity"})


def probability_text(value: object, car: Sidecar, key: str) -> str:
    """A probability from the sidecar: a number from 0 to 1, a percentage, or an expression."""
    from .guards import probability_value

    text = expression_text(value, car, key)
    try:
        return probability_value(text)
    except ValueError as exc:
        car.problem(
            f"{key} is {text!r}: {exc}",
            hint="write a number from 0 to 1 (0.3), a percentage (30%) or an expression",
        )
        return "0"


def expression_text(value: object, car: Sidecar, key: str) -> str:
    if isinstance(value, bool):
        if not key.endswith(".guard"):
            car.problem(
                f"{key} is {str(value).lower()}: it must be an expression (a string or a number), "
                "not true or false",
                hint='write the value as a number or an expression in quotes, e.g. cost = "1e-3"',
            )
        return "True" if value else "False"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            car.problem(
                f"{key} is {value}: values must be finite numbers",
                hint="infinite or not-a-number values would make every time meaningless",
            )
            return "0"
        return repr(value)
    if isinstance(value, str):
        if value.strip().lower().lstrip("+-") in _NON_FINITE_WORDS:
            car.problem(
                f"{key} is {value.strip()!r}: values must be finite numbers",
                hint="infinite or not-a-number values would make every time meaningless",
            )
            return "0"
        return value.strip()
    car.problem(f"{key} must be an expression (a string or a number), not {type(value).__name__}")
    return "0"
