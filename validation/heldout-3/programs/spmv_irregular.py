"""Repeated sparse matrix-vector products with an irregular neighbour exchange, ITERS times.

The N x N matrix is split by rows over the ranks (n = N / p rows each). Each row has W entries
inside the rank's own block (an ELL band: cols, vals of n x W) and the first rows also read one
entry owned by another rank. Rank r reads from rank (r + d) % p (d = 1 .. p - 1) the values of
h_d = H // 2 ** (d - 1) of that rank's x entries, spread over its block: the nearest rank sends
the most, farther ones fewer (the exchange is not symmetric in size between a pair of ranks).

Every iteration posts an Irecv from each rank it reads from and, after packing the values asked
of it (a gather), an Isend to each rank that reads from it; computes the local part of y while
the messages travel; waits for all of them; adds the remote part to the first rows of y
(y[:h] += rvals * halo); and scales y into the next x.

Prints the slowest rank's seconds for the timed iterations as one JSON line.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


def halo_sizes(halo: int, size: int) -> list[int]:
    """h_d for d = 1 .. p - 1."""
    return [halo // 2 ** (d - 1) for d in range(1, size)]


class Matrix:
    """One rank's rows: the local ELL band and the remote entries' values."""

    def __init__(self, rank: int, size: int, rows: int, width: int, halo: int) -> None:
        rng = np.random.default_rng(31 + rank)
        offsets = np.arange(width) - width // 2
        self.cols = (np.arange(rows)[:, None] + offsets[None, :]) % rows
        self.vals = rng.random((rows, width)) / width
        self.sizes = halo_sizes(halo, size)
        self.total = sum(self.sizes)
        assert self.total <= rows, "more remote entries than rows"
        self.rvals = rng.random(self.total) * 0.1
        # what rank (rank - d) asks of me: h_d of my entries, spread over my block
        self.asked = [np.linspace(0, rows - 1, h).astype(np.int64) for h in self.sizes]
        self.recv = [np.empty(h) for h in self.sizes]


def iteration(comm: MPI.Intracomm, a: Matrix, x: np.ndarray) -> np.ndarray:
    rank, size = comm.Get_rank(), comm.Get_size()
    requests = []
    packed = []
    for d in range(1, size):
        requests.append(comm.Irecv(a.recv[d - 1], source=(rank + d) % size, tag=d))
        out = x[a.asked[d - 1]]
        packed.append(out)
        requests.append(comm.Isend(out, dest=(rank - d) % size, tag=d))
    y = (a.vals * x[a.cols]).sum(axis=1)
    MPI.Request.Waitall(requests)
    halo = np.concatenate(a.recv)
    y[: a.total] += a.rvals * halo
    return np.multiply(y, 0.9, out=y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1 << 15, help="rows in all (N)")
    parser.add_argument("--width", type=int, default=5, help="local entries per row (W)")
    parser.add_argument("--halo", type=int, default=1024, help="values read from the nearest rank (H)")
    parser.add_argument("--iters", type=int, default=50, help="timed iterations")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    rows = args.n // size
    a = Matrix(rank, size, rows, args.width, args.halo)
    x = np.ones(rows)
    for _ in range(3):  # warm-up
        x = iteration(comm, a, x)
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(args.iters):
        x = iteration(comm, a, x)
    seconds = MPI.Wtime() - start
    assert np.all(np.isfinite(x))
    slowest = comm.reduce(seconds, op=MPI.MAX, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest}))


if __name__ == "__main__":
    main()
