"""The lean ring without SimPy: the same steps on a bare ``heapq`` event loop.

This is the ceiling for a discrete-event loop written in Python: the ring of
``lean_simpy_ring.py`` (same processes, same messages, same arithmetic, so the
same simulated time to the bit), with SimPy's ``Environment`` replaced by a
heap of ``(time, sequence, process)`` entries.  A process is a generator that
yields the delay until it wants to run again, or ``None`` to park until a
message wakes it.  It measures what an event loop of uml2perf's own could gain
over SimPy, not a floor uml2perf is held to.

It prints one JSON object: the simulated time, the number of events (heap
entries popped) and the seconds spent in the loop.
"""

from __future__ import annotations

import heapq
import time
from collections import deque
from collections.abc import Generator
from itertools import count

from ring_floor import ring_main


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
) -> tuple[float, int, float]:
    """Simulate the ring; return (simulated time, events, seconds in the event loop)."""
    heap: list[tuple[float, int, int]] = []
    seq = count()
    clock = [0.0]
    boxes: list[deque[float]] = [deque() for _ in range(procs)]
    parked = [False] * procs

    def process(pid: int) -> Generator[float | None, None, None]:
        right = (pid + 1) % procs
        out_box = boxes[right]
        in_box = boxes[pid]
        latency, beta = link(pid, right, ppn, intra, inter)
        for _ in range(rounds):
            yield work
            now = clock[0]
            arrival = now + latency + size * beta
            if parked[right]:
                parked[right] = False
                heapq.heappush(heap, (now + (arrival - now), next(seq), right))
            else:
                out_box.append(arrival)
            if in_box:
                arrival = in_box.popleft()
                if arrival > clock[0]:
                    yield arrival - clock[0]
            else:
                parked[pid] = True
                yield None

    gens = [process(pid) for pid in range(procs)]
    for pid in range(procs):
        heap.append((0.0, next(seq), pid))
    heapq.heapify(heap)
    events = 0
    pop, push = heapq.heappop, heapq.heappush
    start = time.perf_counter()
    while heap:
        now, _, pid = pop(heap)
        clock[0] = now
        events += 1
        try:
            delay = next(gens[pid])
        except StopIteration:
            continue
        if delay is not None:
            push(heap, (now + delay, next(seq), pid))
    return clock[0], events, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    return ring_main(run, __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
