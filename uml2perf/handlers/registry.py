"""Finding content handlers: entry points of the group ``uml2perf.handlers``, or ``pkg.mod:Class``.

Discovery follows three steps: find every entry point (sorted by name, so the
list and any tie are the same on every machine), load the one asked for with
any import problem wrapped into a clear :class:`~uml2perf.errors.UsageError`,
then check it is a content handler.  The built-in handlers are registered in
``pyproject.toml`` exactly like third-party ones; a table of the same three
keeps them usable from a source checkout whose metadata is not installed, and
their names always mean them: asking for ``python`` loads the built-in
handler without scanning every installed distribution's metadata.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from .base import ContentHandler, OptionValue

GROUP = "uml2perf.handlers"

BUILTIN: Mapping[str, str] = {
    "dot": "uml2perf.handlers.dot_handler:DotHandler",
    "json": "uml2perf.handlers.json_handler:JsonHandler",
    "python": "uml2perf.handlers.python.handler:PythonHandler",
}


@dataclass(frozen=True, slots=True)
class HandlerInfo:
    """One available handler: its name, where it comes from, and the ``module:Class`` it loads."""

    name: str
    target: str
    origin: str  # distribution name, or "builtin"

    @property
    def description(self) -> str:
        """The handler's one-line description (loads it; a broken one says why)."""
        try:
            cls = _import_target(self.target, self.name)
        except UsageError as exc:
            return f"(cannot be loaded: {exc.message})"
        return (
            str(getattr(cls, "description", "") or getattr(cls, "__doc__", "") or "").strip().split("\n")[0]
        )


def available_handlers() -> tuple[HandlerInfo, ...]:
    """Every registered handler, sorted by name (the first registration of a name wins)."""
    return tuple(handler_table().values())


def handler_table() -> dict[str, HandlerInfo]:
    """Registered handlers by name, sorted by name."""
    from importlib.metadata import entry_points  # here: scanning installed metadata costs tens of ms

    found: dict[str, HandlerInfo] = {}
    try:
        points = sorted(entry_points(group=GROUP), key=lambda ep: (ep.name, ep.value))
    except Exception:  # pragma: no cover - broken metadata of an unrelated distribution
        points = []
    for point in points:
        dist = getattr(point, "dist", None)
        origin = dist.name if dist is not None else "unknown"
        found.setdefault(point.name, HandlerInfo(point.name, point.value, origin))
    for name, target in BUILTIN.items():
        found.setdefault(name, HandlerInfo(name, target, "builtin"))
    return dict(sorted(found.items()))


def _import_target(target: str, what: str) -> Any:
    module_name, sep, attribute = target.partition(":")
    if not sep or not module_name or not attribute:
        raise UsageError(
            f"handler {what!r} must be written as package.module:Class",
            hint="for example --handler mypkg.handlers:CsvHandler",
        )
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any import failure becomes one clear message
        raise UsageError(
            f"cannot load handler {what!r}: importing {module_name} failed: {type(exc).__name__}: {exc}",
            hint="check that the package is installed in this Python environment",
        ) from exc
    obj: Any = module
    for part in attribute.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise UsageError(
                f"cannot load handler {what!r}: {module_name} has no {attribute}",
                hint="check the class name after the ':'",
            )
    return obj


def load_handler(spec: str | type[ContentHandler]) -> type[ContentHandler]:
    """The handler class for a registered name or a ``package.module:Class`` reference."""
    if isinstance(spec, type):
        cls = spec
        what = spec.__name__
    else:
        what = spec
        if spec in BUILTIN:
            # a built-in name always means the built-in handler, found without scanning every
            # installed distribution's entry points (most of the start-up of a small conversion)
            return load_handler(_import_target(BUILTIN[spec], spec))
        handlers = handler_table()
        if spec in handlers:
            cls = _import_target(handlers[spec].target, spec)
        elif ":" in spec:
            cls = _import_target(spec, spec)
        else:
            raise UsageError(
                f"no content handler named {spec!r}",
                hint="available handlers: " + ", ".join(handlers) + " (or give package.module:Class)",
            )
    if not isinstance(cls, type) or not all(
        callable(getattr(cls, method, None)) for method in ("start", "visit", "leave", "finish")
    ):
        raise UsageError(
            f"handler {what!r} is not a content handler class",
            hint="subclass uml2perf.handlers.base.ContentHandler",
        )
    if getattr(cls, "needs", None) not in ("model", "controlflow"):
        raise UsageError(
            f"handler {what!r} needs {getattr(cls, 'needs', None)!r}, which uml2perf does not provide",
            hint='set needs = "model" (the model as drawn)'
            ' or needs = "controlflow" (the recovered statements)',
        )
    return cls


def create_handler(
    spec: str | type[ContentHandler] | ContentHandler, options: Mapping[str, OptionValue] | None = None
) -> ContentHandler:
    """A ready handler instance (an instance passed in is used as it is).

    The options go to a constructor that takes an argument; a handler class
    whose constructor takes none is made without them.
    """
    if isinstance(spec, str) or isinstance(spec, type):
        cls = load_handler(spec)
    else:
        return spec
    if _takes_options(cls):
        return cls(options)
    return cls()


def _takes_options(cls: type[ContentHandler]) -> bool:
    """True when ``cls(options)`` is a valid call."""
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):  # pragma: no cover - a constructor Python cannot describe
        return True
    try:
        signature.bind(None)
    except TypeError:
        return False
    return True
