"""Umbrello UML Modeller 1.6 and 2.x: activity diagrams that exist only as widgets.

Umbrello never writes UML activities into the model part of its XMI.  An
activity diagram is a ``<diagram type="6">`` inside the tool's extension
(``XMI.extension`` in 1.x files, ``xmi:Extension`` in 2.x files, which carry an
XMI 2.1 header and the UML 2.1 namespace); its nodes are widgets and its flows
are association widgets.  Each such diagram becomes one
:class:`~uml2perf.model.Activity` whose id is the diagram's id.

Widgets
-------
* ``activitywidget`` by ``activitytype``: 0 Initial -> INITIAL, 1 Normal ->
  ACTION, 2 End -> ACTIVITY_FINAL, 3 Final -> FLOW_FINAL, 4 Branch -> DECISION
  (more than one outgoing flow) or MERGE, 5 Invoke and 6 Param -> ACTION.
  A branch with several flows in *and* out becomes a MERGE ``<id>#merge``
  feeding the DECISION through the synthetic flow ``<id>#merge-flow``.
* ``forkjoin`` -> JOIN when several flows enter it, FORK otherwise (a bar
  with several flows in and out becomes a JOIN ``<id>#join`` feeding a FORK).
* ``signalwidget`` (send, accept, time event) -> ACTION.
* ``objectnodewidget`` -> OBJECT; flows touching one are object flows.
* ``pinwidget`` is not a node: flows attached to a pin are attached to the
  widget that owns the pin (UML 2 readers leave pins out of the graph too).
* ``regionwidget`` (interruptible region), notes, boxes and floating texts are
  not nodes; flows that touch them are dropped with a warning.

Association widgets
-------------------
* type 515 (activity flow) -> edge; its name label (a ``floatingtext`` with the
  name role) is the guard when written in brackets (``[x > 1]``) or when the
  flow leaves a decision, otherwise the edge's name.
* type 516 (exception / interrupting edge) -> an ordinary edge, with a warning,
  since the estimator has no exceptions.
* type 513 (anchor: a note's link) and every other type -> skipped.

Umbrello widgets carry no stereotypes, so costs come from a sidecar file.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TypeAlias

from lxml import etree

from ...errors import Diagnostic, Location, ModelError, Severity
from ...model import Activity, Edge, Model, Node, NodeKind, Region
from ..xml import XmiDocument
from .uml14 import CONTENT_LABELS
from .xmi1 import canonical, umbrello_score

Element: TypeAlias = etree._Element

ACTIVITY_DIAGRAM = "6"
ASSOC_FLOW = "515"
ASSOC_ANCHOR = "513"
ASSOC_EXCEPTION = "516"
#: Umbrello's text role for an association's name label.
NAME_ROLE = "703"

#: Umbrello's diagram type numbers, by the singular name shown to users.
DIAGRAM_TYPES = {
    "1": "class diagram",
    "2": "use case diagram",
    "3": "sequence diagram",
    "4": "collaboration diagram",
    "5": "state diagram",
    "6": "activity diagram",
    "7": "component diagram",
    "8": "deployment diagram",
    "9": "entity relationship diagram",
    "10": "object diagram",
}


def _diagram_order(kind: str) -> tuple[int, str]:
    return (int(kind), kind) if kind.isdigit() else (1 << 30, kind)


_ACTIVITY_TYPES = {
    "0": (NodeKind.INITIAL, "Initial"),
    "1": (NodeKind.ACTION, "Normal"),
    "2": (NodeKind.ACTIVITY_FINAL, "End"),
    "3": (NodeKind.FLOW_FINAL, "Final"),
    "4": (NodeKind.DECISION, "Branch"),
    "5": (NodeKind.ACTION, "Invoke"),
    "6": (NodeKind.ACTION, "Param"),
}
_SIGNAL_TYPES = {"0": "Send", "1": "Accept", "2": "Time"}
_OBJECT_TYPES = {"0": "Normal", "1": "Data", "2": "Buffer", "3": "Flow"}
#: Widgets that are drawn on an activity diagram but are not activity nodes.
_NOT_NODES = frozenset({"notewidget", "floatingtext", "boxwidget", "regionwidget", "pinwidget"})

_LABEL_OF = dict(CONTENT_LABELS)


@dataclass
class _Widget:
    element: Element
    id: str
    tag: str
    kind: NodeKind
    uml_type: str
    name: str
    incoming: int = 0
    outgoing: int = 0


@dataclass
class _Flow:
    element: Element
    id: str
    source: str
    target: str
    assoc_type: str
    label: str


class UmbrelloReader:
    """Reads one Umbrello document (used once per document)."""

    def __init__(self, doc: XmiDocument, dialect_name: str) -> None:
        self.doc = doc
        self.dialect_name = dialect_name
        self.diagnostics: list[Diagnostic] = []

    # ------------------------------------------------------------- helpers

    def _diag(self, severity: Severity, message: str, element: Element | None, code: str, **kw: str) -> None:
        location = self._location(element) if element is not None else Location(file=self.doc.display_name)
        self.diagnostics.append(Diagnostic(severity, message, location, code=code, hint=kw.get("hint")))

    def _location(self, element: Element, name: str | None = None, uml_type: str | None = None) -> Location:
        return self.doc.location(
            element,
            name=name if name is not None else (element.get("name") or ""),
            uml_type=uml_type or canonical(element.tag),
        )

    @staticmethod
    def _widget_id(element: Element) -> str | None:
        return element.get("xmi.id") or element.get("id")

    # ---------------------------------------------------------------- read

    def read(self) -> Model:
        diagrams, counts, model_name = self._scan()
        activities: list[Activity] = []
        diagram_counts: Counter[str] = Counter()
        for diagram in diagrams:
            kind = diagram.get("type", "")
            diagram_counts[kind] += 1
            if kind == ACTIVITY_DIAGRAM:
                activities.append(self._activity(diagram, len(activities) + 1))
            else:
                label = DIAGRAM_TYPES.get(kind, f"diagram of type {kind}")
                self._diag(
                    Severity.INFO,
                    f"{label} {diagram.get('name', '')!r} is not an activity diagram; skipped",
                    diagram,
                    "umbrello.diagram",
                )
        contents = [(label, counts[kind]) for kind, label in CONTENT_LABELS if counts.get(kind)]
        contents += [
            (f"{DIAGRAM_TYPES.get(kind, f'diagram of type {kind}')}s", count)
            for kind, count in sorted(diagram_counts.items(), key=lambda item: _diagram_order(item[0]))
            if kind != ACTIVITY_DIAGRAM
        ]
        return Model(
            source=self.doc.path,
            dialect=self.dialect_name,
            name=model_name,
            activities=tuple(activities),
            contents=tuple(contents),
            diagnostics=tuple(self.diagnostics),
        )

    def _scan(self) -> tuple[list[Element], Counter[str], str]:
        """One pass: diagrams, counts of model elements, the model's name."""
        diagrams: list[Element] = []
        counts: Counter[str] = Counter()
        model_name = ""
        for element in self.doc.root.iter():
            tag = element.tag
            if not isinstance(tag, str):
                continue
            if tag == "diagram":
                diagrams.append(element)
                continue
            kind = self._uml_kind(element)
            if kind is None:
                continue
            if kind == "Model":
                if not model_name and element.get("stereotype") != "folder":
                    model_name = element.get("name", "")
                continue
            if kind in _LABEL_OF:
                counts[kind] += 1
        return diagrams, counts, model_name

    def _uml_kind(self, element: Element) -> str | None:
        """The UML metaclass of a model element with an id (1.x tag or 2.x ``xmi:type``)."""
        if element.get("xmi.id") is None and self.doc.element_id(element) is None:
            return None
        for key, value in element.attrib.items():
            if key.startswith("{") and key.endswith("}type"):
                return value.rpartition(":")[2]
        tag = element.tag
        if isinstance(tag, str) and tag.startswith("{"):
            return canonical(tag)
        return None

    # ------------------------------------------------------------ diagrams

    def _activity(self, diagram: Element, ordinal: int) -> Activity:
        diagram_id = self._widget_id(diagram) or f"umbrello-activity-diagram-{ordinal}"
        name = diagram.get("name") or f"activity diagram {ordinal}"
        widgets, others, pins = self._widgets(diagram)
        flows = self._flows(diagram, diagram_id, widgets, others, pins)
        for flow in flows:
            widgets[flow.source].outgoing += 1
            widgets[flow.target].incoming += 1
        nodes: list[Node] = []
        split: dict[str, str] = {}  # widget id -> id of the node that receives its incoming flows
        for widget in widgets.values():
            nodes.extend(self._nodes(widget, split))
        kinds = {node.id: node.kind for node in nodes}
        edges = [self._edge(flow, kinds, split) for flow in flows]
        for widget in widgets.values():
            if widget.id in split:
                edges.append(
                    Edge(
                        id=f"{split[widget.id]}-flow",
                        source=split[widget.id],
                        target=widget.id,
                        location=self._location(widget.element, name=widget.name, uml_type=widget.uml_type),
                    )
                )
        if not nodes:
            self._diag(Severity.INFO, "activity diagram has no activity nodes", diagram, "umbrello.empty")
        return Activity(
            id=diagram_id,
            name=name,
            location=self._location(diagram, name=name, uml_type="diagram/activity"),
            region=Region(nodes=tuple(nodes), edges=tuple(edges)),
        )

    def _widgets(self, diagram: Element) -> tuple[dict[str, _Widget], dict[str, Element], dict[str, str]]:
        """Node widgets by id (file order), other widgets by id, and pin -> owner."""
        widgets: dict[str, _Widget] = {}
        others: dict[str, Element] = {}
        pins: dict[str, str] = {}
        holder = next((sub for sub in diagram if sub.tag == "widgets"), None)
        if holder is None:
            return widgets, others, pins
        for element in holder:
            tag = element.tag
            if not isinstance(tag, str):
                continue
            ident = self._widget_id(element)
            if ident is None:
                continue
            if tag == "pinwidget":
                owner = element.get("widgetaid")
                if owner:
                    pins[ident] = owner
                others[ident] = element
                continue
            if tag in _NOT_NODES:
                others[ident] = element
                continue
            widget = self._classify(element, ident, tag)
            if widget is None:
                others[ident] = element
                continue
            widgets[ident] = widget
        return widgets, others, pins

    def _classify(self, element: Element, ident: str, tag: str) -> _Widget | None:
        if tag == "activitywidget":
            code = element.get("activitytype", "1")
            kind, label = _ACTIVITY_TYPES.get(code, (NodeKind.ACTION, f"type {code}"))
            if code not in _ACTIVITY_TYPES:
                self._diag(
                    Severity.WARNING,
                    f"activity widget of unknown type {code}; read as an action",
                    element,
                    "umbrello.activitytype",
                )
            name = element.get("activityname", "")
            return _Widget(element, ident, tag, kind, f"activitywidget/{label}", name)
        if tag == "forkjoin":
            return _Widget(element, ident, tag, NodeKind.FORK, "forkjoin", element.get("name", ""))
        if tag == "signalwidget":
            label = _SIGNAL_TYPES.get(element.get("signaltype", "0"), "Send")
            name = element.get("signalname", "")
            return _Widget(element, ident, tag, NodeKind.ACTION, f"signalwidget/{label}", name)
        if tag == "objectnodewidget":
            label = _OBJECT_TYPES.get(element.get("objectnodetype", "0"), "Normal")
            name = element.get("objectnodename", "")
            return _Widget(element, ident, tag, NodeKind.OBJECT, f"objectnodewidget/{label}", name)
        self._diag(
            Severity.WARNING,
            f"{tag} is not an activity node; left out of the activity",
            element,
            "umbrello.widget",
        )
        return None

    def _flows(
        self,
        diagram: Element,
        diagram_id: str,
        widgets: dict[str, _Widget],
        others: dict[str, Element],
        pins: dict[str, str],
    ) -> list[_Flow]:
        holder = next((sub for sub in diagram if sub.tag == "associations"), None)
        if holder is None:
            return []
        flows: list[_Flow] = []
        for number, element in enumerate(sub for sub in holder if sub.tag == "assocwidget"):
            assoc_type = element.get("type", "")
            if assoc_type not in (ASSOC_FLOW, ASSOC_EXCEPTION):
                if assoc_type != ASSOC_ANCHOR:
                    self._diag(
                        Severity.INFO,
                        f"association of type {assoc_type} on an activity diagram skipped",
                        element,
                        "umbrello.association",
                    )
                continue
            ident = self._widget_id(element) or f"{diagram_id}#flow{number + 1}"
            ends = [self._end(element, ident, side, widgets, others, pins) for side in ("a", "b")]
            if ends[0] is None or ends[1] is None:
                continue
            if assoc_type == ASSOC_EXCEPTION:
                self._diag(
                    Severity.WARNING,
                    "exception (interrupting) edge read as an ordinary control flow",
                    element,
                    "umbrello.exception-edge",
                )
            flows.append(_Flow(element, ident, ends[0], ends[1], assoc_type, self._label(element)))
        return flows

    def _end(
        self,
        element: Element,
        ident: str,
        side: str,
        widgets: dict[str, _Widget],
        others: dict[str, Element],
        pins: dict[str, str],
    ) -> str | None:
        """The node id at one end of a flow; ``None`` when the flow is dropped."""
        end = "source" if side == "a" else "target"
        target = element.get(f"widget{side}id")
        if not target:
            self._diag(
                Severity.WARNING,
                f"activity flow {ident!r} has no {end} widget; it is skipped",
                element,
                "broken-flow",
            )
            return None
        target = pins.get(target, target)
        if target in widgets:
            return target
        if target in others:
            other = others[target]
            self._diag(
                Severity.WARNING,
                f"activity flow {ident!r} connects a {other.tag} [xmi:id={target}], which is not an "
                f"activity node; flow skipped",
                element,
                "umbrello.flow-to-non-node",
            )
            return None
        raise ModelError(
            f"activity flow {ident!r} refers to {end} widget {target!r}, which is not on its diagram",
            self._location(element, name="", uml_type="assocwidget"),
            hint="the file is incomplete or was edited by hand; delete the flow in Umbrello or save again",
        )

    @staticmethod
    def _label(element: Element) -> str:
        for sub in element:
            if sub.tag == "floatingtext" and sub.get("role") == NAME_ROLE:
                return (sub.get("text") or "").strip()
        return ""

    # --------------------------------------------------------------- nodes

    def _nodes(self, widget: _Widget, split: dict[str, str]) -> list[Node]:
        location = self._location(widget.element, name=widget.name, uml_type=widget.uml_type)
        kind = widget.kind
        if widget.tag == "forkjoin":
            if widget.incoming > 1 and widget.outgoing > 1:
                return self._split(widget, location, NodeKind.JOIN, NodeKind.FORK, "join", split)
            kind = NodeKind.JOIN if widget.incoming > 1 else NodeKind.FORK
        elif kind is NodeKind.DECISION:
            if widget.incoming > 1 and widget.outgoing > 1:
                return self._split(widget, location, NodeKind.MERGE, NodeKind.DECISION, "merge", split)
            kind = NodeKind.DECISION if widget.outgoing > 1 else NodeKind.MERGE
        return [Node(id=widget.id, name=widget.name, kind=kind, uml_type=widget.uml_type, location=location)]

    @staticmethod
    def _split(
        widget: _Widget,
        location: Location,
        first: NodeKind,
        second: NodeKind,
        suffix: str,
        split: dict[str, str],
    ) -> list[Node]:
        entry = f"{widget.id}#{suffix}"
        split[widget.id] = entry
        return [
            Node(id=entry, name=widget.name, kind=first, uml_type=widget.uml_type, location=location),
            Node(id=widget.id, name=widget.name, kind=second, uml_type=widget.uml_type, location=location),
        ]

    def _edge(self, flow: _Flow, kinds: dict[str, NodeKind], split: dict[str, str]) -> Edge:
        label = flow.label
        guard = None
        name = label
        if label.startswith("[") and label.endswith("]"):
            guard, name = label[1:-1].strip() or None, ""
        elif label and kinds.get(flow.source) is NodeKind.DECISION:
            guard, name = label, ""
        if guard is not None and guard.lower() == "true":
            guard = None
        is_object = NodeKind.OBJECT in (kinds.get(flow.source), kinds.get(flow.target))
        return Edge(
            id=flow.id,
            source=flow.source,
            target=split.get(flow.target, flow.target),
            location=self._location(flow.element, name=name, uml_type="assocwidget"),
            name=name,
            kind="object" if is_object else "control",
            guard=guard,
        )


class UmbrelloDialect:
    """Umbrello 1.6 (XMI 1.2) and 2.x (XMI 2.1 header) activity diagrams."""

    name = "umbrello"
    description = "Umbrello UML Modeller 1.6 and 2.x (activity diagrams stored as diagram widgets)"

    def detect(self, doc: XmiDocument) -> int:
        return umbrello_score(doc)

    def read(self, doc: XmiDocument) -> Model:
        return UmbrelloReader(doc, self.name).read()


DIALECT = UmbrelloDialect()
