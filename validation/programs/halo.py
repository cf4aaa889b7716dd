"""Ring halo exchange with a numpy stencil (mpi4py): STEPS steps on a ROWS x 1024 block per rank.

Each step sends the first interior row to the left neighbour and the last to the right one (a
ring: rank +- 1 modulo the ranks), receiving the halo rows from the other side, then does one
Jacobi step (stencil.py).  Even ranks send first, odd ranks receive first, so the blocking
calls pair up.  Rank 0 prints the seconds of the slowest rank.
"""

import sys
import time

from mpi4py import MPI
from stencil import block, step

comm = MPI.COMM_WORLD
rows, steps = int(sys.argv[1]), int(sys.argv[2])
p, me = comm.size, comm.rank
left, right = (me - 1) % p, (me + 1) % p
a, new, tmp = block(rows, seed=me)
even = me % 2 == 0


def exchange(a):
    if even:
        comm.Send(a[1], dest=left, tag=1)
        comm.Recv(a[-1], source=right, tag=1)
        comm.Send(a[-2], dest=right, tag=2)
        comm.Recv(a[0], source=left, tag=2)
    else:
        comm.Recv(a[-1], source=right, tag=1)
        comm.Send(a[1], dest=left, tag=1)
        comm.Recv(a[0], source=left, tag=2)
        comm.Send(a[-2], dest=right, tag=2)


exchange(a)  # connection set-up and first touch are not part of the loop
step(a, new, tmp)
comm.Barrier()
start = time.perf_counter()
for _ in range(steps):
    exchange(a)
    step(a, new, tmp)
    a, new = new, a
elapsed = comm.reduce(time.perf_counter() - start, op=MPI.MAX)
if me == 0:
    print(elapsed)
