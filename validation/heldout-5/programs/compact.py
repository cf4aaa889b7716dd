"""Parallel stream compaction: every rank keeps the values below a limit and learns where they go.

Each rank holds its share of ``--n`` values, uniform in [0, 1).  In every round it selects the
values below ``--percent`` / 100 (a comparison, a running sum of the mask for each kept value's
position, two selections by the mask), learns the offset of its block in the global output from
an exclusive prefix sum of the counts (``MPI_Exscan``) and the total from an ``MPI_Allreduce``,
and rank 0 collects the kept values and their global positions (``MPI_Gather`` of the counts,
then two ``MPI_Gatherv``).  Prints the slowest rank's seconds for ``--iters`` rounds.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1 << 20, help="values in all (split over the ranks)")
    parser.add_argument("--percent", type=int, default=25, help="share of the values kept, percent")
    parser.add_argument("--iters", type=int, default=20, help="timed rounds")
    return parser.parse_args()


def select(x: np.ndarray, limit: float) -> tuple[np.ndarray, np.ndarray]:
    """The values below ``limit`` and their positions (1-based) among this rank's kept values."""
    mask = x < limit
    position = np.cumsum(mask)
    kept = x[mask]
    where = position[mask]
    return kept, where


def compact_round(
    comm: MPI.Comm, x: np.ndarray, limit: float, out_values: np.ndarray, out_places: np.ndarray
) -> int:
    """One round: select, place in the global order, gather at rank 0; the total kept."""
    kept, where = select(x, limit)
    count = np.array([kept.size], dtype=np.int64)
    offset = np.zeros(1, dtype=np.int64)
    comm.Exscan(count, offset, op=MPI.SUM)
    if comm.Get_rank() == 0:
        offset[0] = 0  # Exscan leaves rank 0's result undefined
    total = np.zeros(1, dtype=np.int64)
    comm.Allreduce(count, total, op=MPI.SUM)
    where += offset[0] - 1
    counts = np.zeros(comm.Get_size(), dtype=np.int64) if comm.Get_rank() == 0 else None
    comm.Gather(count, counts, root=0)
    if comm.Get_rank() == 0:
        assert counts is not None
        displacements = np.concatenate(([0], np.cumsum(counts)[:-1]))
        comm.Gatherv(kept, [out_values, counts, displacements, MPI.DOUBLE], root=0)
        comm.Gatherv(where, [out_places, counts, displacements, MPI.INT64_T], root=0)
    else:
        comm.Gatherv(kept, None, root=0)
        comm.Gatherv(where, None, root=0)
    return int(total[0])


def main() -> None:
    args = parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    share = args.n // size + (1 if rank < args.n % size else 0)
    x = np.random.default_rng(11 + rank).random(share)
    limit = args.percent / 100.0
    # rank 0's output: room for every value (kept from one round to the next)
    out_values = np.zeros(args.n if rank == 0 else 1)
    out_places = np.zeros(args.n if rank == 0 else 1, dtype=np.int64)

    compact_round(comm, x, limit, out_values, out_places)  # warm-up, untimed
    comm.Barrier()
    started = MPI.Wtime()
    for _ in range(args.iters):
        compact_round(comm, x, limit, out_values, out_places)
    elapsed = MPI.Wtime() - started
    slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest}))


if __name__ == "__main__":
    main()
