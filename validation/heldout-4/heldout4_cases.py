"""The cases of the fourth held-out set: six MPI programs, their settings, 2 and 4 ranks each.

Every setting names the program's command-line flags and, beside them, the model variables they
set (``--set``); where a model takes a kernel's cost as a measured number, the setting names the
kernel of ``kernels.py`` and the size one rank gives it.  Sizes are totals split over the ranks
(strong scaling).  The sizes were fixed from the work each program does, before any run at them.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "unseen"))

from unseen_cases import Case  # noqa: E402  (the runner's case record, through the path above)

PROCS = (2, 4)


def _wavefront(n: int, m: int, chunk: int, sweeps: int, procs: int) -> Case:
    return Case(
        "wavefront",
        f"N={n} M={m} B={chunk} SWEEPS={sweeps}",
        {"n": n, "m": m, "chunk": chunk, "sweeps": sweeps},
        {"N": n, "M": m, "B": chunk, "SWEEPS": sweeps},
        procs,
    )


def _gauss(n: int, reps: int, procs: int) -> Case:
    return Case("gauss_elim", f"N={n} REPS={reps}", {"n": n, "reps": reps}, {"N": n, "REPS": reps}, procs)


def _bitonic(n: int, reps: int, procs: int) -> Case:
    share = n // procs
    return Case(
        "bitonic_sort",
        f"N={n} REPS={reps}",
        {"n": n, "reps": reps},
        {"N": n, "REPS": reps},
        procs,
        {"LOCALSORT": ("localsort", share), "MERGESPLIT": ("mergesplit", share)},
    )


def _bfs(vertices: int, levels: int, sources: int, procs: int) -> Case:
    return Case(
        "frontier_bfs",
        f"V={vertices} LEVELS={levels} SOURCES={sources}",
        {"vertices": vertices, "levels": levels, "sources": sources},
        {"V": vertices, "LEVELS": levels, "SOURCES": sources},
        procs,
        {"EXPAND": (f"expand_p{procs}", vertices // procs)},
    )


def _particles(n: int, steps: int, speed: int, procs: int) -> Case:
    return Case(
        "particle_shift",
        f"N={n} STEPS={steps} SPEED={speed}",
        {"n": n, "steps": steps, "speed": speed},
        {"N": n, "STEPS": steps, "SPEED": speed},
        procs,
    )


def _life(rows: int, cols: int, gens: int, procs: int) -> Case:
    return Case(
        "life_overlap",
        f"ROWS={rows} COLS={cols} GENS={gens}",
        {"rows": rows, "cols": cols, "gens": gens},
        {"ROWS": rows, "COLS": cols, "GENS": gens},
        procs,
    )


def _full(procs: int) -> list[Case]:
    return [
        _wavefront(512, 512, 64, 10, procs),  # many small rows: calls and short messages
        _wavefront(1024, 4096, 1024, 4, procs),  # long rows, few chunks: a short pipeline
        _gauss(128, 20, procs),  # small: a broadcast and three tiny numpy calls per step
        _gauss(256, 4, procs),
        _gauss(512, 1, procs),  # elimination traffic in cache, temporaries of up to 1 MiB
        _bitonic(4096, 200, procs),  # 16 KiB or 8 KiB blocks, sorts of a few thousand keys
        _bitonic(262_144, 8, procs),
        _bitonic(2_097_152, 1, procs),  # blocks of 8 and 4 MiB
        _bfs(16_384, 8, 25, procs),  # 200 levels of small gathers and all-gathers
        _bfs(262_144, 6, 4, procs),
        _bfs(2_097_152, 5, 1, procs),  # gathers through 8 or 16 MiB of indices
        _particles(20_000, 400, 2_000, procs),  # ten leavers a side: latency and calls
        _particles(200_000, 40, 100_000, procs),  # 80 KB messages
        _particles(1_000_000, 10, 20_000, procs),  # memory-bound sweeps, fresh arrays
        _life(256, 256, 400, procs),  # tiny rows: calls, 258-byte messages
        _life(2048, 2048, 10, procs),
        _life(256, 32_768, 6, procs),  # few long rows: 32 KiB messages, fresh temporaries
    ]


def _quick() -> list[Case]:
    return [
        _wavefront(64, 64, 16, 2, 2),
        _wavefront(64, 64, 16, 2, 4),
        _gauss(32, 2, 2),
        _bitonic(4096, 2, 2),
        _bitonic(4096, 2, 4),
        _bfs(4096, 4, 2, 2),
        _particles(4000, 10, 20_000, 2),
        _life(64, 64, 5, 2),
    ]


def all_cases(quick: bool = False) -> list[Case]:
    """Every case, 2 ranks first; ``quick``: one tiny setting per program (the loop, not accuracy)."""
    if quick:
        return _quick()
    return [case for procs in PROCS for case in _full(procs)]


#: program -> where its model's compute costs come from
COST_SOURCE = {
    "wavefront": "roofline",
    "gauss_elim": "roofline",
    "bitonic_sort": "micro-benchmark",
    "frontier_bfs": "micro-benchmark",
    "particle_shift": "roofline",
    "life_overlap": "roofline",
}
