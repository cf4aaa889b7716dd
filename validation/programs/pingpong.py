"""MPI ping-pong in pairs (mpi4py): ranks 2k and 2k+1 bounce S bytes R times; rank 0 prints seconds."""

import sys
import time

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
size, rounds = int(sys.argv[1]), int(sys.argv[2])
buf = np.zeros(max(size, 1), dtype=np.uint8)
peer = comm.rank ^ 1
even = comm.rank % 2 == 0


def bounce() -> None:
    if even:
        comm.Send([buf, size, MPI.BYTE], dest=peer)
        comm.Recv([buf, size, MPI.BYTE], source=peer)
    else:
        comm.Recv([buf, size, MPI.BYTE], source=peer)
        comm.Send([buf, size, MPI.BYTE], dest=peer)


bounce()  # connection set-up is not part of the loop
comm.Barrier()
start = time.perf_counter()
for _ in range(rounds):
    bounce()
elapsed = comm.reduce(time.perf_counter() - start, op=MPI.MAX)
if comm.rank == 0:
    print(elapsed)
