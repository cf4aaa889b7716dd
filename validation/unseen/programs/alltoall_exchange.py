"""All-to-all exchange, as in a distributed transpose: every rank holds one block of doubles
for every rank and swaps them all with MPI_Alltoall, R rounds.  Prints the timed seconds on
rank 0."""

import argparse
import json
import time

import numpy as np
from mpi4py import MPI

parser = argparse.ArgumentParser()
parser.add_argument("--block", type=int, default=8192, help="doubles per block (one block per rank)")
parser.add_argument("--rounds", type=int, default=100)
parser.add_argument("--warmup", type=int, default=5)
args = parser.parse_args()

comm = MPI.COMM_WORLD
rank, nprocs = comm.Get_rank(), comm.Get_size()
outgoing = np.full(nprocs * args.block, float(rank))
incoming = np.empty(nprocs * args.block)


def exchange(rounds):
    for _ in range(rounds):
        comm.Alltoall(outgoing, incoming)


exchange(args.warmup)
comm.Barrier()
start = time.perf_counter()
exchange(args.rounds)
elapsed = time.perf_counter() - start
slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
assert incoming[-1] == nprocs - 1
if rank == 0:
    print(json.dumps({"seconds": slowest}))
