"""Micro-benchmarks of the two kernels whose cost the models take as a measured number.

A user who cannot count a kernel's flops and bytes well (a polynomial in numpy makes a
temporary per step; a task of a farm is mostly numpy's per-call overhead) times it alone once,
before running the parallel program, at the size the program will give it: that is what these
do.  Each kernel is imported from its program (the same function), called the way the program
calls it (the previous result kept alive while the next is computed, as the program's loop
does), in batches of at least ``BATCH_SECONDS``; the per-call time of every batch is one
repetition.  The answer is the median with the 5th and 95th percentiles, which the runner
writes into a sidecar as ``{ value, low, high }`` for the prediction interval.

Run as a script (``python kernels.py horner 131072 task 1000``) it prints one JSON object;
the runner starts it as its own process, after a quiet check, with the same environment as
the programs (one BLAS thread).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "programs"))

BATCH_SECONDS = 0.005
REPETITIONS = 31


def horner_call(size: int) -> Callable[[], object]:
    """One evaluation of the scatter/gather program's polynomial on a block of ``size`` doubles."""
    from scatter_poly import horner

    block = np.linspace(-1.0, 1.0, size)
    return lambda: horner(block)


def task_call(work: int) -> Callable[[], object]:
    """One task of the task farm over ``work`` doubles (task numbers advance as in the farm)."""
    from task_farm import task

    base = np.arange(work, dtype=np.float64)
    counter = iter(range(1 << 62))
    return lambda: task(next(counter), base)


KERNELS: dict[str, Callable[[int], Callable[[], object]]] = {"horner": horner_call, "task": task_call}


def seconds_per_call(call: Callable[[], object], repetitions: int = REPETITIONS) -> dict[str, float]:
    """Median, 5th and 95th percentile of the per-call time over ``repetitions`` batches."""
    kept = call()  # warm up: first-touch pages, numpy's caches
    singles = []
    for _ in range(3):
        start = time.perf_counter()
        kept = call()
        singles.append(time.perf_counter() - start)
    once = max(min(singles), 1e-7)
    calls = max(1, int(BATCH_SECONDS / once))
    found = []
    for _ in range(repetitions):
        start = time.perf_counter()
        for _ in range(calls):
            kept = call()  # noqa: F841  (the previous result stays alive, as in the programs)
        found.append((time.perf_counter() - start) / calls)
    low, value, high = (float(v) for v in np.percentile(found, [5, 50, 95]))
    return {"value": value, "low": low, "high": high, "calls_per_batch": calls, "batches": repetitions}


def measure(
    requests: list[tuple[str, int]],
    repetitions: int = REPETITIONS,
    kernels: dict[str, Callable[[int], Callable[[], object]]] | None = None,
) -> dict[str, dict[str, float]]:
    """``{"horner 131072": {...}, ...}`` for every (kernel, size) asked (``kernels``: default this set's)."""
    table = KERNELS if kernels is None else kernels
    return {
        f"{kernel} {size}": seconds_per_call(table[kernel](size), repetitions) for kernel, size in requests
    }


def main(argv: list[str], kernels: dict[str, Callable[[int], Callable[[], object]]] | None = None) -> int:
    """``[--repetitions N] KERNEL SIZE ...``: one JSON object (every held-out set's kernels script)."""
    repetitions = REPETITIONS
    if argv[:1] == ["--repetitions"]:
        repetitions, argv = int(argv[1]), argv[2:]
    pairs = [(argv[i], int(argv[i + 1])) for i in range(0, len(argv), 2)]
    print(json.dumps(measure(pairs, repetitions, kernels)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
