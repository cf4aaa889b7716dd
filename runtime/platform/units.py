"""Quantities with units in machine files: ``latency = "1us"``, ``bandwidth = "10 Gbit/s"``.

People copy numbers from data sheets with their units; a machine file may
give any number as a string with a unit of the right kind, and plain numbers
keep meaning seconds, bytes, bytes per second and flop per second.  Decimal
prefixes are powers of 1000 and binary ones (``Ki``, ``Mi``, ``Gi``, ``Ti``)
powers of 1024; bits are an eighth of a byte.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["KINDS", "quantity"]

_PREFIX = {
    "": 1.0,
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "Ki": 1024.0,
    "Mi": 1024.0**2,
    "Gi": 1024.0**3,
    "Ti": 1024.0**4,
}
_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9, "min": 60.0}

#: What each kind of quantity is measured in (for messages).
KINDS = {
    "time": "seconds (s, ms, us, ns)",
    "bytes": "bytes (B, KB, MiB...)",
    "bandwidth": "bytes per second (GB/s, Gbit/s...)",
    "flops": "flop per second (Gflop/s...)",
}

_NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
_PATTERN = re.compile(rf"^\s*{_NUMBER}\s*([A-Za-zµμ/]*)\s*$")
_RATE = re.compile(r"^(Ki|Mi|Gi|Ti|[kKMGTP]?)(B|bit|b|flop|flops|FLOP|FLOPS)(/s|ps)?$")


def quantity(value: Any, kind: str) -> Any:
    """``value`` converted to the base unit of ``kind`` when it is a string; other values unchanged.

    Raises :class:`ValueError` with a sentence naming what was expected.
    """
    if not isinstance(value, str):
        return value
    if kind == "bandwidth" and value.strip().lower() in ("inf", "infinite", "infinity"):
        return math.inf  # a link whose bytes cost nothing (what TOML's inf says, in JSON-safe text)
    match = _PATTERN.match(value)
    if not match:
        raise ValueError(f"{value!r} is not a number with a unit (expected {KINDS[kind]})")
    number, unit = float(match.group(1)), match.group(2)
    factor = _factor(unit, kind)
    if factor is None:
        raise ValueError(f"{value!r}: unit {unit!r} is not one of {KINDS[kind]}")
    result = number * factor
    if not math.isfinite(result):
        raise ValueError(f"{value!r} is not a finite quantity")
    return result


def _factor(unit: str, kind: str) -> float | None:
    if unit == "":
        return 1.0
    if kind == "time":
        return _TIME.get(unit)
    rate = _RATE.match(unit)
    if rate is None:
        return None
    prefix, base, per_second = rate.group(1), rate.group(2), rate.group(3)
    scale = _PREFIX[prefix]
    if kind == "bytes" and base == "B" and not per_second:
        return scale
    if kind == "bandwidth" and per_second and base in ("B", "bit", "b"):
        return scale / 8.0 if base in ("bit", "b") else scale
    if kind == "flops" and per_second and base.lower().startswith("flop"):
        return scale
    return None
