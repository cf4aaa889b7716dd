"""Dialects by entry point: the group ``uml2perf.dialects``, like ``uml2perf.handlers`` for handlers.

A dialect is an object satisfying :class:`uml2perf.reader.dialects.base.Dialect`;
a distribution registers it under the group ``uml2perf.dialects`` as
``name = "package.module:OBJECT"``.  The built-in dialects are registered in
``pyproject.toml`` exactly like third-party ones; :data:`BUILTIN` holds the same
entries, in detection order, so that a source checkout whose metadata is not
installed reads files too, and so that reading a file a built-in dialect
recognises never pays for scanning every installed distribution's metadata
(importing :mod:`importlib.metadata` alone costs about 50 ms).

Detection scores every dialect on the document and the highest score reads
it; on a tie the earlier one wins.  Built-ins come first, in the order of
:data:`BUILTIN` (so the generic UML 2 fallback loses every tie), then
third-party dialects sorted by name (listed before the fallback).  Third-party dialects are asked when no
built-in dialect is sure of the file (scores below :data:`SURE`), and whenever
a dialect is asked for by a name that is not built in.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

from ..errors import InputError, Location
from .dialects.base import Dialect
from .dialects.xmi1 import umbrello_score, xmi1_version
from .xml import XmiDocument

GROUP = "uml2perf.dialects"

#: Built-in dialects in detection order, as ``name: "module:OBJECT"`` (the same as in pyproject.toml).
BUILTIN: Mapping[str, str] = {
    "papyrus": "uml2perf.reader.dialects.uml2:PAPYRUS",
    "rsa": "uml2perf.reader.dialects.rsa:DIALECT",
    "modelio": "uml2perf.reader.dialects.modelio:DIALECT",
    "magicdraw": "uml2perf.reader.dialects.magicdraw:DIALECT",
    "ea": "uml2perf.reader.dialects.enterprise_architect:DIALECT",
    "visual-paradigm": "uml2perf.reader.dialects.visual_paradigm:DIALECT",
    "umbrello": "uml2perf.reader.dialects.umbrello:DIALECT",
    "uml14": "uml2perf.reader.dialects.uml14:DIALECT",
    "uml2": "uml2perf.reader.dialects.uml2:GENERIC",
}

#: A built-in score at least this high settles detection without asking plug-ins.
SURE = 50


def _uml14_score(doc: XmiDocument) -> int | None:
    return 0 if xmi1_version(doc) is None else None


#: Built-in dialects whose score (or whose score of 0) a light test tells without importing the
#: dialect's module (the UML 1.x and Umbrello readers are the largest); ``None``: ask the dialect.
_PRESCORES: Mapping[str, Callable[[XmiDocument], int | None]] = {
    "umbrello": umbrello_score,
    "uml14": _uml14_score,
}

_loaded: dict[str, Dialect] = {}


def _load(name: str, target: str) -> Dialect:
    """The dialect object ``target`` (``module:OBJECT``) names; an unusable one is an :class:`InputError`."""
    found = _loaded.get(target)
    if found is not None:
        return found
    module_name, _, attribute = target.partition(":")
    try:
        obj: object = importlib.import_module(module_name)
        for part in attribute.split("."):
            obj = getattr(obj, part)
    except Exception as exc:  # noqa: BLE001 - any failure of a plug-in becomes one clear message
        raise InputError(
            f"cannot load dialect {name!r} ({target}): {type(exc).__name__}: {exc}",
            hint="check that the package providing it is installed in this Python environment",
        ) from exc
    if not isinstance(obj, Dialect):
        raise InputError(
            f"dialect {name!r} ({target}) has no name, description, detect(doc) and read(doc)",
            hint="a dialect must satisfy uml2perf.reader.dialects.base.Dialect",
        )
    _loaded[target] = obj
    return obj


def builtin_dialects() -> list[Dialect]:
    """The built-in dialects, in detection order."""
    return [_load(name, target) for name, target in BUILTIN.items()]


def plugin_targets() -> dict[str, str]:
    """Third-party dialects registered under :data:`GROUP`, ``name -> module:OBJECT``, sorted by name."""
    from importlib.metadata import entry_points  # here: reading installed metadata costs tens of ms

    try:
        points = sorted(entry_points(group=GROUP), key=lambda ep: (ep.name, ep.value))
    except Exception:  # pragma: no cover - broken metadata of an unrelated distribution
        points = []
    found: dict[str, str] = {}
    for point in points:
        if point.name not in BUILTIN and point.value not in BUILTIN.values():
            found.setdefault(point.name, point.value)
    return found


def all_dialects() -> list[Dialect]:
    """Every dialect: the built-ins, the registered third-party ones, the generic UML 2 fallback last."""
    builtins = builtin_dialects()
    plugins = [_load(name, target) for name, target in plugin_targets().items()]
    return builtins[:-1] + plugins + builtins[-1:]


def by_name(name: str) -> Dialect | None:
    """The dialect called ``name`` (case-insensitive), built-in or registered, or ``None``."""
    wanted = name.strip().lower()
    for dialect in builtin_dialects():
        if dialect.name == wanted:
            return dialect
    for entry, target in plugin_targets().items():
        if entry.lower() == wanted:
            return _load(entry, target)
    return None


def best_dialect(doc: XmiDocument) -> Dialect | None:
    """The dialect that scores highest on ``doc`` (see the module text for ties and plug-ins)."""
    best: Dialect | None = None
    best_score = 0
    for name, target in BUILTIN.items():
        prescore = _PRESCORES.get(name)
        score = prescore(doc) if prescore is not None else None
        if score is not None and score <= best_score:
            continue  # it cannot win: its module is not even imported
        dialect = _load(name, target)
        if score is None:
            score = dialect.detect(doc)
        if score > best_score:
            best, best_score = dialect, score
    if best_score >= SURE:
        return best
    for name, target in plugin_targets().items():
        dialect = _load(name, target)
        score = dialect.detect(doc)
        if score > best_score:
            best, best_score = dialect, score
    return best


def unknown_dialect_error(name: str, where: Location) -> InputError:
    """The error for ``--dialect NAME`` naming no dialect."""
    return InputError(
        f"unknown dialect {name!r}",
        where,
        hint="known dialects: " + ", ".join(d.name for d in all_dialects()),
    )


__all__ = ["BUILTIN", "GROUP", "SURE", "all_dialects", "best_dialect", "builtin_dialects", "by_name"]
