"""Hostile and absurd inputs: refused before any work, with one message, in bounded time and memory.

Every case is a copy of a bundled sample changed in one way (or a command
line asking for too much).  Each runs ``uml2perf`` in a child process under a
timeout and an address-space limit, and must exit with status 1 (2 for wrong
usage), print one ``error:`` line that names the problem, execute nothing and
leave nothing behind.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
LAPW0 = (SAMPLES / "lapw0.uml").read_text()
HYBRID = (SAMPLES / "hybrid.uml").read_text()
PROPHET = (SAMPLES / "prophet.uml").read_text()

#: Every case must finish within this many seconds and this much memory.
TIMEOUT = 60
MEMORY = 3 << 30


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def _cli(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "UML2PERF_NO_CACHE": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "uml2perf", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        preexec_fn=_limit_memory,
        env=environment,
    )


def _changed(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


#: name -> (file name, file text, command arguments after the file, words the message must contain)
CASES: dict[str, tuple[str, str, list[str], tuple[str, ...]]] = {
    "repeat_1e18": (
        "m.uml",
        _changed(LAPW0, 'repeat="PNAT"', 'repeat="1e18"'),
        [],
        ("Calculate_Multipolmoments", "limit", "iterations"),
    ),
    "repeat_10_pow_15": (
        "m.uml",
        _changed(LAPW0, 'repeat="PNAT"', 'repeat="10**15"'),
        [],
        ("limit", "iterations"),
    ),
    "repeat_negative": (
        "m.uml",
        _changed(LAPW0, 'repeat="PNAT"', 'repeat="PNAT - 100"'),
        [],
        ("negative", "Calculate_Multipolmoments"),
    ),
    "repeat_fractional": ("m.uml", _changed(LAPW0, 'repeat="PNAT"', 'repeat="PNAT + 0.5"'), [], ("whole",)),
    "threads_1e8": (
        "m.uml",
        _changed(HYBRID, 'threads="THREADS"', 'threads="1e8"'),
        [],
        ("threads", "limit"),
    ),
    "items_1e12": ("m.uml", _changed(HYBRID, 'items="FRAMES"', 'items="1e12"'), [], ("items", "limit")),
    "procs_1e9": ("m.uml", LAPW0, ["--procs", "1000000000"], ("processes", "limit")),
    "squaring_fragment": (
        "m.uml",
        _changed(LAPW0, 'repeat="PNAT"', 'repeat="PNAT" code="BUF = BUF * BUF"'),
        [],
        ("bits", "Calculate_Multipolmoments"),
    ),
    "round_huge_digits_cost": (
        "m.uml",
        _changed(LAPW0, 'cost="MPIterm()"', 'cost="round(10**307, -10**300) + 1"'),
        [],
        None,
    ),
    "infinite_cost": (
        "m.uml",
        _changed(LAPW0, 'cost="MPIterm()"', 'cost="1e308 * 10"'),
        [],
        ("Terminate_MPI_Environment", "finite"),
    ),
    "infinite_set": ("m.uml", LAPW0, ["--set", "NAT=inf"], ("NAT", "finite")),
    "nan_set": ("m.uml", LAPW0, ["--set", "NAT=nan"], ("NAT", "finite")),
    "global_default_overflows": (
        "m.uml",
        _changed(LAPW0, "<body>ceil(NAT / nprocs)</body>", "<body>1e308 * 10</body>"),
        [],
        ("PNAT", "finite"),
    ),
    "global_default_huge_int": (
        "m.uml",
        _changed(
            LAPW0,
            "<body>ceil(NAT / nprocs)</body>",
            "<body>2 ** 1000 * 2 ** 1000 * 2 ** 1000 * 2 ** 1000 * 2 ** 1000 * "
            "2 ** 1000 * 2 ** 1000 * 2 ** 1000 * 2 ** 1000</body>",
        ),
        [],
        ("PNAT", "bits"),
    ),
    "global_default_round": (
        "m.uml",
        _changed(LAPW0, "<body>ceil(NAT / nprocs)</body>", "<body>round(10**307, -10**300)</body>"),
        [],
        None,
    ),
    "conflicting_action_plus": (
        "m.uml",
        _changed(
            LAPW0,
            '<uml2perf:ActionPlus xmi:id="_st_read" base_Action="_read" cost="ReadInput(NAT)"/>',
            '<uml2perf:ActionPlus xmi:id="_st_read" base_Action="_read" cost="ReadInput(NAT)"/>'
            '<uml2perf:ActionPlus xmi:id="_st_read2" base_Action="_read" cost="2"/>',
        ),
        [],
        ("twice", "Read_Input"),
    ),
    "internal_entity_in_text": (
        "m.uml",
        _changed(
            _changed(
                LAPW0,
                '<?xml version="1.0" encoding="UTF-8"?>',
                '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE x [<!ENTITY k "1.5">]>',
            ),
            "<body>return 1.5 + 0.15 * NAT</body>",
            "<body>return &k; + 0.15 * NAT</body>",
        ),
        [],
        ("DOCTYPE", "entity declarations"),
    ),
    "cost_function_named_range": ("m.uml", LAPW0.replace("MPIinit", "range"), [], ("range",)),
    "cost_function_named_builtins": (
        "m.uml",
        LAPW0.replace("MPIinit", "__builtins__"),
        [],
        ("__builtins__",),
    ),
    "no_guard_holds": (
        "m.uml",
        _changed(PROPHET, "GV = 1", "GV = 5"),
        [],
        ("no guard", "Decision", "GV = 5"),
    ),
}


#: Cases that only some commands can detect: values known when the model runs, or constants ``check`` folds.
REFUSED_BY: dict[str, tuple[str, ...]] = {
    "repeat_1e18": ("run", "check"),
    "repeat_10_pow_15": ("run", "check"),
    "infinite_cost": ("run", "check"),
    "threads_1e8": ("run", "check"),
    "items_1e12": ("run", "check"),
    "repeat_negative": ("run",),
    "repeat_fractional": ("run",),
    "procs_1e9": ("run",),
    "squaring_fragment": ("run",),
    "infinite_set": ("run",),
    "nan_set": ("run",),
    "no_guard_holds": ("run",),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", ["run", "convert", "check"])
def test_hostile_model_inputs_are_refused(case: str, command: str, tmp_path: Path) -> None:
    name, text, extra, words = CASES[case]
    if words is None:  # a case that must simply work: nothing hangs
        (tmp_path / name).write_text(text)
        done = _cli([command, name, *(extra if command == "run" else [])], tmp_path)
        assert done.returncode == 0, done.stderr
        return
    (tmp_path / name).write_text(text)
    marker = tmp_path / "executed"
    if command == "run":
        args = ["run", name, "--procs", "2", *extra]
    elif command == "convert":
        args = ["convert", name, "-o", "out.py"]
    else:
        args = ["check", name]
    done = _cli(args, tmp_path)
    if command not in REFUSED_BY.get(case, ("run", "convert", "check")):
        assert done.returncode == 0, done.stderr  # only a run (or check) can tell
        return
    assert done.returncode == 1, (done.stdout, done.stderr)
    output = done.stdout + done.stderr
    assert "Traceback" not in output and "internal error" not in output, output
    for word in words:
        assert word.lower() in output.lower(), f"{word!r} missing from: {output}"
    if command != "check":
        assert done.stderr.count("error:") == 1, done.stderr
    assert not marker.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [name], "nothing may be left behind"


def test_a_machine_of_a_billion_nodes_is_refused(tmp_path: Path) -> None:
    (tmp_path / "big.toml").write_text('name = "big"\nnodes = 1000000000\ncores_per_node = 4\n')
    (tmp_path / "m.uml").write_text(LAPW0)
    done = _cli(["run", "m.uml", "--machine", "big.toml"], tmp_path)
    assert done.returncode == 1 and "nodes" in done.stderr and "limit" in done.stderr


def test_infinite_machine_numbers_are_refused(tmp_path: Path) -> None:
    (tmp_path / "inf.toml").write_text(
        'name = "inf"\nnodes = 2\ncores_per_node = 2\n[network.inter_node]\nlatency = inf\nbandwidth = 1e9\n'
    )
    (tmp_path / "m.uml").write_text(LAPW0)
    done = _cli(["run", "m.uml", "--machine", "inf.toml"], tmp_path)
    assert done.returncode == 1 and "latency" in done.stderr


def test_a_sweep_grid_of_nine_million_points_is_refused_at_once(tmp_path: Path) -> None:
    (tmp_path / "m.uml").write_text(LAPW0)
    axis = ",".join(str(i) for i in range(1, 3001))
    done = _cli(["sweep", "m.uml", "--grid", f"procs={axis}", "--grid", f"NAT={axis}"], tmp_path)
    assert done.returncode == 1 and "9,000,000" in done.stderr and "sweep_points" in done.stderr


def test_dev_zero_as_input_is_read_only_up_to_the_cap(tmp_path: Path) -> None:
    done = _cli(["run", "/dev/zero"], tmp_path, {"UML2PERF_MAX_BYTES": str(1 << 20)})
    assert done.returncode == 1 and "more than 1048576 bytes" in done.stderr


@pytest.mark.parametrize("value", ["abc", "-5", "1.5"])
def test_a_bad_limit_in_the_environment_is_a_clear_error(tmp_path: Path, value: str) -> None:
    (tmp_path / "m.uml").write_text(PROPHET)
    done = _cli(["run", "m.uml"], tmp_path, {"UML2PERF_MAX_BYTES": value})
    assert done.returncode == 1 and "UML2PERF_MAX_BYTES" in done.stderr and "Traceback" not in done.stderr


def test_limits_can_be_raised_and_lowered_by_flag(tmp_path: Path) -> None:
    (tmp_path / "m.uml").write_text(_changed(LAPW0, 'repeat="PNAT"', 'repeat="PNAT * 1000"'))
    lowered = _cli(["run", "m.uml", "--procs", "2", "--limit", "iterations=100"], tmp_path)
    assert lowered.returncode == 1 and "limit of 100 (iterations" in lowered.stderr
    assert _cli(["run", "m.uml", "--procs", "2", "--limit", "iterations=100000"], tmp_path).returncode == 0
    usage = _cli(["run", "m.uml", "--limit", "bogus=3"], tmp_path)
    assert usage.returncode == 2 and "input_bytes" in usage.stderr


def test_the_default_limits_admit_the_large_cases() -> None:
    from uml2perf_runtime.engine.limits import Limits

    limits = Limits()
    limits.check("processes", 32_768, "LAPW0 processes")
    limits.check("input_bytes", 200_000 * 400, "a 200,000-action export (about 400 bytes per action)")
    limits.check("iterations", 2_000, "ring rounds")


def test_a_few_thousand_lapw0_processes_run_under_the_default_limits(tmp_path: Path) -> None:
    (tmp_path / "m.uml").write_text(LAPW0)
    done = _cli(["run", "m.uml", "--machine", "gescher", "--procs", "4096", "--json"], tmp_path)
    assert done.returncode == 0, done.stderr


def test_names_with_terminal_escapes_are_printed_escaped(tmp_path: Path) -> None:
    (tmp_path / "m.uml").write_text(PROPHET)
    (tmp_path / "evil.toml").write_text(
        'name = "box\\u001b]0;pwned\\u0007\\u001b[2J"\nnodes = 1\ncores_per_node = 2\n'
    )
    done = _cli(["run", "m.uml", "--procs", "1", "--machine", "evil.toml"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "\\x1b" in done.stdout


def test_machine_files_and_sidecars_with_a_byte_order_mark_are_read(tmp_path: Path) -> None:
    (tmp_path / "m.uml").write_text(PROPHET)
    (tmp_path / "bom.toml").write_bytes(b'\xef\xbb\xbfname = "bom"\nnodes = 2\ncores_per_node = 2\n')
    (tmp_path / "car.toml").write_bytes(b"\xef\xbb\xbf[variables]\nGV = 0\n")
    done = _cli(["run", "m.uml", "--machine", "bom.toml", "--sidecar", "car.toml", "--procs", "1"], tmp_path)
    assert done.returncode == 0 and "194.18" in done.stdout, done.stderr


def test_a_sidecar_that_is_not_utf8_names_the_place(tmp_path: Path) -> None:
    (tmp_path / "m.uml").write_text(PROPHET)
    (tmp_path / "car.toml").write_bytes(b'[defaults]\ncost = "1" # caf\xe9\n')
    done = _cli(["run", "m.uml", "--sidecar", "car.toml"], tmp_path)
    assert done.returncode == 1 and "not UTF-8" in done.stderr and "line 2" in done.stderr


def test_a_fifo_with_no_writer_is_refused_not_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from uml2perf.cli import main
    from uml2perf_runtime.output import files

    fifo = tmp_path / "model.uml"
    os.mkfifo(fifo)
    monkeypatch.setattr(files, "READ_IDLE_TIMEOUT", 0.2)
    monkeypatch.setenv("UML2PERF_NO_CACHE", "1")
    assert main(["run", str(fifo)]) == 1
    assert "sent no data" in capsys.readouterr().err


def test_a_sidecar_variable_that_misses_by_case_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "m.uml").write_text(LAPW0)
    (tmp_path / "car.toml").write_text("[variables]\nnat = 64\n")
    done = _cli(["run", "m.uml", "--sidecar", "car.toml", "--procs", "2"], tmp_path)
    assert done.returncode == 0
    assert "did you mean 'NAT'" in done.stderr


def test_an_unreachable_dask_scheduler_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    (tmp_path / "m.uml").write_text(LAPW0)
    done = _cli(
        ["sweep", "m.uml", "--grid", "procs=1,2", "--no-analytic", "--dask", "not an address::"], tmp_path
    )
    assert done.returncode == 1 and "Dask scheduler" in done.stderr and "Traceback" not in done.stderr


def _deeply_nested_decisions(depth: int):  # noqa: ANN202 - a test model
    sys.path.insert(0, str(ROOT / "tests"))
    from builders import ModelBuilder

    b = ModelBuilder("deep")
    b.global_var("x", 1000)
    main = b.activity("main", main=True)
    prev, merges = main.initial(), []
    for i in range(depth):
        decision = main.decision(f"D{i}")
        main.flow(prev, decision)
        action = main.action(f"A{i}", 1)
        main.flow(decision, action, guard=f"x > {i}")
        merge = main.merge(f"M{i}")
        main.flow(decision, merge, guard="else")
        merges.append(merge)
        prev = action
    following = prev
    for merge in reversed(merges):
        main.flow(following, merge)
        following = merge
    main.flow(following, main.final())
    return b.build()


@pytest.mark.parametrize("depth", [120, 300])
def test_models_nested_past_pythons_limits_generate_a_flat_form_that_runs(depth: int) -> None:
    from stubs import load_module

    from uml2perf.generation import generate
    from uml2perf.handlers.python.limits import first_excess
    from uml2perf_runtime import simulate

    out = generate(_deeply_nested_decisions(depth))
    assert first_excess(out.text) is None
    assert any("flat state machine" in d.message for d in out.diagnostics)
    module = load_module(out.text)
    assert simulate(module.MODEL, procs=1).time == pytest.approx(depth)
    assert simulate(module.MODEL, procs=1, overrides={"x": 7}).time == pytest.approx(7)


def test_the_limit_scanner_counts_loops_per_function() -> None:
    from uml2perf.handlers.python.limits import first_excess

    def nest(n: int, indent: int = 0) -> list[str]:
        return ["    " * (indent + i) + "for _ in range(1):" for i in range(n)] + [
            "    " * (indent + n) + "pass"
        ]

    assert first_excess("\n".join(nest(20))) is None
    assert "21 loops" in first_excess("\n".join(nest(21)))[0]  # type: ignore[index]
    inner = ["    " * 15 + "def inner():", *nest(15, 16)]
    source = "\n".join(["def outer():", *nest(14, 1)[:-1], *inner])
    compile(source, "<scan>", "exec")
    assert first_excess(source) is None
    assert "levels deep" in first_excess("\n".join("    " * i + "if x:" for i in range(101)))[0]  # type: ignore[index]


def test_a_call_chain_of_two_thousand_activities_runs() -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from builders import ModelBuilder
    from stubs import load_module

    from uml2perf.generation import generate
    from uml2perf_runtime import simulate

    b = ModelBuilder("chain")
    count = 2000
    activities = [b.activity(f"act{i}", main=(i == 0)) for i in range(count)]
    for i, act in enumerate(activities):
        work = act.action(f"W{i}", 1)
        if i + 1 < count:
            act.chain(act.initial(), work, act.call(f"C{i}", f"act{i + 1}"), act.final())
        else:
            act.chain(act.initial(), work, act.final())
    module = load_module(generate(b.build()).text)
    assert simulate(module.MODEL, procs=1).time == pytest.approx(count)


def test_the_event_limit_stops_an_unlimited_run_without_per_event_checks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from builders import ModelBuilder
    from stubs import load_module

    from uml2perf.generation import generate
    from uml2perf_runtime import simulate
    from uml2perf_runtime.engine import limits
    from uml2perf_runtime.engine import simulation as engine
    from uml2perf_runtime.errors import LimitError

    b = ModelBuilder("long")
    main = b.activity("main", main=True)
    work = main.action("Work", 0.001, repeat=1_000_000)
    main.chain(main.initial(), work, main.final())
    module = load_module(generate(b.build()).text)
    monkeypatch.setattr(engine, "WATCHDOG_INTERVAL", 0.01)
    previous = limits.current()
    limits.set_current(previous.with_overrides({"events": 1000}))
    try:
        with pytest.raises(LimitError, match="more than 1,000 events"):
            simulate(module.MODEL, procs=1)
    finally:
        limits.set_current(previous)
