"""Shared links: max-min fair rates of the flows that cross them, kept up to date incrementally.

A *flow* is one message's data crossing a route of link directions (:mod:`.topology`).  Its
rate is set by max-min fairness: no flow can go faster without slowing one that is no faster
than it.  Progressive filling computes it: the link with the smallest fair share (remaining
capacity over the weight of its unfixed flows) fixes the rates of its flows, which leave the
other links with less capacity; repeat.  A flow's weight is ``1 / penalty``; the penalty is the
route's latency (SimGrid's CM02 model: a flow with a longer round trip gets a smaller share),
or 1 when the route has no latency, so flows of equal routes share a link equally.

Rates change only when a flow starts or ends, and then only for the flows connected to it
through shared links: :meth:`LinkSharing.solve` recomputes that connected part alone.  Pure
arithmetic, no SimPy; the simulation drives it (``operations/over_links.py``).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence

__all__ = ["Flow", "LinkSharing", "LinkStats"]

#: Bytes below which a flow counts as done (what rounding leaves of a finished flow).
_EPSILON_BYTES = 1e-6


class Flow:
    """One message's data on its route: bytes left, rate, and when it last changed."""

    __slots__ = (
        "top",
        "bound",
        "links",
        "weight",
        "size",
        "remaining",
        "rate",
        "since",
        "version",
        "start",
        "alone",
        "payload",
    )

    def __init__(
        self, links: tuple[int, ...], size: float, weight: float, start: float, alone: float
    ) -> None:
        self.links = links
        self.weight = weight
        self.size = size
        self.remaining = size
        self.rate = 0.0
        self.since = start
        #: bumped whenever the rate changes: end times computed with an older rate are stale
        self.version = 0
        self.start = start
        #: seconds the data would take on the route with no other flow (its slowest link)
        self.alone = alone
        #: what the simulation attaches (what to do when the flow ends)
        self.payload: object = None
        #: bytes per second the flow never exceeds, whatever its links leave it (inf: none)
        self.bound = math.inf
        #: its rate alone on its route: the slowest link or the bound (0: not known yet)
        self.top = 0.0

    def end_time(self) -> float:
        """When the flow ends at its current rate."""
        if self.remaining <= _EPSILON_BYTES:
            return self.since
        return self.since + self.remaining / self.rate if self.rate > 0.0 else math.inf


class LinkStats:
    """What each link direction carried: seconds with at least one flow, most flows at once, bytes."""

    __slots__ = ("busy", "max_flows", "bytes", "_since")

    def __init__(self, n: int) -> None:
        self.busy = [0.0] * n
        self.max_flows = [0] * n
        self.bytes = [0.0] * n
        self._since = [0.0] * n


class LinkSharing:
    """The flows on a set of links and their max-min fair rates."""

    def __init__(self, bandwidth: Sequence[float]) -> None:
        #: bytes per second of each link direction; a list that may grow (links made on first use)
        self.capacity = bandwidth
        self.on: list[dict[Flow, None]] = [{} for _ in self.capacity]
        self.stats = LinkStats(len(self.capacity))
        #: (end time, version, tie-breaker, flow): the next ends, stale entries skipped when popped
        self.ends: list[tuple[float, int, int, Flow]] = []
        self._count = 0
        self.solves = 0

    # -- flows starting and ending ----------------------------------------------------------

    def add(self, flow: Flow, now: float) -> None:
        """A flow starts sharing its links now (its rate is set by the next :meth:`solve`)."""
        stats = self.stats
        if len(self.on) < len(self.capacity):
            self._grow()
        on, since, most, carried = self.on, stats._since, stats.max_flows, stats.bytes
        size = flow.size
        for link in flow.links:
            flows = on[link]
            if not flows:
                since[link] = now
            flows[flow] = None
            if len(flows) > most[link]:
                most[link] = len(flows)
            carried[link] += size
        flow.since = now

    def alone(self, flow: Flow) -> bool:
        """Whether ``flow`` is the only flow on every link of its route."""
        on = self.on
        for link in flow.links:
            if len(on[link]) != 1:
                return False
        return True

    def set_alone(self, flow: Flow, now: float) -> None:
        """Give a flow that shares no link its slowest link's bandwidth (what :meth:`solve` would)."""
        rate = flow.top
        if not rate:
            capacity = self.capacity
            rate = flow.top = min(flow.bound, min(capacity[link] for link in flow.links))
        if rate != flow.rate:
            if flow.rate > 0.0:
                flow.remaining = max(0.0, flow.remaining - flow.rate * (now - flow.since))
            flow.since = now
            flow.rate = rate
            flow.version += 1
            self._count += 1
            heapq.heappush(self.ends, (flow.end_time(), flow.version, self._count, flow))

    def _grow(self) -> None:
        """Make room for links made since (a topology makes a link when a route first crosses it)."""
        more = len(self.capacity) - len(self.on)
        self.on.extend({} for _ in range(more))
        stats = self.stats
        for column in (stats.busy, stats.bytes, stats._since):
            column.extend([0.0] * more)
        stats.max_flows.extend([0] * more)

    def remove(self, flow: Flow, now: float) -> bool:
        """A flow leaves its links now; returns whether other flows remain on any of them."""
        stats = self.stats
        on, busy, since = self.on, stats.busy, stats._since
        others = False
        for link in flow.links:
            flows = on[link]
            del flows[flow]
            if flows:
                others = True
            else:
                busy[link] += now - since[link]
        return others

    def close(self, now: float) -> None:
        """Count the busy time of links still carrying flows at the end of the run."""
        if len(self.on) < len(self.capacity):
            self._grow()  # links routes made that no flow crossed (messages of 0 bytes)
        stats = self.stats
        for link, flows in enumerate(self.on):
            if flows:
                stats.busy[link] += now - stats._since[link]
                stats._since[link] = now

    # -- rates ---------------------------------------------------------------------------

    def solve(self, links: Iterable[int], now: float) -> set[int]:
        """Recompute the rates of every flow connected to ``links`` (a flow started or ended there).

        Flows whose rate changes are brought up to ``now`` at their old rate first, and get a
        new end time in :attr:`ends`.  Returns the links whose flows were re-solved.
        """
        self.solves += 1
        on = self.on
        seen_links: set[int] = set()
        flows: dict[Flow, None] = {}
        stack = [link for link in links if on[link]]
        seen_links.update(stack)
        while stack:
            link = stack.pop()
            for flow in on[link]:
                if flow not in flows:
                    flows[flow] = None
                    for other in flow.links:
                        if other not in seen_links:
                            seen_links.add(other)
                            stack.append(other)
        if not flows:
            return seen_links
        rates = _max_min(flows, seen_links, self.capacity, on)
        ends = self.ends
        for flow, rate in rates.items():
            if rate != flow.rate or flow.rate == 0.0:
                if flow.rate > 0.0:
                    flow.remaining -= flow.rate * (now - flow.since)
                    if flow.remaining < 0.0:
                        flow.remaining = 0.0
                flow.since = now
                flow.rate = rate
                flow.version += 1
                self._count += 1
                heapq.heappush(ends, (flow.end_time(), flow.version, self._count, flow))
        return seen_links

    def load(self, link: int) -> tuple[int, float]:
        """Flows on ``link`` now and the share of its bandwidth they use."""
        flows = self.on[link]
        return len(flows), sum(f.rate for f in flows) / self.capacity[link]

    def next_end(self) -> float:
        """The earliest end time of a flow (infinite without flows); drops stale entries."""
        ends = self.ends
        while ends:
            when, version, _, flow = ends[0]
            if version == flow.version and flow.remaining > -1.0:
                return when
            heapq.heappop(ends)
        return math.inf

    def pop_ended(self, now: float) -> list[Flow]:
        """Remove and return the flows that end at ``now`` (their end time is not after it)."""
        done: list[Flow] = []
        ends = self.ends
        while ends:
            when, version, _, flow = ends[0]
            if version != flow.version or flow.remaining < 0.0:
                heapq.heappop(ends)
                continue
            if when > now:
                break
            heapq.heappop(ends)
            flow.remaining = -2.0  # marks the flow finished
            flow.version += 1
            done.append(flow)
        return done


