"""Seeded fuzzing: mutants of the samples and the bundled corpus through check, convert, run and sweep.

Every mutant must end in a prediction, a conversion or one message: never a traceback, an internal
error, a non-finite time, a hang or a partial output. The mutants run in-process through the
command line's entry point (each under a time cap, runs under an event limit), and a few of them
in child processes under a memory cap, so the whole path, start-up included, is covered too. The
seed is fixed: a failure names the mutant, and the same mutant comes back on every run.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from uml2perf.cli import main

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(ROOT.glob("samples/*.uml")) + sorted((ROOT / "tests" / "corpus").glob("*/*.xmi"))

SEED = 20261127
#: Mutants run in-process (each through one of check, convert, run).
MUTANTS = 600
#: Mutants also run in child processes under :data:`MEMORY`.
CHILD_MUTANTS = 4
#: Seconds one in-process command may take before it counts as a hang.
TIME_CAP = 20
MEMORY = 2 << 30
#: Bounds of every fuzzed run (a mutant may ask for endless work, and must be stopped).
LIMITS = ["--limit", "events=200000", "--limit", "iterations=100000", "--limit", "processes=4096"]

HOSTILE_VALUES = (
    "",
    "0",
    "-1",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "1/0",
    "9**9**9",
    "10**400",
    "x" * 300,
    "__import__('os')",
    "(" * 150 + "1" + ")" * 150,
    "&amp;&lt;",
    "P",
    "2.5",
    "1e-300",
    "[else]",
    "70%",
)
FRAGMENTS = (
    "<!-- x -->",
    "<x/>",
    '<node xmi:type="uml:OpaqueAction" xmi:id="_dup" name="Dup"/>',
    '<edge xmi:type="uml:ControlFlow" xmi:id="_e_fz" source="_nowhere" target="_none"/>',
    "&#0;",
    "<![CDATA[ ]]>",
    "\x00",
)


class _Hang(BaseException):
    """Raised by the alarm when one command runs past :data:`TIME_CAP`."""


def _mutate(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    """One mutation of ``data`` and a description of it."""
    choice = rng.randrange(7)
    n = len(data)
    if choice == 0:
        out = bytearray(data)
        for _ in range(rng.randint(1, 5)):
            out[rng.randrange(n)] = rng.randrange(256)
        return "byte flips", bytes(out)
    if choice == 1:
        start = rng.randrange(n)
        end = min(n, start + rng.randint(1, 400))
        return f"delete {start}:{end}", data[:start] + data[end:]
    if choice == 2:
        start = rng.randrange(n)
        end = min(n, start + rng.randint(1, 400))
        return f"duplicate {start}:{end}", data[:end] + data[start:end] + data[end:]
    if choice == 3:
        cut = rng.randrange(n)
        return f"truncate at {cut}", data[:cut]
    if choice == 4:
        ids = re.findall(rb'xmi:id="([^"]+)"', data)
        if len(ids) >= 2:
            a, b = rng.sample(ids, 2)
            return f"id {a!r} given to {b!r}", data.replace(b'xmi:id="' + b + b'"', b'xmi:id="' + a + b'"', 1)
    if choice == 5:
        spots = [m.start() + 1 for m in re.finditer(rb">", data)]
        if spots:
            at = rng.choice(spots)
            fragment = rng.choice(FRAGMENTS).encode()
            return f"insert {fragment!r} at {at}", data[:at] + fragment + data[at:]
    values = list(re.finditer(rb'="([^"]*)"', data))
    if not values:
        return "unchanged", data
    match = rng.choice(values)
    value = rng.choice(HOSTILE_VALUES).replace('"', "&quot;").encode()
    return (
        f"value {match.group(1)[:40]!r} at {match.start()} -> {value[:40]!r}",
        data[: match.start(1)] + value + data[match.end(1) :],
    )


def _mutants(count: int, seed: int) -> Iterator[tuple[str, Path, str, bytes]]:
    rng = random.Random(seed)
    originals = {path: path.read_bytes() for path in SOURCES}
    for index in range(count):
        source = rng.choice(SOURCES)
        data = originals[source]
        steps = []
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            step, data = _mutate(rng, data)
            steps.append(step)
        # the corpus exports are larger: they go through check and convert, the samples also run
        commands = ("check", "convert", "run", "sweep") if source.suffix == ".uml" else ("check", "convert")
        yield f"#{index} {source.name}: {'; '.join(steps)}", source, rng.choice(commands), data


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def _check_outcome(name: str, command: str, code: int, out: str, err: str, output: Path) -> None:
    text = out + err
    assert code in (0, 1, 2), f"{name}: exit status {code}\n{text[-2000:]}"
    assert "Traceback" not in text and "internal error" not in text, f"{name}:\n{text[-3000:]}"
    if code != 0:
        assert "error" in text, f"{name}: failed without a message\n{text[-2000:]}"
    if command in ("run", "sweep") and code == 0:
        result = json.loads(out)
        assert _finite(result), f"{name}: non-finite numbers in {out[:500]}"
    if command == "convert":
        written = output.exists()
        assert written == (code == 0), f"{name}: exit {code} but the output exists: {written}"
        if written:
            compile(output.read_text(), str(output), "exec")
            output.unlink()
    leftovers = [p.name for p in output.parent.iterdir() if p.name.endswith(".tmp")]
    assert not leftovers, f"{name}: temporary files left: {leftovers}"


def _arguments(command: str, model: Path, output: Path) -> list[str]:
    if command == "convert":
        return ["convert", str(model), "-o", str(output), "--limit", "iterations=100000"]
    if command == "run":
        return ["run", str(model), "--json", "--procs", "4", *LIMITS]
    if command == "sweep":  # the analytic evaluation first, the simulator where it cannot go
        return ["sweep", str(model), "--grid", "procs=1,3", "--json", "-", *LIMITS]
    return ["check", str(model)]


@pytest.fixture
def _alarm() -> Iterator[None]:
    def ring(signum: int, frame: object) -> None:
        raise _Hang()

    previous = signal.signal(signal.SIGALRM, ring)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.usefixtures("_alarm")
def test_mutants_never_crash_hang_or_leave_partial_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("UML2PERF_NO_CACHE", "1")
    monkeypatch.chdir(tmp_path)
    outcomes: dict[int, int] = {}
    for name, source, command, data in _mutants(MUTANTS, SEED):
        model = tmp_path / f"m{source.suffix}"
        model.write_bytes(data)
        output = tmp_path / "out.py"
        capsys.readouterr()
        signal.alarm(TIME_CAP)
        try:
            code = main(_arguments(command, model, output))
        except _Hang:
            pytest.fail(f"{name}: '{command}' ran longer than {TIME_CAP} s")
        finally:
            signal.alarm(0)
        out, err = capsys.readouterr()
        _check_outcome(name, command, code, out, err, output)
        outcomes[code] = outcomes.get(code, 0) + 1
    # the mutants must reach both ends: some still work, most are refused
    print(f"fuzz outcomes by exit status: {outcomes}")
    assert outcomes.get(0, 0) >= MUTANTS // 20 and outcomes.get(1, 0) >= MUTANTS // 4, outcomes


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def test_mutants_in_child_processes_stay_within_time_and_memory(tmp_path: Path) -> None:
    environment = {**os.environ, "UML2PERF_NO_CACHE": "1"}
    for name, source, command, data in _mutants(CHILD_MUTANTS, SEED + 1):
        model = tmp_path / f"m{source.suffix}"
        model.write_bytes(data)
        output = tmp_path / "out.py"
        done = subprocess.run(
            [sys.executable, "-m", "uml2perf", *_arguments(command, model, output)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=_limit_memory,
            env=environment,
        )
        _check_outcome(name, command, done.returncode, done.stdout, done.stderr, output)
