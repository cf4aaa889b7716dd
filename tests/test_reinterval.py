"""validation/reinterval.py: a stored run's intervals for one launch and for the median of its runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "validation" / "models"


def _stored_run(tmp_path: Path, predicted: float, measured: float) -> Path:
    folder = tmp_path / "run"
    folder.mkdir(parents=True)
    machine = folder / "machine.toml"
    machine.write_text(
        'name = "m"\nnodes = 1\ncores_per_node = 2\n[network.intra_node]\nlatency = 1e-6\nbandwidth = 2e9\n'
        "[variability]\nrun_to_run = { value = 1, low = 0.5, high = 2.0 }\n"
    )
    command = (
        f"uml2perf run {MODELS / 'pingpong.uml'} --machine {machine} --procs 2 --samples 200 --json "
        f"--sidecar SIDE --set S=4096"
    )
    row = {
        "case": "ping-pong 4 KiB",
        "prediction_command": command,
        "sidecar": (MODELS / "pingpong.toml").read_text(),
        "measured_runs": [measured] * 5,
        "measured_median": measured,
        "predicted": predicted,
    }
    (folder / "results.json").write_text(json.dumps({"set": "test", "rows": [row]}))
    return folder


def _run(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "validation" / "reinterval.py"), str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_measurement_at_the_edge_is_covered_by_one_launch_and_not_by_the_median(tmp_path: Path) -> None:
    probe = _stored_run(tmp_path / "probe", 1.0, 1.0)
    done = subprocess.run(
        [
            sys.executable, "-m", "uml2perf", "run", str(MODELS / "pingpong.uml"),
            "--machine", str(probe / "machine.toml"), "--procs", "2", "--json",
            "--sidecar", str(MODELS / "pingpong.toml"), "--set", "S=4096", "--no-interval",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    time = json.loads(done.stdout)["time"]
    # 1.6 x the prediction: inside one launch's 0.5..2.0 range, outside the median of five's
    folder = _stored_run(tmp_path, time, 1.6 * time)
    out = _run(folder)
    assert out.returncode == 0, out.stderr
    assert "one launch: coverage 100%" in out.stdout
    assert "median of the quiet runs: coverage 0%" in out.stdout


def test_a_prediction_that_no_longer_matches_is_refused(tmp_path: Path) -> None:
    folder = _stored_run(tmp_path, 123.0, 1.0)
    out = _run(folder)
    assert out.returncode != 0 and "stored" in out.stderr + out.stdout


@pytest.mark.parametrize("argv", [[]])
def test_without_a_folder_it_says_how_to_use_it(argv: list[str]) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "validation" / "reinterval.py"), *argv], capture_output=True, text=True
    )
    assert out.returncode == 2 and "reinterval.py" in out.stdout
