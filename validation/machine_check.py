"""``uml2perf calibrate --check`` after a validation run's programs: is its machine file still right?

A calibration is one sample of the machine's state; the check says whether the state the programs
met is still the one the file describes (exit status 3 when it has moved).  Both runners (the
suite's and the held-out sets') call it the way a user runs the command, and keep its verdict.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def check_machine(path: Path, quick: bool, no_mpi: bool, log: Callable[[str], None]) -> dict[str, Any]:
    """Run the check on ``path``; ``{"holds", "exit_status", "output"}`` (``quick``: fewer repeats)."""
    command = [sys.executable, "-m", "uml2perf", "calibrate", "--check", str(path)]
    command += ["--repeats", "2" if quick else "5"] + (["--no-mpi"] if no_mpi else [])
    log("  $ uml2perf " + " ".join(command[3:]))
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    for line in done.stdout.splitlines():
        log(f"    {line}")
    if done.returncode not in (0, 3):
        log(f"    the check failed: {done.stderr.strip()[-300:]}")
    return {"holds": done.returncode == 0, "exit_status": done.returncode, "output": done.stdout}
