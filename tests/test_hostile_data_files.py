"""Hostile measurements, result files, machine files, sidecars and command lines: refusals, never crashes.

Each case is what a hostile or careless user may hand uml2perf: a device or a FIFO as measurements,
deep JSON and TOML, numbers too long for Python, names that would be code, non-finite grid values,
absurd replication counts. Every one must end with exit status 1 or 2 and one message that names
the problem, no traceback and no internal error, in bounded time (the commands run in-process here;
tests/test_hostile_inputs.py runs model files in child processes).
"""

from __future__ import annotations

import json
import os
import shutil
import tomllib
from pathlib import Path

import pytest

from uml2perf.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UML2PERF_NO_CACHE", "1")


def _refused(args: list[str], capsys: pytest.CaptureFixture[str], *words: str, status: int = 1) -> str:
    capsys.readouterr()
    code = main(args)
    out, err = capsys.readouterr()
    text = out + err
    assert code == status, text
    assert "Traceback" not in text and "internal error" not in text, text
    for word in words:
        assert word.lower() in text.lower(), f"{word!r} missing from: {text}"
    return text


def _csv(tmp_path: Path, body: str, name: str = "m.csv") -> str:
    path = tmp_path / name
    path.write_text(body)
    return str(path)


GOOD_ROWS = "".join(f"{n},{0.5 + 0.01 * n}\n" for n in (2, 4, 8, 16, 32, 64))


# --------------------------------------------------------------------------- fit


def test_fit_reads_a_device_only_up_to_the_cap(capsys: pytest.CaptureFixture[str]) -> None:
    _refused(["fit", "/dev/zero", "--limit", "input_bytes=100000"], capsys, "more than 100000 bytes")


