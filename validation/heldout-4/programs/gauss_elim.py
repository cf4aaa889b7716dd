"""Gaussian elimination (no pivoting) of an N x (N+1) augmented system, rows dealt out cyclically.

Row i lives on rank i % nprocs.  In step k the owner of row k copies its trailing part (columns
k..N) into a buffer and broadcasts it (``Bcast`` of 8 (N + 1 - k) bytes, root k % nprocs); every
rank then eliminates column k from its own rows below row k with two numpy expressions (the
multipliers ``mult = A[s:, k] / piv[k]``, then ``A[s:, k:] -= mult[:, None] * piv[None, k:]``).  The
timed loop solves REPS systems, each from a fresh copy of the matrix.  The matrix is diagonally
dominant, so no pivoting is needed.

    mpiexec -n 4 python gauss_elim.py --n 512 --reps 1
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


def eliminate(comm: MPI.Comm, a0: np.ndarray, n: int, piv: np.ndarray) -> np.ndarray:
    pid, nprocs = comm.Get_rank(), comm.Get_size()
    a = a0.copy()
    nloc = a.shape[0]
    for k in range(n):
        owner = k % nprocs
        if pid == owner:
            piv[k:] = a[k // nprocs, k:]
        comm.Bcast(piv[k:], root=owner)
        s = (k - pid) // nprocs + 1 if k >= pid else 0  # first own row below row k
        if s < nloc:
            mult = a[s:, k] / piv[k]
            a[s:, k:] -= mult[:, None] * piv[None, k:]
    return a


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--reps", type=int, default=4)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    pid, nprocs = comm.Get_rank(), comm.Get_size()
    n = args.n
    rows = np.arange(pid, n, nprocs)
    rng = np.random.default_rng(11 + pid)
    a0 = rng.random((rows.size, n + 1))
    a0[np.arange(rows.size), rows] += n  # diagonally dominant
    piv = np.empty(n + 1)

    a = eliminate(comm, a0, n, piv)  # warm-up
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(args.reps):
        a = eliminate(comm, a0, n, piv)
    elapsed = MPI.Wtime() - start
    slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
    if pid == 0:
        print(json.dumps({"seconds": slowest, "check": float(a[-1, -1])}))


if __name__ == "__main__":
    main()
