"""Run a content handler over a model, and write its output atomically.

:func:`generate` is the one place where the pipeline meets: it recovers the
control flow when the handler ``needs`` it (:mod:`uml2perf.controlflow`), lets
the :class:`~uml2perf.navigation.traversal.Traverser` walk what the handler
needs, and collects every diagnostic (reader, recovery, handler) as data.
:func:`write_output` never leaves a half-written file behind.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import Diagnostic, InputError, Location, ModelError, Severity
from .handlers.templates import _JINJA_OPTIONS, _template_cache, environment, render

if TYPE_CHECKING:  # pragma: no cover
    from .handlers.base import ContentHandler, OptionValue
    from .model import Activity, Model

__all__ = [
    "_JINJA_OPTIONS",
    "GeneratedOutput",
    "_template_cache",
    "environment",
    "generate",
    "render",
    "write_output",
]


@dataclass(frozen=True, slots=True)
class GeneratedOutput:
    """What a handler produced: the text, a suggested file name and the diagnostics."""

    text: str
    filename: str
    handler: str
    diagnostics: tuple[Diagnostic, ...] = ()


def _main_activity(
    model: Model, activity: str | None, require: bool
) -> tuple[Activity | None, list[Diagnostic]]:
    from .profile import main_activity

    if not model.activities:
        if require or activity is not None:
            main_activity(model, activity)  # raises the "no activity" message
        return None, []
    try:
        return main_activity(model, activity), []
    except ModelError as exc:
        if require or activity is not None:
            raise
        note = Diagnostic(
            Severity.INFO,
            f"no main activity: {exc.message}; every activity is generated, MODEL.main stays None",
            exc.location,
            exc.hint,
            "no-main",
        )
        return None, [note]


def generate(
    model: Model,
    handler: str | type[ContentHandler] | ContentHandler = "python",
    *,
    activity: str | None = None,
    options: Mapping[str, OptionValue] | None = None,
) -> GeneratedOutput:
    """Generate one representation of ``model`` with ``handler``.

    ``handler`` is a registered name, ``pkg.mod:Class``, a handler class or an instance.

    ``activity`` names the main activity when the model cannot tell;
    ``options["require_main"]`` makes a missing main an error (``run`` needs one).
    """
    from uml2perf_runtime.engine.collector import collector_paused

    from .handlers.python.limits import NestedTooDeeply
    from .handlers.registry import create_handler

    opts = dict(options or {})
    main, notes = _main_activity(model, activity, bool(opts.get("require_main")))
    try:
        with collector_paused():  # generation builds many small objects and no cycle worth collecting
            return _generate(model, create_handler(handler, opts), main, notes, opts, flat=False)
    except NestedTooDeeply as exc:
        if not isinstance(handler, (str, type)):
            raise  # a handler instance cannot be run twice
        flat_note = Diagnostic(
            Severity.WARNING,
            f"{exc.message}: generated each activity as a flat state machine instead (same behaviour, "
            "less readable code)",
            exc.location,
            "split deeply nested parts into activities of their own for structured code",
        )
        with collector_paused():
            return _generate(model, create_handler(handler, opts), main, [*notes, flat_note], opts, flat=True)


def _generate(
    model: Model,
    handler: ContentHandler,
    main: Activity | None,
    notes: list[Diagnostic],
    opts: dict[str, OptionValue],
    *,
    flat: bool,
    tokens: bool = False,
) -> GeneratedOutput:
    """One pass of a handler over the model (see :func:`generate`); ``tokens``: token-flow form throughout."""
    from .controlflow import recover_model
    from .handlers.base import GenerationJob
    from .navigation.traversal import GraphNavigator, Navigator, StructureNavigator, Traverser

    recovered = (
        recover_model(model, main=main, flat=flat, tokens=tokens) if handler.needs == "controlflow" else None
    )
    handler.start(GenerationJob(model, recovered, main, opts))
    navigator: Navigator = StructureNavigator(recovered) if recovered is not None else GraphNavigator(model)
    Traverser(navigator, handler).run()
    text = handler.finish()
    diagnostics = (
        *model.diagnostics,
        *notes,
        *(recovered.diagnostics if recovered is not None else ()),
        *handler.diagnostics,
    )
    return GeneratedOutput(text, handler.output_name(model), handler.name, tuple(diagnostics))


# ---------------------------------------------------------------------------- output


def write_output(
    text: str, path: str | os.PathLike[str], *, inputs: Iterable[str | os.PathLike[str] | None] = ()
) -> Path:
    """Write ``text`` to ``path`` with the project's one safe writer (:mod:`uml2perf_runtime.output.files`).

    Atomic for regular files, written into devices and FIFOs, never over one
    of ``inputs``; a problem becomes an :class:`InputError` naming the path.
    """
    from uml2perf_runtime.output.files import OutputError
    from uml2perf_runtime.output.files import write_output as write_safely

    try:
        return write_safely(path, text, what="output", inputs=inputs)
    except OutputError as exc:
        raise InputError(exc.message, Location(file=str(path)), hint=exc.hint) from None
