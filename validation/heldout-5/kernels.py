"""Micro-benchmarks of the one kernel of this set whose cost its model takes as a measured number.

    python kernels.py [--repetitions 30] local_best 524288 [KERNEL SIZE ...]

``local_best`` is ``topk_tree.local_best``, the program's own function (scores of the rank's
candidates against a query and a partial sort for the best 64), timed at ``SIZE`` candidates:
the rank's share of the program's ``--n``.  A user cannot count a partial sort's work from its
source, so the model takes its time from here.  Each kernel is timed alone in this process, after
one untimed call, as ``--repetitions`` samples of enough calls to last a few milliseconds; the
last line printed is JSON: ``{"KERNEL SIZE": {"value": median, "low": 5th percentile, "high":
95th percentile}}`` in seconds per call.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np

PROGRAMS = Path(__file__).resolve().parent / "programs"


def _program(name: str) -> ModuleType:
    """A program of this set, imported from its file (it imports mpi4py but starts no MPI work)."""
    spec = importlib.util.spec_from_file_location(f"_heldout5_{name}", PROGRAMS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def local_best(size: int) -> Callable[[], object]:
    """One call of ``topk_tree.local_best`` over ``size`` candidates, a new query each call."""
    topk = _program("topk_tree")
    x = np.random.default_rng(17).random(size)
    queries = iter(np.random.default_rng(1).random(1 << 20))
    return lambda: topk.local_best(x, float(next(queries)), 0)


#: kernel name -> a maker of one call at a size
KERNELS: dict[str, Callable[[int], Callable[[], object]]] = {"local_best": local_best}


def measure(call: Callable[[], object], repetitions: int) -> dict[str, float]:
    """Median and 5th..95th percentile of the seconds per call over ``repetitions`` samples."""
    call()  # untimed: first-touch of the call's memory, imports
    started = time.perf_counter()
    call()
    once = max(time.perf_counter() - started, 1e-7)
    batch = max(1, int(2e-3 / once))
    samples = []
    for _ in range(repetitions):
        started = time.perf_counter()
        for _ in range(batch):
            call()
        samples.append((time.perf_counter() - started) / batch)
    low, value, high = np.percentile(samples, [5, 50, 95])
    return {"value": float(value), "low": float(low), "high": float(high)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repetitions", type=int, default=30, help="timed samples per kernel (30)")
    parser.add_argument("pairs", nargs="+", help="KERNEL SIZE pairs")
    args = parser.parse_args(argv)
    if len(args.pairs) % 2:
        parser.error("give kernels as KERNEL SIZE pairs")
    found: dict[str, dict[str, float]] = {}
    for name, size_text in zip(args.pairs[::2], args.pairs[1::2], strict=True):
        if name not in KERNELS:
            parser.error(f"unknown kernel {name!r} (known: {', '.join(sorted(KERNELS))})")
        size = int(size_text)
        if size <= 64:
            parser.error(f"{name} needs more than 64 candidates (got {size})")
        found[f"{name} {size}"] = measure(KERNELS[name](size), args.repetitions)
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
