"""Master-worker (mpi4py): R rounds of scatter M doubles to each rank, sort, gather to rank 0.

Rank 0 holds the work (``ranks x M`` doubles), scatters one block to every rank (itself
included), every rank sorts its block (the result kept), and rank 0 gathers the sorted blocks.
Rank 0 prints the seconds of the slowest rank.
"""

import sys
import time

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
m, rounds = int(sys.argv[1]), int(sys.argv[2])
p, me = comm.size, comm.rank
work = np.random.default_rng(0).random(p * m) if me == 0 else None
results = np.empty(p * m) if me == 0 else None
mine = np.empty(m)


def round_() -> None:
    comm.Scatter(work, mine, root=0)
    done = np.sort(mine)
    comm.Gather(done, results, root=0)


round_()  # connection set-up is not part of the loop
comm.Barrier()
start = time.perf_counter()
for _ in range(rounds):
    round_()
elapsed = comm.reduce(time.perf_counter() - start, op=MPI.MAX)
if me == 0:
    print(elapsed)
