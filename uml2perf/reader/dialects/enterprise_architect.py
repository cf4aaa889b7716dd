"""Sparx Enterprise Architect XMI 2.1.

EA's habits, each handled here rather than in the shared reader:

* actions are exported as the abstract ``uml:Action``, read as plain actions;
* stereotypes and tagged values are often only in the root ``xmi:Extension``
  (``<elements>/<element xmi:idref>`` with ``<properties stereotype=...>`` and
  ``<tags><tag name= value=>``; flows likewise under ``<connectors>``); they
  are turned into ordinary stereotype applications, merged with any
  root-level profile applications EA also wrote;
* an object node dropped on a diagram is an ``InstanceSpecification`` owned by
  the package, and an activity dropped on a diagram is the ``Activity``
  itself, so flows point outside their activity: those ends become an object
  node and a call of that activity;
* tagged values may carry notes after ``#NOTES#``, which are cut off.
"""

from __future__ import annotations

import re

from lxml import etree

from ...errors import Location
from ...model import Node, NodeKind, StereotypeApplication
from ..xml import XmiDocument, local_name
from .uml2 import RegionState, Uml2Dialect, Uml2Reader, exporter_info

_OBJECT_PROXIES = frozenset(
    {"InstanceSpecification", "Object", "ObjectNode", "CentralBufferNode", "DataStoreNode"}
)
_XREF_STEREO = re.compile(r"@STEREO;Name=([^;]+);")


class EnterpriseArchitectReader(Uml2Reader):
    def guard_of(self, element: etree._Element) -> str | None:
        """The UML guard, else the connector's ``conditional`` from EA's own table."""
        guard = super().guard_of(element)
        if guard is None:
            conditional = self._conditionals.get(self.eid(element) or "")
            if conditional:
                guard = self._clean_guard(conditional)
        return guard

    def extra_stereotypes(self) -> None:
        self._conditionals: dict[str, str] = {}
        for extension in self.doc.root:
            if not isinstance(extension.tag, str) or local_name(extension.tag) != "Extension":
                continue
            for table in extension:
                if table.tag in ("elements", "connectors"):
                    for record in table:
                        if record.tag in ("element", "connector"):
                            self._read_record(record)

    def _read_record(self, record: etree._Element) -> None:
        target = record.get(self.k_idref)
        if not target or target not in self.index:
            return
        if record.tag == "connector":
            for child in record:
                if child.tag == "extendedProperties" and child.get("conditional"):
                    self._conditionals[target] = child.get("conditional") or ""
        names: list[str] = []
        tags: list[tuple[str, str]] = []
        for child in record:
            if child.tag == "properties":
                names.extend(s.strip() for s in (child.get("stereotype") or "").split(",") if s.strip())
            elif child.tag == "xrefs":
                for found in _XREF_STEREO.findall(child.get("value") or ""):
                    if found not in names:
                        names.append(found)
            elif child.tag == "tags":
                for tag in child:
                    if tag.tag == "tag" and tag.get("name"):
                        value = (tag.get("value") or "").split("#NOTES#", 1)[0].strip()
                        tags.append((tag.get("name") or "", value))
        for position, name in enumerate(names):
            self.stereotype_count += 1
            self.add_stereotype(
                target,
                StereotypeApplication(name=name, profile="EA", tags=tuple(tags) if position == 0 else ()),
            )

    def outside_endpoint(self, element: etree._Element, ref: str, region: RegionState) -> str | None:
        metaclass = self.metaclass(element)
        if metaclass in _OBJECT_PROXIES:
            kind = NodeKind.OBJECT
        elif metaclass == "Activity":
            kind = NodeKind.CALL
        else:
            return None
        if ref not in region.ids:
            name = self.name_of(element)
            region.add(
                Node(
                    id=ref,
                    name=name,
                    kind=kind,
                    uml_type=metaclass,
                    location=Location(self.file, element.sourceline, ref, name or None, metaclass),
                    stereotypes=self.stereotypes_of(ref),
                    behavior=ref if kind is NodeKind.CALL else None,
                )
            )
        return ref


class EnterpriseArchitectDialect(Uml2Dialect):
    name = "ea"
    description = "Sparx Enterprise Architect (XMI 2.1, tags in xmi:Extension)"
    reader_class = EnterpriseArchitectReader

    def detect(self, doc: XmiDocument) -> int:
        exporter, extender = exporter_info(doc)
        if "enterprise architect" in f"{exporter} {extender}".lower():
            return 95
        if any("sparxsystems" in ns for ns in doc.namespaces):
            return 85
        return 0


DIALECT = EnterpriseArchitectDialect()
