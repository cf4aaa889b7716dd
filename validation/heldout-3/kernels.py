"""Micro-benchmarks of what this set's models take as measured numbers.

Two programs have work that a user cannot count as flops and bytes; it is timed here, alone and
once, before the parallel programs run:

* ``wrap`` and ``bincountB``: the histogram's wrap of the positions into [0, 1) (np.remainder: a
  floating-point remainder per particle, not among the operations whose flop weights calibrate
  measures; docs/profile.md gives a call that does more than its count says a measured cost) and
  its count of bin indices into B bins (integer increments: no flops to count), at the particles
  a process holds.
* ``sortkeys`` and ``mergeruns2`` / ``mergeruns4``: the two local sorts of the sample sort, whose
  work (numpy's sorting networks and merges, branchy integer work on float keys) has no flop or
  byte count a user can write down. ``sortkeys`` sorts ``size`` uniform random doubles with
  numpy's default sort, as the program's first sort does; ``mergerunsP`` sorts, with the stable
  sort the program's last step uses, ``size`` doubles made of P sorted runs of uniform keys over
  one range (what a rank receives from P ranks). Each is imported from its program (the same
  function) and called on the same input again and again, as the program's rounds do.

Timing as the first set's kernels (``validation/unseen/kernels.py``): calls in batches of at
least 5 ms, the per-call time of every batch one repetition, the answer the median with the 5th
and 95th percentiles, which the runner writes into a sidecar as ``{ value, low, high }``.

Run as a script (``python kernels.py sortkeys 65536 wrap 32768``) it prints one JSON object;
``validation/unseen/run.py --set validation/heldout-3`` starts it as its own process, after a
quiet check, with the same environment as the programs (one BLAS thread).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "programs"))

#: the timing itself is the first set's: the same batches, repetitions and percentiles for every set
_TIMING = Path(__file__).resolve().parent.parent / "unseen" / "kernels.py"
_spec = importlib.util.spec_from_file_location("_unseen_kernel_timing", _TIMING)
assert _spec is not None and _spec.loader is not None
_timing = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_timing)
REPETITIONS: int = _timing.REPETITIONS


def sortkeys_call(size: int) -> Callable[[], object]:
    """The sample sort's first local sort of ``size`` unsorted keys."""
    from samplesort import keys_of, local_sort

    keys = keys_of(0, size)
    return lambda: local_sort(keys)


def _mergeruns(runs: int) -> Callable[[int], Callable[[], object]]:
    def make(size: int) -> Callable[[], object]:
        """The sample sort's last sort: ``size`` keys in ``runs`` sorted runs over one range."""
        from samplesort import merge_runs

        rng = np.random.default_rng(2)
        parts = [np.sort(rng.random(size // runs)) for _ in range(runs)]
        received = np.concatenate(parts)
        return lambda: merge_runs(received)

    return make


def wrap_call(size: int) -> Callable[[], object]:
    """The histogram's wrap of ``size`` positions into [0, 1) (np.remainder in place)."""
    from histcdf import wrap

    x = np.random.default_rng(3).random(size) * 1.002 - 0.001
    return lambda: wrap(x)


def _bincount(bins: int) -> Callable[[int], Callable[[], object]]:
    def make(size: int) -> Callable[[], object]:
        """The histogram's count of ``size`` uniformly spread bin indices into ``bins`` bins."""
        from histcdf import count_bins

        index = (np.random.default_rng(4).random(size) * bins).astype(np.int64)
        return lambda: count_bins(index, bins)

    return make


#: the bin counts the histogram's cases use (a kernel per count: a kernel takes one size)
BINS = (64, 1024, 4096, 262144)

KERNELS: dict[str, Callable[[int], Callable[[], object]]] = {
    "sortkeys": sortkeys_call,
    "mergeruns2": _mergeruns(2),
    "mergeruns4": _mergeruns(4),
    "wrap": wrap_call,
    **{f"bincount{bins}": _bincount(bins) for bins in BINS},
}


def measure(requests: list[tuple[str, int]], repetitions: int = REPETITIONS) -> dict[str, dict[str, float]]:
    """``{"sortkeys 65536": {...}, ...}`` for every (kernel, size) asked."""
    found: dict[str, dict[str, float]] = _timing.measure(requests, repetitions, KERNELS)
    return found


def main(argv: list[str]) -> int:
    status: int = _timing.main(argv, KERNELS)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
