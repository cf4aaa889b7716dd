"""The third held-out set's cases: each program's settings, how they map to its model's variables,
and which of the model's variables take a micro-benchmark's time (kernels.py).

The sizes were fixed before any program ran at them (only tiny functional runs came before), from
estimates of what each timed region should take on a 2-core machine: roughly 10-200 ms at either
rank count. Sizes are totals split over the ranks (strong scaling), so 4 ranks on the 2 cores do
the same work as 2. Nothing here was adjusted to measured numbers. A program's ``--flag`` and the
model's variable of the same setting are written side by side.

Every setting aims at one kind of cost (per rank at 2 ranks; L2 is 1 MiB per core, the last-level
cache 32 MiB shared by the two cores):

- ``samplesort``: N = 16,384 many small rounds (latency and per-call costs); 262,144 (the sorts
  and an all-to-all of 1 MiB per rank); 2,097,152 (sorts of 1 Mi keys, 8 MiB per rank).
- ``wave1d``: N = 4,096 (two 8-byte exchanges per step: latency-bound); 1,048,576 (a working set
  of 28 MiB per rank, memory-bound).
- ``histcdf``: M = 8,192 over 1,024 bins (three small collectives per step); M = 1,048,576 over
  4,096 bins (the particle passes, memory-bound); M = 65,536 over 262,144 bins (a 2 MiB reduce and
  scatter of the histogram per step).
- ``transpose``: N = 128 (64 KiB blocks, per-call costs); 1,024 (4 MiB blocks, cache); 2,048
  (16 MiB blocks, a 64 MiB working set, memory and an 8 MiB all-to-all).
- ``spmv_irregular``: N = 8,192 (small messages to every other rank, latency); 131,072 (128 KiB
  to the nearest rank while the product runs, cache); 1,048,576 with W = 7 (the product from memory).
- ``kmeans``: M = 4,096, D = 4, K = 8 (many small iterations: per-call costs and the all-reduce);
  M = 131,072, D = 16, K = 32 (a thin matrix product and the bincounts); M = 65,536, D = 64,
  K = 256 (the matrix product dominates: compute-bound).

Run by ``python validation/unseen/run.py --set validation/heldout-3``.
"""

from __future__ import annotations

import sys
from pathlib import Path

# the runner's record of a case is the first set's (validation/unseen/unseen_cases.py)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "unseen"))

from unseen_cases import Case  # noqa: E402

#: a setting: its label, the program's flags, the model's variables
Setting = tuple[str, dict[str, int], dict[str, int]]


def _sort(n: int, rounds: int) -> Setting:
    return f"N={n} ROUNDS={rounds}", {"n": n, "rounds": rounds}, {"N": n, "ROUNDS": rounds}


def _wave(n: int, steps: int, every: int) -> Setting:
    label = f"N={n} STEPS={steps} EVERY={every}"
    return label, {"n": n, "steps": steps, "every": every}, {"N": n, "STEPS": steps, "EVERY": every}


def _hist(particles: int, bins: int, steps: int) -> Setting:
    return (
        f"M={particles} B={bins} STEPS={steps}",
        {"particles": particles, "bins": bins, "steps": steps},
        {"M": particles, "B": bins, "STEPS": steps},
    )


def _transpose(n: int, reps: int) -> Setting:
    return f"N={n} REPS={reps}", {"n": n, "reps": reps}, {"N": n, "REPS": reps}


def _spmv(n: int, width: int, halo: int, iters: int) -> Setting:
    return (
        f"N={n} W={width} H={halo} ITERS={iters}",
        {"n": n, "width": width, "halo": halo, "iters": iters},
        {"N": n, "W": width, "H": halo, "ITERS": iters},
    )


def _kmeans(points: int, dims: int, clusters: int, iters: int) -> Setting:
    return (
        f"M={points} D={dims} K={clusters} ITERS={iters}",
        {"points": points, "dims": dims, "clusters": clusters, "iters": iters},
        {"M": points, "D": dims, "K": clusters, "ITERS": iters},
    )


#: program -> its settings (full runs)
SETTINGS: dict[str, list[Setting]] = {
    "samplesort": [_sort(16_384, 200), _sort(262_144, 20), _sort(2_097_152, 3)],
    "wave1d": [_wave(4096, 2000, 10), _wave(1_048_576, 30, 10)],
    "histcdf": [_hist(8192, 1024, 1000), _hist(1_048_576, 4096, 15), _hist(65_536, 262_144, 40)],
    "transpose": [_transpose(128, 2000), _transpose(1024, 50), _transpose(2048, 12)],
    "spmv_irregular": [
        _spmv(8192, 5, 256, 1000),
        _spmv(131_072, 5, 16_384, 100),
        _spmv(1_048_576, 7, 4096, 8),
    ],
    "kmeans": [_kmeans(4096, 4, 8, 1000), _kmeans(131_072, 16, 32, 15), _kmeans(65_536, 64, 256, 4)],
}

#: program -> one tiny setting (--quick: checks the loop end to end, says nothing of accuracy)
QUICK: dict[str, Setting] = {
    "samplesort": _sort(8192, 3),
    "wave1d": _wave(4096, 20, 5),
    "histcdf": _hist(4096, 64, 20),
    "transpose": _transpose(64, 4),
    "spmv_irregular": _spmv(4096, 5, 256, 5),
    "kmeans": _kmeans(4096, 8, 16, 5),
}

#: program -> where its model's compute costs come from (the summary's groups); every model also
#: counts its numpy calls (the ``calls`` tag, priced at the machine file's ``call_cost``)
COST_SOURCE = {
    "samplesort": "micro-benchmark",
    "wave1d": "roofline",
    "histcdf": "roofline + micro-benchmark",
    "transpose": "roofline",
    "spmv_irregular": "roofline",
    "kmeans": "roofline",
}

#: rank counts: 2 (one per core) and 4 (two per core) for every program; --quick runs 2, and 4 for
#: the programs whose models change shape with the ranks (the sample sort's merge of p runs, the
#: sparse product's neighbour loop)
PROCS = (2, 4)
QUICK_PROCS = {"samplesort": (2, 4), "spmv_irregular": (2, 4)}


def kernels_of(program: str, variables: dict[str, int], procs: int) -> dict[str, tuple[str, int]]:
    """The model variables a micro-benchmark fills, as (kernel, size), at the sizes one rank has."""
    found: dict[str, tuple[str, int]] = {}
    if program == "samplesort":
        keys = variables["N"] // procs
        found["SORT"] = ("sortkeys", keys)
        found["MERGE"] = (f"mergeruns{procs}", keys)
    if program == "histcdf":
        particles = variables["M"] // procs
        found["WRAP"] = ("wrap", particles)
        found["BINCOUNT"] = (f"bincount{variables['B']}", particles)
    return found


def _case(program: str, setting: Setting, procs: int) -> Case:
    label, arguments, variables = setting
    kernels = kernels_of(program, variables, procs)
    return Case(program, label, dict(arguments), dict(variables), procs, kernels)


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
