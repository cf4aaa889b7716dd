"""Hardened XML loading and the document object every dialect reads from.

XMI files come from anywhere, so parsing never resolves entities, never loads a
DTD, never touches the network and refuses files that are too big or too deep.
The bytes are read by us and handed to ``lxml.etree.fromstring`` because
``parse(filename)`` would silently decompress gzip input.

DTDs are kept out three times over, because libxml2 loads an external subset
to expand an entity in an attribute value even with ``load_dtd=False``:

1. before parsing, the whole prolog (everything before the root element:
   declaration, comments, processing instructions, any length) is scanned and a
   DOCTYPE with anything beyond the root's name (``SYSTEM``/``PUBLIC`` ids, an
   internal subset) is refused.  The refusal does not depend on what the ids
   name, so it cannot tell whether a file exists;
2. the parser's resolver answers every external load with empty text, so
   libxml2 never opens a file, a FIFO, a device or a URL, whatever it is asked;
3. after parsing, a document that still has an external id or declarations is
   refused (a prolog in an encoding the scan did not foresee).
"""

from __future__ import annotations

import codecs
import os
import re
from functools import cached_property, lru_cache

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


class _NothingLoads(etree.Resolver):
    """Every external load (DTD, entity, XInclude) is answered with empty text, touching nothing."""

    def resolve(self, system_url: str, public_id: str, context: object) -> object:
        return self.resolve_string("", context)


def _parser() -> etree.XMLParser:
    parser = etree.XMLParser(
        resolve_entities=False,
        load_dtd=False,
        no_network=True,
        dtd_validation=False,
        attribute_defaults=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        collect_ids=False,
    )
    parser.resolvers.add(_NothingLoads())
    return parser


def local_name(tag: object) -> str:
    """The tag or attribute name without its namespace (``{ns}Activity`` -> ``Activity``)."""
    if not isinstance(tag, str):
        return ""
    return tag.rpartition("}")[2]


class XmiDocument:
    """A parsed XMI file: root element, source path and lookup helpers.

    Dialects read from it; each builds the id index it needs (the UML 2
    reader on first use, :class:`uml2perf.reader.xmi.XmiAccess`).  A plain
    class, not a dataclass: every ``convert`` imports this module, and making
    a dataclass runs generated code at import.
    """

    def __init__(self, path: str, root: etree._Element, data: bytes = b"") -> None:
        self.path = path
        self.root = root
        self.data = data  # the file's bytes (left out of ``repr``)

    def __repr__(self) -> str:
        return f"XmiDocument(path={self.path!r}, root={self.root!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, XmiDocument)
        return (self.path, self.root, self.data) == (other.path, other.root, other.data)

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq

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
    def header_elements(self) -> list[etree._Element]:
        """The root's ``XMI.header``, ``Documentation`` and ``Extension`` children (any namespace), in
        file order: what :attr:`exporter_info` and the UML 1.x dialects' ``exporter_of`` look at.

        Found in one walk over the root's children, shared by both: a large export's root holds one
        stereotype application per annotated element, and each walk over them takes about as long as
        counting them (32 ms for 200,000).
        """
        return list(self.root.iterchildren("{*}XMI.header", "{*}Documentation", "{*}Extension"))

    @cached_property
    def exporter_info(self) -> tuple[str, str]:
        """``(exporter, extender)`` from ``xmi:Documentation`` and the root ``xmi:Extension``.

        Both are empty strings when absent.  Only the root's direct children
        are looked at (:attr:`header_elements`); several dialects ask while
        detecting.
        """
        exporter = ""
        extender = ""
        for child in self.header_elements:
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


@lru_cache(maxsize=1)
def _parser_limits_depth() -> bool:
    """Whether the hardened parser itself refuses elements nested deeper than :data:`MAX_DEPTH`.

    libxml2 refuses more than 256 levels unless ``XML_PARSE_HUGE`` is set, the
    limit this module keeps; a libxml2 built with another limit parses the
    probe, and every document then gets the XPath walk of :func:`_check_depth`
    (about 0.4 µs per element).  The probe is one tiny document, parsed once
    per process.
    """
    depth = MAX_DEPTH + 1
    probe = b"<a>" * depth + b"</a>" * depth
    try:
        etree.fromstring(probe, parser=_parser())
    except etree.XMLSyntaxError:
        return True
    return False


def _check_depth(root: etree._Element, path: str) -> None:
    """Refuse documents nested deeper than :data:`MAX_DEPTH`, when the parser has not already."""
    if _parser_limits_depth():
        return
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
    # not ``data.strip()``: that copies the whole file (60 MB for a 200,000-action model) to test it
    if not data or data.isspace():
        raise InputError(
            "file is empty", Location(file=shown), hint="export the model again from the UML tool"
        )
    if data[:2] == b"\x1f\x8b" or data[:4] == b"PK\x03\x04":
        raise InputError(
            "file is compressed (gzip or zip), not XMI",
            Location(file=shown),
            hint="unpack it first (a .zargo is a zip: take the .xmi member out of it)",
        )
    _check_prolog(data, shown)
    try:
        root = etree.fromstring(data, parser=_parser())
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if exc.lineno else None
        message = exc.msg if getattr(exc, "msg", None) else str(exc)
        raise _syntax_error(message, Location(file=shown, line=line)) from None
    if root is None:
        raise InputError("no XML content", Location(file=shown))
    _check_doctype(root, shown)
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
    if data.find(b"<!ENTITY", 0, 1 << 20) < 0:  # the first MiB, without copying it
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


