"""Bottom-up breadth-first search on a random graph, the frontier all-gathered every level.

V vertices, split in blocks over the ranks; each vertex has DEGREE = 8 neighbours drawn at random
(the rank keeps them for its own vertices, a V / nprocs x 8 index array).  For each of SOURCES
start vertices the search runs LEVELS levels: every rank looks at its own unvisited vertices and
marks those with a neighbour in the frontier (``expand``: a gather of the frontier through the
neighbour indices, ``any`` along each row), then the ranks all-gather the new frontier, one byte
per vertex (``Allgather`` of V / nprocs bytes).  A level after the graph is exhausted does the
same work with an empty frontier.

    mpiexec -n 4 python frontier_bfs.py --vertices 262144 --levels 6 --sources 4
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI

DEGREE = 8


def make_graph(vertices: int, nloc: int, pid: int) -> np.ndarray:
    """The neighbours of the rank's own vertices: nloc x DEGREE global vertex numbers."""
    return np.random.default_rng(5 + pid).integers(0, vertices, size=(nloc, DEGREE), dtype=np.int64)


def expand(frontier: np.ndarray, adj: np.ndarray, visited: np.ndarray) -> np.ndarray:
    """The own vertices reached in this level (bool), marked as visited."""
    hit = frontier[adj].any(axis=1)
    new = hit & ~visited
    visited |= new
    return new


def search(
    comm: MPI.Comm, adj: np.ndarray, source: int, levels: int, frontier: np.ndarray, visited: np.ndarray
) -> int:
    pid = comm.Get_rank()
    nloc = adj.shape[0]
    frontier[:] = False
    visited[:] = False
    frontier[source] = True
    if source // nloc == pid:
        visited[source - pid * nloc] = True
    for _ in range(levels):
        new = expand(frontier, adj, visited)
        comm.Allgather(new.view(np.uint8), frontier.view(np.uint8))
    return int(np.count_nonzero(visited))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vertices", type=int, default=262144)
    parser.add_argument("--levels", type=int, default=6)
    parser.add_argument("--sources", type=int, default=4)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    pid, nprocs = comm.Get_rank(), comm.Get_size()
    nloc = args.vertices // nprocs
    vertices = nloc * nprocs
    adj = make_graph(vertices, nloc, pid)
    frontier = np.zeros(vertices, dtype=bool)
    visited = np.zeros(nloc, dtype=bool)
    sources = [(s * 7919 + 1) % vertices for s in range(args.sources)]

    search(comm, adj, sources[0], args.levels, frontier, visited)  # warm-up
    comm.Barrier()
    start = MPI.Wtime()
    reached = 0
    for source in sources:
        reached = search(comm, adj, source, args.levels, frontier, visited)
    elapsed = MPI.Wtime() - start
    slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
    total = comm.reduce(reached, op=MPI.SUM, root=0)
    if pid == 0:
        print(json.dumps({"seconds": slowest, "reached": total}))


if __name__ == "__main__":
    main()
