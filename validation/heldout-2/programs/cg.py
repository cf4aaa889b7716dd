"""Conjugate gradients on the 1-D Poisson matrix tridiag(-1, 2, -1), matrix-free, in row blocks.

The N unknowns are split into blocks of N / p. The search direction ``p`` is kept with one ghost
cell on each side; an iteration fills them with two ``Sendrecv`` of one double (to the right while
receiving from the left, then the other way; the end ranks talk to ``MPI.PROC_NULL``), applies the
matrix (``q = 2 p - p_left - p_right``), sums the local dot products ``p.q`` and ``r.r`` with an
``Allreduce`` each, and updates ``x``, ``r`` and ``p`` with numpy. The iteration count is fixed
(no convergence test: ``--iters`` is kept well below N, where the residual is still far from 0).

    mpiexec -n 2 python cg.py --n 262144 --iters 100

Prints ``{"seconds": ...}``: the slowest rank's time of the ``--iters`` iterations, after two
warm-up iterations and a barrier.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


class Solver:
    """One rank's vectors and neighbours; ``step`` is one CG iteration."""

    def __init__(self, comm: MPI.Comm, n: int) -> None:
        self.comm = comm
        rank, size = comm.Get_rank(), comm.Get_size()
        self.left = rank - 1 if rank > 0 else MPI.PROC_NULL
        self.right = rank + 1 if rank < size - 1 else MPI.PROC_NULL
        local = n // size
        rng = np.random.default_rng(rank)
        self.b = rng.random(local)
        self.x = np.zeros(local)
        self.r = self.b.copy()
        self.pp = np.zeros(local + 2)  # the direction with a ghost cell at each end
        self.pp[1:-1] = self.r
        self.send = np.zeros(1)
        self.rr = self.allsum(float(np.dot(self.r, self.r)))

    def allsum(self, value: float) -> float:
        self.send[0] = value
        total = np.zeros(1)
        self.comm.Allreduce(self.send, total, op=MPI.SUM)
        return float(total[0])

    def step(self) -> None:
        pp, comm = self.pp, self.comm
        comm.Sendrecv(pp[-2:-1], dest=self.right, sendtag=0, recvbuf=pp[0:1], source=self.left, recvtag=0)
        comm.Sendrecv(pp[1:2], dest=self.left, sendtag=1, recvbuf=pp[-1:], source=self.right, recvtag=1)
        p = pp[1:-1]
        q = 2.0 * p - pp[:-2] - pp[2:]
        alpha = self.rr / self.allsum(float(np.dot(p, q)))
        self.x += alpha * p
        self.r -= alpha * q
        rr = self.allsum(float(np.dot(self.r, self.r)))
        beta, self.rr = rr / self.rr, rr
        p *= beta
        p += self.r


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=4096, help="global unknowns N (divisible by the ranks)")
    parser.add_argument("--iters", type=int, default=100)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    solver = Solver(comm, args.n)
    for _ in range(2):  # warm-up
        solver.step()
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(args.iters):
        solver.step()
    seconds = MPI.Wtime() - start
    slowest = comm.reduce(seconds, op=MPI.MAX, root=0)
    if comm.Get_rank() == 0:
        print(json.dumps({"seconds": slowest, "residual": solver.rr}))


if __name__ == "__main__":
    main()
