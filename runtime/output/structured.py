"""JSON and TOML read with bounded nesting: deep documents are refused, never a crash.

Python's JSON and TOML readers recurse once per nesting level, so a document of a few thousand
nested brackets or inline tables ends in ``RecursionError``; JSON integers of more than 4,300
digits end in ``ValueError``. Every JSON and TOML file uml2perf reads from a user (sidecars,
machine files, measurements, result files) goes through :func:`loads_json` or :func:`loads_toml`,
which turn both into a :class:`StructureError` saying what is wrong, and refuse documents nested
more than :data:`MAX_NESTING` levels (no real file comes near it).
"""

from __future__ import annotations

from typing import Any

from ..errors import SimulationError

__all__ = ["MAX_NESTING", "StructureError", "loads_json", "loads_toml"]

#: Deepest nesting of arrays and tables (objects) accepted in a JSON or TOML input.
MAX_NESTING = 64


class StructureError(SimulationError):
    """A JSON or TOML input that cannot be read as data: not well-formed, too deep, a number too long."""


def loads_json(text: str, what: str) -> Any:
    """Parse JSON text; ``json.JSONDecodeError`` is left to the caller (it has a line and column)."""
    import json

    try:
        data = json.loads(text)
    except RecursionError:
        raise _too_deep(what) from None
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            raise
        raise StructureError(
            f"the {what} holds a number with more digits than uml2perf reads",
            hint="write numbers with at most a few hundred digits (use an exponent: 1e300)",
        ) from None
    _check_depth(data, what)
    return data


def loads_toml(text: str, what: str) -> dict[str, Any]:
    """Parse TOML text; ``tomllib.TOMLDecodeError`` is left to the caller."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise _too_deep(what) from None
    _check_depth(data, what)
    return data


def _too_deep(what: str) -> StructureError:
    return StructureError(
        f"the {what} is nested more than {MAX_NESTING} levels deep",
        hint="this is not a file uml2perf writes or reads; check where it came from",
    )


def _check_depth(data: Any, what: str) -> None:
    """Walk the parsed document without recursion; refuse it past :data:`MAX_NESTING` levels."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_NESTING:
            raise _too_deep(what)
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