def _max_min(
    flows: dict[Flow, None], links: set[int], capacity: Sequence[float], on: list[dict[Flow, None]]
) -> dict[Flow, float]:
    """Weighted max-min fair rates of ``flows`` on ``links`` by progressive filling.

    A flow alone on every link of its route shares nothing: its rate is its slowest link's
    bandwidth (or its bound), set at once; progressive filling runs over the others (often none:
    recursive doubling or a permutation over a fat tree routed by D-mod-k rarely meet on a link).
    A flow's bound is a link of its own: when its ``bound / weight`` is below every link's fair
    share, it is fixed at its bound first.
    """
    rates: dict[Flow, float] = {}
    contended: list[Flow] = []
    for flow in flows:
        route = flow.links
        if all(len(on[link]) == 1 for link in route):
            rates[flow] = min(flow.bound, min(capacity[link] for link in route))
        else:
            contended.append(flow)
    if not contended:
        return rates
    links = {link for flow in contended for link in flow.links}
    left = {link: capacity[link] for link in links}
    weight = {link: sum(f.weight for f in on[link]) for link in links}
    heap = [(left[link] / weight[link], link) for link in links if weight[link] > 0.0]
    heapq.heapify(heap)
    bounded = [(f.bound / f.weight, id(f), f) for f in contended if f.bound < math.inf]
    heapq.heapify(bounded)
    while heap and len(rates) < len(flows):
        while bounded and bounded[0][2] in rates:
            heapq.heappop(bounded)
        if bounded and bounded[0][0] <= heap[0][0]:
            flow = heapq.heappop(bounded)[2]
            rate = flow.bound
            rates[flow] = rate
            for other in flow.links:
                left[other] = max(0.0, left[other] - rate)
                weight[other] -= flow.weight
                if weight[other] > 1e-300:
                    heapq.heappush(heap, (left[other] / weight[other], other))
                else:
                    weight[other] = 0.0
            continue
        share, link = heapq.heappop(heap)
        w = weight[link]
        if w <= 0.0:
            continue
        current = left[link] / w
        if current > share * (1 + 1e-12) and current != share:
            heapq.heappush(heap, (current, link))  # stale: the link lost flows since it was pushed
            continue
        touched: set[int] = set()
        for flow in on[link]:
            if flow in rates:
                continue
            rate = current * flow.weight
            rates[flow] = rate
            for other in flow.links:
                if other != link:
                    left[other] = max(0.0, left[other] - rate)
                    weight[other] -= flow.weight
                    touched.add(other)
        weight[link] = 0.0
        for other in touched:
            if weight[other] > 1e-300:
                heapq.heappush(heap, (left[other] / weight[other], other))
            else:
                weight[other] = 0.0
    return rates
