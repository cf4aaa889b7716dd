"""The one progress display: a status line on standard error that long work rewrites in place.

Two kinds of work report through it:

* a simulation (:func:`progress_line`): a watcher thread samples the simulation
  clock and the number of processes still running twice a second.  The event
  loop itself is untouched (no per-event check), so a run pays nothing for it;
  short runs (under a second of wall time) print nothing;
* a counted batch, such as the points of a sweep (:class:`ProgressBar`): the
  caller says when items are done; the line shows a bar, the elapsed time and
  the estimated time left.

Hand-written because it is a few lines: a dependency would cost every install
more than it gives here.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

#: Wall-clock seconds before the first status line of a simulation appears.
QUIET_SECONDS = 1.0
#: Seconds between two status lines of a simulation.
INTERVAL = 0.5
#: Seconds between two redraws of a counted bar (the last item always redraws).
REDRAW_SECONDS = 0.1
#: Characters of the bar of a counted batch.
BAR_WIDTH = 30

_CLEAR_TO_END = "\x1b[K"


def _draw(stream: TextIO, text: str) -> None:
    """Rewrite the status line with ``text``."""
    stream.write("\r" + text + _CLEAR_TO_END)
    stream.flush()


def _clock(seconds: float) -> str:
    """``m:ss`` (or ``h:mm:ss`` past an hour) of a duration."""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


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
            _draw(out, _status(now, running, total, time.perf_counter() - start))
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
            _draw(out, "")


class ProgressBar:
    """A counted batch on one line: ``sweep 12/40 [#########.....]  30%  0:05, about 0:12 left``.

    ``advance()`` after each item; ``close()`` ends the line.  Redraws at most
    every :data:`REDRAW_SECONDS`; the time left is the mean time per item so
    far times the items left.  Disabled (or with nothing to count) it prints nothing.
    """

    def __init__(self, total: int, stream: TextIO, enabled: bool, label: str = "sweep") -> None:
        self.total = total
        self.stream = stream
        self.enabled = enabled and total > 0
        self.label = label
        self.done = 0
        self.start = time.monotonic()
        self._last = 0.0

    def line(self, now: float) -> str:
        """The status line after ``self.done`` items at monotonic time ``now``."""
        filled = int(BAR_WIDTH * self.done / self.total)
        elapsed = now - self.start
        text = (
            f"{self.label} {self.done:>{len(str(self.total))}}/{self.total} "
            f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {100 * self.done // self.total:3d}% "
            f"{_clock(elapsed)}"
        )
        if 0 < self.done < self.total:
            text += f", about {_clock(elapsed / self.done * (self.total - self.done))} left"
        return text

    def advance(self, count: int = 1) -> None:
        """Count ``count`` more items done and redraw when it is time."""
        self.done += count
        now = time.monotonic()
        if self.enabled and (now - self._last >= REDRAW_SECONDS or self.done >= self.total):
            self._last = now
            _draw(self.stream, self.line(now))

    def close(self) -> None:
        """End the line (the last state stays visible)."""
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


__all__ = ["INTERVAL", "QUIET_SECONDS", "ProgressBar", "progress_line"]
