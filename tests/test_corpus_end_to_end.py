"""Every file of the shared corpus, end to end: check, convert, run.

Real exports carry no uml2perf profile, so each file is run the way a user
would run a plain export: a sidecar gives every action without a cost a
default cost, and a value to every variable the model declares without one
(MARTE analysis-context parameters such as ``in$timeUpdate``).  Files with
several activities and no main one are run with ``--activity``; the negative
samples must say what they hold instead of an activity.
"""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from conftest import corpus_file, find_corpus

from uml2perf.check import check_file
from uml2perf.cli import main as cli_main
from uml2perf.errors import ModelError, Severity, Uml2PerfError
from uml2perf.generation import generate
from uml2perf.model import Activity, Model, NodeKind
from uml2perf.profile import main_activity, unset_variables
from uml2perf.reader import read_model

CORPUS = find_corpus()
FILES = (
    sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*") if p.is_file() and p.suffix != ".md")
    if CORPUS.is_dir()
    else []
)
NEGATIVE = {
    "umbrello/nonactivity-umbrello161-class-all-elements.xmi",
    "modelio/nonactivity-modelio-usecase-sysml-trace.xmi",
}
#: Diagrams whose nodes are only control and object nodes: nothing takes time.
NO_ACTIONS = {"umbrello/umbrello2-xmi21-activity-diagram.xmi"}
DEFAULT_COST = 0.001

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not found at {CORPUS}")


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = cli_main(list(argv))
    return status, out.getvalue(), err.getvalue()


def _executable(activity: Activity) -> list[str]:
    return [n.name or n.id for n in activity.walk() if n.kind in (NodeKind.ACTION, NodeKind.CALL)]


def _activity_to_run(model: Model) -> tuple[Activity, list[str]]:
    """The main activity, else the first candidate with actions, and the CLI options that choose it."""
    try:
        return main_activity(model), []
    except ModelError as exc:
        assert "candidates" in exc.message, exc.message
    chosen = next((a for a in model.activities if _executable(a)), model.activities[0])
    return chosen, ["--activity", chosen.id]


def _sidecar(tmp_path: Path, model: Model, main: Activity) -> Path:
    """Default cost, plus a value for every variable the run of ``main`` would ask for."""
    lines = ["[defaults]", f'cost = "{DEFAULT_COST}"']
    missing = unset_variables(model, main)
    if missing:
        lines.append("[variables]")
        lines.extend(f'{v.name} = "0.5"' for v in missing)
    path = tmp_path / "sidecar.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("relative", [f for f in FILES if f in NEGATIVE])
def test_negative_samples_say_what_the_file_holds(relative: str) -> None:
    path = corpus_file(relative)
    with pytest.raises(ModelError) as info:
        read_model(path)
    assert info.value.message.startswith("no activity found; the file holds ")
    status, out, _ = _cli("check", str(path))
    assert status == 1
    assert "no activity found; the file holds" in out and path.name in out


@pytest.mark.parametrize("relative", [f for f in FILES if f not in NEGATIVE])
def test_check_reports_without_errors_and_notes_what_was_skipped(relative: str) -> None:
    path = corpus_file(relative)
    report = check_file(path)
    errors = [d for d in report.diagnostics if d.severity == Severity.ERROR]
    assert not errors, "\n".join(map(str, errors))
    for diagnostic in report.diagnostics:
        assert diagnostic.location.file == path.name, str(diagnostic)
    without_cost = [d for d in report.diagnostics if "action has no cost" in d.message]
    assert len(without_cost) == report.actions_without_cost
    for diagnostic in without_cost:
        assert diagnostic.location.line and diagnostic.location.element_id, str(diagnostic)
    status, out, _ = _cli("check", "--verbose", str(path))
    assert status == 0
    summary = out.strip().splitlines()[-1]
    notes = report.count(Severity.INFO)
    assert f"{notes} note(s)" in summary
    assert f"of {report.actions} actions have a cost" in summary
    assert out.count(": info: ") == notes


@pytest.mark.parametrize("relative", [f for f in FILES if f not in NEGATIVE])
def test_convert_and_run(relative: str, tmp_path: Path) -> None:
    path = corpus_file(relative)
    model = read_model(path)
    assert model.activities
    generated = generate(model, "python")
    compile(generated.text, f"<{relative}>", "exec")
    for activity in model.activities:  # every activity is a function of the module
        assert f"xmi:id={activity.id}" in generated.text

    main, choose = _activity_to_run(model)
    sidecar = _sidecar(tmp_path, model, main)
    status, out, err = _cli("run", str(path), "--procs", "2", "--json", "--sidecar", str(sidecar), *choose)
    executable = set(_executable(main))
    if relative in NO_ACTIONS:  # nothing could take time: run says so instead of predicting 0 s
        assert not executable and status == 1 and "nothing in this model takes time" in err
        return
    assert status == 0, err
    result = json.loads(out)
    assert result["processes"] == 2
    assert result["time"] > 0
    names = {e["name"] for e in result["elements"] if e["calls"] and e["kind"] not in ("activity",)}
    ids = {n.id: n for a in model.activities for n in a.walk()}
    profiled = {e["id"] for e in result["elements"] if e["calls"]}
    assert profiled and profiled <= set(ids) | {a.id for a in model.activities}
    assert names & {ids[i].name or i for i in profiled if i in ids}


def test_run_names_variables_without_value_and_how_to_set_them(tmp_path: Path) -> None:
    path = corpus_file("papyrus/dice-poseidonia-forkjoin-marte-dam.uml")
    if not path.is_file():
        pytest.skip("file not in the corpus")
    status, _, err = _cli("run", str(path), "--procs", "2")
    assert status == 1
    assert "without a value" in err and "--set a1=VALUE" in err and "[variables]" in err
    assert re.search(r"dice-poseidonia-forkjoin-marte-dam\.uml:\d+", err)
    status, out, _ = _cli(
        "run",
        str(path),
        "--procs",
        "2",
        "--json",
        "--set",
        "a1=1",
        "--set",
        "a2=2",
        "--set",
        "a3=3",
        "--set",
        "a4=0.5",
    )
    assert status == 0
    # A1 (1 s), then A2 (2 s) and A3 (3 s) in parallel branches, then LastStep (0.5 s)
    assert json.loads(out)["time"] == pytest.approx(1 + 3 + 0.5)


def test_context_parameters_become_variables_of_their_activity() -> None:
    path = corpus_file("papyrus/dice-posidonia-3activities-marte.uml")
    if not path.is_file():
        pytest.skip("file not in the corpus")
    model = read_model(path)
    cep = model.activity("CEPScenario(AD)")
    assert cep is not None
    declared = {v.name: v for v in cep.attributes}
    assert {"timeUpdate", "pbFire", "timeRuleX"} <= set(declared)
    assert "RT" not in declared  # out$RT is a result, not an input
    assert declared["timeUpdate"].required and declared["timeUpdate"].default is None
    with pytest.raises(Uml2PerfError) as info:
        main_activity(model)
    assert "candidates" in info.value.message and "CEPScenario(AD)" in info.value.message
