"""The critical path of a simulated run: the chain of work that determines the predicted time.

Starting at the process that finishes last, the path walks its timeline
backwards.  Computation and transfers lie on the path; where the process was
blocked, the path leaves it for the process it waited for:

* a receive that waited jumps to the sender, at the time the message was sent;
* a rendezvous send that waited jumps to the receiver, at the time it came;
* a collective that waited jumps to the last process to arrive, at its arrival.

Waits with no other process to blame (a lock, a pipeline stage) stay on the
path.  The result says how much time each element contributes to the path on
each process: speeding up an element that is not on it changes nothing.

The walk reads the run's timeline of segments and messages (recorded when
the run keeps its timeline); it visits each segment at most once.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from ..operations.registry import WAITS_FOR

__all__ = ["critical_path"]

_COMPUTE, _COMM, _WAIT = 0, 1, 2
_EPS = 1e-12


def critical_path(
    events: Sequence[tuple[int, int, int, int, float, float]],
    messages: Sequence[tuple[int, int, float, int, float, float]],
    finish: Sequence[float],
    names: Sequence[str],
    kinds: Sequence[str],
) -> list[dict[str, Any]]:
    """``[{"element", "process", "time"}]`` on the critical path, largest contribution first.

    ``events`` are ``(pid, track, element index, category, start, end)``,
    ``messages`` ``(src, dst, size, tag, send time, receive time)``, ``finish``
    the finish time of each process.
    """
    if not finish:
        return []
    by_pid: dict[int, list[tuple[float, float, int, int]]] = {}
    for pid, track, index, category, start, end in events:
        if track == 0 and end > start + _EPS * max(1.0, abs(end)):
            by_pid.setdefault(pid, []).append((end, start, index, category))
    ends: dict[int, list[float]] = {}
    for pid, segments in by_pid.items():
        segments.sort()
        ends[pid] = [segment[0] for segment in segments]
    received: dict[int, list[tuple[float, int, float]]] = {}
    posted: dict[int, list[tuple[float, int]]] = {}
    for src, dst, _size, _tag, sent, arrived in messages:
        received.setdefault(dst, []).append((arrived, src, sent))
        posted.setdefault(src, []).append((sent, dst))
    for values in received.values():
        values.sort()
    for outgoing in posted.values():
        outgoing.sort()
    ended_at: dict[float, list[int]] = {}

    def arrivals(time: float) -> list[int]:
        """Processes whose work (not a wait) ended at ``time``: the last arrivals at a collective."""
        if not ended_at:
            for pid, segments in by_pid.items():
                for end, _start, _index, category in segments:
                    if category != _WAIT:
                        ended_at.setdefault(round(end, 12), []).append(pid)
        return ended_at.get(round(time, 12), [])

    contribution: dict[tuple[int, int], float] = {}
    pid = max(range(len(finish)), key=lambda p: (finish[p], -p))
    now = finish[pid]
    visited: set[tuple[int, int]] = set()
    while True:
        found = by_pid.get(pid)
        if not found:
            break
        segments = found
        # the last segment that ends by ``now`` (segments of one main thread do not overlap)
        position = bisect.bisect_right(ends[pid], now + _EPS * max(1.0, abs(now))) - 1
        if position < 0 or (pid, position) in visited:
            break
        visited.add((pid, position))
        end, start, index, category = segments[position]
        top = min(end, now)
        if category == _WAIT:
            jump = _dependency(pid, index, kinds, start, end, received, posted, arrivals)
            if jump is not None:
                pid, now = jump
                continue
        if top > start:
            key = (index, pid)
            contribution[key] = contribution.get(key, 0.0) + (top - start)
        now = start
    out: list[dict[str, Any]] = [
        {"element": names[index], "process": process, "time": seconds}
        for (index, process), seconds in contribution.items()
    ]
    out.sort(key=_path_order)
    return out


def _dependency(
    pid: int,
    index: int,
    kinds: Sequence[str],
    start: float,
    end: float,
    received: dict[int, list[tuple[float, int, float]]],
    posted: dict[int, list[tuple[float, int]]],
    arrivals: Any,
) -> tuple[int, float] | None:
    """The (process, time) a blocked segment waited for, or None when it waited for no process."""
    kind = kinds[index]
    if kind in WAITS_FOR["sender"]:
        inbox = received.get(pid, [])
        position = bisect.bisect_left(inbox, (end - _EPS * max(1.0, abs(end)), -1, 0.0))
        if position < len(inbox):
            _arrived, src, sent = inbox[position]
            if src != pid:
                return src, sent
        return None
    if kind in WAITS_FOR["receiver"]:
        outgoing = posted.get(pid, [])
        position = bisect.bisect_left(outgoing, (start - _EPS * max(1.0, abs(start)), -1))
        if position < len(outgoing) and outgoing[position][1] != pid:
            return outgoing[position][1], end  # the receiver posted its receive at ``end``
        return None
    if kind in WAITS_FOR["last_arrival"]:
        for other in arrivals(end):
            if other != pid:
                return other, end
    return None


def _path_order(entry: dict[str, Any]) -> tuple[float, int, str]:
    """Largest contribution first, then by process and element."""
    return (-entry["time"], entry["process"], entry["element"])
