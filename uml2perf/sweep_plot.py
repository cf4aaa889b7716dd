"""The picture of a sweep over process counts: time, speedup, efficiency and where the time goes.

Four panels: predicted time (log-log), speedup against the ideal line,
parallel efficiency, and the per-process average compute, communication and
wait time as stacked bars topped by the time the average process is done
before the slowest (so each bar is as tall as the predicted time), one line
(or bar group) per value of the other swept parameters.  Log axes carry
plain labels at readable steps.  Needs matplotlib (``pip install uml2perf[plot]``); it is
checked before the sweep runs so a prediction is never lost to a plot.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import UsageError

__all__ = ["check_plot_target", "log_ticks", "plot_sweep", "readable_log_ticks", "sweep_figure_content"]

_BREAKDOWN = (("compute", "#4c72b0"), ("comm", "#dd8452"), ("wait", "#c44e52"))
#: the bars: the mean process's parts, then the time it is done before the slowest process ends
_PARTS = (*_BREAKDOWN, ("done", "#dddddd"))
_LABELS = {"comm": "communication", "done": "done, waiting for the slowest process"}


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
        ylabel=f"speedup over {smallest} process{'es' if smallest != 1 else ''}",
        title="Speedup",
    )
    ax_eff.set(
        xscale="log", xlabel="processes", ylabel="parallel efficiency", ylim=(0, 1.05), title="Efficiency"
    )
    _breakdown(ax_parts, groups, others)
    ticks = sorted({r["procs"] for r in result.rows})
    for ax in (ax_time, ax_speed, ax_eff):
        readable_log_ticks(ax.xaxis, ticks)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    readable_log_ticks(ax_time.yaxis, log_ticks([r["time"] for r in result.rows]))
    speedups = [r["speedup"] for r in result.rows if "speedup" in r] + [1.0, largest / smallest]
    readable_log_ticks(ax_speed.yaxis, log_ticks(speedups))
    fig.suptitle(f"Scaling of {model}" if model else "Scaling")
    fig.tight_layout()
    suffix = Path(path).suffix.lstrip(".") or "png"

    def render(tmp: str) -> None:
        try:
            fig.savefig(tmp, dpi=110, format=suffix)
        finally:
            plt.close(fig)

    return render


def log_ticks(values: list[float]) -> list[float]:
    """Tick values a reader can read on a log axis spanning ``values``: 1-2-5 steps, finer when narrow.

    Matplotlib labels a log axis only at powers of ten: a range such as 93..200 s or a speedup of
    1..8 then shows a single label ("2×10²", "1.0").
    """
    positive = sorted({v for v in values if v > 0 and math.isfinite(v)})
    if not positive:
        return []
    low, high = min(positive), max(positive)
    for steps in ((1,), (1, 2, 5), (1, 1.5, 2, 3, 5, 7), (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9)):
        ticks = [
            step * 10.0**exponent
            for exponent in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1)
            for step in steps
        ]
        inside = [t for t in ticks if low / 1.05 <= t <= high * 1.05]
        if len(inside) >= 3:
            break
    if len(inside) < 2:  # a nearly flat line: its ends
        inside = sorted({low, high})
    if 2 in {round(b / a, 9) for a, b in zip(positive, positive[1:], strict=False)} and len(
        powers := [2.0**k for k in range(math.floor(math.log2(low)), math.ceil(math.log2(high)) + 1)]
    ) in range(3, 13):
        inside = [p for p in powers if low / 1.05 <= p <= high * 1.05]  # process counts and speedups double
    return inside


def readable_log_ticks(axis: Any, ticks: list[float]) -> None:
    """Put ``ticks`` on a log ``axis`` with plain labels (``200``, ``0.5``), no minor labels."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    if not ticks:
        return
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda value, _position: f"{value:g}"))
    axis.set_minor_formatter(NullFormatter())


def _breakdown(ax: Any, groups: dict[tuple[Any, ...], list[dict[str, Any]]], others: list[str]) -> None:
    """Stacked bars per point: mean compute, communication and wait per process, topped by the time the
    mean process is already done while the slowest still runs, so each bar is the predicted time."""
    labels = []
    series: dict[str, list[float]] = {name: [] for name, _ in _PARTS}
    for key, rows in groups.items():
        for row in sorted(rows, key=lambda r: r["procs"]):
            tag = ",".join(str(v) for v in key)
            labels.append(f"{row['procs']}" + (f"\n{tag}" if tag else ""))
            busy = 0.0
            for name, _ in _BREAKDOWN:
                series[name].append(float(row[name]))
                busy += float(row[name])
            series["done"].append(max(0.0, float(row["time"]) - busy))
    bottoms = [0.0] * len(labels)
    positions = range(len(labels))
    for name, colour in _PARTS:
        ax.bar(positions, series[name], bottom=bottoms, color=colour, label=_LABELS.get(name, name))
        bottoms = [b + v for b, v in zip(bottoms, series[name], strict=False)]
    ax.set_xticks(list(positions), labels, fontsize=7)
    ax.set(
        xlabel="processes" + (f" ({', '.join(others)})" if others else ""),
        ylabel="predicted time [s]: mean per process",
        title="Where the time goes",
    )
    ax.legend(fontsize=8)
