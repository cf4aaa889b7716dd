"""Actions sharing an annotation are written from it once: the module is the one written action by action.

The python handler writes an action that only computes from its shared annotation's kind and
printed cost once one such action has been written (``PythonHandler.visit_Run``).  These tests
generate models where the same annotations recur in several functions (activities, thread bodies,
loops, branches) with that shortcut and without it, and require the same text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import synthetic

from uml2perf.api import convert
from uml2perf.handlers.python.handler import PythonHandler

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


class _Forgetful(dict):  # type: ignore[type-arg]
    """A ``compute_only`` table that never remembers: every action goes through ``_action``."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


def _without_shortcut(monkeypatch: pytest.MonkeyPatch, path: Path) -> str:
    start = PythonHandler.start

    def forgetful_start(self: PythonHandler, job: Any) -> None:
        start(self, job)
        self.compute_only = _Forgetful()

    with monkeypatch.context() as patch:
        patch.setattr(PythonHandler, "start", forgetful_start)
        return convert(path).text


def _shared_across_functions() -> str:
    """The same annotation on two actions of the main activity and on the two actions of a thread body.

    The thread body's function is then written from the shortcut alone; it must still be a
    generator (it calls the runtime), as when its actions are written in full.
    """
    b = synthetic.XmiBuilder("shared")
    main = synthetic.Region("_main")
    main.node("_init", "InitialNode", "start")
    synthetic._action(b, main, "_first", "first", "ActionPlus", cost="WORK")
    synthetic._action(b, main, "_second", "second", "ActionPlus", cost="WORK")
    team = main.structured("_team", "team")
    b.apply("ParallelPlus", "StructuredActivityNode", "_team", threads="T")
    synthetic._action(b, team, "_again", "again", "ActionPlus", cost="WORK")
    synthetic._action(b, team, "_more", "more", "ActionPlus", cost="WORK")
    main.node("_final", "ActivityFinalNode", "end")
    b.activity("_main", "main", main, [("T", "Integer", 2), ("WORK", "Real", 1e-3)])
    b.apply("ModelPlus", "Activity", "_main")
    return b.document()


MODELS = {
    "shared": _shared_across_functions,
    "chain": lambda: synthetic.chain_model(40),
    "ring": lambda: synthetic.ring_model(3),
    "threads": lambda: synthetic.threads_model(3, threads=3),
    "bsp": lambda: synthetic.bsp_model(steps=3),
    "allreduce": lambda: synthetic.allreduce_model(3),
}


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_synthetic_models_are_written_alike(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = synthetic.write_model(tmp_path / f"{kind}.uml", MODELS[kind]())
    assert convert(path).text == _without_shortcut(monkeypatch, path)


@pytest.mark.parametrize("name", ["prophet.uml", "lapw0.uml", "kernels.uml", "hybrid.uml"])
def test_samples_are_written_alike(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = SAMPLES / name
    assert convert(path).text == _without_shortcut(monkeypatch, path)
