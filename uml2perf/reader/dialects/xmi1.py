"""What detection asks of XMI 1.x files and of Umbrello's, without the readers of those dialects.

Every file is asked by every built-in dialect whether it is theirs (:mod:`..registry`).  The
UML 1.x and Umbrello readers are large modules; a UML 2 export, the usual case, is not theirs,
and the tests here show it without importing them: a UML 1.x file has an ``XMI`` root with an
``xmi.version`` of 1.x, and an Umbrello file names Umbrello as its exporter or extender.
"""

from __future__ import annotations

from ..xml import XmiDocument

_CANONICAL: dict[str, str] = {}


def canonical(tag: object) -> str:
    """The tool-independent name of an XMI 1.x tag.

    ``{ns}ActionState``, ``UML:ActionState`` and XMI 1.0's fully qualified
    ``Behavioral_Elements.Activity_Graphs.ActionState`` all become
    ``ActionState``; property tags keep their owner
    (``Foundation.Core.ModelElement.name`` -> ``ModelElement.name``).
    Results are cached per tag string, so this costs one dict lookup.
    """
    if not isinstance(tag, str):
        return ""
    hit = _CANONICAL.get(tag)
    if hit is not None:
        return hit
    name = tag.rpartition("}")[2].rpartition(":")[2]
    if "." in name:
        parts = name.split(".")
        last = parts[-1]
        name = f"{parts[-2]}.{last}" if last[:1].islower() else last
    _CANONICAL[tag] = name
    return name


def exporter_of(doc: XmiDocument) -> str:
    """The ``XMI.header/XMI.documentation/XMI.exporter`` text (or XMI 2's attribute)."""
    # the root's header children, found once per document (the root may hold thousands of applications)
    for header in doc.header_elements:
        kind = canonical(header.tag)
        if kind == "XMI.header":
            for documentation in header:
                if canonical(documentation.tag) != "XMI.documentation":
                    continue
                for item in documentation:
                    if canonical(item.tag) == "XMI.exporter":
                        return (item.text or "").strip()
        elif kind == "Documentation":
            return (header.get("exporter") or "").strip()
    return ""


def xmi1_version(doc: XmiDocument) -> str | None:
    """The ``xmi.version`` of an XMI 1.x file (its root is ``XMI``), else ``None``."""
    version = doc.root.get("xmi.version")
    if canonical(doc.root.tag) == "XMI" and version and version.startswith("1."):
        return version
    return None


def umbrello_score(doc: XmiDocument) -> int:
    """The Umbrello dialect's detection score (:class:`.umbrello.UmbrelloDialect`).

    Umbrello 2.x writes an XMI 2.1 header and the UML 2.1 namespace, so this must
    outscore the generic UML 2 reader; 1.x files must outscore the UML 1.x reader,
    which would find no activity graph in them.
    """
    if "umbrello" in exporter_of(doc).lower():
        return 95
    data = doc.data or b""
    # one scan of the whole file settles the usual case (no "umbrello" anywhere) before the two exact ones
    if b"umbrello" in data and (b'extender="umbrello"' in data or b"extender='umbrello'" in data):
        return 90
    return 0


__all__ = ["canonical", "exporter_of", "umbrello_score", "xmi1_version"]
