"""A distributed histogram and cumulative distribution of M drifting particles, STEPS steps.

Each rank owns M / p particles (positions in [0, 1) and velocities). Every step it moves them
(x += v * dt, wrapped into [0, 1)), bins them into B bins (bin index, then bincount), and the
ranks add their histograms with Reduce_scatter_block: rank r gets the totals of bins
r * B / p ... (r + 1) * B / p - 1. Each rank then turns its bins into a running sum (cumsum), gets
the count of particles in the bins before its own with an Exscan of one int64, and adds it, so
the ranks together hold the global cumulative distribution.

Prints the slowest rank's seconds for the timed steps as one JSON line.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI

DT = 1e-3


def wrap(x: np.ndarray) -> None:
    """Positions back into [0, 1), in place (a floating-point remainder per particle)."""
    np.remainder(x, 1.0, out=x)


def count_bins(index: np.ndarray, bins: int) -> np.ndarray:
    """Particles per bin (integer increments, no floating-point work)."""
    return np.bincount(index, minlength=bins)


def histogram_step(
    comm: MPI.Intracomm, x: np.ndarray, v: np.ndarray, bins: int, mine: np.ndarray
) -> np.ndarray:
    x += v * DT
    wrap(x)
    index = (x * bins).astype(np.int64)
    counts = count_bins(index, bins)
    comm.Reduce_scatter_block(counts, mine, op=MPI.SUM)
    cdf = np.cumsum(mine)
    before = np.zeros(1, dtype=np.int64)
    comm.Exscan(cdf[-1:], before, op=MPI.SUM)
    if comm.Get_rank() == 0:  # Exscan leaves rank 0's result undefined
        before[0] = 0
    cdf += before
    return cdf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--particles", type=int, default=1 << 16, help="particles in all (M)")
    parser.add_argument("--bins", type=int, default=1024, help="bins (B, a multiple of the ranks)")
    parser.add_argument("--steps", type=int, default=100, help="timed steps")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    assert args.bins % size == 0, "the bins must split evenly over the ranks"
    rng = np.random.default_rng(7 + rank)
    count = args.particles // size
    x = rng.random(count)
    v = rng.standard_normal(count)
    mine = np.empty(args.bins // size, dtype=np.int64)
    for _ in range(3):  # warm-up
        histogram_step(comm, x, v, args.bins, mine)
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(args.steps):
        cdf = histogram_step(comm, x, v, args.bins, mine)
    seconds = MPI.Wtime() - start
    if rank == size - 1:
        assert cdf[-1] == count * size
    slowest = comm.reduce(seconds, op=MPI.MAX, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest}))


if __name__ == "__main__":
    main()
