"""The ``uml2perf`` command as a user starts it: a separate process, its output and status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def uml2perf(*arguments: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m uml2perf ARGUMENTS`` in its own process (whatever it exits with)."""
    return subprocess.run(
        [sys.executable, "-m", "uml2perf", *(str(a) for a in arguments)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def converted(model: Path, output: Path) -> str:
    """The module ``uml2perf convert MODEL -o OUTPUT`` writes (the command must succeed)."""
    done = uml2perf("convert", model, "-o", output)
    assert done.returncode == 0, done.stderr
    return output.read_text()


def predicted(model: Path, *arguments: str | Path) -> dict[str, Any]:
    """What ``uml2perf run MODEL ARGUMENTS --json`` prints (the command must succeed)."""
    done = uml2perf("run", model, *arguments, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
