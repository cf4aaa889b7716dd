"""One self-contained HTML page per run and per sweep: what a user passes on.

Everything is inline (styles, script, charts as SVG), nothing is fetched, so the file opens
offline and years later.  The page is built from the templates in ``templates/report/``
(rendered with HTML autoescaping: names from a model can never become markup); this module
only gathers the figures, already computed in the results, into tables and chart geometry
(:mod:`~uml2perf_runtime.output.charts`, :mod:`~uml2perf_runtime.output.diagram`).

The run report reads a :class:`~uml2perf_runtime.output.results.Results` through its public
attributes and ``to_dict()``; figures that only some runs have (a prediction interval,
replications, what-ifs, a mapping) appear when they are there.
"""

from __future__ import annotations

import math
import shlex
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from . import charts
from .diagram import diagram_panels, element_bars, row_anchor
from .results import SWEEP_TIME_COLUMNS, critical_path_totals, format_time

#: Rows of the per-process table shown in the page (all of them go into its CSV download).
MAX_PROCESS_ROWS = 1024
#: Steps of the critical path listed one by one (its per-element totals are always complete).
MAX_PATH_STEPS = 200


@lru_cache(maxsize=1)
def _environment() -> Any:
    """A Jinja environment for HTML: autoescaping on, templates from ``uml2perf_templates``."""
    from pathlib import Path

    import jinja2

    import uml2perf_templates

    folder = Path(uml2perf_templates.__file__).resolve().parent
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("uml2perf")
    except Exception:  # noqa: BLE001 - a copy that is not installed still writes its report
        return "unknown"


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command as a user would type it again (``uml2perf run ...``)."""
    args = list(sys.argv if argv is None else argv)
    if args and args[0].endswith(("__main__.py", "/uml2perf", "uml2perf")):
        args[0] = "uml2perf"
    elif args and args[0].endswith(".py"):  # a generated module run on its own
        args.insert(0, "python")
    return " ".join(shlex.quote(a) for a in args)


# --------------------------------------------------------------------------- tables


def _cell(value: Any, seconds: bool = False) -> dict[str, Any]:
    """A table cell: what is shown and the value that sorts it and goes into the CSV file."""
    if isinstance(value, bool) or value is None:
        shown = "" if value is None else str(value)
        return {"text": shown, "value": shown, "numeric": False}
    if isinstance(value, (int, float)):
        if seconds:
            return {"text": format_time(float(value)), "value": repr(float(value)), "numeric": True}
        if isinstance(value, float):
            return {"text": f"{value:.4g}", "value": repr(value), "numeric": True}
        return {"text": f"{value:,}", "value": str(value), "numeric": True}
    return {"text": str(value), "value": str(value), "numeric": False}


def table(
    key: str,
    caption: str,
    columns: Sequence[tuple[str, str, str]],
    rows: Sequence[Mapping[str, Any]],
    *,
    row_ids: Sequence[str | None] | None = None,
    shown: int | None = None,
) -> dict[str, Any]:
    """A sortable table: ``columns`` are (key, heading, type) with type ``s`` (seconds), ``n``, ``t``."""
    body = []
    limit = len(rows) if shown is None else min(shown, len(rows))
    for i, row in enumerate(rows[:limit]):
        body.append(
            {
                "id": row_ids[i] if row_ids else None,
                "cells": [_cell(row.get(k), kind == "s") for k, _, kind in columns],
            }
        )
    return {
        "key": key,
        "caption": caption,
        "columns": [{"key": k, "label": label, "numeric": kind in ("s", "n")} for k, label, kind in columns],
        "rows": body,
        "hidden": len(rows) - limit,
        "csv_name": f"{key}.csv",
        "csv": _csv(columns, rows) if limit < len(rows) else None,
    }


def _csv(columns: Sequence[tuple[str, str, str]], rows: Sequence[Mapping[str, Any]]) -> str:
    """Every row as CSV (for a table that shows only some of its rows); seconds say so in the header."""
    import csv
    import io

    buffer = io.StringIO()
    out = csv.writer(buffer, lineterminator="\n")
    out.writerow([f"{k}_s" if kind == "s" else k for k, _, kind in columns])
    for row in rows:
        out.writerow(
            [
                repr(v) if isinstance(v, float) else ("" if v is None else v)
                for v in (row.get(k) for k, _, _ in columns)
            ]
        )
    return buffer.getvalue()


ELEMENT_TABLE = (
    ("name", "element", "t"),
    ("kind", "kind", "t"),
    ("calls", "calls", "n"),
    ("inclusive", "inclusive", "s"),
    ("exclusive", "exclusive", "s"),
    ("percent", "% exclusive", "n"),
    ("per_call", "per call", "s"),
    ("processes", "processes", "n"),
    ("mean", "mean per process", "s"),
    ("min", "min", "s"),
    ("max", "max", "s"),
    ("std", "std", "s"),
    ("id", "xmi:id", "t"),
    ("line", "line", "n"),
)
PROCESS_TABLE = (
    ("pid", "rank", "n"),
    ("node", "node", "n"),
    ("time", "finish time", "s"),
    ("compute", "compute", "s"),
    ("communication", "communication", "s"),
    ("wait", "wait", "s"),
    ("thread_compute", "threads: compute", "s"),
    ("thread_communication", "threads: communication", "s"),
    ("thread_wait", "threads: wait", "s"),
)


# --------------------------------------------------------------------------- the run report


def interval_of(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """The prediction's interval when the results carry one, for the summary card.

    ``interval`` may be a mapping or an object with ``low`` and ``high`` (and ``level``, a share
    or a percentage), or a ``(low, high)`` pair; anything else shows no interval.
    """
    found = data.get("interval")
    if found is None:
        return None
    if isinstance(found, Mapping):
        low, high = found.get("low"), found.get("high")
        level = found.get("level") or found.get("confidence")
    elif isinstance(found, Sequence) and len(found) >= 2:
        low, high, level = found[0], found[1], None
    elif hasattr(found, "low") and hasattr(found, "high"):
        low, high = found.low, found.high
        level = getattr(found, "level", None) or getattr(found, "confidence", None)
    else:
        return None
    if not isinstance(low, (int, float)) or not isinstance(high, (int, float)):
        return None
    label = "interval"
    if isinstance(level, (int, float)) and 0 < level <= 100:
        label = f"{100 * level if level <= 1 else level:.0f}% interval"
    return {"low": format_time(float(low)), "high": format_time(float(high)), "label": label}


#: Names a prediction interval goes by in the results (the first one present is shown).
INTERVAL_KEYS = ("interval", "prediction_interval", "time_interval")


def _interval_field(results: Any, data: Mapping[str, Any]) -> Any:
    for key in INTERVAL_KEYS:
        if data.get(key) is not None:
            return data[key]
    for key in INTERVAL_KEYS:
        if getattr(results, key, None) is not None:
            return getattr(results, key)
    return None


def run_context(
    results: Any, *, diagram: Mapping[str, Any] | None = None, command: str | None = None
) -> dict[str, Any]:
    """Everything the run report's template shows, from the results' public figures."""
    data = results.to_dict()
    machine = data.get("machine") or {}
    per_process = data.get("per_process") or []
    elements = data.get("elements") or []
    time = float(data.get("time") or 0.0)
    process_seconds = sum(float(r.get("time", 0.0)) for r in per_process) or time * max(1, len(per_process))
    used_nodes = len({r.get("node") for r in per_process})
    replications = data.get("replications")
    summary = {
        "model": data.get("model"),
        "source": data.get("source"),
        "machine": machine.get("name"),
        "machine_shape": _shape(data.get("nodes"), machine.get("cores_per_node")),
        "processes": data.get("processes"),
        "nodes_used": used_nodes,
        "placement": data.get("placement"),
        "seed": data.get("seed"),
        "time": format_time(time),
        "time_exact": f"{time:.9g} s",
        "interval": interval_of({"interval": _interval_field(results, data)}),
        "replications": (
            {
                "n": replications["n"],
                "low": format_time(replications["ci95"][0]),
                "high": format_time(replications["ci95"][1]),
                "std": format_time(replications["std"]),
            }
            if replications
            else None
        ),
        "events": f"{int(data.get('events') or 0):,}",
        "wall": f"{float(data.get('wall_time') or 0.0):.3f} s",
        "version": _version(),
        "command": command if command is not None else command_line(),
        "parameters": sorted((str(k), str(v)) for k, v in (data.get("parameters") or {}).items()),
        "written": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    totals = [
        ("compute", sum(float(r.get("compute", 0.0)) for r in per_process)),
        ("comm", sum(float(r.get("communication", 0.0)) for r in per_process)),
        ("wait", sum(float(r.get("wait", 0.0)) for r in per_process)),
    ]
    split = [
        {
            "label": charts.CATEGORY_LABELS[k],
            "colour": charts.CATEGORY_COLOURS[k],
            "share": 100 * v / process_seconds if process_seconds > 0 else 0.0,
            "seconds": format_time(v),
        }
        for k, v in totals
    ]
    element_rows = [
        {**r, "per_call": r["inclusive"] / r["calls"] if r.get("calls") else 0.0} for r in elements
    ]
    process_rows = [
        {
            **r,
            "thread_compute": (r.get("threads") or {}).get("compute", 0.0),
            "thread_communication": (r.get("threads") or {}).get("communication", 0.0),
            "thread_wait": (r.get("threads") or {}).get("wait", 0.0),
        }
        for r in per_process
    ]
    path = data.get("critical_path")
    critical = None
    if path:
        critical = {
            "totals": table(
                "critical-path",
                "Time each element spends on the critical path",
                (
                    ("element", "element", "t"),
                    ("time", "time on the path", "s"),
                    ("share", "% of the run", "n"),
                ),
                [
                    {"element": name, "time": seconds, "share": 100 * seconds / time if time > 0 else 0.0}
                    for name, seconds in critical_path_totals(path)
                ],
            ),
            "steps": [
                {"element": e["element"], "process": e.get("process"), "time": format_time(e["time"])}
                for e in path[:MAX_PATH_STEPS]
            ],
            "more": max(0, len(path) - MAX_PATH_STEPS),
        }
    what_if = _what_if(data, time)
    shown_diagram = diagram_panels(diagram, elements, process_seconds) if diagram else None
    return {
        "title": f"uml2perf report: {data.get('model')}",
        "summary": summary,
        "split": split,
        "elements": table(
            "elements",
            "Where the time goes, per element (summed over processes; threads in thread-seconds)",
            ELEMENT_TABLE,
            element_rows,
            row_ids=[row_anchor(r) for r in element_rows],
        ),
        "processes": table(
            "processes",
            "Per process: when it finished and where its main thread's time went",
            PROCESS_TABLE,
            process_rows,
            shown=MAX_PROCESS_ROWS,
        ),
        "findings": [
            {
                "severity": prop.get("severity"),
                "property": prop.get("property"),
                "element": prop.get("element") or "whole run",
                "hint": prop.get("hint") or "",
                "confidence": prop.get("confidence"),
                "level": _level(prop.get("severity")),
            }
            for prop in _most_severe_first(data.get("properties") or [])
        ],
        "critical": critical,
        "critical_note": data.get("critical_path_note"),
        "timeline": charts.timeline(getattr(results, "timeline", None), time),
        "what_if": what_if,
        "mapping": data.get("mapping"),
        "diagram": shown_diagram,
        "diagram_source": (diagram or {}).get("source"),
        "diagram_skipped": list((diagram or {}).get("skipped") or ()),
        "element_bars": None if shown_diagram else element_bars(elements, process_seconds),
        "more": _more(data),
    }


#: Keys of ``Results.to_dict()`` the run report shows in its own sections; any other key a newer
#: result carries is listed, as JSON, under "More figures", so that nothing a run computed is lost.
SHOWN_KEYS = frozenset(
    {
        "time",
        "processes",
        "nodes",
        "per_process",
        "elements",
        "model",
        "source",
        "machine",
        "placement",
        "seed",
        "parameters",
        "events",
        "wall_time",
        "properties",
        "critical_path",
        "critical_path_note",
        "replications",
        "base_time",
        "what_if",
        "speedups",
        "mapping",
        "alternatives",
        *INTERVAL_KEYS,
    }
)
#: Characters of one further figure's JSON shown in the page (the JSON output has all of it).
MORE_CHARS = 20_000


def _more(data: Mapping[str, Any]) -> list[dict[str, str]]:
    import json

    out = []
    for key, value in data.items():
        if key in SHOWN_KEYS or value is None:
            continue
        text = json.dumps(value, indent=1, default=str)
        if len(text) > MORE_CHARS:
            text = text[:MORE_CHARS] + "\n... (the rest is in the JSON output: run --json)"
        out.append({"key": str(key), "json": text})
    return out


def _most_severe_first(properties: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The findings, most severe first (ties keep the order the analysis gave them)."""

    def severity(prop: Mapping[str, Any]) -> float:
        value = prop.get("severity")
        return -float(value) if isinstance(value, (int, float)) and math.isfinite(value) else 0.0

    return sorted(properties, key=severity)


