"""The picture of a sweep over process counts: time, speedup, efficiency and where the time goes.

Four panels: predicted time (log-log), speedup against the ideal line,
parallel efficiency, and the per-process average compute, communication and
wait time as stacked bars, one line (or bar group) per value of the other
swept parameters.  Needs matplotlib (``pip install uml2perf[plot]``); it is
checked before the sweep runs so a prediction is never lost to a plot.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import UsageError

__all__ = ["check_plot_target", "plot_sweep", "sweep_figure_content"]

_BREAKDOWN = (("compute", "#4c72b0"), ("comm", "#dd8452"), ("wait", "#c44e52"))


def check_plot_target(path: str) -> None:
    """Refuse an unsupported format or a missing matplotlib before any work is done (usage error)."""
    from uml2perf_runtime.errors import SimulationError
    from uml2perf_runtime.output.plot import check_plot_target as check

    try:
        check(path)
    except SimulationError as exc:
        raise UsageError(f"--plot {path}: {exc.message}", hint=exc.hint) from None


def plot_sweep(result: Any, path: str | os.PathLike[str], *, model: str = "") -> Path:
    """Draw the sweep's scaling picture to ``path`` (atomically); needs ``procs`` among the swept axes."""
    from uml2perf_runtime.output.files import write_output

    return write_output(path, sweep_figure_content(result, path, model=model), what="plot")


def sweep_figure_content(
    result: Any, path: str | os.PathLike[str], *, model: str = ""
) -> Callable[[str], None]:
    """The scaling picture as a result writer's content: a function that saves it at a temporary path.

    The figure is drawn at once (so a sweep without ``procs`` is refused before any file is
    touched) and closed once saved.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if "procs" not in result.parameters:
        raise UsageError("--plot draws scaling over processes: sweep procs (e.g. --grid procs=1,2,4,8)")
    others = [p for p in result.parameters if p not in ("procs", "nodes")]
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in result.rows:
        groups.setdefault(tuple(row[p] for p in others), []).append(row)
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    (ax_time, ax_speed), (ax_eff, ax_parts) = axes
    largest = 1
    for key, rows in groups.items():
        rows = sorted(rows, key=lambda r: r["procs"])
        label = ", ".join(f"{k}={v}" for k, v in zip(others, key, strict=False)) or "model"
        procs = [r["procs"] for r in rows]
        largest = max(largest, *procs)
        ax_time.plot(procs, [r["time"] for r in rows], marker="o", label=label)
        if "speedup" in rows[0]:
            ax_speed.plot(procs, [r["speedup"] for r in rows], marker="o", label=label)
            ax_eff.plot(procs, [r["efficiency"] for r in rows], marker="o", label=label)
    smallest = min(r["procs"] for r in result.rows)
    ax_speed.plot([smallest, largest], [1, largest / smallest], "k--", linewidth=1, label="ideal")
    ax_time.set(
        xscale="log", yscale="log", xlabel="processes", ylabel="predicted time [s]", title="Predicted time"
    )
    ax_speed.set(
        xscale="log",
        yscale="log",
        xlabel="processes",
        ylabel=f"speedup over {smallest} processes",
        title="Speedup",
    )
    ax_eff.set(
        xscale="log", xlabel="processes", ylabel="parallel efficiency", ylim=(0, 1.05), title="Efficiency"
    )
    _breakdown(ax_parts, groups, others)
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    ticks = sorted({r["procs"] for r in result.rows})
    for ax in (ax_time, ax_speed, ax_eff):
        ax.set_xticks(ticks)
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    ax_speed.yaxis.set_major_formatter(ScalarFormatter())
    ax_speed.yaxis.set_minor_formatter(NullFormatter())
    fig.suptitle(f"Scaling of {model}" if model else "Scaling")
    fig.tight_layout()
    suffix = Path(path).suffix.lstrip(".") or "png"

    def render(tmp: str) -> None:
        try:
            fig.savefig(tmp, dpi=110, format=suffix)
        finally:
            plt.close(fig)

    return render


def _breakdown(ax: Any, groups: dict[tuple[Any, ...], list[dict[str, Any]]], others: list[str]) -> None:
    """Stacked bars of the average compute / communication / wait time per process, per point."""
    labels, bottoms = [], []
    series: dict[str, list[float]] = {name: [] for name, _ in _BREAKDOWN}
    for key, rows in groups.items():
        for row in sorted(rows, key=lambda r: r["procs"]):
            tag = ",".join(str(v) for v in key)
            labels.append(f"{row['procs']}" + (f"\n{tag}" if tag else ""))
            for name, _ in _BREAKDOWN:
                series[name].append(float(row[name]))
    bottoms = [0.0] * len(labels)
    positions = range(len(labels))
    for name, colour in _BREAKDOWN:
        ax.bar(
            positions,
            series[name],
            bottom=bottoms,
            color=colour,
            label={"comm": "communication"}.get(name, name),
        )
        bottoms = [b + v for b, v in zip(bottoms, series[name], strict=False)]
    ax.set_xticks(list(positions), labels, fontsize=7)
    ax.set(
        xlabel="processes" + (f" ({', '.join(others)})" if others else ""),
        ylabel="time per process [s] (mean)",
        title="Where the time goes",
    )
    ax.legend(fontsize=8)
