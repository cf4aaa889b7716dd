"""A pipeline of image filters: frames pass from rank to rank, each rank applying its share of passes.

A chain of ``--passes`` tone-mapping passes (``frame = sqrt(0.9 * frame + 0.1)``, then the frame
divided by its maximum) is split over the ranks in order: rank k applies ``passes / ranks`` of them
to every frame and sends the frame on to rank k + 1 (``MPI_Send`` / ``MPI_Recv`` of the whole
``--rows`` x ``--cols`` frame); rank 0 starts each frame from a copy of the source image and the
last rank adds the finished frame into an accumulator.  ``--frames`` frames stream through the
pipeline, so the stages work on different frames at once once it has filled.  Prints the
slowest rank's seconds.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=512, help="rows of a frame")
    parser.add_argument("--cols", type=int, default=512, help="columns of a frame")
    parser.add_argument("--passes", type=int, default=8, help="filter passes in all (split over the ranks)")
    parser.add_argument("--frames", type=int, default=20, help="frames through the pipeline (timed)")
    return parser.parse_args()


def tone_map(frame: np.ndarray, passes: int) -> np.ndarray:
    """``passes`` passes of the filter: a square-root tone curve, then normalised to a maximum of 1."""
    for _ in range(passes):
        frame = np.sqrt(frame * 0.9 + 0.1)
        frame /= frame.max()
    return frame


def stream(
    comm: MPI.Comm, frames: int, passes: int, source: np.ndarray, inbox: np.ndarray, total: np.ndarray
) -> None:
    """Every frame through this rank's stage."""
    rank, size = comm.Get_rank(), comm.Get_size()
    for _ in range(frames):
        if rank == 0:
            frame = source.copy()
        else:
            comm.Recv(inbox, source=rank - 1, tag=7)
            frame = inbox
        frame = tone_map(frame, passes)
        if rank < size - 1:
            comm.Send(frame, dest=rank + 1, tag=7)
        else:
            total += frame


def main() -> None:
    args = parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if args.passes % size:
        raise SystemExit(f"--passes {args.passes} must be a multiple of the ranks ({size})")
    mine = args.passes // size
    source = np.random.default_rng(5).random((args.rows, args.cols))
    inbox = np.empty((args.rows, args.cols))
    total = np.zeros((args.rows, args.cols))

    stream(comm, 1, mine, source, inbox, total)  # warm-up: one frame, untimed
    comm.Barrier()
    started = MPI.Wtime()
    stream(comm, args.frames, mine, source, inbox, total)
    elapsed = MPI.Wtime() - started
    slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest}))


if __name__ == "__main__":
    main()
