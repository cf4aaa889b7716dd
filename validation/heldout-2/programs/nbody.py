"""Direct-sum N-body steps: every rank gathers all positions with ``Allgather``, then computes the
accelerations of its own N / p bodies from all N with numpy arrays of n x N pairs.

A step: ``Allgather`` of the local positions (n x 3 doubles from each rank), the pairwise
differences ``dx, dy, dz`` (n x N each), ``r2 = dx*dx + dy*dy + dz*dz + eps``, the inverse cube
``1 / (r2 * sqrt(r2))``, the three accelerations as row sums of ``d * inv``, then a leapfrog update
of the local velocities and positions.

    mpiexec -n 2 python nbody.py --n 512 --steps 60

Prints ``{"seconds": ...}``: the slowest rank's time of the ``--steps`` steps, after one warm-up
step and a barrier.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI

EPS = 1e-3
DT = 1e-4


def forces(pos: np.ndarray, everyone: np.ndarray) -> np.ndarray:
    """Accelerations (n x 3) of the bodies at ``pos`` from all bodies at ``everyone`` (unit masses)."""
    dx = everyone[None, :, 0] - pos[:, None, 0]
    dy = everyone[None, :, 1] - pos[:, None, 1]
    dz = everyone[None, :, 2] - pos[:, None, 2]
    r2 = dx * dx + dy * dy + dz * dz + EPS
    inv = 1.0 / (r2 * np.sqrt(r2))
    acc = np.empty_like(pos)
    acc[:, 0] = (dx * inv).sum(axis=1)
    acc[:, 1] = (dy * inv).sum(axis=1)
    acc[:, 2] = (dz * inv).sum(axis=1)
    return acc


def step(comm: MPI.Comm, pos: np.ndarray, vel: np.ndarray, everyone: np.ndarray) -> None:
    comm.Allgather(pos, everyone)
    vel += DT * forces(pos, everyone)
    pos += DT * vel


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=256, help="bodies N (divisible by the ranks)")
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    rng = np.random.default_rng(rank)
    pos = rng.random((args.n // size, 3))
    vel = np.zeros_like(pos)
    everyone = np.empty((args.n, 3))

    step(comm, pos, vel, everyone)  # warm-up
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(args.steps):
        step(comm, pos, vel, everyone)
    seconds = MPI.Wtime() - start
    slowest = comm.reduce(seconds, op=MPI.MAX, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest, "check": float(np.abs(vel).sum())}))


if __name__ == "__main__":
    main()
