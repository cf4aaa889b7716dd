"""The same fact said one way everywhere: text and JSON, CLI and API, what is printed and written."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import uml2perf
from uml2perf import api
from uml2perf.cli import main
from uml2perf.errors import ModelError, option_text
from uml2perf.profile.main_activity import main_activity
from uml2perf.reader import read_model
from uml2perf_runtime import Machine

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
VALIDATION = ROOT / "validation" / "models"


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uml2perf", *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def test_json_nodes_are_the_nodes_the_text_names() -> None:
    """Regression: --json said "nodes": 16 where the text said "on 8 nodes" (32 processes on gescher)."""
    result = api.predict(SAMPLES / "lapw0.uml", machine="gescher", procs=32)
    assert "32 processes on 8 nodes" in result.report()
    assert result.to_dict()["nodes"] == 8 and result.machine["nodes"] == 16


def test_more_nodes_than_the_machine_has_is_a_warning() -> None:
    warnings: list[str] = []
    api.predict(SAMPLES / "lapw0.uml", machine="gescher", nodes=20, procs=4, warnings=warnings)
    assert any("machine 'gescher' has 16 nodes; --nodes 20" in w for w in warnings), warnings
    warnings.clear()
    api.predict(SAMPLES / "lapw0.uml", machine="gescher", nodes=8, procs=4, warnings=warnings)
    assert not any("--nodes" in w for w in warnings)
    uml2perf.sweep(
        SAMPLES / "lapw0.uml", {"nodes:procs": [(8, 32), (20, 40)]}, machine="gescher", warnings=warnings
    )
    assert any("the grid's nodes=20 predicts a larger machine" in w for w in warnings), warnings


def test_replications_of_a_deterministic_model_say_so() -> None:
    warnings: list[str] = []
    api.predict(SAMPLES / "lapw0.uml", procs=2, replications=3, warnings=warnings)
    assert any("3 replications all predict" in w and "no random branches" in w for w in warnings)
    warnings.clear()
    uml2perf.sweep(
        SAMPLES / "lapw0.uml", {"procs": [1, 2]}, replications=2, analytic=False, warnings=warnings
    )
    assert any("replications of every point predict the same time" in w for w in warnings), warnings
    warnings.clear()
    random_branches = ROOT / "tests" / "data" / "guards" / "french.uml"
    api.predict(random_branches, procs=1, replications=3, warnings=warnings, default_cost=1.0)
    assert not any("replications" in w for w in warnings), warnings


def test_the_machine_outputs_name_default_can_be_named() -> None:
    result = api.predict(SAMPLES / "prophet.uml", procs=1)
    assert result.machine["name"] == "default"
    named = api.predict(SAMPLES / "prophet.uml", procs=1, machine="default")
    assert named.time == result.time and Machine.load("default") == Machine.default()
    assert _run("run", str(SAMPLES / "prophet.uml"), "--machine", "default", "--procs", "1").returncode == 0


@pytest.mark.parametrize("machine", Machine.bundled())
def test_every_bundled_machine_runs_the_samples(machine: str) -> None:
    for sample in ("lapw0.uml", "hybrid.uml", "prophet.uml"):
        assert api.predict(SAMPLES / sample, machine=machine, procs=2).time > 0


@pytest.mark.parametrize("machine", ["cluster-modern", "gpu-node"])
def test_the_current_machines_run_the_roofline_sample(machine: str) -> None:
    """Regression: cluster-modern had no roofline keys, so kernels.uml (flops and bytes) could not run."""
    assert api.predict(SAMPLES / "kernels.uml", machine=machine, procs=2).time > 0


def test_a_hint_with_an_id_that_starts_with_a_dash_can_be_typed_back() -> None:
    """Regression: hints printed --activity -84-16-..., which argparse takes for an option."""
    assert option_text("--activity", "-84-16-x") == "--activity=-84-16-x"
    assert option_text("--activity", "Main") == "--activity Main"
    assert option_text("--activity", "my activity") == "--activity 'my activity'"
    model = read_model(SAMPLES / "prophet.uml")
    first, *rest = model.activities
    twins = replace(model, activities=(replace(first, id="-84-16-1"), replace(first, id="-84-16-2"), *rest))
    with pytest.raises(ModelError) as caught:
        main_activity(twins, first.name)
    assert "--activity=-84-16-1" in (caught.value.hint or "")


def test_a_mistyped_variable_gets_did_you_mean_and_one_error_type() -> None:
    """Regression: --set NTA=64 had no "did you mean"; the API raised SimulationError from predict and
    Uml2PerfError from sweep for the same typo."""
    done = _run("run", str(SAMPLES / "lapw0.uml"), "--set", "NTA=64")
    assert done.returncode == 1 and "did you mean 'NAT'?" in done.stderr
    calls = (
        lambda: uml2perf.predict(SAMPLES / "lapw0.uml", overrides={"NTA": 64}),
        lambda: uml2perf.sweep(SAMPLES / "lapw0.uml", {"procs": [1]}, fixed={"NTA": 64}),
        lambda: uml2perf.sweep(SAMPLES / "lapw0.uml", {"NTA": [32]}),
    )
    for call in calls:
        with pytest.raises(uml2perf.Uml2PerfError, match="no parameter 'NTA'") as caught:
            call()
        assert "did you mean 'NAT'?" in (caught.value.hint or "")


def test_an_element_run_on_several_threads_at_once_is_explained() -> None:
    """Regression: a pool's time per process (thread-seconds) exceeded the whole run without a word."""
    result = api.predict(
        VALIDATION / "pipe_of_pools.uml",
        sidecar=VALIDATION / "pipe_of_pools.toml",
        procs=1,
        overrides={"T": 4},
        default_cost=1e-3,
    )
    assert result.element("pool1")["max"] > result.time
    assert "pool1, work1, pool2 ...: called on several threads of a process at once" in result.report()
    alone = api.predict(SAMPLES / "lapw0.uml", procs=2)
    assert "called on several threads" not in alone.report()


