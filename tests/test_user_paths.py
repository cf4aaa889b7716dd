"""What users reach for first: generated modules that refuse to guess, plots that never lose a
prediction, handlers from the current directory and the README's deadlock example."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from uml2perf.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
DATA = ROOT / "tests" / "data" / "dialects"


def cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def python(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120
    )


# --------------------------------------------------------------------------- the deadlock sample


def test_the_readme_deadlock_example_reports_who_waits_for_whom() -> None:
    done = python("-m", "uml2perf", "run", SAMPLES / "ring_deadlock.uml", "--procs", "3")
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0] == "error: deadlock at simulated time 338.301 s: 3 processes cannot finish"
    for pid, source in ((0, 2), (1, 0), (2, 1)):
        assert (
            f"  process {pid} (node 0) waits at 'Receive_I2' (xmi:id=_recv, line 62) "
            f"for recv from process {source} tag 2"
        ) in lines
    assert "Traceback" not in done.stderr


# --------------------------------------------------------------------------- several activities, no main


@pytest.fixture()
def two_activities(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    module = tmp_path / "two.py"
    code, _, err = cli(capsys, "convert", DATA / "two-activities.uml", "-o", module)
    assert code == 0, err
    return module


def test_a_module_without_main_lists_its_activities_instead_of_predicting_zero(two_activities: Path) -> None:
    done = python(two_activities)
    assert done.returncode == 1
    assert done.stdout == ""
    assert (
        "error: two-activities.uml: cannot tell which activity is the main one; candidates: "
        "'ReadPhase' [xmi:id=_read], 'WritePhase' [xmi:id=_write]"
    ) in done.stderr
    assert "--activity NAME" in done.stderr


def test_run_gives_the_same_message_on_the_module_and_on_the_export(
    two_activities: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, from_module = cli(capsys, "run", two_activities)
    assert code == 1 and out == ""
    code, _, from_export = cli(capsys, "run", DATA / "two-activities.uml")
    assert code == 1
    assert from_module == from_export


@pytest.mark.parametrize("activity, time", [("WritePhase", 2.5), ("_read", 1.5)])
def test_a_chosen_activity_runs(
    two_activities: Path, capsys: pytest.CaptureFixture[str], activity: str, time: float
) -> None:
    import json

    code, out, err = cli(capsys, "run", two_activities, "--activity", activity, "--procs", "1", "--json")
    assert code == 0, err
    assert json.loads(out)["time"] == pytest.approx(time)
    done = python(two_activities, "--activity", activity, "--procs", "1", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["time"] == pytest.approx(time)


def test_an_unknown_activity_names_the_ones_there_are(
    two_activities: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "run", two_activities, "--activity", "Nope")
    assert code == 1
    assert "no activity is named 'Nope'" in err and "'ReadPhase' [xmi:id=_read]" in err


def test_sweep_of_a_module_takes_the_activity(
    two_activities: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "sweep", two_activities, "--grid", "procs=1,2")
    assert code == 1 and "cannot tell which activity is the main one" in err
    code, out, err = cli(
        capsys, "sweep", two_activities, "--grid", "procs=1,2", "--activity", "WritePhase", "--csv", "-"
    )
    assert code == 0, err
    assert "2.5" in out


# --------------------------------------------------------------------------- variables without a value


def test_a_variable_without_value_stops_the_module_as_it_stops_the_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (DATA / "papyrus-marte.uml").read_text(encoding="utf-8").replace("in$x=(10,ms)", "in$x")
    export = tmp_path / "no-value.uml"
    export.write_text(text, encoding="utf-8")
    module = tmp_path / "no_value.py"
    assert cli(capsys, "convert", export, "-o", module)[0] == 0
    code, _, from_export = cli(capsys, "run", export, "--procs", "2")
    assert code == 1
    code, _, from_module = cli(capsys, "run", module, "--procs", "2")
    assert code == 1
    alone = python(module, "--procs", "2")
    assert alone.returncode == 1
    # the export is named as given; the module names it by its file name
    from_export = from_export.replace(str(tmp_path) + "/", "")
    assert from_module == from_export == alone.stderr
    assert "1 variable without a value: x" in alone.stderr and "--set x=VALUE" in alone.stderr
    code, _, err = cli(capsys, "sweep", module, "--grid", "procs=2")
    assert code == 1 and "1 variable without a value: x" in err
    code, _, err = cli(capsys, "sweep", module, "--grid", "procs=2", "--grid", "x=0.01,0.02")
    assert code == 0, err
    assert python(module, "--procs", "2", "--set", "x=0.01").returncode == 0


def test_sweep_refuses_an_export_where_nothing_takes_time(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "sweep", DATA / "plain-export.uml", "--grid", "procs=1,2")
    assert code == 1 and out == ""
    assert "nothing in this model takes time" in err


# --------------------------------------------------------------------------- plots


def test_an_unknown_picture_format_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "run", SAMPLES / "prophet.uml", "--procs", "1", "--plot", tmp_path / "p.xyz")
    assert code == 2 and out == ""
    assert "cannot draw a '.xyz' picture" in err and ".png" in err
    code, out, err = cli(
        capsys, "sweep", SAMPLES / "prophet.uml", "--grid", "GV=0,1", "--plot", tmp_path / "p.png"
    )
    assert code == 2 and out == "" and "sweep procs" in err
    assert not list(tmp_path.iterdir())


def test_without_matplotlib_the_plot_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    for command in (
        ("run", SAMPLES / "prophet.uml", "--procs", "1"),
        ("sweep", SAMPLES / "prophet.uml", "--grid", "procs=1,2"),
    ):
        code, out, err = cli(capsys, *command, "--plot", tmp_path / "p.png")
        assert code == 2 and out == ""
        assert "matplotlib" in err and "uml2perf[plot]" in err


def test_a_plot_that_cannot_be_written_keeps_the_prediction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "missing-folder" / "p.png"
    code, out, err = cli(capsys, "run", SAMPLES / "prophet.uml", "--procs", "1", "--plot", target)
    assert code == 1
    assert "Predicted time: 194.184432 s" in out
    assert "error:" in err


# --------------------------------------------------------------------------- handlers


README_HANDLER = """
from uml2perf.handlers.base import ContentHandler


