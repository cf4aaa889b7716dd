"""What the held-out sets' contract tests share: their sets differ, how they are run does not.

Each set's own programs, models and cases are checked by its own test file; running a set's
kernels and its quick measurement goes through the one runner every set uses, the same way.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "validation" / "unseen" / "run.py"


def mpi_ready() -> str | None:
    """The mpiexec the quick runs need, or None without mpi4py or an MPI."""
    if importlib.util.find_spec("mpi4py") is None:
        return None
    from uml2perf.calibrate import mpi_available

    return mpi_available()


def load_module(path: Path, name: str) -> ModuleType:
    """A set's module imported from its file (sets are folders, not packages)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_kernels(folder: Path, *asked: str) -> dict[str, Any]:
    """What ``kernels.py`` of the set in ``folder`` prints for ``asked`` (names and sizes)."""
    done = subprocess.run(
        [sys.executable, str(folder / "kernels.py"), "--repetitions", "3", *asked],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def quick_run(
    folder: Path, machine_text: str, tmp_path: Path
) -> tuple[subprocess.CompletedProcess[str], Any]:
    """``run.py --set FOLDER --quick`` with ``machine_text`` as its machine file: the process, the report."""
    machine = tmp_path / "machine.toml"
    machine.write_text(machine_text)
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            str(RUNNER),
            "--set",
            str(folder),
            "--quick",
            "--machine",
            str(machine),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done, json.loads((out / "results.json").read_text())


def predicted_times(runner: ModuleType, folder: Path, machine_text: str, tmp_path: Path) -> dict[str, float]:
    """Each case's predicted time (tiny and measured sizes) of the set in ``folder``, by case name:
    its program's model at its ranks and variables, its kernels at 10 µs."""
    import uml2perf

    machine = tmp_path / "machine.toml"
    machine.write_text(machine_text)
    held = runner.load_set(folder)
    times: dict[str, float] = {}
    for case in held.all_cases(False) + held.all_cases(True):
        overrides = dict(case.variables)
        overrides.update({variable: 1e-5 for variable in case.kernels})
        results = uml2perf.predict(
            held.models / f"{case.program}.uml",
            machine=machine,
            procs=case.procs,
            overrides=overrides,
            critical_path=False,
        )
        times[case.name] = results.time
    return times
