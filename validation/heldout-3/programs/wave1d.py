"""A 1-D wave equation (leapfrog, periodic) on N points spread over the ranks, STEPS time steps.

Every step swaps one ghost value with each neighbour (two Sendrecv of one double), then updates
the rank's N / p points from the two previous time levels:

    lap = u[2:] - 2.0 * u[1:-1] + u[:-2]
    new[1:-1] = 2.0 * u[1:-1] - old[1:-1] + c2 * lap

Every EVERY steps the ranks sum the wave's energy (a dot product of the local points, then an
Allreduce of one double).

Prints the slowest rank's seconds for the timed steps as one JSON line.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI

C2 = 0.25  # (c dt / dx)^2, stable


def step(comm: MPI.Intracomm, old: np.ndarray, u: np.ndarray, new: np.ndarray) -> None:
    rank, size = comm.Get_rank(), comm.Get_size()
    left, right = (rank - 1) % size, (rank + 1) % size
    comm.Sendrecv(u[1:2], dest=left, sendtag=1, recvbuf=u[-1:], source=right, recvtag=1)
    comm.Sendrecv(u[-2:-1], dest=right, sendtag=2, recvbuf=u[0:1], source=left, recvtag=2)
    lap = u[2:] - 2.0 * u[1:-1] + u[:-2]
    new[1:-1] = 2.0 * u[1:-1] - old[1:-1] + C2 * lap


def energy(comm: MPI.Intracomm, u: np.ndarray) -> float:
    inner = u[1:-1]
    local = np.array([np.dot(inner, inner)])
    total = np.empty(1)
    comm.Allreduce(local, total, op=MPI.SUM)
    return float(total[0])


def run(comm: MPI.Intracomm, levels: list[np.ndarray], steps: int, every: int) -> float:
    old, u, new = levels
    total = 0.0
    for k in range(1, steps + 1):
        step(comm, old, u, new)
        old, u, new = u, new, old
        if k % every == 0:
            total = energy(comm, u)
    levels[:] = [old, u, new]
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1 << 16, help="points in all (N)")
    parser.add_argument("--steps", type=int, default=100, help="timed time steps")
    parser.add_argument("--every", type=int, default=10, help="steps between energy sums")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    local = args.n // size
    x = (rank * local + np.arange(-1, local + 1)) / args.n
    u = np.exp(-200.0 * (x - 0.5) ** 2)
    levels = [u.copy(), u.copy(), np.zeros_like(u)]
    run(comm, levels, 2 * args.every, args.every)  # warm-up
    comm.Barrier()
    start = MPI.Wtime()
    run(comm, levels, args.steps, args.every)
    seconds = MPI.Wtime() - start
    slowest = comm.reduce(seconds, op=MPI.MAX, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest}))


if __name__ == "__main__":
    main()
