"""An ensemble forecast: Lorenz-96 members stepped with RK4, the ensemble mean gathered now and then.

Each rank steps its share of ``--members`` independent Lorenz-96 systems of ``--vars`` variables
(one row each; ``dx_j/dt = (x_{j+1} - x_{j-2}) x_{j-1} - x_j + F`` on a ring, the ring closed
through a padded copy) with the classical fourth-order Runge-Kutta scheme.  Every ``--every``
steps it forms the mean of its members, and ``MPI_Allgather`` gives every rank all ranks' means,
of which it takes the ensemble mean.  Prints the slowest rank's seconds for ``--steps`` steps.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from mpi4py import MPI

FORCING = 8.0
DT = 0.005


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--members", type=int, default=256, help="ensemble members in all (split over the ranks)"
    )
    parser.add_argument("--vars", type=int, default=40, help="variables of one member")
    parser.add_argument("--steps", type=int, default=200, help="timed time steps")
    parser.add_argument("--every", type=int, default=10, help="steps between two ensemble means")
    return parser.parse_args()


def tendency(x: np.ndarray) -> np.ndarray:
    """dx/dt of every member (rows), the ring closed through two columns before and one after."""
    padded = np.empty((x.shape[0], x.shape[1] + 3))
    padded[:, 2:-1] = x
    padded[:, :2] = x[:, -2:]
    padded[:, -1] = x[:, 0]
    return (padded[:, 3:] - padded[:, :-3]) * padded[:, 1:-2] - x + FORCING


def rk4_step(x: np.ndarray) -> np.ndarray:
    """One classical Runge-Kutta step of every member."""
    k1 = tendency(x)
    k2 = tendency(x + 0.5 * DT * k1)
    k3 = tendency(x + 0.5 * DT * k2)
    k4 = tendency(x + DT * k3)
    return x + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def forecast(comm: MPI.Comm, x: np.ndarray, steps: int, every: int, means: np.ndarray) -> np.ndarray:
    """``steps`` steps, with the ensemble mean every ``every`` steps; the members at the end."""
    for step in range(1, steps + 1):
        x = rk4_step(x)
        if step % every == 0:
            mine = x.mean(axis=0)
            comm.Allgather(mine, means)
            means.mean(axis=0)
    return x


def main() -> None:
    args = parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    mine = args.members // size
    x = FORCING + np.random.default_rng(41 + rank).standard_normal((mine, args.vars))
    means = np.empty((size, args.vars))

    x = forecast(comm, x, args.every, args.every, means)  # warm-up: one period, untimed
    comm.Barrier()
    started = MPI.Wtime()
    x = forecast(comm, x, args.steps, args.every, means)
    elapsed = MPI.Wtime() - started
    slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest}))


if __name__ == "__main__":
    main()