def _shape(nodes: Any, cores: Any) -> str:
    """``8 nodes x 4 cores``: the machine's size as the text report says it."""
    return f"{nodes} node{'s' if nodes != 1 else ''} x {cores} cores"


def _level(severity: Any) -> str:
    """``high``, ``medium`` or ``low`` for a severity (a share of the run, or already a word)."""
    if isinstance(severity, str):
        return severity.lower() if severity.lower() in ("high", "medium", "low") else "low"
    if not isinstance(severity, (int, float)) or not math.isfinite(severity):
        return "low"
    return "high" if severity >= 0.2 else "medium" if severity >= 0.05 else "low"


def _what_if(data: Mapping[str, Any], time: float) -> dict[str, Any] | None:
    base = data.get("base_time")
    ranked = data.get("speedups")
    if base is None and not ranked:
        return None
    out: dict[str, Any] = {}
    if base is not None and data.get("what_if"):
        change = time - base
        out["factors"] = [{"name": k, "factor": f"{v:g}"} for k, v in data["what_if"].items()]
        out["base"] = format_time(base)
        out["time"] = format_time(time)
        out["change"] = f"{'+' if change >= 0 else '-'}{format_time(abs(change))}"
        out["share"] = f"{100 * change / base:+.1f}%" if base > 0 else ""
    if ranked:
        reference = base if base is not None else time
        out["ranked"] = table(
            "speedups",
            "Each element of the critical path 2x faster: the predicted time, best first",
            (("element", "element", "t"), ("time", "predicted time", "s"), ("saves", "saves", "s")),
            [{"element": r["element"], "time": r["time"], "saves": reference - r["time"]} for r in ranked],
        )
    return out


