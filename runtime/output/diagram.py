"""The activity diagram as drawn, laid out as a layered graph and shaded by each node's share of the run.

Why a layered layout computed here: the report must be one file that is readable offline and
with scripts off, so the diagram is static SVG, placed in Python with networkx (already a core
dependency) instead of a JavaScript layout library in the page.  The steps are those of a
Sugiyama layout, kept small:

1. flows that close a cycle (the back edge of a loop drawn with a decision and a merge) are
   found by a depth-first search from the initial nodes and set aside, so the rest is acyclic;
2. each node's layer is the length of the longest path reaching it (flows point down);
3. nodes within a layer are ordered by the mean position of their neighbours, sweeping down
   and up a few times, which removes most crossings;
4. each layer is centred; flows are straight lines, back edges run round the right side in
   the gaps between layers (:func:`_around_the_right`).

Input is plain data, one *panel* per flow graph (an activity, or the body of a structured
node), ``{"title", "nodes": [{"id", "name", "kind"}], "edges": [{"source", "target", "label"}]}``;
``uml2perf`` builds it from the model it read.  A run of a generated module has no flows, so the
report shows its elements instead (see :func:`element_bars`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .charts import shade
from .results import format_time

#: Height of a layer and the gap between nodes of one layer (SVG units).
LAYER_GAP = 74.0
NODE_GAP = 26.0
NODE_HEIGHT = 40.0
MARGIN = 20.0
#: Node kinds drawn as small control shapes rather than boxes with a name.
CONTROL_SHAPES = {
    "initial": "initial",
    "activity_final": "final",
    "flow_final": "flow_final",
    "decision": "diamond",
    "merge": "diamond",
    "fork": "bar",
    "join": "bar",
}
#: Longest node label (characters); longer names are cut with an ellipsis (the tooltip has all).
LABEL_CHARS = 28
#: Placeholders of long flows in one panel at most (they make ordering slower as they grow).
MAX_PLACEHOLDERS = 4000
#: Longest flow label (a guard) drawn (characters).
EDGE_LABEL_CHARS = 32


def _size(kind: str, label: str) -> tuple[float, float]:
    shape = CONTROL_SHAPES.get(kind)
    if shape in ("initial", "final", "flow_final"):
        return 22.0, 22.0
    if shape == "diamond":
        return 34.0, 34.0
    if shape == "bar":
        return 90.0, 8.0
    return max(96.0, 7.2 * min(len(label), LABEL_CHARS) + 20.0), NODE_HEIGHT


def _back_edges(order: Sequence[str], edges: Sequence[tuple[str, str]], starts: Sequence[str]) -> set[int]:
    """Indices of the edges that close a cycle in a depth-first search from ``starts``, then the rest."""
    out: dict[str, list[tuple[int, str]]] = {n: [] for n in order}
    for i, (u, v) in enumerate(edges):
        out[u].append((i, v))
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    back: set[int] = set()
    for root in [*starts, *order]:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(out[root]))]
        while stack:
            node, children = stack[-1]
            step = next(children, None)
            if step is None:
                state[node] = 2
                stack.pop()
                continue
            i, child = step
            seen = state.get(child)
            if seen == 1:
                back.add(i)
            elif seen is None:
                state[child] = 1
                stack.append((child, iter(out[child])))
    return back


def _layers(order: Sequence[str], forward: Sequence[tuple[str, str]]) -> dict[str, int]:
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(order)
    graph.add_edges_from(forward)
    layer: dict[str, int] = {}
    for node in nx.topological_sort(graph):
        preds = [layer[p] + 1 for p in graph.predecessors(node)]
        layer[node] = max(preds, default=0)
    return layer


def _order(
    order: Sequence[str], layer: Mapping[str, int], forward: Sequence[tuple[str, str]]
) -> list[list[str]]:
    """Nodes of each layer, ordered by the barycentre of their neighbours (a few sweeps)."""
    count = max(layer.values(), default=-1) + 1
    rows: list[list[str]] = [[] for _ in range(count)]
    for node in order:
        rows[layer[node]].append(node)
    ups: dict[str, list[str]] = {n: [] for n in order}
    downs: dict[str, list[str]] = {n: [] for n in order}
    for u, v in forward:
        downs[u].append(v)
        ups[v].append(u)
    position = {n: i for row in rows for i, n in enumerate(row)}
    for sweep in range(4):
        neighbours = ups if sweep % 2 == 0 else downs
        indices = range(1, count) if sweep % 2 == 0 else range(count - 2, -1, -1)
        for r in indices:

            def key(n: str, near: dict[str, list[str]] = neighbours, at: dict[str, int] = position) -> float:
                seen = [at[m] for m in near[n]]
                return sum(seen) / len(seen) if seen else float(at[n])

            rows[r].sort(key=key)
            for i, n in enumerate(rows[r]):
                position[n] = i
    return rows


def layout_panel(panel: Mapping[str, Any]) -> dict[str, Any]:
    """Positions of a panel's nodes (centre x, y, width, height) and the paths of its flows.

    A flow that spans several layers passes through a small placeholder in each layer between
    (as in every Sugiyama layout), so it bends around the nodes in those layers instead of
    running through them.
    """
    nodes = list(panel["nodes"])
    ids = [n["id"] for n in nodes]
    known = set(ids)
    kept = [e for e in panel["edges"] if e["source"] in known and e["target"] in known]
    edges = [(e["source"], e["target"]) for e in kept]
    labels = [_short(e.get("label") or "", EDGE_LABEL_CHARS) for e in kept]
    targets = {v for _, v in edges}
    starts = [n["id"] for n in nodes if n["kind"] == "initial"] + [i for i in ids if i not in targets]
    back = _back_edges(ids, edges, starts)
    forward = [e for i, e in enumerate(edges) if i not in back and e[0] != e[1]]
    layer = _layers(ids, forward)
    sizes = {n["id"]: _size(n["kind"], n.get("label") or n["name"]) for n in nodes}
    # placeholders of long flows, so that ordering and placing see them
    chains: dict[int, list[str]] = {}
    placeholders = 0
    order = list(ids)
    segments: list[tuple[str, str]] = []
    for i, (u, v) in enumerate(edges):
        if i in back or u == v:
            continue
        span = layer[v] - layer[u] - 1
        if placeholders + span > MAX_PLACEHOLDERS:  # a huge graph: its long flows stay straight
            span = 0
        placeholders += span
        chain = [f"\0{i}.{k}" for k in range(1, span + 1)]
        for k, dummy in enumerate(chain, start=1):
            layer[dummy] = layer[u] + k
            sizes[dummy] = (12.0, 0.0)
            order.append(dummy)
        chains[i] = chain
        hops = [u, *chain, v]
        segments.extend(zip(hops, hops[1:], strict=False))
    rows = _order(order, layer, segments)
    widths = [sum(sizes[n][0] for n in row) + NODE_GAP * max(0, len(row) - 1) for row in rows]
    total_w = max(widths, default=100.0) + 2 * MARGIN
    place: dict[str, tuple[float, float]] = {}
    for r, row in enumerate(rows):
        x = (total_w - widths[r]) / 2
        for n in row:
            w, _ = sizes[n]
            place[n] = (x + w / 2, MARGIN + r * LAYER_GAP + NODE_HEIGHT / 2)
            x += w + NODE_GAP
    height = MARGIN * 2 + max(0, len(rows) - 1) * LAYER_GAP + NODE_HEIGHT
    drawn_edges = []
    right = total_w
    extent = [max((place[n][0] + sizes[n][0] / 2 for n in row), default=0.0) for row in rows]
    loops = 0
    for i, (u, v) in enumerate(edges):
        (x1, y1), (x2, y2) = place[u], place[v]
        if i in back or u == v:
            low, high = sorted((layer[u], layer[v]))
            side = max(extent[r] for r in range(low, high + 1)) + 18.0 + 8.0 * loops
            loops += 1
            points = _around_the_right((x1 + sizes[u][0] / 2, y1), (x2 + sizes[v][0] / 2, y2), side)
            path = "M" + " L".join(f"{x:.1f},{y:.1f}" for x, y in points)
            label_at = (side + 3, (y1 + y2) / 2)
            right = max(right, side + 10)
        else:
            points = [(x1, y1 + sizes[u][1] / 2)]
            points += [place[d] for d in chains.get(i, [])]
            points.append((x2, y2 - sizes[v][1] / 2))
            path = "M" + " L".join(f"{x:.1f},{y:.1f}" for x, y in points)
            (ax, ay), (bx, by) = points[0], points[1]
            label_at = ((ax + bx) / 2 + 5, (ay + by) / 2)
        right = max(right, label_at[0] + 6.0 * len(labels[i]) + MARGIN / 2)
        drawn_edges.append(
            {"path": path, "label": labels[i], "lx": label_at[0], "ly": label_at[1], "back": i in back}
        )
    placed = []
    by_id = {n["id"]: n for n in nodes}
    for n in ids:
        x, y = place[n]
        w, h = sizes[n]
        shape = CONTROL_SHAPES.get(by_id[n]["kind"], "box")
        if shape == "diamond" and by_id[n].get("name"):
            right = max(right, x + 20 + 6.0 * len(_short(by_id[n]["name"], LABEL_CHARS)))
        placed.append({**by_id[n], "x": x, "y": y, "w": w, "h": h, "shape": shape})
    return {"width": right, "height": height, "nodes": placed, "edges": drawn_edges}


def _around_the_right(
    start: tuple[float, float], end: tuple[float, float], side: float
) -> list[tuple[float, float]]:
    """The corners of a flow that closes a loop: out of ``start``'s right edge, round every node, in.

    It leaves the right edge a few units into the gap beside the node, drops (or climbs) into the
    gap between its layer and the next one towards ``end``, runs out to ``side`` (right of every
    node of the layers it passes), along it, and back in the same way to ``end``'s right edge.
    Only the short stubs beside the two nodes run within a layer, inside the gap between
    neighbours, so the flow crosses no node (a curve from edge to edge cut across the nodes of
    wider layers between).
    """
    (x1, y1), (x2, y2) = start, end
    step = NODE_GAP / 3
    towards = 1.0 if y2 >= y1 else -1.0
    gap = (LAYER_GAP - NODE_HEIGHT) / 2 + NODE_HEIGHT / 2  # from a node's centre to mid-gap
    if (x1, y1) == (x2, y2):  # a flow from a node to itself: a small loop in the gap beside it
        return [(x1, y1 + 6.0), (x1 + step, y1 + 6.0), (x1 + step, y1 - 6.0), (x2, y2 - 6.0)]
    leave, arrive = y1 + towards * gap, y2 - towards * gap
    return [
        (x1, y1),
        (x1 + step, y1),
        (x1 + step, leave),
        (side, leave),
        (side, arrive),
        (x2 + step, arrive),
        (x2 + step, y2),
        (x2, y2),
    ]


def _short(text: str, most: int) -> str:
    """``text`` cut to ``most`` characters with an ellipsis (tooltips and tables keep it whole)."""
    return text if len(text) <= most else text[: most - 1] + "\u2026"


def diagram_panels(
    diagram: Mapping[str, Any], elements: Sequence[Mapping[str, Any]], process_seconds: float
) -> list[dict[str, Any]]:
    """Each panel laid out, its nodes shaded by their share of the run and labelled with their time.

    A node is matched to its profile row by xmi id (then by name); its share is the row's
    inclusive time over the summed time of all processes, its label the mean time of a process
    that ran it.  Nodes without a row (decisions, merges, forks...) stay white.
    """
    by_id = {row.get("id"): row for row in elements if row.get("id")}
    by_name: dict[str, Mapping[str, Any]] = {}
    for element in elements:
        by_name.setdefault(element["name"], element)
    panels = []
    for panel in diagram.get("panels", ()):
        laid = layout_panel(panel)
        for node in laid["nodes"]:
            row: Mapping[str, Any] | None = by_id.get(node["id"])
            if row is None and node["kind"] not in CONTROL_SHAPES and node.get("name"):
                row = by_name.get(node["name"])
            share = row["inclusive"] / process_seconds if row and process_seconds > 0 else 0.0
            fill, ink = shade(share) if row else ("#ffffff", "#000000")
            name = node.get("label") or node["name"] or node["kind"]
            node.update(
                fill=fill,
                ink=ink,
                text=_short(name, LABEL_CHARS),
                time=f"{format_time(row['mean'])} \u00b7 {100 * share:.1f}%" if row and row["calls"] else "",
                anchor=row_anchor(row) if row else None,
                tag=_tag(node, row),
                title=_node_title(node, row, share),
            )
        panels.append({"title": panel["title"], **laid})
    return panels


#: Node kinds whose box says what it is (a plain action needs no word).
TAGGED_KINDS = ("call", "loop", "structured", "conditional")


def _tag(node: Mapping[str, Any], row: Mapping[str, Any] | None) -> str:
    """The word over a box that is not a plain action: its role (``send``, ``parallel``) or its kind."""
    if node["kind"] in CONTROL_SHAPES:
        return ""
    if row is not None and row.get("kind") not in (None, "action"):
        return f"\u00ab{row['kind']}\u00bb"
    return f"\u00ab{node['kind']}\u00bb" if node["kind"] in TAGGED_KINDS else ""


def _node_title(node: Mapping[str, Any], row: Mapping[str, Any] | None, share: float) -> str:
    what = f"{node.get('uml_type') or node['kind']} {node['name']}".strip()
    if row is None:
        return f"{what} (xmi:id={node['id']}): no time of its own"
    return (
        f"{what} (xmi:id={node['id']}): {100 * share:.1f}% of the run, {format_time(row['inclusive'])} "
        f"over all processes, {format_time(row['mean'])} per process that ran it, {row['calls']:,} calls"
    )


def row_anchor(row: Mapping[str, Any]) -> str:
    """The id of the element's row in the report's table (its xmi id, else its name)."""
    key = str(row.get("id") or row["name"])
    return "el-" + "".join(ch if ch.isalnum() or ch in "-_" else f"_{ord(ch):x}" for ch in key)


def element_bars(
    elements: Sequence[Mapping[str, Any]], process_seconds: float, most: int = 30
) -> dict[str, Any]:
    """Without the diagram: the elements with the most time as shaded bars, in profile order."""
    rows = [r for r in elements if r["calls"]][:most]
    bars = []
    for i, row in enumerate(rows):
        share = row["inclusive"] / process_seconds if process_seconds > 0 else 0.0
        fill, _ = shade(share)
        bars.append(
            {
                "y": i * 22.0,
                "w": max(1.0, 560.0 * min(share, 1.0)),
                "fill": fill,
                "label": f"{row['name']} ({row['kind']})",
                "time": f"{format_time(row['mean'])} \u00b7 {100 * share:.1f}%",
                "anchor": row_anchor(row),
                "title": f"{row['name']} ({row['kind']}): {100 * share:.1f}% of the run",
            }
        )
    return {
        "bars": bars,
        "height": 22.0 * len(bars) + 4,
        "more": max(0, sum(1 for r in elements if r["calls"]) - most),
    }


__all__ = ["diagram_panels", "element_bars", "layout_panel", "row_anchor"]
