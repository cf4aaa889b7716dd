"""Sinkhorn balancing of a positive matrix on a 2-D grid of ranks, with row and column communicators.

The ``--n`` x ``--n`` matrix is split into tiles over a grid of 2 rows of ranks and ``ranks / 2``
columns (``MPI_Comm_split`` gives each rank its row's and its column's communicator).  Every
iteration scales the rows and then the columns to sum to one: the tile times the column scaling
(a matrix-vector product), summed over the rank's grid row (``MPI_Allreduce`` on the row
communicator), inverted into the row scaling; the row scaling times the tile (a vector-matrix
product), summed over the grid column, checked against the column scaling (its largest deviation
from 1, ``MPI_Allreduce`` with ``MPI_MAX`` over all ranks) and inverted into the column scaling.
Prints the slowest rank's seconds for ``--iters`` iterations.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1024, help="order of the matrix (split over the grid)")
    parser.add_argument("--iters", type=int, default=100, help="timed iterations")
    return parser.parse_args()


def sweep(
    a: np.ndarray,
    u: np.ndarray,
    v: np.ndarray,
    rows: MPI.Comm,
    columns: MPI.Comm,
    world: MPI.Comm,
    deviation: np.ndarray,
) -> None:
    """One Sinkhorn iteration: new row scaling ``u``, then new column scaling ``v``, in place."""
    t = a @ v
    rows.Allreduce(MPI.IN_PLACE, t, op=MPI.SUM)
    np.divide(1.0, t, out=u)
    s = u @ a
    columns.Allreduce(MPI.IN_PLACE, s, op=MPI.SUM)
    local = np.abs(s * v - 1.0).max()
    world.Allreduce(np.array([local]), deviation, op=MPI.MAX)
    np.divide(1.0, s, out=v)


def main() -> None:
    args = parse_args()
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    if size % 2 or args.n % size:
        raise SystemExit(f"needs an even number of ranks that divides --n (got {size} ranks, n = {args.n})")
    grid_columns = size // 2
    row, column = divmod(rank, grid_columns)
    rows = world.Split(color=row, key=column)
    columns = world.Split(color=column, key=row)
    height, width = args.n // 2, args.n // grid_columns
    a = np.random.default_rng(29 + rank).random((height, width)) + 0.5
    u = np.ones(height)
    v = np.ones(width)
    deviation = np.zeros(1)

    sweep(a, u, v, rows, columns, world, deviation)  # warm-up, untimed
    world.Barrier()
    started = MPI.Wtime()
    for _ in range(args.iters):
        sweep(a, u, v, rows, columns, world, deviation)
    elapsed = MPI.Wtime() - started
    slowest = world.reduce(elapsed, op=MPI.MAX, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest}))


if __name__ == "__main__":
    main()
