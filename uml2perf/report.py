"""What the HTML report needs from the model as drawn, and the sweep's result writers.

The runtime draws the report (:mod:`uml2perf_runtime.output.report`) from plain data.  A run of
an XMI export knows the diagram: this module reads the bytes the run read (never the file again,
which may have changed since) and turns the activity that
ran, the bodies of its structured nodes and the activities it calls into *panels* of nodes and
flows as the user drew them (the runtime lays them out).  A generated module run on its own has
no flows, and its report shows the elements instead.

The sweep's writers (text table, CSV, JSON, plot, report) are registered here, in the same
registry as a run's (:mod:`uml2perf_runtime.output.writers`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from uml2perf_runtime.output import writers

from .model import Activity, Model, Node, NodeKind, Region

#: Panels drawn at most (the activity, its structured nodes' bodies and the activities it calls).
MAX_PANELS = 40
#: Nodes of one panel drawn at most: a larger flow graph is listed in the table only.
MAX_PANEL_NODES = 400


def _node(node: Node, model: Model) -> dict[str, Any]:
    name = node.name
    if node.kind == NodeKind.CALL and node.behavior is not None:
        called = model.activity(node.behavior)
        if not name and called is not None:
            name = f"call {called.name}"
    return {"id": node.id, "name": name, "kind": node.kind.value, "uml_type": node.uml_type}


def _panel(title: str, region: Region, model: Model) -> dict[str, Any]:
    return {
        "title": title,
        "nodes": [_node(n, model) for n in region.nodes],
        "edges": [
            {
                "source": e.source,
                "target": e.target,
                "label": f"[{e.guard}]" if e.guard else (f"p={e.probability}" if e.probability else ""),
            }
            for e in region.edges
        ],
    }


def diagram_of_model(model: Model, activity: str | None = None) -> dict[str, Any]:
    """Panels of the activity that runs (``activity``: name or id, else the main one) and what it reaches."""
    from .profile import main_activity

    start = main_activity(model, activity)
    panels: list[dict[str, Any]] = []
    skipped: list[str] = []
    queue: list[Activity] = [start]
    seen: set[str] = set()
    while queue and len(panels) < MAX_PANELS:
        act = queue.pop(0)
        if act.id in seen:
            continue
        seen.add(act.id)
        found = [(f"activity {act.name}" + (" (the one run)" if act is start else ""), act.region)]
        for node in act.walk():
            if node.region is not None:
                found.append((f"{node.uml_type} {node.name}".strip() + f" in {act.name}", node.region))
            if node.kind == NodeKind.CALL and node.behavior is not None:
                called = model.activity(node.behavior)
                if called is not None and called.id not in seen:
                    queue.append(called)
        for title, region in found:
            if len(region.nodes) > MAX_PANEL_NODES:
                skipped.append(f"{title} ({len(region.nodes)} nodes)")
            elif region.nodes and len(panels) < MAX_PANELS:
                panels.append(_panel(title, region, model))
            elif region.nodes:
                skipped.append(f"{title} (past the first {MAX_PANELS} panels)")
    return {
        "source": Path(model.source).name if model.source else "the model",
        "panels": panels,
        "skipped": skipped,
    }


def diagram_of_results(results: Any) -> dict[str, Any] | None:
    """The diagram of the export a run read (``predict`` notes its path on the results), or None.

    A module, a missing file or an export that no longer reads gives None: the report then
    shows the elements instead of the diagram.
    """
    origin = getattr(results, "model_origin", None)
    if not isinstance(origin, Mapping):
        return None
    path = origin.get("path")
    read = origin.get("input")  # the bytes the run read: the diagram is of the model that ran
    if path is None or Path(str(path)).suffix in (".py", ".pyw"):
        return None
    if read is None and not Path(str(path)).is_file():
        return None
    from uml2perf_runtime.errors import SimulationError

    from .api import default_cost_text, read_model_checked
    from .errors import Uml2PerfError

    try:
        cost = default_cost_text(origin.get("default_cost"))
        model = read_model_checked(read if read is not None else Path(str(path)), origin.get("sidecar"), cost)
        return diagram_of_model(model, origin.get("activity"))
    except (Uml2PerfError, SimulationError):  # changed or unreadable since the run: no diagram
        return None


writers.register_diagram_source(diagram_of_results)


# --------------------------------------------------------------------------- the sweep's writers


def _sweep_text(result: Any, options: Mapping[str, Any]) -> str:
    from .sweep import format_table

    return format_table(result)


def _sweep_csv(result: Any, options: Mapping[str, Any]) -> str:
    from .sweep import to_csv

    return to_csv(result)


def _sweep_json(result: Any, options: Mapping[str, Any]) -> str:
    from .sweep import to_json

    return to_json(result, str(options.get("model", result.model)), result.machine)


def sweep_data(result: Any) -> dict[str, Any]:
    """A sweep's rows, findings and notes with its model and machine, as plain data for the report."""
    machine = result.machine
    return {
        **result.to_dict(),
        "model": result.model,
        "machine": machine.to_dict() if hasattr(machine, "to_dict") else machine,
    }


def _sweep_report(result: Any, options: Mapping[str, Any]) -> str:
    from uml2perf_runtime.output.report import render_sweep_report

    return render_sweep_report(sweep_data(result), command=options.get("command"))


def _sweep_plot(result: Any, options: Mapping[str, Any]) -> Any:
    from .sweep_plot import sweep_figure_content

    return sweep_figure_content(result, str(options.get("path", "sweep.png")), model=result.model)


def _check_sweep_plot(path: Any) -> None:
    from .sweep_plot import check_plot_target

    check_plot_target(str(path))


for _writer in (
    writers.ResultWriter("sweep", "text", "table", _sweep_text, description="aligned text table"),
    writers.ResultWriter("sweep", "csv", "CSV file", _sweep_csv, description="one row per point"),
    writers.ResultWriter("sweep", "json", "JSON file", _sweep_json, description="rows, notes and findings"),
    writers.ResultWriter(
        "sweep", "plot", "plot", _sweep_plot, check=_check_sweep_plot, description="scaling picture"
    ),
    writers.ResultWriter("sweep", "report", "HTML report", _sweep_report, description="self-contained HTML"),
):
    writers.register(_writer)


__all__ = ["diagram_of_model", "diagram_of_results", "sweep_data"]
