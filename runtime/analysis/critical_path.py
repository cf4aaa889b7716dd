"""The critical path of a simulated run: the chain of work that determines the predicted time.

Starting at the process that finishes last, the path walks its timeline
backwards.  Computation and transfers lie on the path; where the process was
blocked, the path leaves it for the process it waited for:

* a receive that waited jumps to the sender, at the time the message was sent;
* a rendezvous send that waited jumps to the receiver, at the time it came;
* a collective that waited jumps to the last process to arrive, at its arrival.

A container whose time passes on other threads of the process (a parallel
region, a pipeline, a task pool) is followed into the thread whose work ends
last inside it, and back out at its start; on a thread, a wait for a lock or a
pipeline item jumps to the thread of the same container whose work ended when
the wait did.  Waits with no one to blame stay on the path.  The result says how
much time each element contributes to the path on each process: speeding up an
element that is not on it changes nothing.

The walk reads the run's timeline of segments and messages (recorded when
the run keeps its timeline); it visits each segment at most once.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Any

from ..operations.registry import WAITS_FOR

__all__ = ["critical_path"]

_COMPUTE, _COMM, _WAIT, _COMPOSITE = 0, 1, 2, -1
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
    lanes: dict[tuple[int, int], list[tuple[float, float, int, int]]] = {}
    for pid, track, index, category, start, end in events:
        if end > start + _EPS * max(1.0, abs(end)):
            lanes.setdefault((pid, track), []).append((end, start, index, category))
    ends: dict[tuple[int, int], list[float]] = {}
    by_start: dict[int, list[tuple[float, int]]] = {}
    for lane, segments in lanes.items():
        segments.sort()
        ends[lane] = [segment[0] for segment in segments]
        if lane[1]:
            by_start.setdefault(lane[0], []).append((min(segment[1] for segment in segments), lane[1]))
    tracks = _Threads(by_start)
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
        """Processes whose main-thread work (not a wait) ended at ``time``: last arrivals at a collective."""
        if not ended_at:
            for (pid, track), segments in lanes.items():
                if track == 0:
                    for end, _start, _index, category in segments:
                        if category != _WAIT:
                            ended_at.setdefault(round(end, 12), []).append(pid)
        return ended_at.get(round(time, 12), [])

    contribution: dict[tuple[int, int], float] = {}
    last = max(range(len(finish)), key=lambda p: (finish[p], -p))
    lane = (last, 0)
    now = finish[last]
    floor = -math.inf
    frames: list[tuple[tuple[int, int], float]] = []  # (lane to return to, time the thread part began)
    visited: set[tuple[tuple[int, int], int]] = set()
    while True:
        segments = lanes.get(lane, [])
        position = -1
        if segments:
            # the last segment that ends by ``now`` (a container and its last part: the part)
            position = bisect.bisect_right(ends[lane], now + _EPS * max(1.0, abs(now))) - 1
        if position < 0 or segments[position][0] <= floor + _EPS * max(1.0, abs(floor)):
            if not frames:
                break
            lane, now = frames.pop()  # this thread's part is done: back to the thread that started it
            floor = frames[-1][1] if frames else -math.inf
            continue
        if (lane, position) in visited:
            break
        visited.add((lane, position))
        end, start, index, category = segments[position]
        start = max(start, floor)
        top = min(end, now)
        if category == _WAIT:
            other = _dependency(lane[0], index, kinds, start, end, received, posted, arrivals)
            if other is not None:  # another process: its main thread, from the top
                lane, now = (other[0], 0), other[1]
                frames.clear()
                floor = -math.inf
                continue
            thread = _thread_dependency(lane, end, floor, tracks, lanes, ends)
            if thread is not None:  # another thread of this process, inside the same container
                lane, now = thread, end
                continue
        if category == _COMPOSITE and top > start:
            inner = _busiest_thread(lane, start, top, tracks, lanes, ends)
            if inner is not None:
                frames.append((lane, start))
                lane, now, floor = inner, top, start
                continue
        if top > start:
            key = (index, lane[0])
            contribution[key] = contribution.get(key, 0.0) + (top - start)
        now = start
    out: list[dict[str, Any]] = [
        {"element": names[index], "process": process, "time": seconds}
        for (index, process), seconds in contribution.items()
    ]
    out.sort(key=_path_order)
    return out


class _Threads:
    """The thread tracks of each process by the time they start (a track is one thread of one region)."""

    def __init__(self, by_start: dict[int, list[tuple[float, int]]]) -> None:
        self.tracks: dict[int, list[tuple[float, int]]] = {pid: sorted(t) for pid, t in by_start.items()}
        self.starts = {pid: [first for first, _ in tracks] for pid, tracks in self.tracks.items()}

    def started(self, pid: int, low: float, high: float) -> list[int]:
        """Tracks of ``pid`` that start within ``[low, high]`` (with rounding slack)."""
        slack = _EPS * max(1.0, abs(low), abs(high))
        starts = self.starts.get(pid)
        if not starts:
            return []
        first = bisect.bisect_left(starts, low - slack)
        last = bisect.bisect_right(starts, high + slack)
        return [track for _, track in self.tracks[pid][first:last]]


def _busiest_thread(
    lane: tuple[int, int],
    start: float,
    top: float,
    tracks: _Threads,
    lanes: dict[tuple[int, int], list[tuple[float, float, int, int]]],
    ends: dict[tuple[int, int], list[float]],
) -> tuple[int, int] | None:
    """The other thread of the process whose work inside ``(start, top]`` ends last (None: no thread ran).

    A container whose time passes on other threads (a parallel region, a pipeline, a task pool)
    lasts as long as its last thread: the path continues on that thread.
    """
    best: tuple[float, int] | None = None
    slack = _EPS * max(1.0, abs(top))
    for track in tracks.started(lane[0], start, top):
        if track == lane[1]:
            continue
        segments = lanes[(lane[0], track)]
        position = bisect.bisect_right(ends[(lane[0], track)], top + slack) - 1
        if position < 0:
            continue
        end = segments[position][0]
        if end <= start + slack:
            continue
        if best is None or end > best[0] + slack:
            best = (end, track)
    return None if best is None else (lane[0], best[1])


def _thread_dependency(
    lane: tuple[int, int],
    end: float,
    floor: float,
    tracks: _Threads,
    lanes: dict[tuple[int, int], list[tuple[float, float, int, int]]],
    ends: dict[tuple[int, int], list[float]],
) -> tuple[int, int] | None:
    """The other thread of the process, started inside the same container (after ``floor``), whose
    work ended when a wait did (a lock freed, an item passed on)."""
    slack = _EPS * max(1.0, abs(end))
    low = floor if math.isfinite(floor) else -math.inf
    for track in tracks.started(lane[0], low, end):
        if track == lane[1]:
            continue
        key = (lane[0], track)
        position = bisect.bisect_right(ends[key], end + slack) - 1
        while position >= 0 and ends[key][position] >= end - slack:
            if lanes[key][position][3] in (_COMPUTE, _COMM):
                return lane[0], track
            position -= 1
    return None


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
