"""The progress line of long simulations."""

from __future__ import annotations

import io
import time

from uml2perf_runtime.output import progress
from uml2perf_runtime.output.progress import progress_line


def test_quiet_for_short_runs() -> None:
    out = io.StringIO()
    with progress_line(lambda: (1.0, 1, 2), True, out):
        pass
    assert out.getvalue() == ""


def test_status_line_for_long_runs(monkeypatch) -> None:
    monkeypatch.setattr(progress, "QUIET_SECONDS", 0.01)
    monkeypatch.setattr(progress, "INTERVAL", 0.01)
    out = io.StringIO()
    with progress_line(lambda: (2.5, 3, 8), True, out):
        time.sleep(0.1)
    text = out.getvalue()
    assert "t = 2.5 s simulated" in text and "5/8 processes finished" in text
    assert text.endswith("\r\x1b[K"), "the status line is cleared at the end"


def test_disabled_prints_nothing(monkeypatch) -> None:
    monkeypatch.setattr(progress, "QUIET_SECONDS", 0.0)
    out = io.StringIO()
    with progress_line(lambda: (0.0, 0, 1), False, out):
        time.sleep(0.02)
    assert out.getvalue() == ""


def test_cli_accepts_progress_flags(capsys) -> None:
    from pathlib import Path

    from uml2perf.cli import main

    sample = Path(__file__).resolve().parents[1] / "samples" / "prophet.uml"
    assert main(["run", str(sample), "--procs", "1", "--progress", "--json"]) == 0
    assert main(["run", str(sample), "--procs", "1", "--no-progress", "--json"]) == 0


def test_counted_bar_shows_the_time_left_and_ends_the_line() -> None:
    from uml2perf_runtime.output.progress import ProgressBar

    out = io.StringIO()
    bar = ProgressBar(4, out, True, label="points")
    bar.start -= 30.0  # as if 30 s had passed
    bar.done = 1
    assert bar.line(bar.start + 30.0).endswith("0:30, about 1:30 left")
    assert "points 1/4 [" in bar.line(bar.start + 30.0)
    bar.advance(3)
    bar.close()
    text = out.getvalue()
    assert "4/4" in text and "100%" in text and "left" not in text.split("\r")[-1]
    assert text.endswith("\n")


def test_counted_bar_disabled_or_empty_prints_nothing() -> None:
    from uml2perf_runtime.output.progress import ProgressBar

    out = io.StringIO()
    for bar in (ProgressBar(3, out, False), ProgressBar(0, out, True)):
        bar.advance()
        bar.close()
    assert out.getvalue() == ""


def test_clock_counts_hours_past_an_hour() -> None:
    assert progress._clock(59.9) == "0:59"
    assert progress._clock(3 * 3600 + 61) == "3:01:01"
