"""Model parameters given on the command line (``--set NAME=VALUE``): checked and converted.

A textual value takes the type of the parameter's default (``"64"`` for an int default is 64,
``"yes"`` for a bool default is True); a name the model does not have is an error listing the
names it has.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .errors import ParameterError
from .spec import ModelSpec

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def _number(text: str) -> int | float:
    """``"64"`` -> 64, ``"1e3"`` -> 1000, ``"2.5"`` -> 2.5; ValueError otherwise."""
    try:
        return int(text)
    except ValueError:
        pass
    value = float(text)
    if value.is_integer() and "." not in text:
        return int(value)
    return value


def coerce_value(name: str, value: Any, default: Any) -> Any:
    """Convert a textual override to the type of the parameter's default."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        if isinstance(default, bool):
            low = text.lower()
            if low in _TRUE:
                return True
            if low in _FALSE:
                return False
            raise ValueError(text)
        if isinstance(default, int):
            return _number(text)
        if isinstance(default, float):
            return float(text)
        if isinstance(default, str):
            return value
        try:
            return _number(text)
        except ValueError:
            return value
    except ValueError:
        kind = "true or false" if isinstance(default, bool) else "a number"
        raise ParameterError(
            f"--set {name}={value}: {name} must be {kind} (its default is {default!r})"
        ) from None


def did_you_mean(unknown: Sequence[str], known: Iterable[str]) -> str | None:
    """ "did you mean 'NAT'?" for the first mistyped name that is close to a known one (as --speedup says)."""
    import difflib

    names = list(known)
    for name in unknown:
        close = difflib.get_close_matches(name, names, 3, 0.6)
        if not close:
            close = [n for n in names if n.lower() == name.lower() or sorted(n) == sorted(name)][:1]
        if close:
            return f"{name!r}: did you mean {', '.join(repr(c) for c in close)}?"
    return None


def validate_overrides(spec: ModelSpec, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Check override names against the model's parameters and convert their values."""
    defaults = dict(spec.parameters)
    unknown = sorted(name for name in overrides if name not in defaults)
    if unknown:
        known = ", ".join(defaults) if defaults else "(none)"
        raise ParameterError(
            f"model '{spec.name}' has no parameter{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(n) for n in unknown)}; its parameters are: {known}",
            hint=did_you_mean(unknown, defaults),
        )
    values = {name: coerce_value(name, value, defaults[name]) for name, value in overrides.items()}
    for name, value in values.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ParameterError(
                f"--set {name}={value}: {name} must be a finite number",
                hint="infinite or not-a-number values would make every time meaningless",
            )
    return values


__all__ = ["coerce_value", "did_you_mean", "validate_overrides"]
