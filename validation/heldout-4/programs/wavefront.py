"""Pipelined Gauss-Seidel wavefront: an N x M grid in blocks of rows, swept in column chunks.

Each sweep goes down the chain of ranks chunk by chunk: a rank waits for the new values of the
last row of the rank above in the chunk's columns (``Recv`` of B doubles), updates its rows one
after another (each row uses the row above as already updated: Gauss-Seidel across rows, Jacobi
along a row, one numpy expression per row), and passes its own last row of the chunk on
(``Send``).  After the sweep every rank sends its first row up (the ghost row the rank above
reads in the next sweep).  Fixed zero boundary around the grid.

    mpiexec -n 4 python wavefront.py --n 512 --m 512 --chunk 64 --sweeps 10
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


def update_rows(u: np.ndarray, c0: int, c1: int) -> None:
    """Rows 1..nloc of columns c0..c1-1, top to bottom, in place."""
    for i in range(1, u.shape[0] - 1):
        u[i, c0:c1] = 0.25 * (
            u[i - 1, c0:c1] + u[i + 1, c0:c1] + u[i, c0 - 1 : c1 - 1] + u[i, c0 + 1 : c1 + 1]
        )


def sweep(comm: MPI.Comm, u: np.ndarray, chunk: int) -> None:
    pid, nprocs = comm.Get_rank(), comm.Get_size()
    nloc, m = u.shape[0] - 2, u.shape[1] - 2
    for c0 in range(1, m + 1, chunk):
        c1 = c0 + chunk
        if pid > 0:
            comm.Recv(u[0, c0:c1], source=pid - 1, tag=1)
        update_rows(u, c0, c1)
        if pid < nprocs - 1:
            comm.Send(u[nloc, c0:c1], dest=pid + 1, tag=1)
    # the first row goes up: the rank above reads it as its lower ghost row in the next sweep
    if 0 < pid < nprocs - 1:
        comm.Sendrecv(u[1], dest=pid - 1, sendtag=2, recvbuf=u[nloc + 1], source=pid + 1, recvtag=2)
    elif pid > 0:
        comm.Send(u[1], dest=pid - 1, tag=2)
    elif pid < nprocs - 1:
        comm.Recv(u[nloc + 1], source=pid + 1, tag=2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--m", type=int, default=512)
    parser.add_argument("--chunk", type=int, default=64)
    parser.add_argument("--sweeps", type=int, default=10)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    pid, nprocs = comm.Get_rank(), comm.Get_size()
    nloc = args.n // nprocs
    rng = np.random.default_rng(7 + pid)
    u = np.zeros((nloc + 2, args.m + 2))
    u[1:-1, 1:-1] = rng.random((nloc, args.m))

    sweep(comm, u, args.chunk)  # warm-up
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(args.sweeps):
        sweep(comm, u, args.chunk)
    elapsed = MPI.Wtime() - start
    slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
    if pid == 0:
        print(json.dumps({"seconds": slowest, "check": float(u[1:-1, 1:-1].sum())}))


if __name__ == "__main__":
    main()
