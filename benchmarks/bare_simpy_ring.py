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

import argparse
import json
import sys
import time

import simpy


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procs", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--work", type=float, default=1e-3)
    parser.add_argument("--size", type=float, default=1024)
    parser.add_argument("--ppn", type=int, default=4, help="processes per node (block placement)")
    parser.add_argument(
        "--intra", type=float, nargs=2, default=(1e-6, 1e10), metavar=("LATENCY", "BANDWIDTH")
    )
    parser.add_argument(
        "--inter", type=float, nargs=2, default=(5e-5, 1.25e7), metavar=("LATENCY", "BANDWIDTH")
    )
    args = parser.parse_args(argv)
    now, events, loop_s = run(
        args.procs, args.rounds, args.work, args.size, args.ppn, tuple(args.intra), tuple(args.inter)
    )
    json.dump({"time": now, "events": events, "loop": loop_s}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
