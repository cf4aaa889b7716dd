"""Hardened XML loading and the document object every dialect reads from.

XMI files come from anywhere, so parsing never resolves entities, never loads a
DTD, never touches the network and refuses files that are too big or too deep.
The bytes are read by us and handed to ``lxml.etree.fromstring`` because
``parse(filename)`` would silently decompress gzip input.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property

from lxml import etree

from ..errors import InputError, Location


def max_bytes() -> int:
    """Largest input accepted, in bytes (the ``input_bytes`` limit; UML2PERF_MAX_BYTES or --limit)."""
    from uml2perf_runtime.engine.limits import current

    return current().input_bytes


#: Deepest element nesting accepted.
MAX_DEPTH = 256

XMI_NAMESPACES = (
    "http://www.omg.org/XMI",
    "http://schema.omg.org/spec/XMI/2.1",
    "http://www.omg.org/spec/XMI/20110701",
    "http://www.omg.org/spec/XMI/20131001",
    "http://www.omg.org/spec/XMI/20161101",
)
XSI_NAMESPACE = "http://www.w3.org/2001/XMLSchema-instance"


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        load_dtd=False,
        no_network=True,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        collect_ids=False,
    )


def local_name(tag: object) -> str:
    """The tag or attribute name without its namespace (``{ns}Activity`` -> ``Activity``)."""
    if not isinstance(tag, str):
        return ""
    return tag.rpartition("}")[2]


@dataclass
class XmiDocument:
    """A parsed XMI file: root element, source path and lookup helpers.

    Dialects read from it; each builds the id index it needs (the UML 2
    reader on first use, :class:`uml2perf.reader.xmi.XmiAccess`).
    """

    path: str
    root: etree._Element
    data: bytes = field(repr=False, default=b"")

    @property
    def display_name(self) -> str:
        return os.path.basename(self.path) if self.path else "<input>"

    @cached_property
    def namespaces(self) -> frozenset[str]:
        """Every namespace URI declared on the root element."""
        return frozenset(uri for uri in self.root.nsmap.values() if uri)

    @cached_property
    def xmi_namespace(self) -> str | None:
        for uri in self.namespaces:
            if (
                uri in XMI_NAMESPACES
                or uri.startswith("http://www.omg.org/spec/XMI/")
                or uri.startswith("http://schema.omg.org/spec/XMI/")
            ):
                return uri
        return None

    @cached_property
    def exporter_info(self) -> tuple[str, str]:
        """``(exporter, extender)`` from ``xmi:Documentation`` and the root ``xmi:Extension``.

        Both are empty strings when absent.  Only the root's direct children
        are looked at, and lxml picks the two tags out in C, so the cost does
        not depend on the file size (a root may hold thousands of stereotype
        applications); several dialects ask while detecting.
        """
        exporter = ""
        extender = ""
        for child in self.root.iterchildren("{*}Documentation", "{*}Extension"):
            tag = child.tag
            if not isinstance(tag, str):
                continue
            name = local_name(tag)
            if name == "Documentation" and not exporter:
                exporter = child.get("exporter") or ""
                if not exporter:
                    for sub in child:
                        if isinstance(sub.tag, str) and local_name(sub.tag) == "exporter":
                            exporter = (sub.text or "").strip()
                            break
                if not extender:
                    for sub in child:
                        if isinstance(sub.tag, str) and local_name(sub.tag) == "Extension":
                            extender = sub.get("extender") or ""
            elif name == "Extension" and not extender:
                extender = child.get("extender") or ""
        return exporter, extender

    def element_id(self, element: etree._Element) -> str | None:
        for key, value in element.attrib.items():
            name = local_name(key)
            if name == "id" and (key.startswith("{") or key == "id"):
                return value
            if key == "xmi.id":
                return value
        return None

    def xmi_type(self, element: etree._Element) -> str:
        """The metaclass of an element: ``xmi:type`` / ``xsi:type`` without prefix, else the tag."""
        for key, value in element.attrib.items():
            if local_name(key) == "type" and key.startswith("{"):
                return value.rpartition(":")[2]
        return local_name(element.tag)

    def location(
        self, element: etree._Element | None, name: str | None = None, uml_type: str | None = None
    ) -> Location:
        """A :class:`Location` naming this file, the element's line, id, name and type."""
        if element is None:
            return Location(file=self.display_name)
        return Location(
            file=self.display_name,
            line=element.sourceline,
            element_id=self.element_id(element),
            name=name if name is not None else element.get("name"),
            uml_type=uml_type or self.xmi_type(element),
        )


#: Elements deeper than MAX_DEPTH, found by libxml2's XPath engine in one C-level walk.
_TOO_DEEP = etree.XPath("/" + "*/" * MAX_DEPTH + "*")


