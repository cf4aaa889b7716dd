"""Readers for the XMI dialects of UML tools.

``read_model`` is the one call the rest of uml2perf makes: hardened loading
(:mod:`uml2perf.reader.xml`), dialect detection over the dialects registered
under the entry-point group ``uml2perf.dialects`` (:mod:`uml2perf.reader.registry`),
reading into the neutral model, and interpretation of the performance profile
(:func:`uml2perf.profile.apply_profile`).
"""

from __future__ import annotations

import os

from ..errors import InputError, Location
from ..model import Model
from .dialects.base import Dialect
from .registry import all_dialects, best_dialect, by_name, unknown_dialect_error
from .xmi import exporter_info
from .xml import XmiDocument, load_bytes, load_file, local_name


def detect_dialect(doc: XmiDocument) -> Dialect:
    """The registered dialect that scores highest on ``doc``; :class:`InputError` when none fits."""
    best = best_dialect(doc)
    if best is None:
        raise InputError(
            f"not a UML export uml2perf can read: {_describe_document(doc)}",
            Location(file=doc.display_name, line=doc.root.sourceline),
            hint="export the model as XMI (UML 2 or UML 1.4) from the UML tool; supported: "
            + ", ".join(d.name for d in all_dialects()),
        )
    return best


def _describe_document(doc: XmiDocument) -> str:
    """What the file looks like, for the message when no dialect fits."""
    root = doc.root
    text = f"root element <{local_name(root.tag)}>"
    exporter, extender = exporter_info(doc)
    if exporter or extender:
        text += f", exported by {exporter or extender!r}"
    namespaces = sorted(doc.namespaces)
    if namespaces:
        shown = ", ".join(namespaces[:4]) + (", ..." if len(namespaces) > 4 else "")
        text += f", namespaces {shown}"
    else:
        text += ", no XML namespaces (XMI declares at least the xmi namespace)"
    return text


def read_document(
    doc: XmiDocument,
    *,
    sidecar: str | os.PathLike[str] | None = None,
    dialect: str | None = None,
    require_activity: bool = True,
    default_cost: str | None = None,
) -> Model:
    """Read a loaded document: detect (or take) the dialect, read, apply the profile.

    ``default_cost`` (an expression, ``--default-cost``) is the cost of every action without
    one, as a sidecar's ``[defaults] cost`` (which it replaces).
    """
    from ..profile import apply_profile, no_activity_error

    if dialect is not None:
        chosen = by_name(dialect)
        if chosen is None:
            raise unknown_dialect_error(dialect, Location(file=doc.display_name))
    else:
        chosen = detect_dialect(doc)
    model = chosen.read(doc)
    if require_activity and not model.activities:
        raise no_activity_error(model)
    # nobody else holds the model just read
    return apply_profile(model, sidecar, fresh=True, default_cost=default_cost)


def read_model(
    path: str | os.PathLike[str],
    *,
    sidecar: str | os.PathLike[str] | None = None,
    dialect: str | None = None,
    require_activity: bool = True,
    default_cost: str | None = None,
) -> Model:
    """Read an XMI file into the neutral model with the performance profile applied.

    ``sidecar`` is an optional TOML file of costs and stereotypes (see
    :mod:`uml2perf.profile`); ``dialect`` forces a dialect by name instead of
    detecting it.  A file without any activity raises :class:`ModelError`
    naming what the file holds, unless ``require_activity`` is false; ``default_cost``:
    see :func:`read_document`.
    """
    return read_document(
        load_file(path),
        sidecar=sidecar,
        dialect=dialect,
        require_activity=require_activity,
        default_cost=default_cost,
    )


def read_bytes(
    data: bytes,
    path: str | os.PathLike[str] = "<input>",
    *,
    sidecar: str | os.PathLike[str] | None = None,
    dialect: str | None = None,
    require_activity: bool = True,
) -> Model:
    """Like :func:`read_model` for bytes already in memory; ``path`` names them in messages."""
    return read_document(
        load_bytes(data, str(path)), sidecar=sidecar, dialect=dialect, require_activity=require_activity
    )


def __getattr__(name: str) -> list[Dialect]:
    """``DIALECTS``: every dialect, built-in and registered, in detection order (looked up when asked)."""
    if name == "DIALECTS":
        return all_dialects()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DIALECTS",
    "all_dialects",
    "by_name",
    "detect_dialect",
    "read_bytes",
    "read_document",
    "read_model",
]
