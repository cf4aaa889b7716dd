"""Micro-benchmarks of the two kernels of this set whose cost a model takes as a measured number.

A user cannot count the flops and bytes of an FFT filter stage (numpy's pocketfft, its plan cache,
complex temporaries) or of a batch of random numbers (the generator's integer work) well enough
for a roofline, so these are timed alone once, before the parallel program runs, at the size the
program gives them. Each kernel is imported from its program (the same function) and called the
way the program's loop calls it: the FFT stage on one block with the rank's response, its result
kept alive while the next is computed; a Monte-Carlo batch from one generator, batch after batch.
They are timed as ``validation/unseen/kernels.py`` times its own: calls in batches of at least
5 ms, the per-call time of every batch one repetition, and the answer the median with the 5th and
95th percentiles, which the runner writes into a sidecar as ``{ value, low, high }`` for the
prediction interval.

Run as a script (``python kernels.py fftstage 4096 mcbatch 100000``) it prints one JSON object;
``validation/unseen/run.py --set validation/heldout-2`` starts it as its own process, after a
quiet check, with the same environment as the programs (one BLAS thread).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "programs"))

#: the timing itself is the first set's (``validation/unseen/kernels.py``): the same batches, the
#: same repetitions and percentiles for every set
_TIMING = Path(__file__).resolve().parent.parent / "unseen" / "kernels.py"
_spec = importlib.util.spec_from_file_location("_unseen_kernel_timing", _TIMING)
assert _spec is not None and _spec.loader is not None
_timing = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_timing)
REPETITIONS: int = _timing.REPETITIONS


def fftstage_call(size: int) -> Callable[[], object]:
    """One filter stage of the FFT pipeline on a block of ``size`` doubles (rank 1's response)."""
    from fft_pipeline import stage, transfer_function

    block = np.random.default_rng(1).standard_normal(size)
    response = transfer_function(size, 1)
    return lambda: stage(block, response)


def mcbatch_call(points: int) -> Callable[[], object]:
    """One batch of ``points`` random points of the Monte-Carlo program, from one generator."""
    from montecarlo import batch

    rng = np.random.default_rng(1234)
    return lambda: batch(rng, points)


KERNELS: dict[str, Callable[[int], Callable[[], object]]] = {
    "fftstage": fftstage_call,
    "mcbatch": mcbatch_call,
}


def measure(requests: list[tuple[str, int]], repetitions: int = REPETITIONS) -> dict[str, dict[str, float]]:
    """``{"fftstage 4096": {...}, ...}`` for every (kernel, size) asked."""
    found: dict[str, dict[str, float]] = _timing.measure(requests, repetitions, KERNELS)
    return found


def main(argv: list[str]) -> int:
    status: int = _timing.main(argv, KERNELS)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
