"""An MPI allreduce loop (mpi4py): R rounds of a sum over S bytes; rank 0 prints the seconds."""

import sys
import time

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
size, rounds = int(sys.argv[1]), int(sys.argv[2])
send = np.ones(max(size // 8, 1))
recv = np.empty_like(send)
comm.Allreduce(send, recv)  # connection set-up is not part of the loop
comm.Barrier()
start = time.perf_counter()
for _ in range(rounds):
    comm.Allreduce(send, recv)
elapsed = comm.reduce(time.perf_counter() - start, op=MPI.MAX)
if comm.rank == 0:
    print(elapsed)