def render_run_report(
    results: Any, *, diagram: Mapping[str, Any] | None = None, command: str | None = None
) -> str:
    """The run report as one HTML document (``diagram``: the panels of the activity as drawn)."""
    context = run_context(results, diagram=diagram, command=command)
    return str(_environment().get_template("report/run.html.jinja").render(**context))


# --------------------------------------------------------------------------- the sweep report


def sweep_context(data: Mapping[str, Any], *, command: str | None = None) -> dict[str, Any]:
    """The sweep report's figures from a sweep's plain data (``to_dict()`` with its model and machine)."""
    parameters = list(data.get("parameters") or [])
    columns = list(data.get("columns") or [])
    rows = list(data.get("rows") or [])
    x_axis = (
        "procs"
        if "procs" in parameters
        else next(
            (p for p in parameters if rows and all(isinstance(r.get(p), (int, float)) for r in rows)), None
        )
    )
    others = [p for p in parameters if p not in (x_axis, "nodes")]
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row.get(p) for p in others), []).append(row)
    charts_out = []
    if x_axis is not None and rows:
        series = []
        for key, members in groups.items():
            members = sorted(members, key=lambda r: r[x_axis])
            label = ", ".join(f"{k}={v}" for k, v in zip(others, key, strict=False)) or str(
                data.get("model") or "model"
            )
            series.append((label, members))
        log_x = (
            all(r[x_axis] > 0 for r in rows)
            and max(r[x_axis] for r in rows) / max(min(r[x_axis] for r in rows), 1e-300) >= 4
        )
        charts_out.append(
            _chart(
                "time",
                "Predicted time",
                charts.line_chart(
                    [
                        {
                            "label": s,
                            "points": [(r[x_axis], r["time"]) for r in m],
                            "ranges": {r[x_axis]: bounds for r in m if (bounds := _time_range(r))},
                        }
                        for s, m in series
                    ],
                    x_label=x_axis,
                    y_label="predicted time",
                    log_x=log_x,
                    log_y=all(r["time"] > 0 for r in rows),
                    seconds=True,
                ),
            )
        )
        if "speedup" in columns:
            smallest = min(r[x_axis] for r in rows)
            largest = max(r[x_axis] for r in rows)
            charts_out.append(
                _chart(
                    "speedup",
                    f"Speedup over {smallest} processes",
                    charts.line_chart(
                        [{"label": s, "points": [(r[x_axis], r["speedup"]) for r in m]} for s, m in series],
                        x_label=x_axis,
                        y_label="speedup",
                        log_x=log_x,
                        log_y=log_x,
                        ideal=[(smallest, 1.0), (largest, largest / smallest)],
                    ),
                )
            )
            charts_out.append(
                _chart(
                    "efficiency",
                    "Parallel efficiency",
                    charts.line_chart(
                        [
                            {"label": s, "points": [(r[x_axis], r["efficiency"]) for r in m]}
                            for s, m in series
                        ],
                        x_label=x_axis,
                        y_label="efficiency",
                        log_x=log_x,
                        y_range=(0.0, 1.05),
                    ),
                )
            )
        bars = []
        for label, members in series:
            for r in members:
                values = {k: float(r.get(k, 0.0)) for k in ("compute", "comm", "wait")}
                group = label if len(series) > 1 else ""
                bars.append({"label": f"{r[x_axis]}", "group": group, "values": values})
        charts_out.append(
            _chart(
                "breakdown",
                "Where the time goes (mean per process)",
                charts.stacked_bars(
                    bars,
                    (("compute", "compute"), ("comm", "communication"), ("wait", "wait")),
                    x_label=x_axis,
                    y_label="seconds per process",
                ),
            )
        )
    kinds = {
        c: (
            "s"
            if c in SWEEP_TIME_COLUMNS
            else "n"
            if rows and all(isinstance(r.get(c), (int, float)) for r in rows)
            else "t"
        )
        for c in columns
    }
    machine = data.get("machine") or {}
    return {
        "title": f"uml2perf sweep: {data.get('model')}",
        "summary": {
            "model": data.get("model"),
            "machine": machine.get("name") if isinstance(machine, Mapping) else machine,
            "points": len(rows),
            "parameters": parameters,
            "grid": [
                (p, ", ".join(str(v) for v in dict.fromkeys(r.get(p) for r in rows))) for p in parameters
            ],
            "version": _version(),
            "command": command if command is not None else command_line(),
            "written": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "best": _best(rows),
        },
        "charts": charts_out,
        "x_axis": x_axis,
        "findings": [
            {
                "severity": p.get("severity"),
                "property": p.get("property", "non_scalability"),
                "element": p.get("element")
                or ", ".join(f"{k}={v}" for k, v in (p.get("group") or {}).items())
                or "whole sweep",
                "hint": p.get("hint") or "",
                "confidence": p.get("confidence"),
                "level": _level(p.get("severity")),
            }
            for p in _most_severe_first(data.get("properties") or [])
        ],
        "notes": list(dict.fromkeys(data.get("notes") or [])),
        "table": table("sweep", "One row per point of the grid", [(c, c, kinds[c]) for c in columns], rows),
    }


