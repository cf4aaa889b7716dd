"""MARTE: VSL values in seconds and bytes, the MARTE stereotypes read, analysis-context parameters."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from decimal import Decimal

# --------------------------------------------------------------------------- MARTE VSL

# Every ``convert`` imports this module, and most models have no MARTE value with a unit: the
# unit factors are kept as decimal text (``decimal`` is imported by :func:`_scaled`, the one
# place that multiplies), and the patterns below are compiled by ``re`` when first used (``re``
# keeps them), not at import.  Both together cost about 2 ms of every start.

_DURATION_UNITS: dict[str, str] = {
    "s": "1",
    "sec": "1",
    "second": "1",
    "seconds": "1",
    "ms": "0.001",
    "us": "0.000001",
    "µs": "0.000001",
    "ns": "0.000000001",
    "min": "60",
    "h": "3600",
    "hr": "3600",
    "hour": "3600",
}
#: MARTE's DataSizeUnitKind counts KB, MB and GB in powers of 1024 (like KiB...);
#: ``b``/``bit`` are bits.  ``kB`` is the SI kilobyte.
_SIZE_UNITS: dict[str, str] = {
    "B": "1",
    "Byte": "1",
    "byte": "1",
    "bytes": "1",
    "b": "0.125",
    "bit": "0.125",
    "bits": "0.125",
    "KB": "1024",
    "KiB": "1024",
    "kB": "1000",
    "MB": "1048576",
    "MiB": "1048576",
    "GB": "1073741824",
    "GiB": "1073741824",
}
_NUMBER = r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$"
_NUMBER_WITH_UNIT = r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-zµ]+)$"
_VSL_VARIABLE = r"\$(?=[A-Za-z_])"
_KEYED = r"(?s)^([A-Za-z_]\w*)\s*=(?!=)\s*(.*)$"


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
    match = re.match(_NUMBER_WITH_UNIT, body)
    if match:
        return match.group(1), match.group(2)
    value: str | None = None
    expr: str | None = None
    unit: str | None = None
    positional: list[str] = []
    for part in _split_top_level(body):
        keyed = re.match(_KEYED, part)
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
    return re.sub(_VSL_VARIABLE, "", chosen.strip()), unit


def _scaled(text: str, units: dict[str, str], default_unit: str, what: str) -> str:
    from decimal import Decimal, InvalidOperation

    number, unit = _vsl_parts(text)
    unit = (unit or default_unit).strip()
    factor_text = units.get(unit)
    if factor_text is None:
        factor_text = next((f for u, f in units.items() if u.lower() == unit.lower() and u != "b"), None)
    if factor_text is None:
        raise ValueError(f"unknown {what} unit {unit!r} (known: {', '.join(units)})")
    factor = Decimal(factor_text)
    if re.match(_NUMBER, number):
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
FILE_WIDE_CONTEXTS = frozenset({"Model", "Package", "Class", "Component"})
_CONTEXT_PARAMETER = r"(?si)^(?:(in|out|inout)\s*)?\$\s*([A-Za-z_]\w*)\s*(?::\s*[\w:]+\s*)?(?:=\s*(.*?))?$"
#: ``$name`` in a VSL value (``re.findall(VSL_NAME, value)``).
VSL_NAME = r"\$([A-Za-z_]\w*)"


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
        match = re.match(_CONTEXT_PARAMETER, part)
        if match is None:
            raise ValueError(f"{part!r} is not a context parameter (write in$name or in$name=value)")
        direction = (match.group(1) or "in").lower()
        raw = (match.group(3) or "").strip()
        found.append(ContextParameter(match.group(2), direction, _context_value(raw) if raw else None))
    return found
