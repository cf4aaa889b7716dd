"""Scatter, evaluate, gather: rank 0 deals an array out in equal blocks (Scatter), every rank
evaluates a degree-8 polynomial on its block with Horner's rule in numpy, and rank 0 collects
the results (Gather).  Prints the timed seconds on rank 0."""

import argparse
import json
import time

import numpy as np

COEFFICIENTS = (0.5, -1.0, 0.25, 2.0, -0.75, 0.125, 1.5, -0.5, 0.05)  # c0 .. c8


def horner(x):
    y = np.full_like(x, COEFFICIENTS[-1])
    for c in COEFFICIENTS[-2::-1]:
        y *= x
        y += c
    return y


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1 << 20, help="elements of the whole array")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    from mpi4py import MPI  # here, so the kernel can be imported and timed alone

    comm = MPI.COMM_WORLD
    rank, nprocs = comm.Get_rank(), comm.Get_size()
    per_rank = args.n // nprocs
    data = np.linspace(-1.0, 1.0, per_rank * nprocs) if rank == 0 else None
    results = np.empty(per_rank * nprocs) if rank == 0 else None
    mine = np.empty(per_rank)

    def rounds(count):
        for _ in range(count):
            comm.Scatter(data, mine, root=0)
            values = horner(mine)
            comm.Gather(values, results, root=0)

    rounds(args.warmup)
    comm.Barrier()
    start = time.perf_counter()
    rounds(args.iters)
    elapsed = time.perf_counter() - start
    slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest}))


if __name__ == "__main__":
    main()
