"""Lloyd's k-means on M points of D dimensions spread over the ranks, ITERS iterations.

Each rank holds M / p points (an m x D array X, and its transpose XT for contiguous columns).
Every iteration it scores each point against the K centroids C through the matrix product
G = X @ C.T (the distance up to a term that does not change the nearest centroid:
|c|^2 - 2 x.c), takes the nearest centroid of each point (argmin over a row), sums the points of
each cluster (one weighted bincount per dimension, and one bincount for the sizes), and the ranks
add their sums and sizes in one Allreduce of K x (D + 1) doubles; the new centroids are the sums
over the sizes.

Prints the slowest rank's seconds for the timed iterations as one JSON line.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


def iteration(comm: MPI.Intracomm, x: np.ndarray, xt: np.ndarray, c: np.ndarray) -> np.ndarray:
    k, d = c.shape
    g = x @ c.T
    norms = (c * c).sum(axis=1)
    labels = np.argmin(norms - 2.0 * g, axis=1)
    local = np.empty((k, d + 1))
    for j in range(d):
        local[:, j] = np.bincount(labels, weights=xt[j], minlength=k)
    local[:, d] = np.bincount(labels, minlength=k)
    total = np.empty_like(local)
    comm.Allreduce(local, total, op=MPI.SUM)
    sizes = np.maximum(total[:, d], 1.0)
    return total[:, :d] / sizes[:, None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--points", type=int, default=1 << 15, help="points in all (M)")
    parser.add_argument("--dims", type=int, default=8, help="dimensions (D)")
    parser.add_argument("--clusters", type=int, default=16, help="clusters (K)")
    parser.add_argument("--iters", type=int, default=20, help="timed iterations")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    rng = np.random.default_rng(5 + rank)
    x = rng.standard_normal((args.points // size, args.dims))
    xt = np.ascontiguousarray(x.T)
    c = np.random.default_rng(4).standard_normal((args.clusters, args.dims))
    for _ in range(2):  # warm-up
        c = iteration(comm, x, xt, c)
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(args.iters):
        c = iteration(comm, x, xt, c)
    seconds = MPI.Wtime() - start
    assert np.all(np.isfinite(c))
    slowest = comm.reduce(seconds, op=MPI.MAX, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest}))


if __name__ == "__main__":
    main()
