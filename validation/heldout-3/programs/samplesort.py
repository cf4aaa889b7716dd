"""Parallel sample sort of N keys (doubles) spread over the ranks, ROUNDS times.

Each round sorts the rank's N / p keys locally, draws SAMPLES regular samples from them, gathers
every rank's samples on every rank (Allgather), picks p - 1 splitters, counts how many keys go to
each rank (searchsorted), swaps the counts (Alltoall of one int64 per pair) and then the keys
themselves (Alltoallv: blocks of different sizes), and sorts what arrived (p sorted runs) with a
stable sort. The rank's own unsorted keys are kept, so every round does the same work.

Prints the slowest rank's seconds for the timed rounds as one JSON line.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI

SAMPLES = 32  # regular samples per rank


def local_sort(keys: np.ndarray) -> np.ndarray:
    """The first local sort: unsorted keys, numpy's default sort."""
    return np.sort(keys)


def merge_runs(received: np.ndarray) -> np.ndarray:
    """The last local sort: p sorted runs one after the other, a stable (run-aware) sort."""
    return np.sort(received, kind="stable")


def keys_of(rank: int, count: int) -> np.ndarray:
    return np.random.default_rng(1000 + rank).random(count)


def sort_round(comm: MPI.Intracomm, keys: np.ndarray) -> np.ndarray:
    size = comm.Get_size()
    local = local_sort(keys)
    step = local.size // SAMPLES
    samples = np.ascontiguousarray(local[step // 2 :: step][:SAMPLES])
    everyone = np.empty(SAMPLES * size)
    comm.Allgather(samples, everyone)
    everyone.sort()
    splitters = everyone[SAMPLES::SAMPLES]
    edges = np.concatenate(([0], np.searchsorted(local, splitters), [local.size]))
    sendcounts = np.diff(edges)
    recvcounts = np.empty(size, dtype=np.int64)
    comm.Alltoall(sendcounts, recvcounts)
    rdispl = np.concatenate(([0], np.cumsum(recvcounts)[:-1]))
    received = np.empty(int(recvcounts.sum()))
    comm.Alltoallv(
        [local, sendcounts.tolist(), edges[:-1].tolist(), MPI.DOUBLE],
        [received, recvcounts.tolist(), rdispl.tolist(), MPI.DOUBLE],
    )
    return merge_runs(received)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1 << 16, help="keys in all (N)")
    parser.add_argument("--rounds", type=int, default=10, help="timed sorting rounds")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    keys = keys_of(comm.Get_rank(), args.n // comm.Get_size())
    for _ in range(2):  # warm-up
        sort_round(comm, keys)
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(args.rounds):
        result = sort_round(comm, keys)
    seconds = MPI.Wtime() - start
    assert np.all(result[1:] >= result[:-1])
    slowest = comm.reduce(seconds, op=MPI.MAX, root=0)
    if comm.Get_rank() == 0:
        print(json.dumps({"seconds": slowest}))


if __name__ == "__main__":
    main()
