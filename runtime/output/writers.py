"""The one registry of result writers: every way a result leaves uml2perf, by subject and format.

A *subject* is what is written: ``"run"`` (a :class:`~uml2perf_runtime.output.results.Results`),
``"sweep"`` (a sweep's result, registered by ``uml2perf.sweep``) or ``"simulation"`` (a finished,
traced simulation, for the trace file).  A *format* is ``"text"``, ``"json"``, ``"csv"``,
``"trace"``, ``"plot"`` or ``"report"``.  ``uml2perf run``, ``uml2perf sweep``, a generated
module run on its own and the Python API (``Results.write_report``) all go through
:func:`render` (text for standard output) and :func:`write` (a file, through the one atomic
writer :func:`~uml2perf_runtime.output.files.write_output`), so each layout is built in one
place and a file is never left half-written.

A writer's ``render(subject, options)`` (``options`` holds the target ``path`` when a file is
written) returns the file's content: text, bytes, or a function
that writes the file at a temporary path (a plot library wants a file name).  ``check(path)``,
when given, refuses a target before any work is done (a plot without matplotlib).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from .files import write_output

#: What a writer makes of its subject: text, bytes, or a function writing the file at a path.
Content = str | bytes | Callable[[str], None]


class ResultWriter:
    """One format of one subject: how its content is made and how the file is named in messages."""

    __slots__ = ("subject", "format", "what", "render", "check", "description")

    def __init__(
        self,
        subject: str,
        format: str,
        what: str,
        render: Callable[[Any, Mapping[str, Any]], Content],
        *,
        check: Callable[[str | os.PathLike[str]], None] | None = None,
        description: str = "",
    ) -> None:
        self.subject = subject
        self.format = format
        self.what = what
        self.render = render
        self.check = check
        self.description = description

    def __repr__(self) -> str:
        return f"ResultWriter({self.subject!r}, {self.format!r})"


_WRITERS: dict[tuple[str, str], ResultWriter] = {}
#: Modules that register writers when first needed (kept light: the report's code loads on use).
_PROVIDERS: dict[str, str] = {
    "run": "uml2perf_runtime.output.run_writers",
    "simulation": "uml2perf_runtime.output.run_writers",
    "sweep": "uml2perf.report",
}
#: Functions giving the diagram as drawn for a run's results (see :func:`diagram_for`).
_DIAGRAM_SOURCES: list[Callable[[Any], Mapping[str, Any] | None]] = []
#: Modules results may name as knowing their diagram (nothing else is imported on their word).
_DIAGRAM_PROVIDERS = ("uml2perf.report",)


def register(writer: ResultWriter) -> ResultWriter:
    """Add (or replace) the writer of ``writer.subject`` in ``writer.format``."""
    _WRITERS[(writer.subject, writer.format)] = writer
    return writer


def register_provider(subject: str, module: str) -> None:
    """Name the module whose import registers the writers of ``subject`` (imported on first use)."""
    _PROVIDERS[subject] = module


def register_diagram_source(source: Callable[[Any], Mapping[str, Any] | None]) -> None:
    """Add a function that finds the diagram a run's results came from (``uml2perf`` adds one)."""
    if source not in _DIAGRAM_SOURCES:
        _DIAGRAM_SOURCES.append(source)


def diagram_for(results: Any) -> Mapping[str, Any] | None:
    """The diagram as drawn for ``results`` (panels of nodes and flows), or None when none is known.

    A generated module run on its own knows only its elements: then the report shows those.
    Results that name the module knowing their diagram (``model_origin["provider"]``, set by
    ``uml2perf.predict``) have it imported first, which registers its source.
    """
    origin = getattr(results, "model_origin", None)
    provider = origin.get("provider") if isinstance(origin, Mapping) else None
    if isinstance(provider, str) and provider in _DIAGRAM_PROVIDERS:
        import importlib

        importlib.import_module(provider)
    for source in _DIAGRAM_SOURCES:
        found = source(results)
        if found:
            return found
    return None


def writer(subject: str, format: str) -> ResultWriter:
    """The writer of ``subject`` in ``format`` (a ``KeyError`` naming the formats there are)."""
    found = _WRITERS.get((subject, format))
    if found is None and subject in _PROVIDERS:
        import importlib

        importlib.import_module(_PROVIDERS[subject])
        found = _WRITERS.get((subject, format))
    if found is None:
        known = ", ".join(formats(subject)) or "none"
        raise KeyError(f"no {format!r} writer for a {subject} result (formats: {known})")
    return found


def formats(subject: str) -> list[str]:
    """The formats a ``subject`` can be written in."""
    if subject in _PROVIDERS:
        import importlib

        importlib.import_module(_PROVIDERS[subject])
    return sorted(fmt for subj, fmt in _WRITERS if subj == subject)


def check(subject: str, format: str, path: str | os.PathLike[str]) -> None:
    """Refuse a target that cannot be written, before the work that produces it."""
    found = writer(subject, format)
    if found.check is not None:
        found.check(path)


def render(subject: str, format: str, result: Any, **options: Any) -> Content:
    """The content ``result`` has in ``format`` (text for standard output, usually)."""
    return writer(subject, format).render(result, options)


def write(
    subject: str,
    format: str,
    result: Any,
    path: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    **options: Any,
) -> Path:
    """Write ``result`` in ``format`` to ``path`` through the one atomic writer; return the path."""
    found = writer(subject, format)
    content = found.render(result, {**options, "path": path})
    return write_output(path, content, what=found.what, inputs=inputs)


__all__ = [
    "ResultWriter",
    "check",
    "diagram_for",
    "formats",
    "register",
    "register_diagram_source",
    "register_provider",
    "render",
    "write",
    "writer",
]
