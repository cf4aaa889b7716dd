"""Micro-benchmarks of the kernels whose cost the set's models take as a measured number.

    python kernels.py [--repetitions R] KERNEL SIZE [KERNEL SIZE ...]

prints, as its last line, a JSON object ``{"KERNEL SIZE": {"value": s, "low": s, "high": s}}``:
the median, 5th and 95th percentile of the seconds one call takes, over R batches (default 31)
of at least 5 ms each.  Each kernel is the programs' own function (imported from programs/), at
the size one rank gives it, with the previous call's result kept alive as the program's loop
keeps it (so the allocator sees what it sees in the program).

Kernels (SIZE is the rank's share):

* ``localsort``: ``bitonic_sort.local_sort`` of SIZE random doubles (a copy, then an in-place sort);
* ``mergesplit``: ``bitonic_sort.merge_split`` of two sorted blocks of SIZE random doubles;
* ``expand_p2``, ``expand_p4``: ``frontier_bfs.expand`` for a rank owning SIZE vertices of a graph
  of 2 (4) x SIZE vertices, a frontier of 5% of the vertices.
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
BATCH_SECONDS = 5e-3


def _program(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_heldout4_{name}", PROGRAMS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _localsort(size: int) -> Callable[[], object]:
    local_sort = _program("bitonic_sort").local_sort
    base = np.random.default_rng(3).random(size)
    kept = [local_sort(base)]

    def call() -> object:
        kept[0] = local_sort(base)
        return kept[0]

    return call


def _mergesplit(size: int) -> Callable[[], object]:
    merge_split = _program("bitonic_sort").merge_split
    rng = np.random.default_rng(4)
    mine, theirs = np.sort(rng.random(size)), np.sort(rng.random(size))
    kept = [merge_split(mine, theirs, True)]

    def call() -> object:
        kept[0] = merge_split(mine, theirs, True)
        return kept[0]

    return call


def _expand(ranks: int) -> Callable[[int], Callable[[], object]]:
    def make(size: int) -> Callable[[], object]:
        bfs = _program("frontier_bfs")
        vertices = size * ranks
        adj = bfs.make_graph(vertices, size, 0)
        frontier = np.random.default_rng(6).random(vertices) < 0.05
        visited = np.zeros(size, dtype=bool)
        kept = [bfs.expand(frontier, adj, visited)]

        def call() -> object:
            kept[0] = bfs.expand(frontier, adj, visited)
            return kept[0]

        return call

    return make


KERNELS: dict[str, Callable[[int], Callable[[], object]]] = {
    "localsort": _localsort,
    "mergesplit": _mergesplit,
    "expand_p2": _expand(2),
    "expand_p4": _expand(4),
}


def measure(call: Callable[[], object], repetitions: int) -> dict[str, float]:
    """Median, 5th and 95th percentile of one call's seconds over ``repetitions`` batches."""
    call()  # warm: pages mapped, code paths taken
    calls = 1
    while True:
        started = time.perf_counter()
        for _ in range(calls):
            call()
        if time.perf_counter() - started >= BATCH_SECONDS:
            break
        calls *= 2
    per_call = []
    for _ in range(repetitions):
        started = time.perf_counter()
        for _ in range(calls):
            call()
        per_call.append((time.perf_counter() - started) / calls)
    low, value, high = np.percentile(per_call, [5, 50, 95])
    return {"value": float(value), "low": float(low), "high": float(high)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repetitions", type=int, default=31)
    parser.add_argument("pairs", nargs="+", help="KERNEL SIZE pairs")
    args = parser.parse_args(argv)
    if len(args.pairs) % 2:
        parser.error("give KERNEL SIZE pairs")
    found: dict[str, dict[str, float]] = {}
    for kernel, size in zip(args.pairs[::2], args.pairs[1::2], strict=True):
        if kernel not in KERNELS:
            parser.error(f"unknown kernel {kernel!r} (known: {', '.join(KERNELS)})")
        found[f"{kernel} {size}"] = measure(KERNELS[kernel](int(size)), args.repetitions)
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
