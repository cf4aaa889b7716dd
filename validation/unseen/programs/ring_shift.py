"""Ring shift: every rank passes a buffer to its right neighbour and takes one from its left,
R rounds of MPI_Sendrecv.  Prints the timed region's seconds (max over ranks) as JSON on rank 0."""

import argparse
import json
import time

import numpy as np
from mpi4py import MPI

parser = argparse.ArgumentParser()
parser.add_argument("--size", type=int, default=65536, help="bytes per message")
parser.add_argument("--rounds", type=int, default=100)
parser.add_argument("--warmup", type=int, default=10)
args = parser.parse_args()

comm = MPI.COMM_WORLD
rank, nprocs = comm.Get_rank(), comm.Get_size()
right, left = (rank + 1) % nprocs, (rank - 1) % nprocs
outgoing = np.full(args.size, rank % 256, dtype=np.uint8)
incoming = np.empty(args.size, dtype=np.uint8)


def shift(rounds):
    for _ in range(rounds):
        comm.Sendrecv(outgoing, dest=right, sendtag=7, recvbuf=incoming, source=left, recvtag=7)


shift(args.warmup)
comm.Barrier()
start = time.perf_counter()
shift(args.rounds)
elapsed = time.perf_counter() - start
slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
assert incoming[0] == left % 256
if rank == 0:
    print(json.dumps({"seconds": slowest}))