def test_fit_refuses_a_fifo_that_sends_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from uml2perf_runtime.output import files

    monkeypatch.setattr(files, "READ_IDLE_TIMEOUT", 0.2)
    fifo = tmp_path / "m.csv"
    os.mkfifo(fifo)
    _refused(["fit", str(fifo)], capsys, "sent no data")


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("n,time\n2,\x00\x01\x02\n", ("binary",)),
        ("n,time\n2," + "9" * 5_000_000 + "\n", ("not a CSV",)),
        ("n,time\n" + GOOD_ROWS + "128," + "9" * 5000 + "\n", ("not a number",)),
        ("n,time\n" + GOOD_ROWS + "1_0,1\n", ("'1_0' is not a number",)),
        ("n,time\n" + GOOD_ROWS + "nan,1\n", ("not a number",)),
    ],
    ids=["binary", "huge-field", "5000-digits", "underscore", "nan"],
)
def test_fit_refuses_malformed_csv(
    tmp_path: Path, body: str, words: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    _refused(["fit", _csv(tmp_path, body)], capsys, *words)


@pytest.mark.parametrize("name", ["if", "__import__", "log2", "range", "pid", "pi"])
def test_fit_refuses_parameter_names_a_model_cannot_use(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _refused(["fit", _csv(tmp_path, f"{name},time\n" + GOOD_ROWS)], capsys, f"parameter name {name!r}")


@pytest.mark.parametrize(
    ("document", "words"),
    [
        ('{"parameters": ["n"], "measurements": [{"point": [' + "1" * 5000 + '], "value": 1}]}', ("digits",)),
        (
            '{"parameters": ["n"], "measurements": [{"point": [2], "value": 1, "callpath": ["a"]}]}',
            ("callpath",),
        ),
        ('{"parameters": ["n"], "measurements": {"a": [1, 2]}}', ("metric names",)),
        ('{"parameters": ["n"], "measurements": {"a": {"time": 5}}}', ("must be a list",)),
        ('{"parameters": ["n"], "measurements": ' + "[" * 5000 + "]" * 5000 + "}", ("nested",)),
        ('{"parameters": ["n"], "measurements": [], "x": ' + "1" * 5000 + "}", ("number",)),
        ('{"parameters": ["range"], "measurements": []}', ("range",)),
    ],
    ids=["long-int", "list-callpath", "non-dict-metric", "non-list-items", "deep", "int-digits", "name"],
)
def test_fit_refuses_malformed_json(
    tmp_path: Path, document: str, words: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    _refused(["fit", _csv(tmp_path, document, "m.json")], capsys, *words)


def test_fit_stops_at_the_measurements_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = "n,time\n" + "".join(f"{2 + i % 50},{1 + i % 7}\n" for i in range(5000))
    _refused(["fit", _csv(tmp_path, rows), "--limit", "measurements=1000"], capsys, "limit", "measurements")


def test_fit_stops_at_the_measured_points_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = "n,time\n" + "".join(f"{2 + i},{1 + i * 0.1}\n" for i in range(200))
    _refused(["fit", _csv(tmp_path, rows), "--limit", "measured_points=100"], capsys, "measured_points")


def test_fit_refuses_values_too_large_to_fit_and_never_writes_non_finite_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = "n,time\n" + "".join(f"{n},{1e300 * n * n}\n" for n in (2, 4, 8, 16, 32, 64))
    text = _refused(["fit", _csv(tmp_path, rows), "--json"], capsys, "too large")
    assert "Infinity" not in text and "NaN" not in text and "RuntimeWarning" not in text


def test_fit_warns_about_negative_times(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = "n,time\n" + "".join(f"{n},{n - 20}\n" for n in (2, 4, 8, 16, 32, 64))
    capsys.readouterr()
    assert main(["fit", _csv(tmp_path, rows), "--name", "A", "--sidecar", str(tmp_path / "s.toml")]) == 0
    assert "negative" in capsys.readouterr().err


@pytest.mark.parametrize("name", ['a\n[functions]\nx = "1"', 'q"uote', "nul\x00", "del\x7f", "\x1b[31mred"])
def test_fit_writes_sidecars_that_read_back_whatever_the_name(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s.toml"
    assert main(["fit", _csv(tmp_path, "n,time\n" + GOOD_ROWS), "--name", name, "--sidecar", str(out)]) == 0
    data = tomllib.loads(out.read_text())
    assert sorted(data) == ["elements", "variables"] and list(data["elements"]) == [name]


# --------------------------------------------------------------------------- compare, TOML


def _result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    shutil.copy(SAMPLES / "prophet.uml", tmp_path / "prophet.uml")
    capsys.readouterr()
    assert main(["run", str(tmp_path / "prophet.uml"), "--json"]) == 0
    result: dict[str, object] = json.loads(capsys.readouterr().out)
    return result


@pytest.mark.parametrize(
    ("change", "words"),
    [({"time": -5}, ("'time' is -5",)), ({"elements": "x"}, ("'elements'",))],
    ids=["negative-time", "elements-not-list"],
)
def test_compare_refuses_impossible_results(
    tmp_path: Path, change: dict[str, object], words: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    result = _result(tmp_path, capsys)
    (tmp_path / "a.json").write_text(json.dumps(result))
    (tmp_path / "b.json").write_text(json.dumps({**result, **change}))
    _refused(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")], capsys, *words)


def test_compare_refuses_deep_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.json").write_text('{"time": ' + "[" * 100_000 + "]" * 100_000 + "}")
    _refused(["compare", str(tmp_path / "a.json"), str(tmp_path / "a.json")], capsys, "nested")


def _nested_inline_tables(depth: int) -> str:
    return "x = " + "{a = " * depth + "1" + "}" * depth + "\n"


def test_deeply_nested_machine_files_and_sidecars_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(SAMPLES / "prophet.uml", tmp_path / "m.uml")
    (tmp_path / "deep.toml").write_text(_nested_inline_tables(500))
    model = str(tmp_path / "m.uml")
    _refused(["run", model, "--machine", str(tmp_path / "deep.toml")], capsys, "nested")
    _refused(["run", model, "--sidecar", str(tmp_path / "deep.toml")], capsys, "nested")


# --------------------------------------------------------------------------- run and sweep


def test_replications_are_bounded_in_run_and_sweep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(SAMPLES / "prophet.uml", tmp_path / "m.uml")
    model = str(tmp_path / "m.uml")
    _refused(["run", model, "--replications", "1000000000"], capsys, "replications", "limit")
    _refused(
        ["sweep", model, "--grid", "P=2", "--replications", "100000000", "--no-analytic"],
        capsys,
        "replications",
        "limit",
    )


@pytest.mark.parametrize("values", ["nan,inf", "2,1e400", "-inf"])
def test_sweep_grids_refuse_non_finite_values(
    tmp_path: Path, values: str, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(SAMPLES / "prophet.uml", tmp_path / "m.uml")
    _refused(
        ["sweep", str(tmp_path / "m.uml"), "--grid", f"P={values}", "--json", "-"], capsys, "finite", status=2
    )


def _device_table(name: str, count: int) -> str:
    return (
        f"[devices.{name}]\ncount = {count}\npeak_flops = 1e12\nmemory_bandwidth = 1e11\n"
        "link = { latency = 1e-5, bandwidth = 1e10 }\n"
    )


@pytest.mark.parametrize(
    ("devices", "words"),
    [
        (_device_table("gpu", 10**12), ("devices", "limit")),
        ("".join(_device_table(f"g{i}", 1) for i in range(5000)), ("device_kinds",)),
    ],
    ids=["count-1e12", "5000-kinds"],
)
def test_machine_devices_are_bounded(
    tmp_path: Path, devices: str, words: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(SAMPLES / "prophet.uml", tmp_path / "m.uml")
    machine = tmp_path / "machine.toml"
    machine.write_text((SAMPLES / "machines" / "laptop.toml").read_text() + "\n" + devices)
    _refused(["run", str(tmp_path / "m.uml"), "--machine", str(machine)], capsys, *words)


# --------------------------------------------------------------------------- sidecar values

YES_NO = ROOT / "tests" / "data" / "guards" / "yes-no.uml"


@pytest.mark.parametrize(
    ("sidecar", "words"),
    [
        ('[elements."_f1"]\nprobability = "1.5"\n', ("probability", "1.5", "between 0 and 1")),
        ('[elements."_f1"]\nprobability = "-0.5"\n', ("probability", "-0.5", "between 0 and 1")),
        ('[elements."_f1"]\nprobability = "nan"\n', ("probability", "nan")),
        ('[elements."_f1"]\nprobability = "150%"\n', ("probability", "between 0 and 1")),
        ('[activities."main"]\nmain = "yes"\n', ("true or false",)),
        ('[elements."Accept"]\ncost = true\n', ("cost", "not true or false")),
    ],
    ids=["above-one", "negative", "nan", "percent", "main-yes", "cost-true"],
)
@pytest.mark.parametrize("command", ["run", "check"])
def test_sidecar_values_are_checked_by_type_and_range_in_check_and_run(
    tmp_path: Path, sidecar: str, words: tuple[str, ...], command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    car = tmp_path / "car.toml"
    car.write_text(sidecar)
    _refused([command, str(YES_NO), "--sidecar", str(car)], capsys, *words)


# --------------------------------------------------------------------------- non-finite results


@pytest.mark.parametrize(
    "extra",
    [["--json"], [], ["--replications", "3"], ["--trace", "TRACE"]],
    ids=["json", "text", "reps", "trace"],
)
def test_times_that_overflow_when_summed_are_refused_never_printed(
    tmp_path: Path, extra: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(SAMPLES / "prophet.uml", tmp_path / "m.uml")
    car = tmp_path / "big.toml"
    car.write_text('[elements."A1"]\ncost = "1.14e308"\n')
    extra = [str(tmp_path / "t.json") if arg == "TRACE" else arg for arg in extra]
    capsys.readouterr()
    code = main(["run", str(tmp_path / "m.uml"), "--sidecar", str(car), *extra])
    out, err = capsys.readouterr()
    assert code == 1, out + err
    assert out == "" and "A1" in err and "largest number" in err, out + err
    assert "inf" not in out and "nan" not in out and "internal error" not in err
    assert not (tmp_path / "t.json").exists()


def test_replication_statistics_near_the_largest_float_are_refused() -> None:
    from uml2perf_runtime.analysis.replications import interval
    from uml2perf_runtime.errors import SimulationError

    assert interval([1.0e308, 1.1e308, 1.05e308])["mean"] == pytest.approx(1.05e308)
    with pytest.raises(SimulationError, match="largest number"):
        interval([1.7e308, 1.6e308, 1.75e308])


# --------------------------------------------------------------------------- check: runs that cannot end

PROPHET = (SAMPLES / "prophet.uml").read_text()


def _prophet(old: str, new: str) -> str:
    assert old in PROPHET, old
    return PROPHET.replace(old, new, 1)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (_prophet('xmi:id="_a2" name="A2"', 'xmi:id="_a4" name="A2"'), ("'_a4'", "two elements", "error")),
        (
            _prophet(
                '<node xmi:type="uml:OpaqueAction" xmi:id="_sa1" name="SA1"',
                '<node xmi:type="uml:CallBehaviorAction" behavior="_act_sa" xmi:id="_sa1" name="SA1"',
            ),
            ("'SA' -> 'SA'", "recurse", "error"),
        ),
        (
            _prophet('xmi:id="_e_a4_final" target="_final"', 'xmi:id="_e_a4_final" target="_a1"'),
            ("no final node is reachable", "MainActivity", "warning"),
        ),
    ],
    ids=["duplicated-id", "self-call", "no-final"],
)
def test_check_reports_models_that_cannot_end_properly(
    tmp_path: Path, text: str, words: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "m.uml").write_text(text)
    capsys.readouterr()
    main(["check", str(tmp_path / "m.uml")])
    out, err = capsys.readouterr()
    for word in words:
        assert word in out + err, out + err


# --------------------------------------------------------------------------- docs and limits agree


def test_every_limit_is_documented_with_its_default_and_variable() -> None:
    from uml2perf_runtime.engine.limits import ENVIRONMENT, Limits

    security = (ROOT / "docs" / "security.md").read_text()
    defaults = Limits()
    for name in Limits._FIELDS:
        row = next((line for line in security.splitlines() if line.startswith(f"| `{name}` |")), None)
        assert row is not None, f"limit {name} is not in docs/security.md"
        assert f"{getattr(defaults, name):,}" in row and ENVIRONMENT[name] in row, row


def test_the_documented_expression_bounds_are_the_enforced_ones() -> None:
    from uml2perf.errors import Uml2PerfError
    from uml2perf.expressions import MAX_DEPTH, parse_expression
    from uml2perf.expressions.vocabulary import MAX_BRACKET_DEPTH

    security = (ROOT / "docs" / "security.md").read_text()
    assert f"nested at most {MAX_BRACKET_DEPTH} deep" in security
    assert f"at most {MAX_DEPTH} levels deep" in security
    parse_expression("(" * MAX_BRACKET_DEPTH + "1" + ")" * MAX_BRACKET_DEPTH)
    parse_expression("+".join(["x"] * (MAX_DEPTH - 10)))
    for text in ("(" * (MAX_BRACKET_DEPTH + 1) + "1" + ")" * (MAX_BRACKET_DEPTH + 1), "+".join(["x"] * 5000)):
        with pytest.raises(Uml2PerfError, match="nested too deeply"):
            parse_expression(text)


def test_a_hand_edited_module_that_yields_a_number_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["convert", str(SAMPLES / "prophet.uml"), "-o", str(tmp_path / "m.py")]) == 0
    lines = (tmp_path / "m.py").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "yield from p.compute(E_A1" in line)
    lines.insert(at + 1, "    yield 5\n")
    (tmp_path / "m.py").write_text("".join(lines))
    _refused(["run", str(tmp_path / "m.py")], capsys, "yields 5", f"line {at + 2}", "activity_MainActivity")


# --------------------------------------------------------------------------- errors name the right element

HYBRID = (SAMPLES / "hybrid.uml").read_text()


@pytest.mark.parametrize(
    ("name", "text", "sidecar", "words", "not_words"),
    [
        (
            "m.uml",
            _prophet("<body>GV==1</body>", "<body>1/0 == 1</body>"),
            None,
            ("condition of decision 'Decision'", "_decision"),
            ("'A1'",),
        ),
        (
            "m.uml",
            HYBRID.replace('iterations="STEPS"', 'iterations="STEPS - 1000"', 1),
            None,
            ("repeat count of 'TimeLoop'",),
            ("'Sweep'",),
        ),
        ("m.uml", PROPHET, '[variables]\nP = "nan"\n', ("car.toml", "variables.P"), ("line 15",)),
        (
            "m.uml",
            PROPHET,
            '[variables]\nP = "1/0"\n',
            ("car.toml", "variables.P"),
            ("prophet.uml:15", "m.uml:15"),
        ),
    ],
    ids=["guard", "loop-count", "sidecar-nan", "sidecar-division"],
)
def test_errors_name_the_element_and_file_that_hold_the_fault(
    tmp_path: Path,
    name: str,
    text: str,
    sidecar: str | None,
    words: tuple[str, ...],
    not_words: tuple[str, ...],
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / name).write_text(text)
    extra = []
    if sidecar is not None:
        (tmp_path / "car.toml").write_text(sidecar)
        extra = ["--sidecar", str(tmp_path / "car.toml")]
    message = _refused(["run", str(tmp_path / name), *extra], capsys, *words)
    for word in not_words:
        assert word not in message, message


def test_a_machine_table_with_a_step_below_a_byte_is_refused_in_the_machine_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(SAMPLES / "prophet.uml", tmp_path / "m.uml")
    machine = tmp_path / "machine.toml"
    machine.write_text(
        'name = "t"\nnodes = 1\ncores_per_node = 8\n[network.intra_node]\n'
        "table = [[8, 1e-6], [8.000000000000002, 2e-6], [4096, 3e-6]]\n"
    )
    text = _refused(
        ["run", str(tmp_path / "m.uml"), "--machine", str(machine)], capsys, "machine.toml", "table[2]"
    )
    assert "SA2" not in text


def test_fit_refuses_more_rows_than_the_default_limit_before_fitting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from uml2perf_runtime.engine.limits import Limits

    rows = Limits().measurements + 5000
    body = "n,time\n" + "".join(f"{2 + i % 1000},{1 + i % 7}\n" for i in range(rows))
    _refused(["fit", _csv(tmp_path, body)], capsys, "limit of 20,000", "measurements")


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_sidecar_global_nothing_reads_is_a_warning(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    car = tmp_path / "car.toml"
    car.write_text('[globals]\nZZ = "1"\nGV = "0"\n')
    capsys.readouterr()
    assert main([command, str(SAMPLES / "prophet.uml"), "--sidecar", str(car)]) == 0
    out, err = capsys.readouterr()
    assert "[globals] 'ZZ' is read by no cost" in out + err and "'GV' is read" not in out + err


def test_a_cost_function_that_overflows_is_named_in_sweep_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "m.uml").write_text(
        _prophet("<body>return 3.14 + 2.71*P</body>", "<body>return exp(P * 1000)</body>")
    )
    _refused(["sweep", str(tmp_path / "m.uml"), "--grid", "procs=2,4"], capsys, "cost of 'A4'", "range")
