"""The command line every ring floor shares: the same options, the same JSON on standard output.

``lean_simpy_ring.py``, ``bare_simpy_ring.py`` and ``heapq_ring.py`` each run the ring their own way
through a ``run(procs, rounds, work, size, ppn, intra, inter)`` function returning the simulated
time, the number of events and the event loop's seconds; ``benchmarks/run.py`` reads what they print.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

#: ``run(procs, rounds, work, size, ppn, intra, inter) -> (simulated time, events, loop seconds)``
RingRun = Callable[
    [int, int, float, float, int, tuple[float, float], tuple[float, float]], tuple[float, int, float]
]


def ring_main(run: RingRun, description: str | None, argv: list[str] | None = None) -> int:
    """Parse the ring's options, run it, print ``{"time", "events", "loop"}`` as one JSON line."""
    parser = argparse.ArgumentParser(description=(description or "").splitlines()[0])
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
    parser.add_argument(
        "--local", type=float, default=0.0, help="local CPU seconds of each send and receive (lean ring only)"
    )
    args = parser.parse_args(argv)
    extra = {"local": args.local} if args.local else {}
    now, events, loop_s = run(
        args.procs, args.rounds, args.work, args.size, args.ppn, tuple(args.intra), tuple(args.inter), **extra
    )
    json.dump({"time": now, "events": events, "loop": loop_s}, sys.stdout)
    sys.stdout.write("\n")
    return 0
