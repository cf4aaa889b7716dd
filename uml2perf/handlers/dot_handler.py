"""The ``dot`` content handler: a Graphviz picture of every activity.

It walks the raw model with the graph navigator (nodes and flows in file
order), so the picture shows what was drawn, not what recovery made of it.
Activities and structured nodes become clusters; shapes follow UML habits
(filled dot for initial, diamond for decision/merge, bar for fork/join);
guards and probabilities label the flows; costs and tags become tooltips.
Every id and label is escaped, so model text cannot break the file.
"""

from __future__ import annotations

from ..model import CONTROL_KINDS, Activity, Edge, Model, Node, NodeKind
from .base import ContentHandler, GenerationJob

_SHAPES: dict[NodeKind, str] = {
    NodeKind.INITIAL: 'shape=circle, style=filled, fillcolor=black, label="", width=0.2, fixedsize=true',
    NodeKind.ACTIVITY_FINAL: 'shape=doublecircle, style=filled, fillcolor=black, label="", width=0.15,'
    " fixedsize=true",
    NodeKind.FLOW_FINAL: 'shape=circle, label="X", width=0.25, fixedsize=true',
    NodeKind.DECISION: "shape=diamond",
    NodeKind.MERGE: "shape=diamond",
    NodeKind.FORK: (
        'shape=box, style=filled, fillcolor=black, label="", height=0.06, width=1.2, fixedsize=true'
    ),
    NodeKind.JOIN: (
        'shape=box, style=filled, fillcolor=black, label="", height=0.06, width=1.2, fixedsize=true'
    ),
    NodeKind.OBJECT: "shape=box",
    NodeKind.ACTION: 'shape=box, style="rounded"',
    NodeKind.CALL: 'shape=box, style="rounded,bold"',
    NodeKind.STRUCTURED: 'shape=box, style="rounded,dashed"',
    NodeKind.LOOP: 'shape=box, style="rounded,dashed"',
    NodeKind.CONDITIONAL: 'shape=box, style="rounded,dashed"',
}


def dot_string(text: str) -> str:
    """A double-quoted DOT string; backslashes, quotes and line breaks are escaped."""
    escaped = str(text).replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return '"' + "".join(ch if ch.isprintable() or ch == "\\" else " " for ch in escaped) + '"'


class DotHandler(ContentHandler):
    """Writes a Graphviz ``digraph`` of the model's activities."""

    name = "dot"
    suffix = ".dot"
    needs = "model"
    description = "Graphviz picture of the activities (render with dot -Tsvg)"

    def start(self, job: GenerationJob) -> None:
        super().start(job)
        self.lines: list[str] = []
        self.depth = 0
        self.clusters = 0
        self.model: Model = job.model
        self.main_id = job.main.id if job.main is not None else None

    def _emit(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def _open_cluster(self, label: str, style: str) -> None:
        self.clusters += 1
        self._emit(f"subgraph cluster_{self.clusters} {{")
        self.depth += 1
        self._emit(f"label={dot_string(label)}; {style}")

    def _close_cluster(self) -> None:
        self.depth -= 1
        self._emit("}")

    def visit_Model(self, model: Model) -> None:
        pass

    def visit_Activity(self, activity: Activity) -> None:
        label = f"activity {activity.name}" + ("  «main»" if activity.id == self.main_id else "")
        self._open_cluster(label, 'style="rounded"; color="#4a6fa5";')

    def leave_Activity(self, activity: Activity) -> None:
        self._close_cluster()

    def visit_Node(self, node: Node) -> None:
        attrs = _SHAPES.get(node.kind, "shape=box")
        if node.region is not None:
            self._open_cluster(f"{node.uml_type} {node.name}".strip(), 'style="dashed"; color="#888888";')
        label = node.name or ("" if "label=" in attrs or node.kind in CONTROL_KINDS else node.kind.value)
        role = node.perf.role.value if node.perf is not None else None
        if role is not None and role != "action" and "label=" not in attrs:
            label = f"{label}\n«{role}+»"
        parts = [attrs]
        if "label=" not in attrs:
            parts.append(f"label={dot_string(label)}")
        tooltip = self._tooltip(node)
        if tooltip:
            parts.append(f"tooltip={dot_string(tooltip)}")
        self._emit(f"{dot_string(node.id)} [{', '.join(parts)}];")

    def leave_Node(self, node: Node) -> None:
        if node.region is not None:
            self._close_cluster()

    def _tooltip(self, node: Node) -> str:
        bits = [f"{node.uml_type} {node.name}".strip(), f"xmi:id={node.id}"]
        if node.location.line:
            bits.append(f"line {node.location.line}")
        if node.perf is not None:
            bits.extend(f"{key} = {value}" for key, value in node.perf.tags)
        if node.code:
            bits.append(f"code: {node.code}")
        return "\n".join(bits)

    def visit_Edge(self, edge: Edge) -> None:
        attrs: list[str] = []
        if edge.guard is not None:
            attrs.append(f"label={dot_string('[' + edge.guard + ']')}")
        elif edge.probability is not None:
            attrs.append(f"label={dot_string('p=' + edge.probability)}")
        if edge.kind == "object":
            attrs.append("style=dashed")
        suffix = f" [{', '.join(attrs)}]" if attrs else ""
        self._emit(f"{dot_string(edge.source)} -> {dot_string(edge.target)}{suffix};")

    def finish(self) -> str:
        from .templates import render

        title = self.model.name or self.model.source or "model"
        return render(
            "model_graph.dot.jinja",
            {"title": title.replace("\n", " "), "graph_id": dot_string(title), "lines": self.lines},
        )
