"""2-D Jacobi relaxation on an N x M grid split into row blocks, halo rows exchanged without blocking.

Each rank owns N / p consecutive rows (plus one ghost row above and one below). An iteration posts
``Irecv`` for both ghost rows and ``Isend`` of its first and last owned rows to the neighbours above
and below (rank 0 has none above, the last rank none below), waits for all four with ``Waitall``,
then replaces every owned interior point by the mean of its four neighbours (a five-point stencil
written as one numpy expression) into a second array, and swaps the two arrays.

    mpiexec -n 2 python stencil2d.py --rows 1024 --cols 1024 --iters 40

Prints ``{"seconds": ...}``: the slowest rank's time of the ``--iters`` iterations, after two
warm-up iterations and a barrier.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


def exchange(comm: MPI.Comm, u: np.ndarray, up: int, down: int) -> None:
    """Ghost rows from both neighbours, own edge rows to them: four non-blocking calls, one wait."""
    requests = []
    if up >= 0:
        requests.append(comm.Irecv(u[0], source=up, tag=1))
        requests.append(comm.Isend(u[1], dest=up, tag=0))
    if down >= 0:
        requests.append(comm.Irecv(u[-1], source=down, tag=0))
        requests.append(comm.Isend(u[-2], dest=down, tag=1))
    MPI.Request.Waitall(requests)


def sweep(u: np.ndarray, new: np.ndarray) -> None:
    """The five-point mean of every owned interior point of ``u``, written into ``new``."""
    new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=256, help="global rows N (divisible by the ranks)")
    parser.add_argument("--cols", type=int, default=256, help="columns M")
    parser.add_argument("--iters", type=int, default=100)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    local = args.rows // size
    up = rank - 1 if rank > 0 else -1
    down = rank + 1 if rank < size - 1 else -1

    rng = np.random.default_rng(rank)
    u = np.zeros((local + 2, args.cols))
    u[1:-1] = rng.random((local, args.cols))
    new = u.copy()

    for _ in range(2):  # warm-up: pages touched, MPI connections made
        exchange(comm, u, up, down)
        sweep(u, new)
        u, new = new, u
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(args.iters):
        exchange(comm, u, up, down)
        sweep(u, new)
        u, new = new, u
    seconds = MPI.Wtime() - start
    slowest = comm.reduce(seconds, op=MPI.MAX, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest, "check": float(u[1:-1].sum())}))


if __name__ == "__main__":
    main()
