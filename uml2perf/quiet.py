"""Is the machine quiet enough to measure on?

The one-minute load average is no quiet check for a program that loads the machine
itself: it counts the program's own work for a minute after it ran.  The check here
looks at what *others* do: the caller pauses, and the share of the machine's CPU time
spent outside the idle and I/O-wait states during the pause (``/proc/stat``) is the load
other programs put on it.  Off Linux (no ``/proc/stat``) the load average per core is
the fallback.

:class:`QuietGate` applies the check to every launch of a measurement: a launch before
or after which others kept the CPUs busier than a threshold is run again (a bounded
number of times), and the gate keeps the count and the load seen for the record.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

PROC_STAT = Path("/proc/stat")

T = TypeVar("T")


def cpu_times() -> tuple[int, int] | None:
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
    """One quiet check: the busy share of the machine while the caller paused."""

    busy: float  # 0..1 of all cores
    load_average: float  # one-minute, for the record

    def describe(self) -> str:
        return f"others busy {self.busy * 100:.0f}% of the CPUs (load average {self.load_average:.2f})"


def _ticks_per_second() -> float:
    try:
        return float(os.sysconf("SC_CLK_TCK"))
    except (AttributeError, ValueError, OSError):
        return 100.0


def probe(pause: float = 0.2) -> Probe:
    """Pause ``pause`` seconds and measure how busy the machine was meanwhile.

    The caller's own CPU time during the pause (a thread of its own still finishing an import
    or a pool's shutdown) is taken out: it is not what others do.
    """
    before, own_before = cpu_times(), time.process_time()
    time.sleep(pause)
    after, own_after = cpu_times(), time.process_time()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    if before is None or after is None or after[1] == before[1]:
        return Probe(min(1.0, load / (os.cpu_count() or 1)), load)
    own = (own_after - own_before) * _ticks_per_second()
    busy = max(0.0, after[0] - before[0] - own)
    return Probe(min(1.0, busy / (after[1] - before[1])), load)


@dataclass
class QuietGate:
    """Runs measurement launches so that one disturbed by others is repeated.

    Before and after every launch the machine is probed (:func:`probe`; the launch's own
    processes have not started or have ended, so what is busy then is others).  A launch
    with others busier than ``max_busy`` on either side is run again, at most ``retries``
    times, after a ``wait`` that lets a short neighbour finish; when every try was disturbed
    the last one is kept and counted, so the machine file can say so.
    """

    max_busy: float = 0.10
    retries: int = 2
    pause: float = 0.2
    wait: float = 2.0
    #: the check (``pause -> Probe``); None: :func:`probe`, looked up when a launch runs
    reader: Callable[[float], Probe] | None = None
    #: where a repeated launch is announced (the command's progress lines)
    progress: Callable[[str], None] | None = None
    #: launches run (first tries), launches repeated, launches kept though disturbed
    launches: int = 0
    repeated: int = 0
    kept_disturbed: int = 0
    #: the highest busy share and load average seen by the probes
    busiest: float = 0.0
    highest_load: float = 0.0

    def run(self, launch: Callable[[], T]) -> T:
        """``launch()`` once the probes around it find the machine quiet (or the tries are used up)."""
        self.launches += 1
        read = self.reader or probe
        for attempt in range(self.retries + 1):
            before = read(self.pause)
            result = launch()
            after = read(self.pause)
            busy = max(before.busy, after.busy)
            self.busiest = max(self.busiest, busy)
            self.highest_load = max(self.highest_load, before.load_average, after.load_average)
            if busy <= self.max_busy:
                return result
            if attempt == self.retries:
                break
            self.repeated += 1
            if self.progress:
                worse = before if before.busy >= after.busy else after
                self.progress(f"  launch disturbed ({worse.describe()}): running it again")
            if self.wait > 0:
                time.sleep(self.wait)
        self.kept_disturbed += 1
        return result

    def describe(self) -> str:
        """The record for the machine file's comments."""
        text = (
            f"quiet check: {self.launches} launches, {self.repeated} repeated because others kept more "
            f"than {self.max_busy * 100:.0f}% of the CPUs busy around them (at most {self.retries} "
            f"repeats each); busiest {self.busiest * 100:.0f}%, load average up to {self.highest_load:.2f}"
        )
        if self.kept_disturbed:
            text += f"; {self.kept_disturbed} kept though still disturbed (calibrate again when quiet)"
        return text
