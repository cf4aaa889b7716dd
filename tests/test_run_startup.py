"""What ``uml2perf run`` does before its first event: one subcommand's parser, a machine file read once."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from uml2perf import cache, cli
from uml2perf_runtime import Machine, MachineError
from uml2perf_runtime.output import structured

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"

MACHINE_TEXT = """\
name = "two nodes"
nodes = 2
cores_per_node = 2
speed = 1.5

[network]
eager_limit = 4096

[network.intra_node]
latency = 1e-6
bandwidth = 5e9

[network.inter_node]
latency = 2e-5
bandwidth = 1.25e9
handshake = 1e-5
ranges = [{ up_to = "4 KiB", latency = 2e-5, bandwidth = 1e9 }, { latency = 3e-5, bandwidth = 2e9 }]

[collectives]
allreduce = "recursive_doubling"
overhead = 2e-6
"""


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(cache.DISABLE_VARIABLE, raising=False)
    monkeypatch.delenv(cache.LOCATION_VARIABLE, raising=False)
    return tmp_path / "xdg" / "uml2perf"


# ------------------------------------------------------------------ the parser of one subcommand


def test_a_command_line_that_starts_with_a_subcommand_builds_that_parser_alone() -> None:
    assert cli.named_command(["run", "m.uml", "--procs", "4"]) == "run"
    assert cli.named_command(["sweep", "m.uml"]) == "sweep"
    assert cli.named_command(["--debug", "run", "m.uml"]) is None  # an option first: every parser
    assert cli.named_command(["rnu", "m.uml"]) is None
    assert cli.named_command([]) is None
    only = cli.build_parser(only="run")
    everything = cli.build_parser()
    (sub,) = [a for a in only._actions if a.dest == "command"]
    (all_sub,) = [a for a in everything._actions if a.dest == "command"]
    assert list(sub.choices) == ["run"]
    assert list(all_sub.choices) == list(cli._subcommands())
    # the run parser is the same either way: same options, same defaults, same help
    assert sub.choices["run"].format_help() == all_sub.choices["run"].format_help()


def test_every_subcommand_parses_alike_alone_and_among_all() -> None:
    for name in cli._subcommands():
        alone = cli.build_parser(only=name)
        every = cli.build_parser()
        (a,) = [x for x in alone._actions if x.dest == "command"]
        (b,) = [x for x in every._actions if x.dest == "command"]
        assert a.choices[name].format_help() == b.choices[name].format_help()


def test_mistakes_are_reported_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", str(SAMPLES / "prophet.uml"), "--procss", "4"])
    assert exc.value.code == 2
    assert "--procss (did you mean --procs?)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["rnu", str(SAMPLES / "prophet.uml")])
    assert "did you mean 'run'?" in capsys.readouterr().err


# ------------------------------------------------------------------ machine files read once


def test_a_machine_file_parsed_before_comes_from_the_cache(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.toml"
    path.write_text(MACHINE_TEXT)
    plain = Machine.from_toml(path)
    first = Machine.from_toml(path, cache.parsed_toml)
    assert len(sorted(cache_home.glob("toml-*"))) == 1

    def no_parse(text: str, what: str) -> None:
        raise AssertionError("the cached table should have been used")

    monkeypatch.setattr(structured, "loads_toml", no_parse)
    again = Machine.from_toml(path, cache.parsed_toml)
    assert plain == first == again
    assert plain.to_dict() == again.to_dict()
    assert cache.parsed_toml(MACHINE_TEXT, "machine file") == __import__("tomllib").loads(MACHINE_TEXT)


def test_every_bundled_machine_reads_the_same_through_the_cache(cache_home: Path) -> None:
    for name in Machine.bundled():
        plain = Machine.load(name)
        assert Machine.load(name, parse=cache.parsed_toml) == plain  # a miss
        assert Machine.load(name, parse=cache.parsed_toml) == plain  # a hit


def test_a_table_with_a_date_is_parsed_every_time(cache_home: Path) -> None:
    text = "when = 2026-11-27\nx = 1\n"
    assert cache.parsed_toml(text, "machine file")["x"] == 1
    assert sorted(cache_home.glob("toml-*")) == []


def test_a_damaged_table_entry_is_parsed_again(cache_home: Path) -> None:
    cache.parsed_toml(MACHINE_TEXT, "machine file")
    (entry,) = sorted(cache_home.glob("toml-*"))
    data = bytearray(entry.read_bytes())
    data[-3] ^= 0xFF
    entry.write_bytes(bytes(data))
    assert cache.parsed_toml(MACHINE_TEXT, "machine file") == __import__("tomllib").loads(MACHINE_TEXT)


def test_problems_of_a_machine_file_say_the_same_through_the_cache(cache_home: Path, tmp_path: Path) -> None:
    cases = {
        "bad.toml": "nodes = [\n",  # not TOML
        "deep.toml": "nodes = 1\ncores_per_node = 1\nx = " + "[" * 200 + "]" * 200 + "\n",
        "key.toml": "nodes = 2\ncores_per_node = 2\nspede = 1.0\n",
        "value.toml": "nodes = 0\ncores_per_node = 2\n",
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        messages = []
        for parse in (None, cache.parsed_toml, cache.parsed_toml):
            with pytest.raises(MachineError) as exc:
                Machine.from_toml(path, parse)
            messages.append((exc.value.message, exc.value.hint))
        assert messages[0] == messages[1] == messages[2], name


def _run(tmp_path: Path, env: dict[str, str], machine: Path) -> tuple[dict[str, object], list[str]]:
    # main() without arguments, as the console script calls it: the process is the command
    probe = (
        "import sys\nfrom uml2perf.cli import main\n"
        f"sys.argv = ['uml2perf', 'run', 'prophet.uml', '--json', '--machine', {str(machine)!r}]\n"
        "sys.argv += ['--procs', '4']\n"
        "code = main()\n"
        "print(repr(sorted(sys.modules)), file=sys.stderr)\nsys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    result.pop("wall_time", None)
    return result, ast.literal_eval(done.stderr.splitlines()[-1])


def test_a_repeated_run_parses_no_toml_and_imports_only_what_it_uses(tmp_path: Path) -> None:
    (tmp_path / "prophet.uml").write_bytes((SAMPLES / "prophet.uml").read_bytes())
    machine = tmp_path / "m.toml"
    machine.write_text(MACHINE_TEXT)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop(cache.LOCATION_VARIABLE, None)
    env.pop(cache.DISABLE_VARIABLE, None)
    first, _ = _run(tmp_path, env, machine)
    second, modules = _run(tmp_path, env, machine)
    uncached, _ = _run(tmp_path, {**env, cache.DISABLE_VARIABLE: "1"}, machine)
    assert first == second == uncached
    assert "tomllib" not in modules
    assert "linecache" not in modules  # no error: the generated lines were never read
    assert "uml2perf_runtime.platform.topology" not in modules  # the machine file has no topology
    commands = [m for m in modules if m.startswith("uml2perf.commands.")]
    assert commands == ["uml2perf.commands.common"]


# ------------------------------------------------------------------ generated lines, quoted on failure


def test_kept_texts_reach_linecache_before_a_line_is_read() -> None:
    probe = """
