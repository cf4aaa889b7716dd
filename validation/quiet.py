"""Is the machine quiet enough to measure on?

The one-minute load average is no quiet check for a suite that loads the
machine itself: it counts the suite's own programs for a minute after they
ran.  The check here looks at what *others* do: the suite pauses, and the
share of the machine's CPU time spent outside the idle and I/O-wait states
during the pause (``/proc/stat``) is the load other programs put on it.  A
pause before every measured run catches a neighbour that starts mid-suite.

Off Linux (no ``/proc/stat``) the load average per core is the fallback.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

PROC_STAT = Path("/proc/stat")


def _cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs together, or None off Linux."""
    try:
        first = PROC_STAT.read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    values = [int(v) for v in first[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    total = sum(values[:8])  # user nice system idle iowait irq softirq steal (guest is inside user)
    return total - idle, total


@dataclass(frozen=True)
class Probe:
    """One quiet check: the busy share of the machine while the suite paused."""

    busy: float  # 0..1 of all cores
    load_average: float  # one-minute, for the record

    def describe(self) -> str:
        return f"others busy {self.busy * 100:.0f}% of the CPUs (load average {self.load_average:.2f})"


def probe(pause: float = 0.2) -> Probe:
    """Pause ``pause`` seconds and measure how busy the machine was meanwhile."""
    before = _cpu_times()
    time.sleep(pause)
    after = _cpu_times()
    load = os.getloadavg()[0]
    if before is None or after is None or after[1] == before[1]:
        return Probe(min(1.0, load / (os.cpu_count() or 1)), load)
    return Probe((after[0] - before[0]) / (after[1] - before[1]), load)
