"""Parallel regions of threads in plain SimPy: the events uml2perf spends for them, and nothing else.

``procs`` processes, one per node of ``threads`` or more cores (so no thread waits for a core),
each run ``rounds`` OpenMP-style parallel regions: ``threads`` threads start, each computes
``work`` seconds, and the process goes on when all have finished.  Event for event what
uml2perf does for ``synthetic.threads_model`` placed one process per node:

* each thread is a SimPy process (its start is one event, its end another);
* a thread's compute is one ``timeout``;
* the process waits for its threads with one ``AllOf``.

It prints ``{"time", "events", "loop"}`` as one JSON line, like the ring floors.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import simpy
from simpy.events import AllOf


def run(procs: int, rounds: int, threads: int, work: float) -> tuple[float, int, float]:
    """Simulate; return (simulated time, events scheduled, seconds in the event loop)."""
    env = simpy.Environment()
    timeout = env.timeout

    def thread():
        yield timeout(work)

    def process():
        start = env.process
        for _ in range(rounds):
            yield AllOf(env, [start(thread()) for _ in range(threads)])

    for _ in range(procs):
        env.process(process())
    begin = time.perf_counter()
    env.run()
    loop_s = time.perf_counter() - begin
    return env.now, next(env._eid), loop_s  # SimPy numbers every scheduled event: the next id is the count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--procs", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--work", type=float, default=1e-3)
    args = parser.parse_args(argv)
    now, events, loop_s = run(args.procs, args.rounds, args.threads, args.work)
    json.dump({"time": now, "events": events, "loop": loop_s}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
