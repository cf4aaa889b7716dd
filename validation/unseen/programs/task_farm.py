"""A task farm: rank 0 hands out task numbers one at a time to whichever worker asks next
(the worker's result message is its request for more), the workers compute a small numpy
kernel per task and send back one double.  When the tasks run out every worker gets -1.
Prints the timed seconds (max over ranks) on rank 0.  Needs at least 2 ranks."""

import argparse
import json
import time

import numpy as np

TASK, RESULT = 1, 2


def task(number, base):
    """One task: the sum of square roots of the base values shifted by the task's number."""
    return float(np.sqrt(base + number).sum())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--work", type=int, default=10_000, help="elements each task touches")
    parser.add_argument("--warmup", type=int, default=20, help="tasks of the untimed warm-up farm")
    args = parser.parse_args()
    from mpi4py import MPI  # here, so the kernel can be imported and timed alone

    comm = MPI.COMM_WORLD
    rank, nprocs = comm.Get_rank(), comm.Get_size()
    base = np.arange(args.work, dtype=np.float64)
    order = np.empty(1, dtype=np.int64)
    answer = np.empty(1)

    def master(tasks):
        handed = 0
        for worker in range(1, nprocs):
            order[0] = handed if handed < tasks else -1
            handed += 1
            comm.Send(order, dest=worker, tag=TASK)
        total, status = 0.0, MPI.Status()
        for _ in range(tasks):
            comm.Recv(answer, source=MPI.ANY_SOURCE, tag=RESULT, status=status)
            total += answer[0]
            order[0] = handed if handed < tasks else -1
            handed += 1
            comm.Send(order, dest=status.Get_source(), tag=TASK)
        return total

    def worker():
        while True:
            comm.Recv(order, source=0, tag=TASK)
            if order[0] < 0:
                return
            answer[0] = task(int(order[0]), base)
            comm.Send(answer, dest=0, tag=RESULT)

    def farm(tasks):
        if rank == 0:
            master(tasks)
        else:
            worker()

    farm(args.warmup)
    comm.Barrier()
    start = time.perf_counter()
    farm(args.tasks)
    elapsed = time.perf_counter() - start
    slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
    if rank == 0:
        print(json.dumps({"seconds": slowest}))


if __name__ == "__main__":
    main()
