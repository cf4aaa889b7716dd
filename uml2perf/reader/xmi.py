"""XMI access for UML 2 documents: namespaces, metaclasses, references, names, value specifications.

Eclipse UML2 (Papyrus, RSA, Modelio), MagicDraw/Cameo, Enterprise Architect
and Visual Paradigm all serialise the same UML 2 metamodel.
:class:`XmiAccess` holds what reading any of them needs from the XML: the
document's namespaced keys, the id index (built on first use), the metaclass
of an element, the ids it refers to, its name, the text of a
ValueSpecification, and the diagnostics collected on the way.  It knows
nothing of activities or stereotypes (:mod:`uml2perf.reader.activities`,
:mod:`uml2perf.reader.stereotypes`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lxml import etree

from ..errors import Diagnostic, Location, Severity
from .xml import XSI_NAMESPACE, XmiDocument

_ECLIPSE_UML = re.compile(r"^https?://www\.eclipse\.org/uml2/(\d+)\.\d+\.\d+/UML$")
_OMG_UML = re.compile(r"^https?://www\.omg\.org/spec/UML/(20\d{6})$")
_SCHEMA_OMG_UML = re.compile(r"^https?://schema\.omg\.org/spec/UML/(2\.[\d.]+)$")


def uml2_namespace(doc: XmiDocument) -> str | None:
    """The UML 2 metamodel namespace the file declares, or ``None`` (UML 1.x, not UML at all)."""
    for uri in sorted(doc.namespaces):
        if _ECLIPSE_UML.match(uri) or _OMG_UML.match(uri) or _SCHEMA_OMG_UML.match(uri):
            return uri
    return None


def is_eclipse_uml2(doc: XmiDocument) -> bool:
    """True when the file is an Eclipse UML2 (EMF) serialisation."""
    return any(_ECLIPSE_UML.match(uri) for uri in doc.namespaces)


def is_omg_uml2(doc: XmiDocument) -> bool:
    """True when the file uses an OMG UML 2 namespace (MagicDraw, EA, VP, Umbrello 2...)."""
    return any(_OMG_UML.match(uri) or _SCHEMA_OMG_UML.match(uri) for uri in doc.namespaces)


def exporter_info(doc: XmiDocument) -> tuple[str, str]:
    """``(exporter, extender)`` from ``xmi:Documentation`` and the root ``xmi:Extension``
    (:attr:`XmiDocument.exporter_info`, found once per document).
    """
    return doc.exporter_info


def head_contains(doc: XmiDocument, needle: bytes, limit: int = 8192) -> bool:
    """Whether the first ``limit`` bytes of the raw file contain ``needle``.

    Processing instructions and comments are dropped by the hardened parser,
    so tool signatures written there (RSA) are only visible in the bytes.
    """
    return needle in doc.data[:limit]


#: Metaclass of an element written without ``xmi:type``, by its feature name.
IMPLICIT_TYPES = {
    "structuredNode": "StructuredActivityNode",
    "clause": "Clause",
    "ownedComment": "Comment",
    "ownedAttribute": "Property",
    "ownedParameter": "Parameter",
    "variable": "Variable",
    "profileApplication": "ProfileApplication",
}
#: Languages whose OpaqueBehavior bodies can be cost-function expressions.
FUNCTION_LANGUAGES = frozenset({"", "python", "uml2perf", "c", "c++", "cpp", "expression", "java"})
#: Languages whose OpaqueAction bodies are code fragments.
CODE_LANGUAGES = frozenset({"python", "uml2perf"})
#: Languages whose bodies become code fragments when they are plain assignments.
ASSIGNMENT_LANGUAGES = frozenset({"", "c", "c++", "cpp"})
_SKIPPED_WRAPPERS = frozenset({"Extension", "eAnnotations", "XMI.extension"})


class XmiAccess:
    """Access to one UML 2 XMI document; the base of every UML 2 reader."""

    def __init__(self, doc: XmiDocument):
        self.doc = doc
        self.file = doc.display_name
        self.diagnostics: list[Diagnostic] = []
        xmi_ns = doc.xmi_namespace or "http://www.omg.org/XMI"
        self.k_id = f"{{{xmi_ns}}}id"
        self.k_idref = f"{{{xmi_ns}}}idref"
        self.k_type = f"{{{xmi_ns}}}type"
        self.k_xsi_type = f"{{{XSI_NAMESPACE}}}type"
        self.xmi_ns = xmi_ns
        self.uml_ns = uml2_namespace(doc)
        self._index: dict[str, etree._Element] | None = None
        self._roots: list[etree._Element] | None = None

    @property
    def index(self) -> dict[str, etree._Element]:
        """xmi:id -> element over the whole file, built on first use (one C-level walk).

        Plain files never need it: nodes, pins and edges are resolved from the
        activity being read.  Stereotypes on other elements, tool quirks and
        error messages build it.
        """
        if self._index is None:
            k_id = self.k_id
            index: dict[str, etree._Element] = {}
            for element in self.doc.root.iter():
                ident = element.get(k_id)
                if ident is not None and ident not in index:
                    index[ident] = element
            self._index = index
        return self._index

    def metaclass(self, element: etree._Element) -> str:
        """``xmi:type``/``xsi:type`` without prefix, else the implicit type of the feature, else the tag."""
        value = element.get(self.k_type) or element.get(self.k_xsi_type)
        if value:
            return value.rpartition(":")[2]
        tag = element.tag
        if not isinstance(tag, str):
            return ""
        name = tag.rpartition("}")[2]
        return IMPLICIT_TYPES.get(name, name)

    def typed_uml(self, element: etree._Element) -> str | None:
        """The metaclass when the element is explicitly typed as a UML element, else ``None``."""
        value = element.get(self.k_type) or element.get(self.k_xsi_type)
        if not value:
            return None
        prefix, _, name = value.rpartition(":")
        if prefix and element.nsmap.get(prefix) != self.uml_ns:
            return None
        return name

    def eid(self, element: etree._Element) -> str | None:
        return element.get(self.k_id)

    def location(
        self, element: etree._Element | None, name: str | None = None, uml_type: str | None = None
    ) -> Location:
        if element is None:
            return Location(file=self.file)
        return Location(
            file=self.file,
            line=element.sourceline,
            element_id=element.get(self.k_id),
            name=name if name is not None else (element.get("name") or None),
            uml_type=uml_type or self.metaclass(element),
        )

    def diag(
        self,
        severity: Severity,
        message: str,
        element: etree._Element | None = None,
        hint: str | None = None,
        code: str | None = None,
    ) -> None:
        self.diagnostics.append(Diagnostic(severity, message, self.location(element), hint, code))

    def name_of(self, element: etree._Element) -> str:
        name = element.get("name")
        if name is not None:
            return name
        for child in element:
            if child.tag == "name":
                return (child.text or "").strip()
        return ""

    def refs(self, element: etree._Element, feature: str) -> list[str]:
        """Ids an element refers to through ``feature``: attribute list, ``xmi:idref`` or ``href``
        children.
        """
        value = element.get(feature)
        if not len(element):
            return value.split() if value else []
        found: list[str] = value.split() if value else []
        for child in element:
            if child.tag == feature:
                ref = child.get(self.k_idref) or child.get(self.k_id)
                if ref:
                    found.append(ref)
                else:
                    href = child.get("href")
                    if href:
                        found.append(href.rpartition("#")[2])
        return found

    def ref(self, element: etree._Element, feature: str) -> str | None:
        value = element.get(feature)
        if value:
            return value.split(None, 1)[0]
        found = self.refs(element, feature)
        return found[0] if found else None

    def children(self, element: etree._Element, feature: str) -> Iterator[etree._Element]:
        """The children written under ``feature`` (lxml compares the tags in C: an activity has thousands)."""
        return element.iterchildren(feature)

    def in_skipped_wrapper(self, element: etree._Element) -> bool:
        """Whether the element sits in a tool extension or annotation (diagrams, EA tables...)."""
        for ancestor in element.iterancestors():
            tag = ancestor.tag
            if isinstance(tag, str) and tag.rpartition("}")[2] in _SKIPPED_WRAPPERS:
                return True
        return False

    def describe(self, element: etree._Element) -> str:
        name = self.name_of(element)
        ident = element.get(self.k_id)
        text = self.metaclass(element)
        if name:
            text += f" {name!r}"
        if ident:
            text += f" [xmi:id={ident}]"
        return text

    def model_name(self) -> str:
        for element in self.model_roots():
            name = element.get("name")
            if name:
                return name
        return ""

    def model_roots(self) -> list[etree._Element]:
        """The UML top-level elements: the root itself, or the root's children in the UML namespace."""
        if self._roots is None:
            root = self.doc.root
            prefix = f"{{{self.uml_ns}}}"
            if isinstance(root.tag, str) and root.tag.startswith(prefix):
                self._roots = [root]
            elif self.uml_ns is None:
                self._roots = []
            else:  # lxml picks them out in C: a root may also hold thousands of stereotype applications
                self._roots = list(root.iterchildren(f"{prefix}*"))
        return self._roots

    def bodies(self, element: etree._Element) -> list[tuple[str, str]]:
        """``(language, body)`` pairs of an opaque element; ``body``/``language`` as children or
        attributes.
        """
        body_list: list[str] = []
        lang_list: list[str] = []
        for child in element if len(element) else ():
            tag = child.tag
            if tag == "body":
                body_list.append(child.text or "")
            elif tag == "language":
                lang_list.append((child.text or "").strip())
        if not body_list and element.get("body") is not None:
            body_list = [element.get("body") or ""]
        if not lang_list and element.get("language") is not None:
            lang_list = (
                (element.get("language") or "").split(",")
                if len(body_list) > 1
                else [element.get("language") or ""]
            )
        return [(lang_list[i] if i < len(lang_list) else "", body) for i, body in enumerate(body_list)]

    def value_text(self, spec: etree._Element, guard: bool = False) -> str | None:
        """The text of a ValueSpecification as an expression, following UML defaults.

        For guards, the tools' default ``true`` (and an empty body) means no guard.
        """
        metaclass = self.metaclass(spec)
        value = spec.get("value")
        if metaclass == "LiteralBoolean":
            if guard:
                return None if value in (None, "", "true") else "False"
            return "True" if value == "true" else "False"
        if metaclass == "LiteralInteger":
            return value if value not in (None, "") else "0"
        if metaclass == "LiteralReal":
            return value if value not in (None, "") else "0.0"
        if metaclass == "LiteralUnlimitedNatural":
            return value if value not in (None, "") else "0"
        if metaclass == "LiteralString":
            text = value if value is not None else (spec.findtext("value") or "")
            return self._clean_guard(text) if guard else text
        if metaclass == "LiteralNull":
            return None
        if metaclass in ("OpaqueExpression", "Expression", "TimeExpression", "Duration"):
            pairs = self.bodies(spec)
            if not pairs:
                symbol = spec.get("symbol")
                return symbol if symbol else None
            text = self.pick_body(pairs)[1].strip()
            return self._clean_guard(text) if guard else text
        if metaclass == "InstanceValue":
            target = self.index.get(self.ref(spec, "instance") or "")
            return self.name_of(target) if target is not None else None
        return value

    @staticmethod
    def _clean_guard(text: str) -> str | None:
        text = text.strip()
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1].strip()
        if not text or text.lower() == "true":
            return None
        return text

    @staticmethod
    def pick_body(pairs: list[tuple[str, str]]) -> tuple[str, str]:
        """Prefer a body in our own languages, then one in no language, then the first."""
        for preferred in (CODE_LANGUAGES, {""}):
            for language, body in pairs:
                if language.strip().lower() in preferred:
                    return language, body
        return pairs[0]
