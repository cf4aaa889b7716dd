"""One module per family of UML tool exports, and the registry that detection scores.

``DIALECTS`` is a plain ordered list: to support another tool, write a module
with an object satisfying :class:`~uml2perf.reader.dialects.base.Dialect` and
append it here.  Detection picks the highest score; on a tie the earlier entry
wins, so the generic UML 2 fallback stays last.
"""

from __future__ import annotations

from . import enterprise_architect, magicdraw, modelio, rsa, umbrello, uml2, uml14, visual_paradigm
from .base import Dialect

DIALECTS: list[Dialect] = [
    uml2.PAPYRUS,
    rsa.DIALECT,
    modelio.DIALECT,
    magicdraw.DIALECT,
    enterprise_architect.DIALECT,
    visual_paradigm.DIALECT,
    umbrello.DIALECT,
    uml14.DIALECT,
    uml2.GENERIC,
]


def by_name(name: str) -> Dialect | None:
    """The registered dialect called ``name`` (case-insensitive), or ``None``."""
    wanted = name.strip().lower()
    for dialect in DIALECTS:
        if dialect.name == wanted:
            return dialect
    return None


__all__ = ["DIALECTS", "Dialect", "by_name"]