def test_calibrate_prints_what_it_writes(tmp_path: Path, monkeypatch: Any, capsys: Any) -> None:
    """Regression: calibrate printed peak_flops 1.974e+10 (all cores) and wrote peak_flops = 3.183e+10."""
    import uml2perf.calibrate as calibrate

    measured = {
        "speed": calibrate.Measured(1.0, 1.0, 1.0, "reference"),
        "memory_bandwidth": calibrate.Measured(2e10, 2e10, 2e10, "triad, all cores"),
        "core_bandwidth": calibrate.Measured(1e10, 1e10, 1e10, "triad, one core"),
        "core_flops": calibrate.Measured(3.183e10, 3.1e10, 3.2e10, "matrix product, one core"),
        "peak_flops": calibrate.Measured(1.974e10, 1.9e10, 2e10, "matrix products, all cores"),
    }
    monkeypatch.setattr(calibrate, "measure", lambda **_: dict(measured))
    monkeypatch.setattr(calibrate, "threads_section", lambda values: "[threads]\n")
    out = tmp_path / "m.toml"
    assert main(["calibrate", "-o", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()[:-1]
    printed = {line[:20].strip(): float(line[20:].split()[0]) for line in lines}
    import tomllib

    written = tomllib.loads(out.read_text())
    value = written["peak_flops"]
    value = value["value"] if isinstance(value, dict) else value  # written with its interval
    assert printed["peak_flops"] == pytest.approx(value, rel=1e-3)
    assert value == pytest.approx(3.183e10, rel=1e-3)


def test_predict_finds_the_critical_path_as_the_json_does() -> None:
    """Regression: Results.critical_path was None from the API while run --json had it."""
    result = uml2perf.predict(SAMPLES / "lapw0.uml", machine="gescher", procs=8)
    assert result.critical_path and result.critical_path[0]["element"]
    cli = json.loads(
        _run("run", str(SAMPLES / "lapw0.uml"), "--machine", "gescher", "--procs", "8", "--json").stdout
    )
    assert result.critical_path == cli["critical_path"]
    assert uml2perf.predict(SAMPLES / "lapw0.uml", procs=8, critical_path=False).critical_path is None