def _check_depth(root: etree._Element, path: str) -> None:
    """Refuse documents nested deeper than :data:`MAX_DEPTH` (libxml2 may allow more)."""
    deep = _TOO_DEEP(root.getroottree())
    if deep:
        raise InputError(
            f"elements are nested more than {MAX_DEPTH} levels deep",
            Location(file=os.path.basename(path), line=deep[0].sourceline),
            hint="this is not a UML export uml2perf can read safely",
        )


def load_bytes(data: bytes, path: str = "<input>") -> XmiDocument:
    """Parse XMI bytes with the hardened parser; raise :class:`InputError` with a location."""
    shown = os.path.basename(path)
    limit = max_bytes()
    if len(data) > limit:
        raise InputError(
            f"file is {len(data)} bytes, more than the limit of {limit}",
            Location(file=shown),
            hint="raise the limit with --limit input_bytes=N or UML2PERF_MAX_BYTES",
        )
    if not data.strip():
        raise InputError(
            "file is empty", Location(file=shown), hint="export the model again from the UML tool"
        )
    if data[:2] == b"\x1f\x8b" or data[:4] == b"PK\x03\x04":
        raise InputError(
            "file is compressed (gzip or zip), not XMI",
            Location(file=shown),
            hint="unpack it first (a .zargo is a zip: take the .xmi member out of it)",
        )
    try:
        root = etree.fromstring(data, parser=_parser())
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if exc.lineno else None
        message = exc.msg if getattr(exc, "msg", None) else str(exc)
        raise _syntax_error(message, Location(file=shown, line=line)) from None
    if root is None:
        raise InputError("no XML content", Location(file=shown))
    _check_doctype(data, shown)
    _check_entity_references(data, root, shown)
    _check_depth(root, path)
    return XmiDocument(path=path, root=root, data=data)


def _syntax_error(message: str, where: Location) -> InputError:
    """Turn libxml2's message into one a user can act on; its limits get their own wording."""
    lowered = message.lower()
    if "excessive depth" in lowered:
        return InputError(
            f"elements are nested more than {MAX_DEPTH} levels deep",
            where,
            hint="this is not a UML export uml2perf can read safely",
        )
    if (
        "amplification" in lowered
        or "entity reference loop" in lowered
        or "entities" in lowered
        and "loop" in lowered
    ):
        return InputError(
            "file defines entities that expand without bound (an entity expansion attack); refused",
            where,
            hint="UML tools never write entity declarations; use the file the tool exported",
        )
    return InputError(
        f"not well-formed XML: {message}",
        where,
        hint="the file may be truncated or not an XMI export; export it again",
    )


def _check_entity_references(data: bytes, root: etree._Element, shown: str) -> None:
    """Refuse element text that uses an entity the parser leaves unexpanded.

    The parser never expands entities inside element text (that is what keeps
    entity attacks out), so ``<body>cost=&n;</body>`` would silently read as
    ``cost=``.  Only files that declare entities can contain such references.
    """
    if b"<!ENTITY" not in data[: 1 << 20]:
        return
    for entity in root.iter(etree.Entity):
        parent = entity.getparent()
        raise InputError(
            f"element text uses the entity reference {entity.text}, which uml2perf does not expand "
            "(the text would be cut short)",
            Location(
                file=shown,
                line=entity.sourceline or (parent.sourceline if parent is not None else None),
                element_id=_any_id(parent),
            ),
            hint="replace the reference by its text; UML tools do not write entity declarations",
        )


def _any_id(element: etree._Element | None) -> str | None:
    """The element's xmi:id (any XMI namespace), xmi.id or id, for messages."""
    if element is None:
        return None
    for key, value in element.attrib.items():
        if key.endswith("}id") or key in ("xmi.id", "id"):
            return value
    return None


def _check_doctype(data: bytes, shown: str) -> None:
    head = data[:4096].lower()
    if b"<!entity" in head and (b"system" in head or b"public" in head):
        raise InputError(
            "file declares external entities, which uml2perf never loads",
            Location(file=shown),
            hint="remove the DOCTYPE/ENTITY declarations; UML tools do not write them",
        )


def load_file(path: str | os.PathLike[str]) -> XmiDocument:
    """Read a file from disk (with the input cap, devices and FIFOs included) and parse it safely."""
    from uml2perf_runtime.output.files import InputFileError, read_input

    try:
        data = read_input(
            path,
            max_bytes=max_bytes(),
            what="file",
            limit_hint="raise the limit with --limit input_bytes=N or UML2PERF_MAX_BYTES",
        )
    except InputFileError as exc:
        raise InputError(exc.message, Location(file=str(path)), hint=exc.hint) from None
    return load_bytes(data, str(path))
