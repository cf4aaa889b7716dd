"""The lean ring in plain SimPy: the same events uml2perf spends, and nothing else.

``procs`` processes each spend ``work`` seconds, send ``size`` bytes to the
right neighbour and receive from the left one, ``rounds`` times, placed in
blocks of ``ppn`` processes per node.  A message carries its arrival time
(send time + latency + size / bandwidth of the link class between the two
nodes).

This is the floor of what uml2perf's simulator does for the same model, event
for event:

* a compute step is one ``timeout``;
* an eager send costs no event: it appends the arrival time to the
  receiver's mailbox, a ``deque``, or, when the receiver is already waiting,
  schedules the receiver's parked event to fire at the arrival time;
* a receive takes the oldest arrival time from its mailbox and waits with one
  ``timeout`` when the message is still on its way (no event when it has
  arrived); with an empty mailbox it parks on one plain event, which the
  sender schedules.

``benchmarks/bare_simpy_ring.py`` models the same ring with ``simpy.Store``
mailboxes, which spends about twice these events.  Both predict the same
simulated time (2.0676136 s for the default 64 processes x 2,000 rounds,
1 KiB messages, 16 nodes of 4 cores).

It prints one JSON object: the simulated time, the number of SimPy events and the
seconds spent in SimPy's event loop.
"""

from __future__ import annotations

import time
from collections import deque

import simpy
from ring_floor import ring_main
from simpy.events import NORMAL


def link(
    src: int, dst: int, ppn: int, intra: tuple[float, float], inter: tuple[float, float]
) -> tuple[float, float]:
    """Latency and inverse bandwidth (seconds per byte) of the link from ``src`` to ``dst``."""
    latency, bandwidth = intra if src // ppn == dst // ppn else inter
    return latency, 1.0 / bandwidth


def run(
    procs: int,
    rounds: int,
    work: float,
    size: float,
    ppn: int,
    intra: tuple[float, float],
    inter: tuple[float, float],
    local: float = 0.0,
) -> tuple[float, int, float]:
    """Simulate the ring; return (simulated time, events scheduled, seconds in the event loop).

    ``local`` > 0: the send and the receive each first spend that many seconds of CPU (one
    ``timeout`` each), as a send or receive with a ``cost`` tag does in uml2perf.
    """
    env = simpy.Environment()
    boxes: list[deque[float]] = [deque() for _ in range(procs)]
    parked: list[simpy.Event | None] = [None] * procs
    schedule = env.schedule

    def process(pid: int):
        right = (pid + 1) % procs
        out_box = boxes[right]
        in_box = boxes[pid]
        latency, beta = link(pid, right, ppn, intra, inter)
        timeout = env.timeout
        event = env.event
        for _ in range(rounds):
            yield timeout(work)
            if local:  # the send's local cost (a model without one never takes this branch)
                yield timeout(local)
            # eager send: no event, unless the receiver waits for exactly this message
            now = env.now
            arrival = now + latency + size * beta  # summed as uml2perf sums it: same bits
            waiter = parked[right]
            if waiter is None:
                out_box.append(arrival)
            else:
                parked[right] = None
                waiter._ok = True  # what succeed() sets, but fired at the arrival time
                waiter._value = None
                schedule(waiter, NORMAL, arrival - now)
            if local:  # the receive's local cost
                yield timeout(local)
            # receive: one timeout while the message travels, or one parked event
            if in_box:
                arrival = in_box.popleft()
                if arrival > env.now:
                    yield timeout(arrival - env.now)
            else:
                parked[pid] = ev = event()
                yield ev

    for pid in range(procs):
        env.process(process(pid))
    start = time.perf_counter()
    env.run()
    loop_s = time.perf_counter() - start
    return env.now, next(env._eid), loop_s  # SimPy numbers every scheduled event: the next id is the count


def main(argv: list[str] | None = None) -> int:
    return ring_main(run, __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
