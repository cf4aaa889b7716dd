"""The Python API: ``import uml2perf`` stays cheap, its functions take plain values and Machine
objects, and results become pandas DataFrames when pandas is there."""

from __future__ import annotations

import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import uml2perf
from uml2perf.errors import ModelError, UsageError

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
PROPHET_ONE_PROCESS = 121 / 3.14 + 112 + 32 + (3.14 + 2.71 * 3.14)


def test_import_uml2perf_loads_no_heavy_library() -> None:
    code = (
        "import sys, uml2perf\n"
        "heavy = [m for m in ('lxml', 'jinja2', 'simpy', 'numpy', 'scipy', 'networkx', 'pandas')"
        " if m in sys.modules]\n"
        "print(','.join(heavy))\n"
        "print(','.join(sorted(n for n in ('read', 'convert', 'predict', 'sweep', 'Machine')"
        " if n in dir(uml2perf))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    heavy, listed = done.stdout.splitlines()
    assert heavy == ""
    assert listed == "Machine,convert,predict,read,sweep"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'predikt'"):
        uml2perf.predikt  # noqa: B018


def test_predict_takes_a_machine_object_a_name_or_a_file() -> None:
    machine = uml2perf.Machine.load("gescher")
    by_object = uml2perf.predict(SAMPLES / "prophet.uml", machine=machine, procs=1)
    by_name = uml2perf.predict(str(SAMPLES / "prophet.uml"), machine="gescher", procs=1)
    assert isinstance(by_object, uml2perf.Results)
    assert by_object.time == by_name.time == pytest.approx(PROPHET_ONE_PROCESS, rel=1e-12)
    assert by_object.machine["name"] == "gescher"


def test_read_and_convert() -> None:
    model = uml2perf.read(SAMPLES / "prophet.uml")
    assert [a.name for a in model.activities] == ["MainActivity", "SA"]
    conversion = uml2perf.convert(SAMPLES / "prophet.uml")
    assert conversion.path is None and "MODEL = rt.ModelSpec(" in conversion.text


def test_sweep_takes_plain_python_values() -> None:
    result = uml2perf.sweep(
        SAMPLES / "lapw0.uml",
        {"nodes:procs": [(1, 4), (2, 8)], "NAT": [32, 64]},
        machine=uml2perf.Machine.load("gescher"),
        workers=1,
    )
    assert isinstance(result, uml2perf.SweepResult)
    assert [(r["nodes"], r["procs"], r["NAT"]) for r in result.rows] == [
        (1, 4, 32),
        (1, 4, 64),
        (2, 8, 32),
        (2, 8, 64),
    ]
    one = uml2perf.predict(SAMPLES / "lapw0.uml", machine="gescher", nodes=2, procs=8, overrides={"NAT": 64})
    assert result.rows[3]["time"] == pytest.approx(one.time, rel=1e-12)
    assert result.to_dict()["columns"][:3] == ["nodes", "procs", "NAT"]


def test_sweep_is_callable_also_once_its_module_is_imported() -> None:
    import uml2perf.sweep as module

    assert uml2perf.sweep is module
    result = uml2perf.sweep(SAMPLES / "prophet.uml", {"GV": [0, 1]}, procs=1)
    assert [r["GV"] for r in result.rows] == [0, 1]
    assert result.rows[1]["time"] == pytest.approx(PROPHET_ONE_PROCESS, rel=1e-12)


def test_run_sweep_takes_a_path_and_plain_values() -> None:
    from uml2perf.sweep import run_sweep

    result = run_sweep(SAMPLES / "prophet.uml", None, {"procs": [1, 2]}, fixed={"GV": 1}, workers=1)
    assert [r["procs"] for r in result.rows] == [1, 2]
    assert result.rows[0]["time"] == pytest.approx(PROPHET_ONE_PROCESS, rel=1e-12)


@pytest.mark.parametrize(
    "grid, error, text",
    [
        ({"procs": [2.5]}, UsageError, "not a whole number"),
        ({"procs": [0]}, UsageError, "at least 1"),
        ({"procs": 4}, UsageError, "expected a list of values"),
        ({"NOPE": [1]}, ModelError, "has no parameter 'NOPE'"),
        ({"nodes:procs": [(1, 4, 5)]}, UsageError, "must give 2 values"),
    ],
)
def test_sweep_refuses_bad_plain_values(grid: dict[str, Any], error: type[Exception], text: str) -> None:
    with pytest.raises(error, match=text):
        uml2perf.sweep(SAMPLES / "prophet.uml", grid)


# --------------------------------------------------------------------------- DataFrames


class FakeFrame:
    """What ``pandas.DataFrame(rows, columns=...)`` was given."""

    def __init__(self, rows: list[list[Any]], columns: list[str]) -> None:
        self.rows = rows
        self.columns = columns


@pytest.fixture()
def fake_pandas(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("pandas")
    setattr(module, "DataFrame", FakeFrame)  # noqa: B010 - a module built here
    monkeypatch.setitem(sys.modules, "pandas", module)


def test_results_tables_carry_units_in_their_columns(fake_pandas: None) -> None:
    results = uml2perf.predict(SAMPLES / "prophet.uml", procs=2)
    elements = results.to_dataframe()
    assert elements.columns[:3] == ["element", "id", "kind"] and "exclusive_s" in elements.columns
    first = dict(zip(elements.columns, elements.rows[0], strict=True))
    assert first["element"] == results.elements[0]["name"]
    assert first["inclusive_s"] == results.elements[0]["inclusive"]
    processes = results.to_dataframe("processes")
    assert processes.columns == ["pid", "node", "time_s", "compute_s", "comm_s", "wait_s"]
    assert [row[0] for row in processes.rows] == [0, 1]
    with pytest.raises(ValueError, match="'elements' or 'processes'"):
        results.to_dataframe("threads")


def test_sweep_table_has_the_csv_columns(fake_pandas: None) -> None:
    from uml2perf.sweep import to_csv

    result = uml2perf.sweep(SAMPLES / "prophet.uml", {"procs": [1, 2]}, fixed={"GV": 0})
    frame = result.to_dataframe()
    assert frame.columns == to_csv(result).splitlines()[0].split(",")
    assert frame.columns[:2] == ["procs", "time_s"]
    assert [row[0] for row in frame.rows] == [1, 2]


def test_without_pandas_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now fails
    results = uml2perf.predict(SAMPLES / "prophet.uml", procs=1)
    with pytest.raises(ImportError, match="pip install pandas"):
        results.to_dataframe()


def test_real_dataframes() -> None:
    pandas = pytest.importorskip("pandas")
    results = uml2perf.predict(SAMPLES / "prophet.uml", procs=1)
    frame = results.to_dataframe()
    assert isinstance(frame, pandas.DataFrame)
    assert frame.set_index("element").loc["SA1", "exclusive_s"] == pytest.approx(112)
    sweep = uml2perf.sweep(SAMPLES / "prophet.uml", {"procs": [1, 2, 4]}).to_dataframe()
    assert list(sweep["procs"]) == [1, 2, 4]
    assert sweep["time_s"].dtype.kind == "f"


def _doc_sessions() -> list[str]:
    text = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    return [block.split("```", 1)[0] for block in text.split("```pycon\n")[1:]]


@pytest.mark.parametrize("index", range(len(_doc_sessions())))
def test_every_documented_session_gives_the_documented_output(
    index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/python-api.md shows notebook sessions: each runs, and prints what the page says."""
    import doctest
    import shutil

    session = _doc_sessions()[index]
    if "to_dataframe" in session:
        pytest.importorskip("pandas")
    shutil.copytree(ROOT / "samples", tmp_path / "samples", symlinks=True)
    monkeypatch.chdir(tmp_path)  # the sessions write modules next to the samples, never into the checkout
    test = doctest.DocTestParser().get_doctest(session, {}, "python-api.md", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
    assert runner.tries == session.count(">>> ")  # every statement shown ran


def test_the_sessions_use_every_name_the_page_lists() -> None:
    text = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `uml2perf\.(\w+)", text, flags=re.M)
    used = "".join(_doc_sessions())
    assert len(listed) >= 6
    for name in listed:
        assert f"uml2perf.{name}" in used, name


def test_long_replications_show_a_bar_with_the_time_left(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    from uml2perf import api

    monkeypatch.setattr(os, "cpu_count", lambda: 1)  # one after another
    seen: list[int] = []

    def run_once(index: int, speedups: Any, keep: bool, first: bool) -> int:
        seen.append(index)
        return index

    runs = api._more_replications(run_once, 5, None, first_wall=10.0, progress=True)
    assert runs == seen == [1, 2, 3, 4]
    err = capsys.readouterr().err
    assert "replications 4/4" in err and err.endswith("\n")
    assert api._more_replications(run_once, 3, None, first_wall=0.001, progress=True) == [1, 2]
    assert capsys.readouterr().err == ""  # quick: no bar


def test_a_folder_named_uml2perf_next_to_a_script_is_documented(tmp_path: Path) -> None:
    """A clone folder named uml2perf beside a script shadows an editable install: the page names the
    error it gives, and the way out it gives works."""
    import subprocess

    (tmp_path / "uml2perf" / "docs").mkdir(parents=True)  # a checkout's top folder: no __init__.py
    script = tmp_path / "script.py"
    script.write_text(
        f"import uml2perf\nprint(uml2perf.read({str(SAMPLES / 'prophet.uml')!r}).activities[0].name)\n"
    )
    page = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    if plain.returncode:  # an editable install: the folder wins
        assert plain.stderr.strip().splitlines()[-1] in page
    way_out = subprocess.run(
        [sys.executable, "-P", str(script)], capture_output=True, text=True, cwd=tmp_path
    )
    assert way_out.returncode == 0 and way_out.stdout.strip() == "MainActivity"
    assert "python -P script.py" in page
