"""The TOML sidecar: costs, roles, functions and variables for exports without a profile."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import Location, ModelError
from .roles import tag_key

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
    import tomllib  # here, not at the top: most runs read no sidecar

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
        car.defaults[key] = expression_text(value, car, f"defaults.{key}")
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


def normalised_tags(tags: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Tags compared as the profile reads them: normalised names, trimmed values, empty ones dropped."""
    return tuple(sorted((tag_key(name), value.strip()) for name, value in tags if value.strip()))


def expression_text(value: object, car: Sidecar, key: str) -> str:
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
