"""IBM Rational Software Architect (``.emx``): Eclipse UML2 2.1 with inline GMF diagrams.

RSA writes plain Eclipse UML2, plus ``eAnnotations source="uml2.diagrams"``
holding GMF ``notation:Diagram`` trees inside the model.  The shared reader
already skips annotations and reports the diagrams, so this dialect only adds
detection: RSA leaves its ``com.ibm.xtools`` signature in processing
instructions at the top of the file (dropped by the parser, visible in the
bytes) and declares the ``http://www.ibm.com/xtools`` notation namespaces.
"""

from __future__ import annotations

from ..xml import XmiDocument
from .uml2 import PapyrusDialect, head_contains, is_eclipse_uml2


class RsaDialect(PapyrusDialect):
    name = "rsa"
    description = "IBM Rational Software Architect (.emx; Eclipse UML2 2.1 with GMF diagrams)"

    def detect(self, doc: XmiDocument) -> int:
        if not is_eclipse_uml2(doc):
            return 0
        if head_contains(doc, b"com.ibm.xtools") or any("ibm.com/xtools" in ns for ns in doc.namespaces):
            return 95
        return 0


DIALECT = RsaDialect()
