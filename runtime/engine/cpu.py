"""The cores of a node, shared by the compute segments of its processes and threads.

Every node has ``cores_per_node`` cores shared by all runnable compute segments of its processes
and threads (processor sharing): with ``n`` runnable segments on ``c`` cores each progresses at
``min(1, c/n) × speed``.  While a node has a free core a segment is a plain SimPy timeout (the
direct route of ``Context.compute``, no bookkeeping beyond a counter).  The moment a segment
arrives at a node whose cores are all busy, the node switches to exact processor sharing: the
in-flight timeouts are converted (their remaining work joins the shared set, and their contexts
wait for the shared completion instead) and finishing times are recomputed on every arrival and
departure, with a virtual-time clock so each change costs O(log n).  When the last shared segment
finishes the node returns to the direct route.  A shared completion is never earlier than the
converted timeout, because sharing never runs faster than a dedicated core.
"""

from __future__ import annotations

import heapq
import itertools
import math
from typing import Any

import simpy
from simpy.events import Event, Timeout


class NodeCPU:
    """The cores of one node, shared by its runnable compute segments.

    ``busy`` counts running segments; ``shared`` is True while the node is in
    processor-sharing mode.  ``members`` holds the node's live contexts (in
    insertion order, for deterministic conversion).
    """

    __slots__ = (
        "env",
        "cores",
        "busy",
        "shared",
        "members",
        "heap",
        "vtime",
        "t_last",
        "rate",
        "version",
        "seq",
        "load",
        "free",
    )

    def __init__(self, env: simpy.Environment, cores: int, load: float = 0.0) -> None:
        self.env = env
        self.cores = cores
        #: cores' worth of other programs' work on the node (the machine's background_load)
        self.load = load
        #: segments that run at full speed before sharing starts: whole cores left beside the load
        self.free = max(0, math.floor(cores - load + 1e-9))
        self.busy = 0
        self.shared = False
        self.members: dict[Any, None] = {}
        self.heap: list[tuple[float, int, Event]] = []
        self.vtime = 0.0
        self.t_last = 0.0
        self.rate = 1.0
        self.version = 0
        self.seq = itertools.count()

    def run_shared(self, ctx: Any, work: float) -> Any:
        """Generator: run ``work`` seconds (at full rate) under processor sharing."""
        self.busy += 1
        if not self.shared:
            self._start_sharing()
        done = Event(self.env)
        self._advance()
        heapq.heappush(self.heap, (self.vtime + work, next(self.seq), done))
        self._reschedule()
        yield done
        self.busy -= 1

    def _start_sharing(self) -> None:
        """Switch to processor sharing, converting in-flight fast segments."""
        env = self.env
        now = env._now
        self.shared = True
        self.vtime = 0.0
        self.t_last = now
        for ctx in self.members:
            if ctx.fast_end > now and ctx.conv is None:
                done = ctx.convert()
                heapq.heappush(self.heap, (ctx.fast_end - now, next(self.seq), done))
                ctx.fast_end = -1.0

    def _advance(self) -> None:
        now = self.env._now
        if now > self.t_last:
            self.vtime += (now - self.t_last) * self.rate
            self.t_last = now

    def _reschedule(self) -> None:
        """Plan the next completion after the set of segments changed."""
        self.version += 1
        heap = self.heap
        if not heap:
            self.shared = False
            self.rate = 1.0
            return
        n = len(heap)
        runnable = n + self.load
        self.rate = 1.0 if runnable <= self.cores else self.cores / runnable
        delay = (heap[0][0] - self.vtime) / self.rate
        timer = Timeout(self.env, delay if delay > 0.0 else 0.0, self.version)
        timer.callbacks.append(self._on_timer)

    def _on_timer(self, timer: Event) -> None:
        if timer.value != self.version:
            return  # superseded by a later arrival or departure
        self._advance()
        heap = self.heap
        key, _, done = heapq.heappop(heap)
        done.succeed()
        if key > self.vtime:
            self.vtime = key
        limit = self.vtime + 1e-12 * max(1.0, abs(self.vtime))
        while heap and heap[0][0] <= limit:
            heapq.heappop(heap)[2].succeed()
        self._reschedule()


__all__ = ["NodeCPU"]
