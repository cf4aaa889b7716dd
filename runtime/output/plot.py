"""Pictures of a prediction (optional; needs matplotlib: ``pip install uml2perf[plot]``).

* :func:`plot_timeline` — a Gantt chart, one row per process and one per
  thread of it that runs at once (:func:`timeline_rows`), coloured by
  category (compute, communication, wait); needs the timeline recorded by
  ``simulate(..., trace=path_or_True)``.
* :func:`plot_elements` — horizontal bars of exclusive time per element, the
  picture of "where the time goes".
* :func:`plot_results` — both in one PNG (without a timeline: per-process
  stacked bars of compute/communication/wait instead of the Gantt chart).

matplotlib is imported only when a function here is called, with the
non-interactive Agg backend, so the runtime itself never depends on it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import SimulationError
from .files import write_atomically
from .results import Results

_COLOURS = {"compute": "#4c72b0", "comm": "#dd8452", "wait": "#c44e52", "composite": "#cccccc"}
_MAX_ROWS = 64


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise SimulationError(
            "plotting needs matplotlib, which is not installed", hint="pip install uml2perf[plot]"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def check_plot_target(path: str | os.PathLike[str]) -> None:
    """Refuse a missing matplotlib or a picture format it cannot write, before any work is done.

    Called by ``run --plot`` and ``sweep --plot`` before simulating, so a prediction is never lost
    to its picture.  A path without a suffix is written as PNG.
    """
    _pyplot()
    from matplotlib.backend_bases import FigureCanvasBase

    suffix = Path(path).suffix.lstrip(".").lower() or "png"
    supported = FigureCanvasBase.get_supported_filetypes()
    if suffix not in supported:
        raise SimulationError(
            f"cannot draw a '.{suffix}' picture",
            hint="use one of " + ", ".join(f".{k}" for k in sorted(supported)),
        )


def _render(fig: Any, suffix: str) -> Callable[[str], None]:
    """A function saving ``fig`` in the format ``suffix`` names at the temporary path it is given."""

    def render(tmp: str) -> None:
        fig.savefig(
            tmp,
            dpi=120,
            bbox_inches="tight",
            format=suffix.lstrip("."),
            metadata={"Software": None} if suffix == ".png" else None,
        )

    return render


def _save(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Save atomically: render to a temporary file, then rename it into place."""
    return write_atomically(path, "plot", _render(fig, Path(path).suffix or ".png"))


def timeline_rows(
    timeline: list[tuple[int, int, str, str, float, float]],
) -> dict[tuple[int, int], tuple[int, int]]:
    """``(pid, track) -> (pid, row)``: the threads of a rank packed into as few rows as run at once.

    Every thread a parallel region, pipeline or task pool starts is a track of its own; drawn one
    row per track, a rank with 4 threads and 7 regions needs 28 rows.  A track goes to the first
    row of its rank that is free when it starts, so a rank has one row per thread that runs at once
    (row 0 is the main thread).
    """
    spans: dict[tuple[int, int], list[float]] = {}
    for pid, track, _name, _category, start, end in timeline:
        span = spans.setdefault((pid, track), [start, end])
        span[0], span[1] = min(span[0], start), max(span[1], end)
    rows: dict[tuple[int, int], tuple[int, int]] = {}
    free_at: dict[int, list[float]] = {}  # per rank: when each thread row is free again
    for (pid, track), (start, end) in sorted(
        spans.items(), key=lambda item: (item[0][0], item[1][0], item[0][1])
    ):
        if track == 0:
            rows[(pid, track)] = (pid, 0)
            continue
        slots = free_at.setdefault(pid, [])
        slot = next(
            (i for i, free in enumerate(slots) if free <= start + 1e-12 * max(1.0, abs(start))), len(slots)
        )
        if slot == len(slots):
            slots.append(end)
        else:
            slots[slot] = end
        rows[(pid, track)] = (pid, slot + 1)
    return rows


