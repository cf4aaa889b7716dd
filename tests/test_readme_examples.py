"""The README's worked examples print what the README shows.

Each ``console`` block that runs a bundled sample is run from a scratch directory with the
samples beside it; the output must match line for line, except the line that says how long the
simulation took on this machine (``(N events simulated in S s)``).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: commands whose output depends on the machine they run on, or that need files the README does not give
SKIPPED = ("--plot", "lapw0-huge.uml")
_WALL = re.compile(r"^\(([\d,]+) events simulated in [\d.]+ s\)$")


def _examples() -> list[tuple[str, list[str]]]:
    text = README.read_text(encoding="utf-8")
    found = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        lines = block.rstrip("\n").split("\n")
        command = lines[0].removeprefix("$ ")
        following = [i for i, line in enumerate(lines[1:], 1) if line.startswith("$ ")]
        lines = lines[: following[0]] if following else lines  # the first command's output only
        if command.startswith("uml2perf ") and not any(word in command for word in SKIPPED):
            found.append((command, lines[1:]))
    return found


def _normalise(lines: list[str]) -> list[str]:
    return [_WALL.sub(r"(\1 events simulated)", line.rstrip()) for line in lines]


@pytest.mark.parametrize("command, shown", _examples(), ids=lambda value: str(value)[:60])
def test_a_readme_example_prints_what_the_readme_shows(
    command: str, shown: list[str], tmp_path: Path
) -> None:
    shutil.copytree(ROOT / "samples", tmp_path / "samples", symlinks=True)
    for given in re.findall(r"docs/\S+\.toml", command):  # a machine file a validation run wrote
        (tmp_path / given).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / given, tmp_path / given)
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "uml2perf", *shlex.split(command)[1:]],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )
    if not shown:  # a command the README follows with another (convert, then a look at the file)
        assert done.returncode == 0, done.stderr
        return
    printed = (done.stdout + done.stderr).rstrip("\n").split("\n")
    assert _normalise(printed) == _normalise(shown)
