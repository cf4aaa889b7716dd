"""Progress of long simulations, shown on a terminal without slowing the run.

A watcher thread samples the simulation clock and the number of processes
still running twice a second and rewrites one status line on standard error.
The event loop itself is untouched (no per-event check), so a run pays
nothing for it; short runs (under a second of wall time) print nothing.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

#: Wall-clock seconds before the first status line appears.
QUIET_SECONDS = 1.0
#: Seconds between two status lines.
INTERVAL = 0.5


def _status(now: float, running: int, total: int, elapsed: float) -> str:
    done = total - running
    return (
        f"simulating: t = {now:.6g} s simulated, {done}/{total} processes finished, {elapsed:.1f} s elapsed"
    )


@contextmanager
def progress_line(
    sample: Callable[[], tuple[float, int, int]], enabled: bool, stream: TextIO | None = None
) -> Iterator[None]:
    """Show a status line while the body runs, if ``enabled`` and it takes long.

    ``sample()`` returns (simulated time, processes still running, processes in all);
    it is called from the watcher thread and must only read plain attributes.
    """
    if not enabled:
        yield
        return
    out = stream if stream is not None else sys.stderr
    finished = threading.Event()
    shown = False
    start = time.perf_counter()

    def watch() -> None:
        nonlocal shown
        if finished.wait(QUIET_SECONDS):
            return
        while not finished.is_set():
            now, running, total = sample()
            out.write("\r" + _status(now, running, total, time.perf_counter() - start) + "\x1b[K")
            out.flush()
            shown = True
            finished.wait(INTERVAL)

    watcher = threading.Thread(target=watch, name="uml2perf-progress", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        finished.set()
        watcher.join()
        if shown:
            out.write("\r\x1b[K")
            out.flush()