#: Columns of a sweep row that bound its predicted time: an interval, else the replications' 95% interval.
RANGE_COLUMNS = (("time_low", "time_high"), ("time_ci95_low", "time_ci95_high"))


def _time_range(row: Mapping[str, Any]) -> tuple[float, float] | None:
    """The interval of a point's predicted time, when its row has one (drawn as an error bar)."""
    for low, high in RANGE_COLUMNS:
        if isinstance(row.get(low), (int, float)) and isinstance(row.get(high), (int, float)):
            return float(row[low]), float(row[high])
    return None


def _best(rows: Sequence[Mapping[str, Any]]) -> str | None:
    timed = [r for r in rows if isinstance(r.get("time"), (int, float))]
    if not timed:
        return None
    best = min(timed, key=lambda r: r["time"])
    where = ", ".join(
        f"{k}={v}"
        for k, v in best.items()
        if k not in SWEEP_TIME_COLUMNS and not isinstance(v, float) and k != "method"
    )
    return f"{format_time(best['time'])} at {where}"


def _chart(key: str, title: str, geometry: Mapping[str, Any]) -> dict[str, Any]:
    return {"key": key, "title": title, **geometry}


def render_sweep_report(data: Mapping[str, Any], *, command: str | None = None) -> str:
    """The sweep report as one HTML document."""
    context = sweep_context(data, command=command)
    return str(_environment().get_template("report/sweep.html.jinja").render(**context))


__all__ = [
    "command_line",
    "interval_of",
    "render_run_report",
    "render_sweep_report",
    "run_context",
    "sweep_context",
]
