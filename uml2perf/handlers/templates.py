"""The one Jinja environment: the templates every handler renders its output with.

Templates come from the installed ``uml2perf_templates`` package (the
``templates/`` folder); their compiled code is kept in uml2perf's private,
verified cache (:mod:`uml2perf.cache`).
"""

from __future__ import annotations

import marshal
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import GenerationError

if TYPE_CHECKING:  # pragma: no cover
    import jinja2

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
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,
        bytecode_cache=_template_cache(),
        **_JINJA_OPTIONS,
    )
    # Rows are numbered with enumerate: Jinja's ``loop`` object costs more per row than the row's own text.
    env.globals["enumerate"] = enumerate
    return env


def _template_cache() -> jinja2.BytecodeCache | None:
    """The templates' compiled code, kept in uml2perf's verified cache (:mod:`uml2perf.cache`).

    Jinja's own file cache unpickles what it finds; this one stores only the
    marshalled code object, under a key made of the template's name, its
    source checksum, Jinja's version and the environment's options, and
    loads nothing whose digest does not match.
    """
    import jinja2

    from .. import __version__
    from ..cache import key_of, load_code, open_cache

    cache = open_cache()
    if cache is None:
        return None
    fingerprint = key_of(
        jinja2.__version__, __version__, repr(sorted(_JINJA_OPTIONS.items())), "StrictUndefined"
    )

    store = cache  # the narrowed type, for the methods below

    class VerifiedTemplateCache(jinja2.BytecodeCache):
        """Compiled templates from the verified cache; anything wrong means compiling the template."""

        def load_bytecode(self, bucket: Any) -> None:
            code = load_code(store.get("jinja", key_of(fingerprint, bucket.key, bucket.checksum)))
            if code is None:
                bucket.reset()
            else:
                bucket.code = code

        def dump_bytecode(self, bucket: Any) -> None:
            if bucket.code is not None:
                store.put(
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
