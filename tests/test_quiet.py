"""The quiet check counts what others do: the caller's own CPU time during the pause is taken out."""

from __future__ import annotations

import pytest

from uml2perf import quiet


def test_own_cpu_time_during_the_pause_is_not_counted_as_others(monkeypatch):
    jiffies = iter([(1000, 10000), (1040, 10200)])  # 40 of 200 jiffies busy during the pause
    own = iter([5.0, 5.3])  # of which 0.3 s (30 jiffies at 100 per second) were the caller's
    monkeypatch.setattr(quiet, "cpu_times", lambda: next(jiffies))
    monkeypatch.setattr(quiet.time, "process_time", lambda: next(own))
    monkeypatch.setattr(quiet.time, "sleep", lambda _s: None)
    monkeypatch.setattr(quiet, "_ticks_per_second", lambda: 100.0)
    assert quiet.probe(0.2).busy == pytest.approx(10 / 200)


def test_off_linux_the_load_average_per_core_stands_in(monkeypatch):
    monkeypatch.setattr(quiet, "cpu_times", lambda: None)
    monkeypatch.setattr(quiet.time, "sleep", lambda _s: None)
    monkeypatch.setattr(quiet.os, "getloadavg", lambda: (1.0, 1.0, 1.0))
    monkeypatch.setattr(quiet.os, "cpu_count", lambda: 4)
    got = quiet.probe(0.2)
    assert got.busy == pytest.approx(0.25) and got.load_average == pytest.approx(1.0)