import sys
from uml2perf_runtime.engine import sources
sources.defer()
sources.register("<a>", "x = 1\\ny = 2\\n")
sources.register("<b>", "old\\n")
sources.register("<b>", "new\\n")
assert "linecache" not in sys.modules
sources.install()
import linecache
assert linecache.getline("<a>", 2) == "y = 2\\n" and linecache.getline("<b>", 1) == "new\\n"
sources.register("<a>", "z = 3\\n")  # linecache is there now: at once
assert linecache.getline("<a>", 1) == "z = 3\\n"
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_a_failing_model_is_told_in_its_terms_by_the_command(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from synthetic import chain_model
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    text = chain_model(2).replace('cost="1e-6 + pid * 1e-9"', 'cost="1 / (pid - pid)"', 1)
    (tmp_path / "fail.uml").write_text(text)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop(cache.LOCATION_VARIABLE, None)
    env.pop(cache.DISABLE_VARIABLE, None)
    for extra in ([], [], ["--debug"]):  # converted, then from the cache, then with a traceback
        done = subprocess.run(
            [sys.executable, "-m", "uml2perf", "run", "fail.uml", "--procs", "2", *extra],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 1
        assert "error: division by zero in cost of 'A0' (xmi:id=_a0, line 13) on process 0" in done.stderr
    assert "yield from p.compute(E_A0, 1 / (p.pid - p.pid))" in done.stderr  # the generated line, quoted
