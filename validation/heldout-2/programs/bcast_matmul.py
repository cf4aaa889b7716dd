"""C = A B for N x N matrices in row blocks, each block of B broadcast in turn (a 1-D SUMMA).

Rank k owns rows k n .. (k+1) n - 1 of A, B and C (n = N / p). A product runs p steps; in step k
rank k broadcasts its block of B (n x N doubles) with ``Bcast`` and every rank adds
``A[:, k-th column block] @ B_k`` to its block of C (numpy's matmul, one BLAS thread per rank:
the runner sets ``OPENBLAS_NUM_THREADS=1``). The timed loop runs ``--reps`` whole products.

    mpiexec -n 2 python bcast_matmul.py --n 1024 --reps 8

Prints ``{"seconds": ...}``: the slowest rank's time of the ``--reps`` products, after one warm-up
product and a barrier.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


def product(comm: MPI.Comm, a: np.ndarray, b: np.ndarray, c: np.ndarray, block: np.ndarray) -> None:
    """One C = A B: p broadcasts of a block of B, each followed by a block product added to C."""
    rank, size = comm.Get_rank(), comm.Get_size()
    n = a.shape[0]
    c[...] = 0.0
    for k in range(size):
        if k == rank:
            block[...] = b
        comm.Bcast(block, root=k)
        c += a[:, k * n : (k + 1) * n] @ block


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=256, help="matrix order N (divisible by the ranks)")
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    rows = args.n // size
    rng = np.random.default_rng(rank)
    a = rng.random((rows, args.n))
    b = rng.random((rows, args.n))
    c = np.zeros((rows, args.n))
    block = np.empty((rows, args.n))

    product(comm, a, b, c, block)  # warm-up
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(args.reps):
        product(comm, a, b, c, block)
    seconds = MPI.Wtime() - start
    slowest = comm.reduce(seconds, op=MPI.MAX, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest, "check": float(c.sum())}))


if __name__ == "__main__":
    main()
