"""Particles drifting on a periodic line, handed to the neighbouring rank when they leave its slab.

N particles on [0, 1), rank r owning the slab [r / nprocs, (r + 1) / nprocs); each particle has a
fixed velocity drawn uniformly from [-vmax, vmax], vmax = SPEED / 1e6 of the line per step (less
than a slab, so particles only ever go to a neighbour).  Every step: move (``x += v``), find the
particles that left to the left and to the right, pack them (position and velocity), exchange the
counts with both neighbours (two ``Sendrecv`` of one int64), then the particles themselves (two
``Sendrecv`` of 16 bytes per particle, into buffers sized by the counts), and append the arrivals
to the ones that stayed.  On average N * vmax / 4 particles leave a rank to each side per step.

    mpiexec -n 4 python particle_shift.py --n 1000000 --steps 10 --speed 20000
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI


def step(
    comm: MPI.Comm, x: np.ndarray, v: np.ndarray, lo: float, hi: float, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    pid, nprocs = comm.Get_rank(), comm.Get_size()
    left_rank, right_rank = (pid - 1) % nprocs, (pid + 1) % nprocs
    x += v
    left = x < lo
    right = x >= hi
    stay = ~(left | right)
    out_l = np.concatenate((x[left], v[left]))
    out_r = np.concatenate((x[right], v[right]))
    kl, kr = out_l.size // 2, out_r.size // 2
    out_l[:kl] %= 1.0  # positions wrap round the ends of the line
    out_r[:kr] %= 1.0
    counts[0], counts[1] = kl, kr
    # what I send left, my right neighbour sends to me; and the other way round
    comm.Sendrecv(counts[0:1], dest=left_rank, recvbuf=counts[2:3], source=right_rank)
    comm.Sendrecv(counts[1:2], dest=right_rank, recvbuf=counts[3:4], source=left_rank)
    from_r = np.empty(2 * int(counts[2]))
    from_l = np.empty(2 * int(counts[3]))
    comm.Sendrecv(out_l, dest=left_rank, recvbuf=from_r, source=right_rank)
    comm.Sendrecv(out_r, dest=right_rank, recvbuf=from_l, source=left_rank)
    ir, il = from_r.size // 2, from_l.size // 2
    x = np.concatenate((x[stay], from_r[:ir], from_l[:il]))
    v = np.concatenate((v[stay], from_r[ir:], from_l[il:]))
    return x, v


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--speed", type=int, default=20000)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    pid, nprocs = comm.Get_rank(), comm.Get_size()
    lo, hi = pid / nprocs, (pid + 1) / nprocs
    vmax = args.speed / 1e6
    rng = np.random.default_rng(17 + pid)
    n = args.n // nprocs
    x = lo + (hi - lo) * rng.random(n)
    v = vmax * (2 * rng.random(n) - 1)
    counts = np.zeros(4, dtype=np.int64)

    x, v = step(comm, x, v, lo, hi, counts)  # warm-up
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(args.steps):
        x, v = step(comm, x, v, lo, hi, counts)
    elapsed = MPI.Wtime() - start
    slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
    total = comm.reduce(x.size, op=MPI.SUM, root=0)
    if pid == 0:
        print(json.dumps({"seconds": slowest, "particles": total}))


if __name__ == "__main__":
    main()
