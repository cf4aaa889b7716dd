"""The reference ring in plain SimPy: the floor uml2perf's simulator is measured against.

``procs`` processes each spend ``work`` seconds, send ``size`` bytes to the
right neighbour and receive from the left one, ``rounds`` times.  This is the
cheapest faithful SimPy program for that: one ``timeout`` per compute step and
one ``Store`` per process as its mailbox; a message carries its arrival time
(send time + latency + size / bandwidth of the link class between the two
nodes), and the receiver waits for it only when it has not arrived yet, so a
send costs no extra event.

It prints one JSON object: the simulated time, the number of SimPy events and the
seconds spent in SimPy's event loop.
"""

from __future__ import annotations

import time

import simpy
from ring_floor import ring_main


def link_time(
    src: int, dst: int, ppn: int, size: float, intra: tuple[float, float], inter: tuple[float, float]
) -> float:
    """Transfer time of one message under block placement (``ppn`` processes per node)."""
    latency, bandwidth = intra if src // ppn == dst // ppn else inter
    return latency + size / bandwidth


def run(
    procs: int,
    rounds: int,
    work: float,
    size: float,
    ppn: int,
    intra: tuple[float, float],
    inter: tuple[float, float],
) -> tuple[float, int, float]:
    """Simulate the ring; return (simulated time, events processed, seconds in the event loop)."""
    env = simpy.Environment()
    boxes = [simpy.Store(env) for _ in range(procs)]

    def process(pid: int):
        right = (pid + 1) % procs
        out_box = boxes[right]
        in_box = boxes[pid]
        transfer = link_time(pid, right, ppn, size, intra, inter)
        timeout = env.timeout
        for _ in range(rounds):
            yield timeout(work)
            out_box.put(env.now + transfer)
            arrival = yield in_box.get()
            if arrival > env.now:
                yield timeout(arrival - env.now)

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
