"""A command that pauses the collector for its whole life still frees each finished simulation."""

from __future__ import annotations

import gc
import weakref

import pytest

from uml2perf_runtime.engine import collector
from uml2perf_runtime.engine.collector import collector_paused, release_cycles


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycle() -> weakref.ref[_Node]:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_release_cycles_frees_cycles_while_the_collector_is_paused() -> None:
    with collector_paused():
        alive = _cycle()
        assert alive() is not None  # a cycle: only the collector frees it, and it is paused
        release_cycles()
        assert alive() is None
        assert not gc.isenabled()  # still paused for the rest of the command


def test_release_cycles_leaves_a_running_collector_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(collector.gc, "collect", lambda *a: calls.append(1) or 0)
    if not gc.isenabled():  # pragma: no cover - the test process runs with the collector on
        pytest.skip("collector off in this process")
    release_cycles()
    assert calls == []
