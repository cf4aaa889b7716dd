"""Pictures that say what the numbers say: readable log axes, labels in the right number, bars as
tall as the predicted time, one timeline row per thread of a rank."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from uml2perf import api
from uml2perf.cli import main
from uml2perf.sweep_plot import log_ticks
from uml2perf_runtime.output.plot import timeline_rows

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def test_log_ticks_are_readable_steps() -> None:
    assert log_ticks([1.0, 1.9, 3.6, 7.7]) == [1.0, 2.0, 5.0]
    assert log_ticks([1, 2, 4, 8, 16, 32]) == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
    assert log_ticks([93.0, 116.9, 200.0]) == [100.0, 150.0, 200.0]  # not one label "2×10²"
    assert log_ticks([0.001, 10.0]) == [0.001, 0.01, 0.1, 1.0, 10.0]
    assert log_ticks([]) == []


def _figures(monkeypatch: Any) -> list[Any]:
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    drawn: list[Any] = []
    monkeypatch.setattr(plt, "close", lambda fig=None: drawn.append(fig))
    return drawn


def test_the_sweep_picture_reads_right(tmp_path: Path, monkeypatch: Any, capsys: Any) -> None:
    drawn = _figures(monkeypatch)
    grid = ["--grid", "nodes:procs=1:1,1:2,1:4,2:8"]
    out = tmp_path / "sweep.png"
    assert main(["sweep", str(SAMPLES / "lapw0.uml"), "--machine", "gescher", *grid, "--plot", str(out)]) == 0
    capsys.readouterr()
    (time_ax, speed_ax), (_eff, parts_ax) = [drawn[0].axes[:2], drawn[0].axes[2:]]
    assert speed_ax.get_ylabel() == "speedup over 1 process"
    drawn[0].canvas.draw()
    speed_labels = [t.get_text() for t in speed_ax.get_yticklabels() if t.get_text()]
    assert len(speed_labels) >= 3 and "1" in speed_labels and "2" in speed_labels
    time_labels = [t.get_text() for t in time_ax.get_yticklabels() if t.get_text()]
    assert len(time_labels) >= 3 and all("times" not in t and "^" not in t for t in time_labels)
    # each stacked bar is as tall as the predicted time of its point
    heights: dict[float, float] = {}
    for patch in parts_ax.patches:
        x = round(patch.get_x(), 6)
        heights[x] = max(heights.get(x, 0.0), patch.get_y() + patch.get_height())
    times = [line.get_ydata() for line in time_ax.get_lines()][0]
    assert sorted(heights.values(), reverse=True) == pytest.approx(sorted(times, reverse=True), rel=1e-9)


def test_a_timeline_has_one_row_per_thread_of_a_rank() -> None:
    """Regression: a row per parallel region (27 rows per rank for THREADS = 4)."""
    result = api.predict(SAMPLES / "hybrid.uml", machine="laptop", procs=2, trace=True)
    rows = timeline_rows(result.timeline)
    tracks = {(pid, track) for pid, track, *_ in result.timeline}
    assert len(tracks) > 20  # every region starts new thread tracks
    assert sorted(set(rows.values())) == [
        (pid, row) for pid in (0, 1) for row in range(5)
    ]  # main + 4 threads
    by_row: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for pid, track, _name, category, start, end in result.timeline:
        if track and category != "composite":
            by_row.setdefault(rows[(pid, track)], []).append((start, end))
    for spans in by_row.values():  # threads packed into one row never overlap
        spans.sort()
        assert all(a[1] <= b[0] + 1e-12 for a, b in zip(spans, spans[1:], strict=False))
