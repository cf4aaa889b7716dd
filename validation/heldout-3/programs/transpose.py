"""A distributed transpose of an N x N matrix of doubles held in row blocks, REPS times.

Rank r holds rows r * N / p ... (r + 1) * N / p - 1 (an nb x N block, nb = N / p). A transpose
packs the block into p contiguous nb x nb tiles (one per destination), swaps them with Alltoall,
and unpacks the tiles it got, each transposed, into the rank's rows of the transposed matrix.
The result is transposed again in the next repetition (so the data goes back and forth).

Prints the slowest rank's seconds for the timed repetitions as one JSON line.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


def transpose(comm: MPI.Intracomm, block: np.ndarray, send: np.ndarray, recv: np.ndarray) -> np.ndarray:
    size = comm.Get_size()
    nb, n = block.shape
    # pack: tile s (columns s*nb .. s*nb+nb-1 of my rows) goes to rank s
    send[...] = block.reshape(nb, size, nb).transpose(1, 0, 2)
    comm.Alltoall(send, recv)
    # unpack: tile s holds rows of rank s, my columns; transposed, it is my rows, its columns
    return recv.transpose(2, 0, 1).reshape(nb, n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=512, help="matrix order (N, a multiple of the ranks)")
    parser.add_argument("--reps", type=int, default=10, help="timed transposes")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    assert args.n % size == 0, "the rows must split evenly over the ranks"
    nb = args.n // size
    first = np.arange(rank * nb * args.n, (rank + 1) * nb * args.n, dtype=np.float64).reshape(nb, args.n)
    send = np.empty((size, nb, nb))
    recv = np.empty((size, nb, nb))
    block = first.copy()
    for _ in range(2):  # warm-up (an even number: block is the original again)
        block = transpose(comm, block, send, recv)
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(args.reps):
        block = transpose(comm, block, send, recv)
    seconds = MPI.Wtime() - start
    if args.reps % 2 == 0:
        assert np.array_equal(block, first)
    slowest = comm.reduce(seconds, op=MPI.MAX, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest}))


if __name__ == "__main__":
    main()
