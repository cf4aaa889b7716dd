"""No silent 0 s: a prediction of 0 s from a model whose elements take time is an error that says why.

The fixtures in tests/data/zero have the shapes of real exports that predicted 0 s with exit 0: a join
right after the start that waits for flows coming back from later (an ArgoUML student diagram), an
activity with no flow out of its initial node (a Papyrus railway export), and an activity whose actions
are all calls of behaviours the file does not hold (fUML test models).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import corpus_file

import uml2perf
from uml2perf import api
from uml2perf.check import check_file, timing_summary
from uml2perf.errors import ModelError
from uml2perf.reader import read_model

ZERO = Path(__file__).resolve().parent / "data" / "zero"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uml2perf", "run", *args], capture_output=True, text=True, timeout=120
    )


def test_a_join_that_never_fires_is_named_and_the_run_fails() -> None:
    done = _run(str(ZERO / "join-at-start.mdxml"), "--procs", "1")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "JoinNode 'Start': warning: join never fires" in done.stderr
    assert "'Add' never bring one" in done.stderr
    assert "predicted time is 0 s" in done.stderr and "'Browse', 'Add', 'Pay' never ran" in done.stderr
    report = check_file(ZERO / "join-at-start.mdxml")
    assert any("join never fires" in d.message and d.location.name == "Start" for d in report.diagnostics)


def test_allow_zero_accepts_the_intended_0_s() -> None:
    done = _run(str(ZERO / "join-at-start.mdxml"), "--procs", "1", "--allow-zero")
    assert done.returncode == 0
    assert "Predicted time: 0 s" in done.stdout and "--allow-zero: reported as 0 s" in done.stderr
    warnings: list[str] = []
    result = api.predict(ZERO / "join-at-start.mdxml", procs=1, allow_zero=True, warnings=warnings)
    assert result.time == 0.0 and any("0 s" in w for w in warnings)
    with pytest.raises(ModelError, match="predicted time is 0 s"):
        api.predict(ZERO / "join-at-start.mdxml", procs=1)


def test_an_activity_with_nothing_reachable_from_its_initial_node() -> None:
    done = _run(str(ZERO / "nothing-from-initial.uml"), "--activity", "Depart", "--default-cost", "1")
    assert done.returncode == 1
    assert "InitialNode 'start': warning: nothing is reachable from the initial node 'start'" in done.stderr
    assert "none of the 3 other elements of 'Depart' ever runs" in done.stderr
    assert "predicted time is 0 s" in done.stderr
    fine = _run(str(ZERO / "nothing-from-initial.uml"), "--activity", "Arrive", "--default-cost", "1")
    assert fine.returncode == 0 and "Predicted time: 1 s" in fine.stdout


def test_run_and_check_count_behaviour_calls_as_actions_alike() -> None:
    """Regression: run said "it has no actions", check "0 of 0 actions have a cost", and also that
    each call "is treated as a plain action"."""
    path = ZERO / "behaviour-calls.uml"
    assert timing_summary(read_model(path)) == (2, 2, False)
    report = check_file(path)
    assert report.summary().endswith("0 of 2 actions have a cost")
    done = _run(str(path), "--procs", "1")
    assert done.returncode == 1 and "none of its 2 actions has a cost" in done.stderr
    costed = _run(str(path), "--procs", "1", "--default-cost", "1")
    assert costed.returncode == 0 and "Predicted time: 2 s" in costed.stdout


def test_an_export_whose_costed_actions_never_run_fails() -> None:
    """The moliz eHS export: costs (GRM execTime) sit on actions the main activity never reaches."""
    path = corpus_file("papyrus/moliz-nfr-ehs-marte-resourceusage.uml")
    with pytest.raises(ModelError, match="predicted time is 0 s"):
        api.predict(path, activity="eHS::main", procs=1)


def test_a_sweep_of_a_model_that_predicts_0_s_fails_and_says_why() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "uml2perf", "sweep", str(ZERO / "join-at-start.mdxml"), "--grid", "procs=1,2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "join never fires" in done.stderr and "0 s at 2 of 2 points (procs=1, procs=2)" in done.stderr
    warnings: list[str] = []
    result = uml2perf.sweep(ZERO / "join-at-start.mdxml", {"procs": [1]}, allow_zero=True, warnings=warnings)
    assert [row["time"] for row in result.rows] == [0.0] and any("--allow-zero" in w for w in warnings)
