"""Modelio XMI export: Eclipse UML2 3.0 with an ``eAnnotations source="Objing"`` signature.

Modelio exports through EMF, so the shared Eclipse UML2 rules read it; the
``Objing`` annotation (Modelio's internal name) carries the exporter version
and is skipped like every other annotation.
"""

from __future__ import annotations

from ..xml import XmiDocument
from .uml2 import PapyrusDialect, head_contains, is_eclipse_uml2


class ModelioDialect(PapyrusDialect):
    name = "modelio"
    description = "Modelio (Eclipse UML2 3.0 XMI with Objing annotations)"

    def detect(self, doc: XmiDocument) -> int:
        if not is_eclipse_uml2(doc):
            return 0
        if head_contains(doc, b'source="Objing"', limit=16384) or head_contains(doc, b"modelio", limit=4096):
            return 95
        return 0


DIALECT = ModelioDialect()
