"""Monte-Carlo estimate of pi in batches, the running estimate combined every few batches.

Every rank draws ``--batches`` batches of M random points in the unit square (numpy's default
generator, seeded per rank) and counts those inside the quarter circle. After every ``--every``
batches the counts are summed on rank 0 with ``Reduce``, rank 0 turns them into the estimate, and
``Bcast``s it back (what a program that stops at a target accuracy needs; here the batch count is
fixed so that every run does the same work).

    mpiexec -n 2 python montecarlo.py --points 100000 --batches 60 --every 10

Prints ``{"seconds": ...}``: the slowest rank's time of the batches, after one warm-up batch with
its reduction and a barrier.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


def batch(rng: np.random.Generator, points: int) -> int:
    """Points of one batch of ``points`` that fall inside the quarter circle."""
    xy = rng.random((2, points))
    return int(np.count_nonzero(xy[0] * xy[0] + xy[1] * xy[1] <= 1.0))


def combine(comm: MPI.Comm, hits: np.ndarray, total: np.ndarray, estimate: np.ndarray, drawn: int) -> None:
    """Sum the hit counts on rank 0, which broadcasts the estimate of pi."""
    comm.Reduce(hits, total, op=MPI.SUM, root=0)
    if comm.Get_rank() == 0:
        estimate[0] = 4.0 * total[0] / (drawn * comm.Get_size())
    comm.Bcast(estimate, root=0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=100_000, help="points M per batch")
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--every", type=int, default=5, help="batches between two combinations")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rng = np.random.default_rng(1234 + comm.Get_rank())
    hits = np.zeros(1)
    total = np.zeros(1)
    estimate = np.zeros(1)

    hits[0] += batch(rng, args.points)  # warm-up
    combine(comm, hits, total, estimate, args.points)
    hits[0] = 0.0
    comm.Barrier()
    start = MPI.Wtime()
    for done in range(1, args.batches + 1):
        hits[0] += batch(rng, args.points)
        if done % args.every == 0:
            combine(comm, hits, total, estimate, done * args.points)
    seconds = MPI.Wtime() - start
    slowest = comm.reduce(seconds, op=MPI.MAX, root=0)
    if comm.Get_rank() == 0:
        print(json.dumps({"seconds": slowest, "pi": float(estimate[0])}))


if __name__ == "__main__":
    main()
