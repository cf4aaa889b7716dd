"""Power iteration with the matrix split by columns: rank 0 broadcasts the vector, each rank
multiplies its column block by its part of the vector, the partial products are summed onto
rank 0 (Reduce), which normalises the result.  Prints the timed seconds on rank 0."""

import argparse
import json
import time

import numpy as np
from mpi4py import MPI

parser = argparse.ArgumentParser()
parser.add_argument("--n", type=int, default=2048, help="order of the matrix")
parser.add_argument("--iters", type=int, default=50)
parser.add_argument("--warmup", type=int, default=3)
args = parser.parse_args()

comm = MPI.COMM_WORLD
rank, nprocs = comm.Get_rank(), comm.Get_size()
n = args.n
cols = n // nprocs
lo = rank * cols
block = np.random.default_rng(rank).random((n, cols))  # columns lo .. lo + cols - 1
x = np.ones(n) / np.sqrt(n)
y = np.empty(n)


def iterate(count):
    global x
    for _ in range(count):
        comm.Bcast(x, root=0)
        partial = block @ x[lo : lo + cols]
        comm.Reduce(partial, y, op=MPI.SUM, root=0)
        if rank == 0:
            x = y / np.linalg.norm(y)


iterate(args.warmup)
comm.Barrier()
start = time.perf_counter()
iterate(args.iters)
elapsed = time.perf_counter() - start
slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
if rank == 0:
    print(json.dumps({"seconds": slowest}))
