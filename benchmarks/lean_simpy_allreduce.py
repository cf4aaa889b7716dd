"""An all-reduce loop in plain SimPy: the events uml2perf spends for it, and nothing else.

``procs`` processes each compute ``work`` seconds and then meet in an all-reduce, ``rounds``
times.  When the last process arrives, every process finishes the all-reduce at its own offset
after that moment (the algorithm's cost, one number per rank): ``--offsets FILE`` gives them as
a JSON list, computed once by the caller with uml2perf's collective model for the machine
(``shapes.py`` does this), because what is measured here is the event loop, not the cost model.

Event for event what uml2perf does:

* a compute step is one ``timeout``;
* a process that arrives before the last parks on one plain event;
* the last process schedules every parked event at its rank's offset and waits for its own
  offset with one ``timeout``.

It prints ``{"time", "events", "loop"}`` as one JSON line, like the ring floors.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import simpy
from simpy.events import NORMAL


def run(procs: int, rounds: int, work: float, offsets: list[float]) -> tuple[float, int, float]:
    """Simulate the loop; return (simulated time, events scheduled, seconds in the event loop)."""
    env = simpy.Environment()
    waiting: list[simpy.Event | None] = [None] * procs
    arrived = [0]
    schedule = env.schedule

    def process(pid: int):
        timeout = env.timeout
        event = env.event
        for _ in range(rounds):
            yield timeout(work)
            arrived[0] += 1
            if arrived[0] < procs:
                waiting[pid] = ev = event()
                yield ev
                continue
            arrived[0] = 0
            for rank, parked in enumerate(waiting):
                if parked is not None:
                    waiting[rank] = None
                    parked._ok = True  # what succeed() sets, but fired at the rank's offset
                    parked._value = None
                    schedule(parked, NORMAL, offsets[rank])
            if offsets[pid] > 0.0:
                yield timeout(offsets[pid])

    for pid in range(procs):
        env.process(process(pid))
    start = time.perf_counter()
    env.run()
    loop_s = time.perf_counter() - start
    return env.now, next(env._eid), loop_s  # SimPy numbers every scheduled event: the next id is the count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--procs", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--work", type=float, default=1e-3)
    parser.add_argument("--offsets", required=True, help="JSON list: each rank's finish offset in seconds")
    args = parser.parse_args(argv)
    with open(args.offsets, encoding="utf-8") as handle:
        offsets = [float(x) for x in json.load(handle)]
    if len(offsets) != args.procs:
        parser.error(f"{len(offsets)} offsets for {args.procs} processes")
    now, events, loop_s = run(args.procs, args.rounds, args.work, offsets)
    json.dump({"time": now, "events": events, "loop": loop_s}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
