"""Visual Paradigm XMI 2.1.

Visual Paradigm does not put activity nodes inside their activity: actions,
control nodes and object nodes are ``ownedMember`` of the enclosing
``uml:Model`` (or of a swimlane), and the activity owns only the edges that
connect them.  This dialect therefore builds each activity's nodes from the
ends of its edges.  More habits:

* control nodes are ``uml:Pseudostate`` with ``kind`` (initial, final, fork,
  join, junction, choice); the ``xmi:Extension`` marker (``flowFinalNode``,
  ``decisionNode``, ``mergeNode``) tells the UML 2 node apart;
* an activity drawn on another activity's diagram owns the flows that enter
  and leave it; those flows are moved to the diagram's activity, where the
  drawn activity becomes a call node;
* object flows may lack ``xmi:type`` and carry an ``activityObjectFlow``
  marker; guards are OpaqueExpressions with a ``body`` attribute.
"""

from __future__ import annotations

from lxml import etree

from ...errors import Location
from ...model import Node, NodeKind
from ..xml import XmiDocument, local_name
from .uml2 import PIN_TYPES, RegionState, Uml2Dialect, Uml2Reader, exporter_info

_PSEUDOSTATE_KINDS = {
    "initial": NodeKind.INITIAL,
    "fork": NodeKind.FORK,
    "join": NodeKind.JOIN,
    "choice": NodeKind.DECISION,
}


class VisualParadigmReader(Uml2Reader):
    def prepare(self) -> None:
        self._moved: set[str] = set()
        self._extra: dict[str, list[etree._Element]] = {}
        for partition in self.doc.root.iter("ownedMember"):
            if self.metaclass(partition) == "ActivityPartition":
                for ref in self.refs(partition, "containedNode"):
                    self.partition_of.setdefault(ref, self.name_of(partition))
        self._relocate_drawn_activities()

    def _relocate_drawn_activities(self) -> None:
        """Move the flows an activity owns about itself to the activity whose diagram shows it."""
        owned = {self.eid(a) or "": [e for e in a if e.tag == "edge"] for a in self.activity_elements}
        for aid, edges in owned.items():
            ends = {self.ref(e, f) for e in edges for f in ("source", "target")}
            if aid not in ends:
                continue
            others = ends - {aid, None}
            for host, host_edges in owned.items():
                if host == aid or host in self._moved:
                    continue
                if others & {self.ref(e, f) for e in host_edges for f in ("source", "target")}:
                    self._moved.add(aid)
                    self._extra.setdefault(host, []).extend(edges)
                    break

    def adjust_edges(self, container: str, edges: list[etree._Element]) -> list[etree._Element]:
        if container in self._moved:
            return []
        return edges + self._extra.get(container, [])

    ELEMENT_KINDS = frozenset({"Pseudostate"})

    def node_kind(self, element: etree._Element, metaclass: str) -> NodeKind | None:
        if metaclass != "Pseudostate":
            return super().node_kind(element, metaclass)
        kind = element.get("kind") or "initial"
        markers = self._markers(element)
        if kind in _PSEUDOSTATE_KINDS:
            return _PSEUDOSTATE_KINDS[kind]
        if kind == "final":
            return NodeKind.FLOW_FINAL if "flowFinalNode" in markers else NodeKind.ACTIVITY_FINAL
        if kind == "junction":
            if "decisionNode" in markers:
                return NodeKind.DECISION
            return NodeKind.MERGE
        return None

    @staticmethod
    def _markers(element: etree._Element) -> set[str]:
        found: set[str] = set()
        for child in element:
            if isinstance(child.tag, str) and local_name(child.tag) == "Extension":
                found.update(local_name(m.tag) for m in child if isinstance(m.tag, str))
        return found

    def edge_kind(self, element: etree._Element, metaclass: str) -> str:
        if metaclass == "ObjectFlow" or "activityObjectFlow" in self._markers(element):
            return "object"
        return "control"

    def outside_endpoint(self, element: etree._Element, ref: str, region: RegionState) -> str | None:
        metaclass = self.metaclass(element)
        if metaclass in PIN_TYPES:
            owner = element.getparent()
            owner_id = self.eid(owner) if owner is not None else None
            if owner is None or owner_id is None:
                return None
            if owner_id not in region.ids:
                node = self.read_node(owner, region)
                if node is None:
                    return None
                region.add(node)
            return owner_id
        if ref in region.ids:
            return ref
        if metaclass == "Activity":
            name = self.name_of(element)
            region.add(
                Node(
                    id=ref,
                    name=name,
                    kind=NodeKind.CALL,
                    uml_type=metaclass,
                    location=Location(self.file, element.sourceline, ref, name or None, metaclass),
                    stereotypes=self.stereotypes_of(ref),
                    behavior=ref,
                )
            )
            return ref
        if self.node_kind(element, metaclass) is None:
            return None
        node = self.read_node(element, region)
        if node is None:
            return None
        region.add(node)
        return ref


class VisualParadigmDialect(Uml2Dialect):
    name = "visual-paradigm"
    description = "Visual Paradigm (XMI 2.1; activity nodes owned by the model, not the activity)"
    reader_class = VisualParadigmReader

    def detect(self, doc: XmiDocument) -> int:
        exporter, extender = exporter_info(doc)
        return 95 if "visual paradigm" in f"{exporter} {extender}".lower() else 0


DIALECT = VisualParadigmDialect()
