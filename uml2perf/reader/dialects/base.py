"""The dialect interface every UML tool's reader implements.

A dialect knows one family of exports (Eclipse UML2/Papyrus, MagicDraw,
Enterprise Architect, UML 1.x, Umbrello...).  Detection scores every
registered dialect on the parsed document and the highest score reads it, so
that a tool's quirks live in its own module instead of special cases spread
through the reader.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ...model import Model
from ..xml import XmiDocument


@runtime_checkable
class Dialect(Protocol):
    """Reads one family of XMI exports into the neutral :class:`~uml2perf.model.Model`."""

    #: short identifier shown to users (``papyrus``, ``magicdraw``, ``ea``, ``uml14``...)
    name: str
    #: one line for ``uml2perf dialects`` / error messages
    description: str

    def detect(self, doc: XmiDocument) -> int:
        """How sure this dialect is that it can read ``doc``: 0 (no) to 100 (certain)."""
        ...

    def read(self, doc: XmiDocument) -> Model:
        """Build the neutral model.  Raise :class:`~uml2perf.errors.ModelError` for broken input.

        Performance annotations are left as raw :class:`StereotypeApplication` records
        (``Node.perf`` unset); :mod:`uml2perf.profile` interprets them afterwards.
        """
        ...
