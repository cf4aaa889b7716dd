"""A relaxation loop that checks convergence now and then: every iteration updates the local
vector in place (x = 0.5 x + y, two numpy passes with out=x), and every EVERY iterations the
ranks sum the local squared norms with an Allreduce.  Prints the timed seconds on rank 0."""

import argparse
import json
import time

import numpy as np
from mpi4py import MPI

parser = argparse.ArgumentParser()
parser.add_argument("--n", type=int, default=1 << 18, help="elements per rank")
parser.add_argument("--iters", type=int, default=200)
parser.add_argument("--every", type=int, default=10, help="iterations between norm checks")
parser.add_argument("--warmup", type=int, default=10)
args = parser.parse_args()

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
x = np.random.default_rng(rank).random(args.n)
y = np.full(args.n, 0.5)


def relax(iterations):
    norm = 0.0
    for i in range(iterations):
        np.multiply(x, 0.5, out=x)
        np.add(x, y, out=x)
        if (i + 1) % args.every == 0:
            local = float(x @ x)
            norm = comm.allreduce(local, op=MPI.SUM)
    return norm


relax(args.warmup)
comm.Barrier()
start = time.perf_counter()
relax(args.iters)
elapsed = time.perf_counter() - start
slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
if rank == 0:
    print(json.dumps({"seconds": slowest}))
