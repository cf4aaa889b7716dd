"""1-D Jacobi relaxation of a rod split into blocks: each sweep posts the two ghost-cell
exchanges with Irecv/Isend, waits for them (Waitall), then updates the interior with numpy.
The rod's ends are held at 1 and 0.  Prints the timed seconds (max over ranks) on rank 0."""

import argparse
import json
import time

import numpy as np
from mpi4py import MPI

parser = argparse.ArgumentParser()
parser.add_argument("--n", type=int, default=1_000_000, help="points of the whole rod")
parser.add_argument("--iters", type=int, default=100)
parser.add_argument("--warmup", type=int, default=5)
args = parser.parse_args()

comm = MPI.COMM_WORLD
rank, nprocs = comm.Get_rank(), comm.Get_size()
m = args.n // nprocs  # points of this block; u[0] and u[m + 1] are ghost cells
u = np.zeros(m + 2)
unew = np.zeros(m + 2)
if rank == 0:
    u[0] = unew[0] = 1.0
left = rank - 1 if rank > 0 else None
right = rank + 1 if rank < nprocs - 1 else None


def sweeps(count):
    global u, unew
    for _ in range(count):
        requests = []
        if left is not None:
            requests.append(comm.Irecv(u[0:1], source=left, tag=1))
            requests.append(comm.Isend(u[1:2], dest=left, tag=2))
        if right is not None:
            requests.append(comm.Irecv(u[m + 1 : m + 2], source=right, tag=2))
            requests.append(comm.Isend(u[m : m + 1], dest=right, tag=1))
        MPI.Request.Waitall(requests)
        unew[1:-1] = 0.5 * (u[:-2] + u[2:])
        u, unew = unew, u


sweeps(args.warmup)
comm.Barrier()
start = time.perf_counter()
sweeps(args.iters)
elapsed = time.perf_counter() - start
slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
if rank == 0:
    print(json.dumps({"seconds": slowest}))