_DOCTYPE_HINT = "remove the DOCTYPE line; UML tools do not write DTDs, and uml2perf never loads them"


def _refused_doctype(shown: str, what: str) -> InputError:
    return InputError(
        f"file has a DOCTYPE with {what}, which uml2perf refuses", Location(file=shown), hint=_DOCTYPE_HINT
    )


#: Byte-order marks and the first bytes of ``<?`` in encodings whose markup is not ASCII.
_WIDE_STARTS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (b"\x00\x00\x00<", "utf-32-be"),
    (b"<\x00\x00\x00", "utf-32-le"),
    (b"\x00<\x00?", "utf-16-be"),
    (b"<\x00?\x00", "utf-16-le"),
)
_DECLARED_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([^"']{1,64})["']""")
#: An encoding is read only when it reads these bytes as ASCII does (UTF-7 and EBCDIC do not).
_ASCII = bytes(range(128))
_PLAIN_DOCTYPE = re.compile(rb"<!DOCTYPE\s+[^\s>\[\"']+\s*>")


def _prolog_bytes(data: bytes, shown: str) -> bytes:
    """The file's bytes with markup as ASCII: decoded and re-encoded only for UTF-16/32 files."""
    for start, encoding in _WIDE_STARTS:
        if data.startswith(start):
            text = data.decode(encoding, errors="replace").lstrip("\ufeff")
            return text.encode("utf-8", errors="replace")
    declared = _DECLARED_ENCODING.match(data[:1024])
    if declared:
        name = declared.group(1).decode("ascii", errors="replace")
        try:
            ascii_markup = _ASCII.decode(name) == _ASCII.decode("ascii")
        except (LookupError, UnicodeError, TypeError):
            ascii_markup = False
        if not ascii_markup:
            raise InputError(
                f"file declares the encoding {name!r}, which uml2perf does not read",
                Location(file=shown),
                hint="export the model as UTF-8 (UML tools do by default)",
            )
    return data


def _check_prolog(data: bytes, shown: str) -> None:
    """Refuse a DOCTYPE with ids or declarations anywhere before the root element, before parsing.

    The whole prolog is walked (comments and processing instructions of any length), so nothing
    hides a DOCTYPE from it; only ``<!DOCTYPE Name>`` is let through to the parser.
    """
    text = _prolog_bytes(data, shown)
    if text.startswith(codecs.BOM_UTF8):
        text = text[len(codecs.BOM_UTF8) :]
    at, end = 0, len(text)
    while at < end:
        while at < end and text[at] in b" \t\r\n":
            at += 1
        if text.startswith(b"<?", at):
            close = text.find(b"?>", at + 2)
        elif text.startswith(b"<!--", at):
            close = text.find(b"-->", at + 4)
        elif text[at : at + 9].upper() == b"<!DOCTYPE":
            plain = _PLAIN_DOCTYPE.match(text, at)
            if plain is None:
                raise _refused_doctype(shown, _what_doctype_holds(text, at))
            at = plain.end()
            continue
        elif text.startswith(b"<!", at):
            raise InputError(
                "not well-formed XML: a markup declaration before the root element",
                Location(file=shown),
                hint="the file may be damaged or not an XMI export; export it again",
            )
        else:
            return  # the root element (or text the parser will refuse)
        if close < 0:
            return  # unterminated: the parser reports it
        at = close + 2 if text[at + 1 : at + 2] == b"?" else close + 3


def _what_doctype_holds(text: bytes, at: int) -> str:
    """What a refused DOCTYPE holds, in words that do not depend on what its ids name."""
    if text.find(b"<!ENTITY", at, at + (1 << 20)) >= 0:
        return "entity declarations (uml2perf never expands or loads entities)"
    if re.match(rb"<!DOCTYPE\s+[^\s>\[]+\s+(SYSTEM|PUBLIC)\b", text[at : at + 4096], re.IGNORECASE):
        return "an external DTD"
    return "declarations"


def _check_doctype(root: etree._Element, shown: str) -> None:
    """After parsing: nothing the prolog scan may have missed (an unforeseen encoding) is accepted."""
    info = root.getroottree().docinfo
    if info.system_url or info.public_id:
        raise _refused_doctype(shown, "an external DTD")
    dtd = info.internalDTD
    if dtd is not None and (any(True for _ in dtd.iterentities()) or any(True for _ in dtd.iterelements())):
        raise _refused_doctype(shown, "declarations")


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
