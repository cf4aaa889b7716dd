"""Bitonic sort of N doubles over a power-of-two number of ranks, by pairwise exchanges.

Every repetition starts from the same unsorted keys: each rank sorts its N / nprocs keys
(``local_sort``), then runs the bitonic network over the ranks: for stage i = 0 .. log2(nprocs) - 1
and step j = i .. 0 it swaps its whole block with the rank whose number differs in bit j
(``Sendrecv`` of 8 N / nprocs bytes) and keeps the lower or the upper half of the two blocks
merged (``merge_split``: concatenate, a stable sort that finds the two sorted runs, a copy of the
half).  Afterwards the keys are sorted across the ranks in rank order.

    mpiexec -n 4 python bitonic_sort.py --n 262144 --reps 8
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


def local_sort(base: np.ndarray) -> np.ndarray:
    """A sorted copy of the rank's keys."""
    keys = base.copy()
    keys.sort()
    return keys


def merge_split(mine: np.ndarray, theirs: np.ndarray, keep_low: bool) -> np.ndarray:
    """The lower (or upper) half of two sorted blocks of the same size, sorted."""
    merged = np.concatenate((mine, theirs))
    merged.sort(kind="stable")
    n = mine.size
    return merged[:n].copy() if keep_low else merged[n:].copy()


def bitonic(comm: MPI.Comm, base: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    pid, nprocs = comm.Get_rank(), comm.Get_size()
    keys = local_sort(base)
    stages = nprocs.bit_length() - 1
    for stage in range(stages):
        ascending = (pid >> (stage + 1)) & 1 == 0
        for step in range(stage, -1, -1):
            partner = pid ^ (1 << step)
            comm.Sendrecv(keys, dest=partner, recvbuf=theirs, source=partner)
            keys = merge_split(keys, theirs, (pid < partner) == ascending)
    return keys


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=262144)
    parser.add_argument("--reps", type=int, default=8)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    pid, nprocs = comm.Get_rank(), comm.Get_size()
    if nprocs & (nprocs - 1):
        raise SystemExit("bitonic_sort.py runs on a power-of-two number of ranks")
    n = args.n // nprocs
    base = np.random.default_rng(3 + pid).random(n)
    theirs = np.empty(n)

    keys = bitonic(comm, base, theirs)  # warm-up
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(args.reps):
        keys = bitonic(comm, base, theirs)
    elapsed = MPI.Wtime() - start
    slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
    ends = comm.gather((float(keys[0]), float(keys[-1])), root=0)
    if pid == 0:
        ordered = all(a[1] <= b[0] for a, b in zip(ends[:-1], ends[1:], strict=True))
        print(json.dumps({"seconds": slowest, "sorted": ordered}))


if __name__ == "__main__":
    main()