class CsvHandler(ContentHandler):
    name = "csv"
    suffix = ".csv"
    needs = "model"

    def start(self, job):
        super().start(job)
        self.rows = ["id,name,kind"]

    def visit_Node(self, node):
        self.rows.append(f"{node.id},{node.name},{node.kind.value}")

    def visit_Edge(self, edge):
        return False

    def finish(self):
        return "\\n".join(self.rows) + "\\n"
"""


def test_a_handler_from_the_current_directory_works_without_installing(tmp_path: Path) -> None:
    package = tmp_path / "my_package"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "csv_handler.py").write_text(README_HANDLER, encoding="utf-8")
    script = "import sys; from uml2perf.cli import main; sys.exit(main())"  # as the console script does
    done = python(
        "-P",  # no current directory on the path, as with the installed command
        "-c",
        script,
        "convert",
        SAMPLES / "prophet.uml",
        "--handler",
        "my_package.csv_handler:CsvHandler",
        "-o",
        "nodes.csv",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    rows = (tmp_path / "nodes.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0] == "id,name,kind" and "_a1,A1,action" in rows


# --------------------------------------------------------------------------- --default-cost


def test_default_cost_times_every_action_without_a_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    plain = DATA / "plain-export.uml"
    code, _, err = cli(capsys, "run", plain, "--procs", "1")
    assert code == 1 and "--default-cost SECONDS" in err
    code, out, err = cli(capsys, "run", plain, "--procs", "1", "--default-cost", "1e-3", "--json")
    assert code == 0, err
    result = json.loads(out)
    # Setup, TimeStep, Check, Halo and (or not) WriteOutput: one millisecond each
    assert result["time"] in (pytest.approx(4e-3), pytest.approx(5e-3))
    assert all(e["calls"] == 0 or e["exclusive"] > 0 for e in result["elements"])
    code, out, _ = cli(capsys, "check", plain, "--default-cost", "1e-3")
    assert "5 of 5 actions have a cost" in out
    module = tmp_path / "plain.py"
    code, _, err = cli(capsys, "convert", plain, "--default-cost", "2e-3", "-o", module)
    assert code == 0, err
    assert module.read_text(encoding="utf-8").count("p.compute(E_") == 5
    assert "0.002)" in module.read_text(encoding="utf-8")
    code, _, err = cli(capsys, "run", module, "--default-cost", "1")
    assert code == 2 and "convert the export again" in err
    code, out, err = cli(capsys, "sweep", plain, "--grid", "procs=1", "--default-cost", "1e-3", "--csv", "-")
    assert code == 0, err


def test_the_sidecar_cost_wins_and_default_cost_replaces_its_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    sidecar = DATA / "plain-export.toml"
    code, out, err = cli(
        capsys,
        "run",
        DATA / "plain-export.uml",
        "--sidecar",
        sidecar,
        "--default-cost",
        "0.25",
        "--json",
        "--procs",
        "1",
    )
    assert code == 0, err
    per_call = {e["name"]: e["exclusive"] / e["calls"] for e in json.loads(out)["elements"]}
    assert per_call["Check"] == pytest.approx(0.25)  # the sidecar's default was 0.001
    assert per_call["Setup"] == pytest.approx(0.5)  # its own entry wins
    assert per_call["TimeStep"] == pytest.approx(0.2)  # 0.01 * N, N = 20


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "soon"])
def test_default_cost_must_be_a_time(capsys: pytest.CaptureFixture[str], value: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", str(DATA / "plain-export.uml"), "--default-cost", value])
    assert exc.value.code == 2
    assert "--default-cost" in capsys.readouterr().err


# --------------------------------------------------------------------------- did you mean


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["rnu", "m.uml"], "invalid choice: 'rnu', did you mean 'run'?"),
        (["chek", "m.uml"], "invalid choice: 'chek', did you mean 'check'?"),
        (["run", "m.uml", "--procss", "4"], "unrecognized arguments: --procss (did you mean --procs?) 4"),
        (["run", "m.uml", "--placement", "blok"], "invalid choice: 'blok', did you mean 'block'?"),
        (["sweep", "m.uml", "--gird", "procs=1"], "--gird (did you mean --grid?)"),
        (["convert", "m.uml", "--handlr", "dot"], "--handlr (did you mean --handler?)"),
        (["run", "m.uml", "--xyz"], "unrecognized arguments: --xyz"),
    ],
)
def test_mistyped_words_get_a_suggestion(
    capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert expected in err
    if argv[0] in ("run", "sweep", "convert"):
        assert f"usage: uml2perf {argv[0]}" in err  # the subcommand's own usage
    if "--xyz" in argv:
        assert "did you mean" not in err


def test_a_generated_module_suggests_its_options_too(two_activities: Path) -> None:
    done = python(two_activities, "--activty", "ReadPhase")
    assert done.returncode == 2
    assert "--activty (did you mean --activity?)" in done.stderr


# --------------------------------------------------------------------------- the cache folder


def test_the_cache_folder_is_the_platforms_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import tomllib

    from uml2perf import cache

    monkeypatch.delenv(cache.LOCATION_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(sys, "platform", "linux")
    assert cache._default_root() == tmp_path / "uml2perf"
    # elsewhere platformdirs knows the folder (~/Library/Caches, %LOCALAPPDATA%): a dependency there
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    assert "platformdirs>=3.0; sys_platform != 'linux'" in requires
    platformdirs = pytest.importorskip("platformdirs")
    monkeypatch.setattr(sys, "platform", "darwin")
    assert cache._default_root() == Path(platformdirs.user_cache_dir("uml2perf", appauthor=False))


# --------------------------------------------------------------------------- nothing takes time


def test_a_module_where_nothing_takes_time_refuses_to_predict_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = tmp_path / "plain.py"
    code, _, err = cli(capsys, "convert", DATA / "plain-export.uml", "-o", module)
    assert code == 0
    assert "nothing in this model takes time" in err and "--default-cost SECONDS" in err
    alone = python(module, "--procs", "1")
    assert alone.returncode == 1 and alone.stdout == ""
    assert "nothing in this model took time, so the prediction would be 0 s" in alone.stderr
    code, out, err = cli(capsys, "run", module, "--procs", "1")
    assert code == 1 and out == "" and "would be 0 s" in err
    timed = tmp_path / "timed.py"
    assert cli(capsys, "convert", DATA / "plain-export.uml", "-o", timed, "--default-cost", "1e-3")[0] == 0
    assert "nothing in this model takes time" not in capsys.readouterr().err
    assert python(timed, "--procs", "1").returncode == 0


def test_convert_counts_the_actions_without_a_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sidecar = tmp_path / "some.toml"
    sidecar.write_text('[elements."Setup"]\ncost = "0.5"\n', encoding="utf-8")
    code, _, err = cli(
        capsys, "convert", DATA / "plain-export.uml", "--sidecar", sidecar, "-o", tmp_path / "m.py"
    )
    assert code == 0
    assert err.count("4 of 5 actions have no cost") == 1


def test_a_module_asks_only_for_the_variables_of_the_activity_it_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    other = (
        '    <packagedElement xmi:type="uml:Activity" xmi:id="_other" name="Other"'
        ' node="_o_init _o_a _o_end">\n'
        '      <edge xmi:type="uml:ControlFlow" xmi:id="_o_e1" source="_o_init" target="_o_a"/>\n'
        '      <edge xmi:type="uml:ControlFlow" xmi:id="_o_e2" source="_o_a" target="_o_end"/>\n'
        '      <node xmi:type="uml:InitialNode" xmi:id="_o_init"/>\n'
        '      <node xmi:type="uml:OpaqueAction" xmi:id="_o_a" name="Alone"/>\n'
        '      <node xmi:type="uml:ActivityFinalNode" xmi:id="_o_end"/>\n'
        "    </packagedElement>\n  </uml:Model>"
    )
    text = (DATA / "papyrus-marte.uml").read_text(encoding="utf-8").replace("in$x=(10,ms)", "in$x")
    text = text.replace("  </uml:Model>", other, 1)
    text = text.replace(
        "</xmi:XMI>", '  <PAM:PaStep xmi:id="_s_o" base_NamedElement="_o_a" hostDemand="(2,s)"/>\n</xmi:XMI>'
    )
    export = tmp_path / "two.uml"
    export.write_text(text, encoding="utf-8")
    module = tmp_path / "two.py"
    assert cli(capsys, "convert", export, "-o", module)[0] == 0
    for activity, needs_x in (("Other", False), ("Exchange", True)):
        code, out, from_export = cli(capsys, "run", export, "--activity", activity, "--procs", "2", "--json")
        alone = python(module, "--activity", activity, "--procs", "2", "--json")
        if needs_x:
            assert code == 1 and alone.returncode == 1
            assert "1 variable without a value: x" in alone.stderr
            assert alone.stderr == from_export.replace(str(tmp_path) + "/", "")
        else:
            assert code == 0 and alone.returncode == 0, alone.stderr
            assert json.loads(alone.stdout)["time"] == json.loads(out)["time"] == pytest.approx(2.0)


def test_export_options_are_refused_on_a_module(
    two_activities: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for option in (["--sidecar", str(DATA / "plain-export.toml")], ["--default-cost", "1"]):
        for command in (["run"], ["sweep", "--grid", "procs=1"]):
            code, out, err = cli(capsys, command[0], two_activities, *command[1:], *option)
            assert code == 2 and out == ""
            assert f"{option[0]} applies to an XMI export" in err


def test_fit_checks_its_plot_before_fitting_and_prints_the_model_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "sort.csv"
    data.write_text("n,time\n" + "".join(f"{n},{2e-9 * n}\n" for n in (1000, 2000, 4000, 8000, 16000)))
    code, out, err = cli(capsys, "fit", data, "--plot", tmp_path / "fit.xyz")
    assert code == 2 and out == "" and "cannot draw a '.xyz' picture" in err
    pytest.importorskip("matplotlib")
    code, out, err = cli(capsys, "fit", data, "--plot", tmp_path / "missing" / "fit.png")
    assert code == 1 and out.startswith("time = ") and "error:" in err


def test_activities_lists_what_a_module_can_run(
    two_activities: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(capsys, "activities", two_activities)
    assert code == 0
    assert "a module generated from two-activities.uml, 2 activities" in out
    assert "   ReadPhase  (xmi:id=_read)" in out and "no main activity" in out
    module = tmp_path / "prophet_model.py"
    assert cli(capsys, "convert", SAMPLES / "prophet.uml", "-o", module)[0] == 0
    code, out, _ = cli(capsys, "activities", module)
    assert " * MainActivity  (xmi:id=_main)" in out and "no main activity" not in out
