"""Conway's game of life on a R x C grid of uint8, rows in blocks, halo traffic behind the interior.

The rows wrap round (the first rank's upper neighbour is the last rank), the columns end in dead
cells.  Every generation a rank posts the receives of its two ghost rows and the sends of its first
and last row (``Irecv``/``Isend`` of C + 2 bytes each), updates its interior rows (those that need
no ghost row) while the rows travel, waits for all four requests, then updates its first and its
last row.  An update (``advance``) adds the eight neighbours in uint8 and applies the rule with
numpy comparisons.

    mpiexec -n 4 python life_overlap.py --rows 2048 --cols 2048 --gens 10
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


def advance(a: np.ndarray, new: np.ndarray, r0: int, r1: int) -> None:
    """Rows r0..r1 (inclusive, local numbering with ghost row 0) of the next generation."""
    s = a[r0 - 1 : r1, :-2] + a[r0 - 1 : r1, 1:-1]
    s += a[r0 - 1 : r1, 2:]
    s += a[r0 : r1 + 1, :-2]
    s += a[r0 : r1 + 1, 2:]
    s += a[r0 + 1 : r1 + 2, :-2]
    s += a[r0 + 1 : r1 + 2, 1:-1]
    s += a[r0 + 1 : r1 + 2, 2:]
    new[r0 : r1 + 1, 1:-1] = (s == 3) | (a[r0 : r1 + 1, 1:-1] & (s == 2))


def generation(comm: MPI.Comm, a: np.ndarray, new: np.ndarray) -> None:
    pid, nprocs = comm.Get_rank(), comm.Get_size()
    up, down = (pid - 1) % nprocs, (pid + 1) % nprocs
    nloc = a.shape[0] - 2
    requests = [
        comm.Irecv(a[0], source=up, tag=1),
        comm.Irecv(a[nloc + 1], source=down, tag=2),
        comm.Isend(a[1], dest=up, tag=2),
        comm.Isend(a[nloc], dest=down, tag=1),
    ]
    advance(a, new, 2, nloc - 1)
    MPI.Request.Waitall(requests)
    advance(a, new, 1, 1)
    advance(a, new, nloc, nloc)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--cols", type=int, default=2048)
    parser.add_argument("--gens", type=int, default=10)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    pid, nprocs = comm.Get_rank(), comm.Get_size()
    nloc = args.rows // nprocs
    rng = np.random.default_rng(23 + pid)
    a = np.zeros((nloc + 2, args.cols + 2), dtype=np.uint8)
    a[1:-1, 1:-1] = rng.random((nloc, args.cols)) < 0.3
    new = np.zeros_like(a)

    generation(comm, a, new)  # warm-up
    a, new = new, a
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(args.gens):
        generation(comm, a, new)
        a, new = new, a
    elapsed = MPI.Wtime() - start
    slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
    alive = comm.reduce(int(np.count_nonzero(a[1:-1, 1:-1])), op=MPI.SUM, root=0)
    if pid == 0:
        print(json.dumps({"seconds": slowest, "alive": alive}))


if __name__ == "__main__":
    main()
