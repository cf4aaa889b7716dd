"""A pipeline of ranks filtering a stream of signal blocks: receive from the left, filter, send right.

Rank 0 takes each of ``--blocks`` blocks of S doubles from its source, every other rank ``Recv``s
the block from rank - 1; each rank filters it in the frequency domain (``rfft``, multiply by the
rank's own transfer function, ``irfft``) and, unless it is the last rank, ``Send``s the result to
rank + 1 (blocking: above the eager limit a send waits for its receive). The last rank adds up the
first sample of every block it produces.

    mpiexec -n 4 python fft_pipeline.py --size 4096 --blocks 800

Prints ``{"seconds": ...}``: the slowest rank's time for the stream, after a warm-up of two blocks
through the whole pipeline and a barrier.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


def transfer_function(size: int, rank: int) -> np.ndarray:
    """A smooth low-pass response over the ``size // 2 + 1`` frequencies, different on every rank."""
    frequencies = np.arange(size // 2 + 1) / (size // 2 + 1)
    return 1.0 / (1.0 + (frequencies * (4 + rank)) ** 2)


def stage(block: np.ndarray, response: np.ndarray) -> np.ndarray:
    """One rank's filter: forward transform, multiply by the response, inverse transform."""
    spectrum = np.fft.rfft(block)
    spectrum *= response
    return np.fft.irfft(spectrum, n=block.size)


def stream(comm: MPI.Comm, blocks: int, source: np.ndarray, inbox: np.ndarray, response: np.ndarray) -> float:
    rank, size = comm.Get_rank(), comm.Get_size()
    total = 0.0
    for _ in range(blocks):
        if rank == 0:
            block = source
        else:
            comm.Recv(inbox, source=rank - 1, tag=7)
            block = inbox
        out = stage(block, response)
        if rank < size - 1:
            comm.Send(out, dest=rank + 1, tag=7)
        else:
            total += out[0]
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=4096, help="samples S per block")
    parser.add_argument("--blocks", type=int, default=100)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    rng = np.random.default_rng(rank)
    source = rng.standard_normal(args.size)
    inbox = np.empty(args.size)
    response = transfer_function(args.size, rank)

    stream(comm, 2, source, inbox, response)  # warm-up
    comm.Barrier()
    start = MPI.Wtime()
    total = stream(comm, args.blocks, source, inbox, response)
    seconds = MPI.Wtime() - start
    slowest = comm.reduce(seconds, op=MPI.MAX, root=0)
    totals = comm.reduce(total, op=MPI.SUM, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest, "check": totals}))


if __name__ == "__main__":
    main()
