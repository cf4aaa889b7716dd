"""Array operations an action names, priced per element by the machine's ``[operations]`` table.

Some numpy operations run far below the speed of their data: a running sum waits for each
element, a gather waits for a cache line per element, a selection by a mask stalls on its
mispredicted branches.  Their bytes alone price them several to a hundred times too low.  An
``action+`` may name them with the elements they run over, per process and per run::

    operations = "where: n; x[mask]: n; gather: m, 2"

(``gather: m, 2``: two gathers of ``m`` elements each), and the machine prices each element at
the seconds its ``[operations]`` table gives, on top of the action's counted ``bytes``
(``uml2perf calibrate`` measures each operation beyond the time its counted bytes take).  Why a
table of seconds rather than weights in flops: a model that names the operation is priced right on
every calibrated machine, and the seconds need no conversion through ``peak_flops`` (which
depends on how many BLAS threads the calibration had).

An operation's time per element changes with the size of its arrays (a gather from memory waits
far longer than one from a cache), so an entry is one number or ranges by the bytes of the arrays
one run of it goes over, taken as 8 bytes per element (``[{ up_to = "512 KiB", seconds = 3.3e-10 }, ...,
{ seconds = 1.9e-9 }]``), as ``first_touch`` is ranged by allocation size.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "ARRAY_OPERATIONS",
    "ELEMENTWISE_OPERATIONS",
    "OPERATION_NAMES",
    "OPERATIONS_HINT",
    "OPERATIONS_TAG_HINT",
    "operation_seconds",
    "parse_operations_tag",
]

#: Elementwise functions slower than an addition (numpy ufuncs), whose time ``uml2perf
#: calibrate`` measures against an addition's.
ELEMENTWISE_OPERATIONS = ("divide", "sqrt", "exp", "log", "sin", "power", "remainder", "floor")
#: Array operations slower than their data (``docs/profile.md`` says what each stands for).
ARRAY_OPERATIONS = (
    "cumsum",
    "sum(axis=1)",
    "argmin(axis=1)",
    "bincount",
    "gather",
    "transpose",
    "where",
    "x[mask]",
    "x[mask/10]",
    "block",
    "int_remainder",
    "int_divide",
)
#: The operations a machine file's ``[operations]`` may price and an action's ``operations`` tag
#: may name.
OPERATION_NAMES = ELEMENTWISE_OPERATIONS + ARRAY_OPERATIONS

OPERATIONS_HINT = (
    "[operations] gives seconds per element: where = 3.3e-10, or by the arrays' size: "
    'where = [{ up_to = "512 KiB", seconds = 3.3e-10 }, { seconds = 1.9e-9 }]; '
    "uml2perf calibrate measures them"
)
#: What an action's ``operations`` tag looks like, for its errors.
OPERATIONS_TAG_HINT = (
    'write "name: elements" or "name: elements, runs" separated by ";", '
    'e.g. operations = "where: n; gather: m, 2"'
)


#: Bytes per element by which an operation's range is chosen (its arrays taken as doubles).
ELEMENT_BYTES = 8.0


def parse_operations(
    source: str,
    value: Any,
    sized_ranges: Callable[[str, str, list[Any], str, str], tuple[tuple[float, float], ...]],
    number: Callable[[str, str, Any], float],
) -> dict[str, tuple[tuple[float, float], ...]]:
    """``[operations]`` as ``{name: ((up_to, seconds), ...)}``, the last ``up_to`` infinite.

    ``sized_ranges`` and ``number`` are the machine file's own readers of ranged rows and of
    non-negative numbers, so the errors read as every other key's.
    """
    from ..errors import MachineError

    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MachineError(f"{source}: operations must be a table, got {value!r}", hint=OPERATIONS_HINT)
    table: dict[str, tuple[tuple[float, float], ...]] = {}
    for name, entry in value.items():
        if name not in OPERATION_NAMES:
            raise MachineError(
                f"{source}: operations has no operation {name!r}",
                hint="the operations are " + ", ".join(OPERATION_NAMES) + " (quote names with brackets)",
            )
        where = f"operations.{name}"
        if isinstance(entry, list):
            ranges = sized_ranges(source, where, entry, "seconds", OPERATIONS_HINT)
            table[name] = tuple(
                (up_to, number(source, f"{where}[{index}] seconds", seconds))
                for index, (up_to, seconds) in enumerate(ranges, start=1)
            )
        else:
            table[name] = ((math.inf, number(source, where, entry)),)
    return table


def operations_dict(table: Mapping[str, tuple[tuple[float, float], ...]]) -> dict[str, Any]:
    """``[operations]`` as a machine file writes it: one number per operation, or its ranges."""
    out: dict[str, Any] = {}
    for name, ranges in table.items():
        if len(ranges) == 1:
            out[name] = ranges[0][1]
        else:
            out[name] = [
                ({} if up_to == math.inf else {"up_to": int(up_to)}) | {"seconds": seconds}
                for up_to, seconds in ranges
            ]
    return out


def operation_seconds(
    table: Mapping[str, tuple[tuple[float, float], ...]], name: str, elements: float
) -> float:
    """Seconds of ``elements`` elements of operation ``name`` (its range by the arrays' bytes).

    Raises ``KeyError`` when the table has no such operation (the caller says what to do).
    """
    ranges = table[name]
    size = ELEMENT_BYTES * elements
    for up_to, seconds in ranges:
        if size <= up_to:
            return elements * seconds
    return elements * ranges[-1][1]  # pragma: no cover - the last range reaches inf


def _split_runs(count: str) -> tuple[str, str]:
    """``elements[, runs]``: the count split at its last comma outside parentheses (``1`` runs
    when there is none), so ``max(a, b)`` stays whole."""
    depth = 0
    for index in range(len(count) - 1, -1, -1):
        char = count[index]
        if char in ")]":
            depth += 1
        elif char in "([":
            depth -= 1
        elif char == "," and depth == 0:
            return count[:index].strip(), count[index + 1 :].strip()
    return count.strip(), "1"


def parse_operations_tag(text: str) -> list[tuple[str, str, str]]:
    """An ``operations`` tag's ``name: elements[, runs]`` entries, separated by ``;`` (the counts
    unparsed): ``elements`` each run of the operation goes over (its range is chosen by them),
    ``runs`` how many times the action runs it (1 when not given).

    Raises ``ValueError`` with what is wrong: an entry without ``:``, an unknown name, an empty
    count.
    """
    entries: list[tuple[str, str, str]] = []
    for part in text.split(";"):
        if not part.strip():
            continue
        name, colon, count = part.partition(":")
        name = name.strip()
        if not colon:
            raise ValueError(f"{part.strip()!r} is not 'name: elements'")
        if name not in OPERATION_NAMES:
            raise ValueError(
                f"{name!r} is not an operation (the operations are {', '.join(OPERATION_NAMES)})"
            )
        elements, runs = _split_runs(count)
        if not elements or not runs:
            raise ValueError(
                f"{name!r} has no count of elements" if not elements else f"{name!r} has no runs"
            )
        entries.append((name, elements, runs))
    if not entries:
        raise ValueError("it names no operation")
    return entries
