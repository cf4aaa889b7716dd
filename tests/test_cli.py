"""End-to-end tests of the command line on the bundled samples."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from uml2perf.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"

#: The Performance Prophet sample for one process: FA1 + FSA1 + FSA2(0) + FA4(P), P = 3.14.
PROPHET_ONE_PROCESS = 121 / 3.14 + 112 + 32 / (0 + 1) + (3.14 + 2.71 * 3.14)
#: The same with GV = 0: the decision takes A2 (cost 212) instead of SA.
PROPHET_GV0 = 121 / 3.14 + 212 + (3.14 + 2.71 * 3.14)

PROPHET_VARIANTS = sorted(SAMPLES.glob("prophet*.*"))
ALL_MODELS = sorted(
    p
    for p in SAMPLES.iterdir()
    if p.suffix in (".uml", ".xmi", ".mdxml", ".emx") and p.name != "ring_deadlock.uml"  # cannot finish
)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    code, out, err = run_cli(capsys, "run", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_version_and_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert "uml2perf" in capsys.readouterr().out
    assert main([]) == 2


def test_unknown_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", str(SAMPLES / "prophet.uml"), "--procs", "zero"])
    assert exc.value.code == 2


def test_prophet_prediction_matches_the_papers_cost_functions(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(capsys, SAMPLES / "prophet.uml", "--procs", "1")
    assert result["time"] == pytest.approx(PROPHET_ONE_PROCESS, rel=1e-12)
    assert result["processes"] == 1
    assert result["nodes"] == 1
    (proc,) = result["per_process"]
    assert proc["pid"] == 0
    assert proc["compute"] == pytest.approx(PROPHET_ONE_PROCESS, rel=1e-12)
    names = {e["name"] for e in result["elements"]}
    assert {"A1", "SA1", "SA2", "A4"} <= names
    assert "A2" not in {e["name"] for e in result["elements"] if e["calls"]}


def lapw0_one_process(nat: int) -> float:
    """Hand-computed LAPW0 sample on one process: no messages, PNAT = NAT."""
    pnat = nat
    return (
        0.5  # MPIinit
        + (1.5 + 0.15 * nat)  # ReadInput
        + 27.0 * pnat  # CalcMPM, repeated PNAT times
        + 0.001  # AllReduceSmall: one process, no network time
        + (25.0 + 0.2 * nat)  # DoSFT
        + (2.0 + 0.1 * pnat)  # DefVTOT
        + (1.5 + 0.01 * pnat)  # o3
        + 0.5  # MPIterm
    )


def test_set_overrides_a_variable(capsys: pytest.CaptureFixture[str]) -> None:
    default = run_json(capsys, SAMPLES / "lapw0.uml", "--procs", "1")
    assert default["time"] == pytest.approx(lapw0_one_process(32), rel=1e-12)
    bigger = run_json(capsys, SAMPLES / "lapw0.uml", "--procs", "1", "--set", "NAT=64")
    assert bigger["time"] == pytest.approx(lapw0_one_process(64), rel=1e-12)


def test_unknown_override_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "run", SAMPLES / "lapw0.uml", "--set", "NATS=64")
    assert code == 1
    assert "NATS" in err and "NAT" in err
    assert "Traceback" not in err


def test_text_report_says_where_the_time_goes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "run", SAMPLES / "prophet.uml", "--procs", "1")
    assert code == 0, err
    assert "194.18" in out
    for name in ("A1", "SA1", "SA2", "A4"):
        assert name in out


@pytest.mark.parametrize("variant", PROPHET_VARIANTS, ids=lambda p: p.name)
def test_every_dialect_of_the_prophet_sample_predicts_the_same(
    capsys: pytest.CaptureFixture[str], variant: Path
) -> None:
    result = run_json(capsys, variant, "--procs", "1")
    assert result["time"] == pytest.approx(PROPHET_ONE_PROCESS, rel=1e-12)


def test_convert_writes_a_module_that_runs_the_same(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "prophet_model.py"
    code, _, err = run_cli(capsys, "convert", SAMPLES / "prophet.uml", "-o", out)
    assert code == 0, err
    source = out.read_text()
    compile(source, str(out), "exec")
    assert "import lxml" not in source and "jinja2" not in source
    result = run_json(capsys, out, "--procs", "1")
    assert result["time"] == pytest.approx(PROPHET_ONE_PROCESS, rel=1e-12)


@pytest.mark.parametrize("handler", ["dot", "json"])
def test_other_handlers(capsys: pytest.CaptureFixture[str], tmp_path: Path, handler: str) -> None:
    out = tmp_path / f"model.{handler}"
    code, _, err = run_cli(capsys, "convert", SAMPLES / "prophet.uml", "-o", out, "--handler", handler)
    assert code == 0, err
    text = out.read_text()
    if handler == "json":
        data = json.loads(text)
        assert data
    else:
        assert "digraph" in text and text.rstrip().endswith("}")
        assert "A1" in text


def test_handlers_lists_the_built_ins(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "handlers")
    assert code == 0
    for name in ("python", "dot", "json"):
        assert name in out


def test_dialects_and_activities(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "dialects")
    assert code == 0 and "papyrus" in out.lower()
    code, out, _ = run_cli(capsys, "activities", SAMPLES / "prophet.uml")
    assert code == 0
    assert "MainActivity" in out and "SA" in out and "*" in out


def test_check_is_clean_on_the_prophet_sample(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "check", SAMPLES / "prophet.uml")
    assert code == 0, out
    assert "0 error(s)" in out


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda p: p.name)
def test_every_sample_runs_through_the_cli(capsys: pytest.CaptureFixture[str], model: Path) -> None:
    args = ["--procs", "4"]
    if model.name.startswith("lapw0"):
        args += ["--machine", "gescher"]
    if model.name.startswith("kernels"):
        args += ["--machine", "gpu-node"]
    if model.name.startswith("relax"):  # flops and bytes: a machine with roofline keys
        args += ["--machine", "cluster-modern"]
    if model.name.startswith("pairs"):  # fresh and calls too: the golden case's own machine file
        args += ["--machine", str(ROOT / "tests" / "golden" / "pairs_uml" / "machine.toml")]
    result = run_json(capsys, model, *args)
    assert result["time"] > 0
    assert len(result["per_process"]) == 4


def test_same_inputs_same_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    first = run_json(capsys, SAMPLES / "lapw0.uml", "--procs", "8", "--machine", "gescher")
    second = run_json(capsys, SAMPLES / "lapw0.uml", "--procs", "8", "--machine", "gescher")
    for key in ("time", "per_process", "elements"):
        assert first[key] == second[key]


def test_trace_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    trace = tmp_path / "trace.json"
    code, out, err = run_cli(
        capsys,
        "run",
        SAMPLES / "lapw0.uml",
        "--procs",
        "4",
        "--machine",
        "gescher",
        "--trace",
        trace,
    )
    assert code == 0, err
    events = json.loads(trace.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    assert any(e.get("ph") == "X" for e in events)


def test_the_installed_command_runs(tmp_path: Path) -> None:
    """The console script (not only main()) works, from outside the checkout."""
    result = subprocess.run(
        [sys.executable, "-m", "uml2perf", "run", str(SAMPLES / "prophet.uml"), "--procs", "1", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["time"] == pytest.approx(PROPHET_ONE_PROCESS, rel=1e-12)
