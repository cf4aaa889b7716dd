"""The held-out validation (validation/unseen/): its cases, models and runner stay in working order.

Correctness only: no timing is asserted.  The end-to-end run needs mpi4py and mpiexec and skips
without them; the other tests run anywhere.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UNSEEN = ROOT / "validation" / "unseen"


@pytest.fixture(scope="module")
def unseen():
    """The runner's modules (its cases, and run.py under a name no other test's ``run`` takes)."""
    spec = importlib.util.spec_from_file_location("unseen_run", UNSEEN / "run.py")
    assert spec is not None and spec.loader is not None
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)  # puts validation/unseen on sys.path for its unseen_cases
    try:
        import unseen_cases

        yield unseen_cases, run
    finally:
        while str(UNSEEN) in sys.path:
            sys.path.remove(str(UNSEEN))


def test_every_program_has_a_model_and_takes_the_flags_its_cases_pass(unseen):
    cases, _ = unseen
    programs = {case.program for case in cases.all_cases()} | {c.program for c in cases.all_cases(quick=True)}
    assert len(programs) == 7
    for case in cases.all_cases() + cases.all_cases(quick=True):
        source = (UNSEEN / "programs" / f"{case.program}.py").read_text()
        assert (UNSEEN / "models" / f"{case.program}.uml").is_file()
        for flag in case.arguments:
            assert f'"--{flag}"' in source, f"{case.program}.py has no --{flag}"
        # the program prints its timed seconds as JSON, max over ranks
        assert '"seconds"' in source and "MPI.MAX" in source


def test_every_model_checks_clean(unseen):
    from uml2perf.cli import main

    for model in sorted((UNSEEN / "models").glob("*.uml")):
        assert main(["check", str(model)]) == 0, model.name


def test_every_case_predicts_with_its_variables(unseen, tmp_path):
    """Each case's --set values are the model's own variables, and the model predicts time."""
    from uml2perf.api import predict

    cases, run = unseen
    kernels = {"value": 1e-4, "low": 9e-5, "high": 1.2e-4}
    for case in cases.all_cases(quick=True):
        sidecar = run.sidecar_text(case, {f"{k} {s}": kernels for k, s in case.kernels.values()})
        path = None
        if sidecar is not None:
            path = tmp_path / f"{case.program}-{case.procs}.toml"
            path.write_text(sidecar)
        result = predict(
            UNSEEN / "models" / f"{case.program}.uml",
            machine="gpu-node",  # a bundled machine with the roofline's keys
            procs=case.procs,
            overrides=case.variables,
            sidecar=path,
            samples=10 if path else None,
        )
        assert result.time > 0, case.name
        if path is not None:  # the kernel's measured interval makes the prediction's interval
            assert result.interval["low"] < result.interval["high"]


def test_the_kernel_sizes_follow_the_ranks(unseen):
    cases, _ = unseen
    poly = [c for c in cases.all_cases() if c.program == "scatter_poly" and c.variables["N"] == 262_144]
    assert {c.procs: c.kernels["HORNER"] for c in poly} == {2: ("horner", 131_072), 4: ("horner", 65_536)}
    farm = [c for c in cases.all_cases() if c.program == "task_farm"]
    assert all(c.kernels["TASK"] == ("task", c.variables["WORK"]) for c in farm)


def _case(cases, measured, predicted, low, high, disturbed=()):
    case = cases.Case("ring_shift", "S=1 R=1", {"size": 1, "rounds": 1}, {"S": 1, "R": 1}, 2)
    case.measured = list(measured)
    case.disturbed = list(disturbed)
    case.prediction = {"time": predicted, "low": low, "high": high, "command": "uml2perf run"}
    return case


def test_errors_coverage_and_left_out_cases(unseen):
    cases, run = unseen
    hit = _case(cases, [1.0, 1.2, 0.9], 1.1, 0.95, 1.3)  # median 1.0: +10%, inside [0.95, 1.3]
    miss = _case(cases, [2.0, 2.0], 1.0, 0.9, 1.5)  # -50%, not covered
    never_quiet = _case(cases, [], 1.0, 0.9, 1.1, disturbed=[(1.0, 0.5)])
    rows = run.rows_of([hit, miss, never_quiet], quick=False)
    assert rows[0]["error_percent"] == pytest.approx(10.0) and rows[0]["covered"] is True
    assert rows[0]["spread_percent"] == pytest.approx(30.0)
    assert rows[1]["error_percent"] == pytest.approx(-50.0) and rows[1]["covered"] is False
    assert rows[2]["error_percent"] is None and rows[2]["error_percent_not_counted"] == pytest.approx(0.0)
    summary = run.summary_of(rows)
    assert summary["cases"] == 2 and summary["left_out"] == [never_quiet.name]
    assert summary["mean_abs_error_percent"] == pytest.approx(30.0)
    assert summary["max_abs_error_percent"] == pytest.approx(50.0)
    assert summary["coverage_percent"] == pytest.approx(50.0)
    assert summary["groups"]["2 ranks"]["cases"] == 2
    assert summary["groups"]["communication only"]["mean_abs_error_percent"] == pytest.approx(30.0)
    assert any(line.startswith("communication only") for line in run.summary_lines(summary, rows, False))
    lines = run.table(rows)
    assert "(no quiet run)" in lines[-1] and "+10.0%" in lines[2]
    # a quick run never reports accuracy
    quick = run.rows_of([hit], quick=True)
    assert quick[0]["error_percent"] is None and run.summary_of(quick) is None


def test_quick_run_end_to_end(tmp_path):
    """calibrate -> kernels -> every program under mpiexec -> uml2perf run --json -> table and files."""
    pytest.importorskip("mpi4py")
    from uml2perf.calibrate import mpi_available

    if mpi_available() is None:
        pytest.skip("no mpiexec")
    done = subprocess.run(
        [sys.executable, str(UNSEEN / "run.py"), "--quick", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "NO ACCURACY REPORTED" in done.stdout
    report = json.loads((tmp_path / "results.json").read_text())
    assert report["quick"] is True and report["summary"] is None
    assert "commit" in report["source"]
    assert report["calibration"]["command"].startswith("uml2perf calibrate -o ")
    assert (tmp_path / "machine.toml").read_text() == report["machine"]
    assert "[network" in report["machine"]
    # the programs' machine state against the file, by the calibrate --check command
    check = report["machine_check"]
    assert check["exit_status"] in (0, 3) and " keys inside the file's intervals " in check["output"]
    assert set(report["kernels"]) == {"horner 8192", "task 1000"}
    assert {row["program"] for row in report["rows"]} == {
        "ring_shift",
        "jacobi1d",
        "power_iteration",
        "scatter_poly",
        "task_farm",
        "axpy_allreduce",
        "alltoall_exchange",
    }
    assert {row["procs"] for row in report["rows"] if row["program"] == "task_farm"} == {2, 4}
    for row in report["rows"]:
        assert row["measured_median"] > 0 and row["predicted"] > 0, row["case"]
        assert row["interval_low"] <= row["predicted"] <= row["interval_high"]
        assert row["error_percent"] is None and row["covered"] is None
        assert re.match(r"uml2perf run \S+\.uml --machine ", row["prediction_command"])
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        pass
    else:
        assert (tmp_path / "results.png").read_bytes().startswith(b"\x89PNG")
    log = (tmp_path / "run.log").read_text()
    assert "90% interval" in log and "task_farm TASKS=40 WORK=1000 4 ranks" in log


def test_disturbed_and_failed_runs_are_run_again(unseen, monkeypatch):
    """A run that others disturbed does not count and its case runs again in a later round; a
    failed launch is tried once more at once."""
    import argparse

    cases, run = unseen
    from uml2perf.quiet import Probe

    busy = iter([0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])  # the 2nd probe sees others
    monkeypatch.setattr(run, "probe", lambda pause: Probe(next(busy), 0.0))
    monkeypatch.setattr(run.time, "sleep", lambda seconds: None)
    outcomes = iter([(1.0, ""), (None, "exit status 1"), (2.0, ""), (3.0, "")])
    monkeypatch.setattr(run, "run_once", lambda command, timeout: next(outcomes))
    monkeypatch.setattr(run, "program_command", lambda launcher, case: [case.program])
    first = cases.Case("ring_shift", "a", {}, {}, 2)
    second = cases.Case("jacobi1d", "b", {}, {}, 2)
    args = argparse.Namespace(quick=False, max_busy=0.1, timeout=1.0)
    seen = run.measure_interleaved([first, second], "mpiexec", 1, 1, args, lambda text="": None)
    runs = {case.program: (case.measured, case.disturbed, case.failures) for case in (first, second)}
    # round 1 (order shuffled): one case's run lies next to the busy probe, the other fails once
    disturbed = [name for name, (_, d, _) in runs.items() if d]
    assert len(disturbed) == 1 and runs[disturbed[0]][1][0][1] == 0.5
    assert all(measured for measured, _, _ in runs.values())  # every case got its quiet run
    assert sum(len(f) for _, _, f in runs.values()) == 1 and max(seen) == 0.5


def test_the_plot_takes_a_prediction_outside_its_own_interval(unseen, tmp_path):
    """Sampled intervals of skewed inputs may leave out the prediction at the values: still drawn."""
    pytest.importorskip("matplotlib")
    _, run = unseen
    row = {
        "case": "skewed",
        "measured_median": 1e-3,
        "measured_min": 0.9e-3,
        "measured_max": 1.1e-3,
        "predicted": 0.5e-3,
        "interval_low": 0.6e-3,
        "interval_high": 2e-3,
        "error_percent": -50.0,
    }
    assert run.plot([row], tmp_path / "results.png", "skewed")
    assert (tmp_path / "results.png").stat().st_size > 0
