"""Repeated nearest-value queries: each rank's best candidates, merged up a binomial tree.

Each rank holds its share of ``--n`` candidate values.  For every one of ``--queries`` queries
it posts nonblocking receives (``MPI_Irecv``) for the lists its children in a binomial tree will
send, scores its own candidates against the query and picks its ``BEST`` closest (a partial sort,
``np.argpartition``), waits for its children's lists (``MPI_Waitall``), merges them with its own,
and sends the merged list to its parent (``MPI_Send``); rank 0 broadcasts the final list
(``MPI_Bcast``).  A list is ``BEST`` scores followed by their candidates' global indices, as
doubles.  Prints the slowest rank's seconds.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI

#: the length of every list: the best candidates kept per query
BEST = 64


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1 << 20, help="candidates in all (split over the ranks)")
    parser.add_argument("--queries", type=int, default=20, help="timed queries")
    return parser.parse_args()


def tree(rank: int, size: int) -> tuple[int, list[int]]:
    """This rank's parent (-1 at the root) and children in the binomial tree rooted at 0."""
    children: list[int] = []
    step = 1
    while step < size:
        if rank & step:
            return rank - step, children
        if rank + step < size:
            children.append(rank + step)
        step <<= 1
    return -1, children


def local_best(x: np.ndarray, query: float, first: int) -> np.ndarray:
    """The ``BEST`` candidates of this rank closest to ``query``: their scores, then their indices."""
    scores = np.abs(x - query)
    index = np.argpartition(scores, BEST)[:BEST]
    return np.concatenate((scores[index], index + float(first)))


def merge(lists: list[np.ndarray]) -> np.ndarray:
    """The ``BEST`` best of several lists."""
    both = np.stack(lists)
    scores = both[:, :BEST].ravel()
    index = both[:, BEST:].ravel()
    keep = np.argpartition(scores, BEST)[:BEST]
    return np.concatenate((scores[keep], index[keep]))


def answer(
    comm: MPI.Comm, x: np.ndarray, query: float, first: int, parent: int, inboxes: list[np.ndarray]
) -> np.ndarray:
    """One query: the global ``BEST`` list, on every rank."""
    _, children = tree(comm.Get_rank(), comm.Get_size())
    requests = [
        comm.Irecv(inbox, source=child, tag=3) for inbox, child in zip(inboxes, children, strict=True)
    ]
    mine = local_best(x, query, first)
    MPI.Request.Waitall(requests)
    if children:
        mine = merge([mine, *inboxes])
    if parent >= 0:
        comm.Send(mine, dest=parent, tag=3)
    comm.Bcast(mine, root=0)
    return mine


def main() -> None:
    args = parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    share = args.n // size
    first = rank * share
    x = np.random.default_rng(17 + rank).random(share)
    parent, children = tree(rank, size)
    inboxes = [np.empty(2 * BEST) for _ in children]
    queries = np.random.default_rng(1).random(args.queries + 1)

    answer(comm, x, float(queries[-1]), first, parent, inboxes)  # warm-up, untimed
    comm.Barrier()
    started = MPI.Wtime()
    for query in queries[:-1]:
        answer(comm, x, float(query), first, parent, inboxes)
    elapsed = MPI.Wtime() - started
    slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest}))


if __name__ == "__main__":
    main()