def _draw_timeline(ax: Any, results: Results) -> None:
    timeline = results.timeline or []
    packed = timeline_rows(timeline)
    tracks = sorted(set(packed.values()))[:_MAX_ROWS]
    row = {key: i for i, key in enumerate(tracks)}
    for pid, track, _name, category, start, end in timeline:
        key = packed[(pid, track)]
        if key not in row or category == "composite" or end <= start:
            continue
        ax.broken_barh([(start, end - start)], (row[key] - 0.4, 0.8), facecolors=_COLOURS[category])
    ax.set_yticks(range(len(tracks)))
    ax.set_yticklabels([f"rank {pid}" + (f" t{slot}" if slot else "") for pid, slot in tracks], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("simulated time (s)")
    ax.set_title(f"Timeline of '{results.model}' ({results.processes} processes)")
    handles = [_patch(c) for c in ("compute", "comm", "wait")]
    ax.legend(handles=handles, loc="upper right", fontsize=7)


def _patch(category: str) -> Any:
    from matplotlib.patches import Patch

    return Patch(color=_COLOURS[category], label=category)


def _draw_processes(ax: Any, results: Results) -> None:
    rows = results.per_process[:_MAX_ROWS]
    left = [0.0] * len(rows)
    labels = [f"rank {r['pid']}" for r in rows]
    for key, colour in (("compute", "compute"), ("communication", "comm"), ("wait", "wait")):
        widths = [r[key] for r in rows]
        ax.barh(labels, widths, left=left, color=_COLOURS[colour], label=colour)
        left = [a + b for a, b in zip(left, widths, strict=False)]
    ax.invert_yaxis()
    ax.set_xlabel("seconds")
    ax.set_title(f"Per-process time of '{results.model}'")
    ax.legend(loc="upper right", fontsize=7)


def _draw_elements(ax: Any, results: Results, top: int) -> None:
    rows = sorted((r for r in results.elements if r["calls"]), key=lambda r: -r["exclusive"])[:top]
    ax.barh([r["name"] for r in rows], [r["exclusive"] for r in rows], color=_COLOURS["compute"])
    ax.invert_yaxis()
    ax.set_xlabel("exclusive time summed over processes (s)")
    ax.set_title("Where the time goes")


def plot_timeline(results: Results, path: str | os.PathLike[str]) -> Path:
    """Gantt chart of the recorded timeline (run ``simulate`` with ``trace=``)."""
    if results.timeline is None:
        raise SimulationError(
            "no timeline was recorded for this run",
            hint="simulate with trace=PATH (or trace=True) to record one",
        )
    plt = _pyplot()
    tracks = len(set(timeline_rows(results.timeline).values()))
    fig, ax = plt.subplots(figsize=(10, 1.5 + 0.25 * min(tracks, _MAX_ROWS)))
    try:
        _draw_timeline(ax, results)
        return _save(fig, path)
    finally:
        plt.close(fig)


def plot_elements(results: Results, path: str | os.PathLike[str], top: int = 20) -> Path:
    """Bar chart of exclusive time per element."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 1.5 + 0.3 * min(top, len(results.elements))))
    try:
        _draw_elements(ax, results, top)
        return _save(fig, path)
    finally:
        plt.close(fig)


def plot_results(results: Results, path: str | os.PathLike[str], top: int = 20) -> Path:
    """One PNG: the timeline (or per-process bars) above the per-element bars."""
    return write_atomically(path, "plot", results_content(results, Path(path).suffix or ".png", top))


def results_content(results: Results, suffix: str = ".png", top: int = 20) -> Callable[[str], None]:
    """The picture of :func:`plot_results` as a result writer's content: drawn when the file is written."""

    def draw(tmp: str) -> None:
        plt = _pyplot()
        rows = min(
            _MAX_ROWS,
            results.processes
            if results.timeline is None
            else len(set(timeline_rows(results.timeline).values())),
        )
        fig, (upper, lower) = plt.subplots(
            2,
            1,
            figsize=(10, 3 + 0.25 * rows + 0.3 * min(top, len(results.elements))),
            gridspec_kw={"height_ratios": [max(rows, 2), max(min(top, len(results.elements)), 2)]},
        )
        try:
            if results.timeline is not None:
                _draw_timeline(upper, results)
            else:
                _draw_processes(upper, results)
            _draw_elements(lower, results, top)
            fig.tight_layout()
            _render(fig, suffix)(tmp)
        finally:
            plt.close(fig)

    return draw


__all__ = [
    "check_plot_target",
    "plot_results",
    "plot_timeline",
    "plot_elements",
    "results_content",
    "timeline_rows",
]
