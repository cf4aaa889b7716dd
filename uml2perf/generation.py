"""Run a content handler over a model, and write its output atomically.

:func:`generate` is the one place where the pieces of Fig. 3.4 meet: it
recovers the structured statement tree, picks the navigator the handler asks
for, lets a :class:`~uml2perf.navigation.traversal.Traverser` drive the handler
and collects every diagnostic (reader, recovery, handler) as data.
:func:`write_output` never leaves a half-written file behind.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import Diagnostic, GenerationError, InputError, Location, ModelError, Severity

if TYPE_CHECKING:  # pragma: no cover
    import jinja2

    from .handlers.base import ContentHandler
    from .model import Activity, Model


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
    options: Mapping[str, Any] | None = None,
) -> GeneratedOutput:
    """Generate one representation of ``model`` with ``handler`` (a name, ``pkg.mod:Class``, class or instance).

    ``activity`` names the main activity when the model cannot tell;
    ``options["require_main"]`` makes a missing main an error (``run`` needs one).
    """
    from .handlers.python_limits import NestedTooDeeply
    from .handlers.registry import create_handler

    opts = dict(options or {})
    main, notes = _main_activity(model, activity, bool(opts.get("require_main")))
    try:
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
        return _generate(model, create_handler(handler, opts), main, (*notes, flat_note), opts, flat=True)


def _generate(
    model: Model, instance: Any, main: Any, notes: Any, opts: dict[str, Any], *, flat: bool
) -> GeneratedOutput:
    """One pass of a handler over the model (see :func:`generate`)."""
    from .handlers.base import GenerationJob
    from .navigation.structure import recover_model
    from .navigation.traversal import GraphNavigator, StructureNavigator, Traverser

    handler = getattr(instance, "name", type(instance).__name__)
    wants = getattr(instance, "navigator", "structure")
    needs_tree = wants == "structure" or getattr(instance, "needs_structure", False)
    recovered = recover_model(model, main=main, flat=flat) if needs_tree else None
    job = GenerationJob(model, recovered, main, opts)
    instance.start(job)
    if wants == "structure":
        assert recovered is not None
        navigator: Any = StructureNavigator(recovered)
    elif wants == "graph":
        navigator = GraphNavigator(model)
    else:
        raise GenerationError(
            f"handler {getattr(instance, 'name', handler)!r} asks for an unknown navigator {wants!r}",
            hint="use navigator = 'structure' or 'graph'",
        )
    Traverser(navigator, instance).run()
    text = instance.finish()
    diagnostics = (
        *model.diagnostics,
        *notes,
        *(recovered.diagnostics if recovered is not None else ()),
        *getattr(instance, "diagnostics", ()),
    )
    namer = getattr(instance, "output_name", None)
    filename = namer(model) if callable(namer) else (Path(model.source).stem or "model") + ".txt"
    return GeneratedOutput(text, filename, getattr(instance, "name", str(handler)), tuple(diagnostics))


# ---------------------------------------------------------------------------- templates


#: Options of the one Jinja environment (they shape the compiled templates, so they key the cache too).
_JINJA_OPTIONS: dict[str, Any] = {
    "trim_blocks": True,
    "lstrip_blocks": True,
    "keep_trailing_newline": True,
    "autoescape": False,
}


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The one Jinja environment: templates from the installed ``uml2perf_templates`` package.

    Compiling the templates costs tens of milliseconds per command; their
    compiled code is kept in uml2perf's private cache (:mod:`uml2perf.cache`).
    """
    import jinja2
    import uml2perf_templates

    folder = Path(uml2perf_templates.__file__).resolve().parent
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,
        bytecode_cache=_template_cache(),
        **_JINJA_OPTIONS,
    )


def _template_cache() -> jinja2.BytecodeCache | None:
    """The templates' compiled code, kept in uml2perf's verified cache (:mod:`uml2perf.cache`).

    Jinja's own file cache unpickles what it finds; this one stores only the
    marshalled code object, under a key made of the template's name, its
    source checksum, Jinja's version and the environment's options, and
    loads nothing whose digest does not match.
    """
    import jinja2

    from . import __version__
    from .cache import key_of, load_code, open_cache

    cache = open_cache()
    if cache is None:
        return None
    fingerprint = key_of(
        jinja2.__version__, __version__, repr(sorted(_JINJA_OPTIONS.items())), "StrictUndefined"
    )

    class VerifiedTemplateCache(jinja2.BytecodeCache):
        """Compiled templates from the verified cache; anything wrong means compiling the template."""

        def load_bytecode(self, bucket: Any) -> None:
            code = load_code(cache.get("jinja", key_of(fingerprint, bucket.key, bucket.checksum)))
            if code is None:
                bucket.reset()
            else:
                bucket.code = code

        def dump_bytecode(self, bucket: Any) -> None:
            if bucket.code is not None:
                cache.put(
                    "jinja", key_of(fingerprint, bucket.key, bucket.checksum), marshal.dumps(bucket.code)
                )

    return VerifiedTemplateCache()


def render(template: str, context: Mapping[str, Any]) -> str:
    """Render one template; a template bug becomes a :class:`GenerationError`."""
    import jinja2

    try:
        return environment().get_template(template).render(**context)
    except jinja2.TemplateError as exc:
        raise GenerationError(f"template {template} failed: {exc}", hint="this is a bug in uml2perf") from exc


# ---------------------------------------------------------------------------- output


def write_output(
    text: str, path: str | os.PathLike[str], *, inputs: Iterable[str | os.PathLike[str] | None] = ()
) -> Path:
    """Write ``text`` to ``path`` with the project's one safe writer (:mod:`uml2perf_runtime.files`).

    Atomic for regular files, written into devices and FIFOs, never over one
    of ``inputs``; a problem becomes an :class:`InputError` naming the path.
    """
    from uml2perf_runtime.files import OutputError
    from uml2perf_runtime.files import write_output as write_safely

    try:
        return write_safely(path, text, what="output", inputs=inputs)
    except OutputError as exc:
        raise InputError(exc.message, Location(file=str(path)), hint=exc.hint) from None
