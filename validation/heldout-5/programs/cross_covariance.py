"""The cross-covariance of two signals sampled in rows, the samples split over the ranks.

Each rank holds its share of the ``--rows`` samples of two signals of ``--dim`` channels each
(``x`` and ``y``, rows x dim).  Every round it forms its part of ``x.T @ y`` (one matrix product)
and the column sums of both, adds them over the ranks with ``MPI_Allreduce`` (the dim x dim
product, then the 2 x dim sums), and every rank finishes the covariance ``x.T y / N - mean_x
mean_y^T``.  Prints the slowest rank's seconds for ``--iters`` rounds.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=16384, help="samples in all (split over the ranks)")
    parser.add_argument("--dim", type=int, default=256, help="channels of each signal")
    parser.add_argument("--iters", type=int, default=10, help="timed rounds")
    return parser.parse_args()


def covariance(comm: MPI.Comm, x: np.ndarray, y: np.ndarray, samples: int) -> np.ndarray:
    """The dim x dim cross-covariance of all ranks' samples."""
    product = x.T @ y
    sums = np.empty((2, x.shape[1]))
    x.sum(axis=0, out=sums[0])
    y.sum(axis=0, out=sums[1])
    comm.Allreduce(MPI.IN_PLACE, product, op=MPI.SUM)
    comm.Allreduce(MPI.IN_PLACE, sums, op=MPI.SUM)
    sums /= samples
    product /= samples
    product -= np.outer(sums[0], sums[1])
    return product


def main() -> None:
    args = parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    share = args.rows // size + (1 if rank < args.rows % size else 0)
    rng = np.random.default_rng(3 + rank)
    x = rng.standard_normal((share, args.dim))
    y = 0.5 * x + rng.standard_normal((share, args.dim))

    covariance(comm, x, y, args.rows)  # warm-up, untimed
    comm.Barrier()
    started = MPI.Wtime()
    for _ in range(args.iters):
        covariance(comm, x, y, args.rows)
    elapsed = MPI.Wtime() - started
    slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest}))


if __name__ == "__main__":
    main()
