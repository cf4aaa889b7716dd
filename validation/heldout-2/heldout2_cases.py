"""The second held-out set's cases: each program's settings, how they map to its model's variables,
and which kernel (if any) the model's cost takes from a micro-benchmark.

The sizes were fixed before any program ran at them (only tiny functional runs came before), from
estimates of what each timed region should take on a 2-core machine: roughly 10-200 ms. Nothing
here was adjusted to measured numbers. A program's ``--flag`` and the model's variable of the
same setting are written side by side, so a reader can check that the model is predicted for
exactly what the program ran.

Working sets per rank (what the three memory-bound programs were sized for; L2 is 1 MiB per
core, the last-level cache 32 MiB shared by both cores):

- ``stencil2d``: three arrays of (N / p) x M doubles (two grids and one temporary):
  N = M = 256 about 0.75 MiB (L2), 1024 about 12 MiB (L3), 2048 about 48 MiB (memory).
- ``cg``: five vectors of N / p doubles: N = 8192 about 160 KiB, 262,144 about 5 MiB,
  4,194,304 about 80 MiB (at 2 ranks; half at 4).
- ``nbody``: six n x N arrays of pairs (n = N / p): N = 128 about 0.4 MiB, 512 about 6 MiB,
  2048 about 96 MiB.

Run by ``python validation/unseen/run.py --set validation/heldout-2``.
"""

from __future__ import annotations

import sys
from pathlib import Path

# the runner's record of a case is the first set's (validation/unseen/unseen_cases.py)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "unseen"))

from unseen_cases import Case  # noqa: E402

#: a setting: its label, the program's flags, the model's variables, kernel-measured variables
Setting = tuple[str, dict[str, int], dict[str, int], dict[str, tuple[str, int]]]


def _stencil(rows: int, cols: int, iters: int) -> Setting:
    label = f"N={rows} M={cols} ITERS={iters}"
    return label, {"rows": rows, "cols": cols, "iters": iters}, {"N": rows, "M": cols, "ITERS": iters}, {}


def _cg(n: int, iters: int) -> Setting:
    return f"N={n} ITERS={iters}", {"n": n, "iters": iters}, {"N": n, "ITERS": iters}, {}


def _matmul(n: int, reps: int) -> Setting:
    return f"N={n} REPS={reps}", {"n": n, "reps": reps}, {"N": n, "REPS": reps}, {}


def _nbody(n: int, steps: int) -> Setting:
    return f"N={n} STEPS={steps}", {"n": n, "steps": steps}, {"N": n, "STEPS": steps}, {}


def _fft(size: int, blocks: int) -> Setting:
    return (
        f"S={size} BLOCKS={blocks}",
        {"size": size, "blocks": blocks},
        {"S": size, "BLOCKS": blocks},
        {"STAGE": ("fftstage", size)},
    )


def _monte(points: int, batches: int, every: int) -> Setting:
    return (
        f"M={points} BATCHES={batches} EVERY={every}",
        {"points": points, "batches": batches, "every": every},
        {"M": points, "BATCHES": batches, "EVERY": every},
        {"BATCH": ("mcbatch", points)},
    )


#: program -> its settings (full runs)
SETTINGS: dict[str, list[Setting]] = {
    "stencil2d": [_stencil(256, 256, 400), _stencil(1024, 1024, 40), _stencil(2048, 2048, 8)],
    "cg": [_cg(8192, 500), _cg(262_144, 100), _cg(4_194_304, 6)],
    "nbody": [_nbody(128, 400), _nbody(512, 60), _nbody(2048, 4)],
    "bcast_matmul": [_matmul(256, 60), _matmul(1024, 6)],
    "fft_pipeline": [_fft(4096, 600), _fft(262_144, 16)],
    "montecarlo": [_monte(1000, 1000, 1), _monte(1_000_000, 8, 2)],
}

#: program -> one tiny setting (--quick: checks the loop end to end, says nothing of accuracy)
QUICK: dict[str, Setting] = {
    "stencil2d": _stencil(64, 64, 10),
    "cg": _cg(1024, 20),
    "nbody": _nbody(64, 5),
    "bcast_matmul": _matmul(64, 3),
    "fft_pipeline": _fft(512, 20),
    "montecarlo": _monte(1000, 20, 5),
}

#: program -> where its model's compute costs come from (the summary's groups)
COST_SOURCE = {
    "stencil2d": "roofline",
    "cg": "roofline",
    "nbody": "roofline",
    "bcast_matmul": "roofline",
    "fft_pipeline": "micro-benchmark",
    "montecarlo": "micro-benchmark",
}

#: rank counts: 2 (one per core) and 4 (two per core) for every program; --quick runs 2, and 4 for
#: the two programs whose models change shape with the ranks (the pipeline's stages, the row blocks'
#: inner neighbours)
PROCS = (2, 4)
QUICK_PROCS = {"fft_pipeline": (2, 4), "stencil2d": (2, 4)}


def _case(program: str, setting: Setting, procs: int) -> Case:
    label, arguments, variables, kernels = setting
    # the kernels' sizes are the programs' own (a block of S samples, a batch of M points), whatever
    # the ranks
    return Case(program, label, dict(arguments), dict(variables), procs, dict(kernels))


def all_cases(quick: bool = False) -> list[Case]:
    """Every case in table order: program, setting, ranks."""
    if quick:
        return [
            _case(program, setting, procs)
            for program, setting in QUICK.items()
            for procs in QUICK_PROCS.get(program, (2,))
        ]
    return [
        _case(program, setting, procs)
        for program, settings in SETTINGS.items()
        for setting in settings
        for procs in PROCS
    ]
