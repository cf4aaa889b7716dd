"""MagicDraw / Cameo: OMG XMI 2.1-2.5.1 (``http://www.omg.org/spec/UML/2011xxxx|2013xxxx``).

MagicDraw writes standard OMG XMI with a few habits the shared reader already
copes with: the root may lack ``xmi:version`` (only the namespace tells it),
references are often ``<incoming xmi:idref=.../>`` children, opaque bodies may
be attributes, diagrams live in ``xmi:Extension`` (``mdElement``,
``diagramRepresentation``) and are skipped, and MagicDraw's own stereotypes
(``MagicDraw_Profile:DiagramInfo``) point at those diagrams.  Old versions
type some flows with the abstract ``uml:ActivityEdge``; they are read as
control flows unless they join two object nodes.
"""

from __future__ import annotations

from lxml import etree

from ..xml import XmiDocument
from .uml2 import Uml2Dialect, Uml2Reader, exporter_info, is_omg_uml2


class MagicDrawReader(Uml2Reader):
    ELEMENT_EDGE_KINDS = frozenset({"ActivityEdge"})

    def edge_kind(self, element: etree._Element, metaclass: str) -> str:
        if metaclass == "ActivityEdge":
            ends = [self.index.get(self.ref(element, f) or "") for f in ("source", "target")]
            types = [self.metaclass(e) if e is not None else "" for e in ends]
            if all(
                t.endswith("Pin")
                or t.endswith("Node")
                and t.startswith(("ActivityParameter", "CentralBuffer", "DataStore"))
                for t in types
            ):
                return "object"
        return super().edge_kind(element, metaclass)


class MagicDrawDialect(Uml2Dialect):
    name = "magicdraw"
    description = "MagicDraw / Cameo (OMG XMI 2.1-2.5.1, .mdxml/.xmi)"
    reader_class = MagicDrawReader

    def detect(self, doc: XmiDocument) -> int:
        if not is_omg_uml2(doc):
            return 0
        exporter, extender = exporter_info(doc)
        signature = f"{exporter} {extender}".lower()
        if "magicdraw" in signature or "cameo" in signature or "no magic" in signature:
            return 95
        if any("magicdraw.com" in ns for ns in doc.namespaces):
            return 90
        return 0


DIALECT = MagicDrawDialect()
