"""Messages over shared links: the network of a machine with ``[network.topology]``.

The per-pair network (:mod:`.point_to_point`) knows a message's arrival when it is sent.  Over
shared links it does not: the message is a *flow* over its route's links whose rate changes
whenever another flow on those links starts or ends (:mod:`..platform.sharing`).  This module is
that network's implementation of the operations, chosen once per run (the simulation gives its
processes a :class:`LinkContext`); matching, requests and accounting are those of
:mod:`.point_to_point`, so the semantics differ only in when data arrives:

* a message between two nodes pays its route's latency (the sum over its hops), then its bytes
  flow at the max-min fair rate; eager messages start flowing when sent, rendezvous messages
  when both sides are there (after the link's handshake); when ``[network.inter_node]`` prices
  messages per size range (``ranges`` or ``table``), a message's range is what it reaches alone:
  it waits at least the range's latency and flows no faster than the range's bandwidth;
* a message inside a node costs what the per-pair model says (``[network.intra_node]``);
* a collective runs its algorithm's schedule (:func:`..platform.network.schedule`) round by
  round: every transfer of a round is a flow, and the round ends when its last flow ends.

Flow starts and ends at one simulated instant are solved together (one recomputation per
instant, not per flow), which keeps a round of thousands of simultaneous messages one update.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable
from typing import Any

from simpy.events import Event, Timeout

from ..engine.simpy_access import armed_event, trigger_at
from ..platform.interface import SharedLinkNetwork
from ..platform.network import Step, block_schedule, mean_block, schedule
from ..platform.sharing import Flow, LinkSharing
from ..spec import Element
from .collectives import Gathering, _arrive, _blocks, blocks_of
from .point_to_point import (
    _SENDER,
    _SENT,
    _SIZE,
    _SRC,
    _TAG,
    ANY,
    CommState,
    Context,
    Message,
    Request,
    _complete,
    _keep_pending,
    _post_receive,
    _tag,
    account,
    posted_isend,
    rank,
    size_of,
    spend_cost,
    state,
    take_message,
    take_receive,
)
from .point_to_point import ROOTED as _ROOTED

_INF = math.inf
#: Flows whose end lies this close (relative) to the earliest end finish together.
_SAME_INSTANT = 1e-12


class LinkNetwork:
    """The shared links of one run: starts flows, wakes up when the next one starts or ends.

    ``transfer(src, dst, size, extra, done)`` moves ``size`` bytes between two processes and
    calls ``done(t)`` when the data is there; ``extra`` seconds (a rendezvous handshake, a
    crowded receiver's wake-up) are added to the route's latency.  Flows wait out their latency
    in a heap of their own, not as SimPy events: one wake-up event serves the next start or end,
    and every start and end of one instant is solved together.
    """

    def __init__(self, env: Any, shared: SharedLinkNetwork, st: CommState) -> None:
        self.env = env
        #: the run's network, which knows the routes (:meth:`SharedLinkNetwork.path`)
        self.shared = shared
        fabric = self.fabric = shared.fabric
        self.st = st
        self.node_of = st.node_of
        self.sharing = LinkSharing(fabric.bandwidth)
        self._changed: set[int] = set()
        #: flows in their latency phase, by start time (a round's flows share one), and the times
        self._starts: dict[float, list[Flow]] = {}
        self._start_times: list[float] = []
        self._wake_at = _INF
        #: whether messages between nodes are priced per size range (``[network.inter_node]``
        #: ranges or table): then a message alone reaches no more than its range says
        machine = st.machine
        self._pieces = getattr(getattr(machine, "inter_node", None), "pieces", None) is not None
        #: seconds all flows took beyond what each would have taken alone, and their count
        self.lost = 0.0
        self.flows = 0
        #: with tracing: (time, link, flows on it, share of its bandwidth in use) after each change
        self.samples: list[tuple[float, int, int, float]] | None = None

    # -- one transfer ------------------------------------------------------------------------

    def transfer(self, src: int, dst: int, size: float, extra: float, done: Callable[[float], None]) -> None:
        node_of = self.node_of
        na, nb = node_of[src], node_of[dst]
        env = self.env
        if na == nb:
            lat, beta = self.st.link(src, dst, size)
            _after(env, lat + extra + size * beta, done)
            return
        route, penalty, slowest = self.shared.path(na, nb)
        wakeup = self.st.wakeup
        start = penalty
        bound = _INF
        if self._pieces:
            # the size range's line is what the message reaches alone: it waits at least that
            # latency and flows no faster than that bandwidth; the links may slow it further
            alpha, beta = self.shared.pair_line(na, nb, size)
            start = max(penalty, alpha)
            if beta > 0.0:
                bound = 1.0 / beta
        latency = start + extra + (wakeup[nb] if wakeup else 0.0)
        if size <= 0.0:
            _after(env, latency, done)
            return
        flow = Flow(
            route, float(size), 1.0 / penalty if penalty > 0.0 else 1.0, 0.0, size / min(slowest, bound)
        )
        flow.bound = bound
        flow.top = slowest if slowest < bound else bound
        flow.payload = done
        when = env.now + latency
        bucket = self._starts.get(when)
        if bucket is None:
            self._starts[when] = [flow]
            heapq.heappush(self._start_times, when)
        else:
            bucket.append(flow)
        if when < self._wake_at:
            self._wake_at = when
            _after(env, latency, self._wake)

    # -- keeping the rates and the next wake-up current --------------------------------------

    def _solve(self, now: float) -> None:
        """Re-solve the flows linked to this instant's changes (and sample the links when tracing)."""
        solved = self.sharing.solve(self._changed, now)
        if self.samples is not None:
            load = self.sharing.load
            self.samples.extend((now, link, *load(link)) for link in sorted(solved | self._changed))
        self._changed.clear()

    def _wake(self, now: float) -> None:
        if now < self._wake_at:
            return  # an earlier wake-up replaced this one
        self._wake_at = _INF
        sharing = self.sharing
        changed = self._changed
        ended = sharing.pop_ended(now * (1.0 + _SAME_INSTANT))
        samples = self.samples
        emptied: list[int] = []
        for flow in ended:
            if sharing.remove(flow, now):  # flows still on its links may go faster now
                changed.update(flow.links)
            elif samples is not None:
                emptied.extend(flow.links)
            self.flows += 1
            took = now - flow.start
            if took > flow.alone:
                self.lost += took - flow.alone
        if emptied:
            assert samples is not None
            samples.extend((now, link, 0, 0.0) for link in emptied if link not in changed)
        times = self._start_times
        started: list[Flow] = []
        while times and times[0] <= now:
            started += self._starts.pop(heapq.heappop(times))
        for flow in started:
            flow.start = now
            sharing.add(flow, now)
        for flow in started:
            # a flow that meets no other on its links needs no solving (the usual case of a
            # permutation routed by D-mod-k); one that does is solved with all it touches
            if not changed.isdisjoint(flow.links) or not sharing.alone(flow):
                changed.update(flow.links)
            else:
                sharing.set_alone(flow, now)
                if samples is not None:
                    samples.extend((now, link, *sharing.load(link)) for link in flow.links)
        if changed:
            self._solve(now)
        when = min(sharing.next_end(), times[0] if times else _INF)
        if when < _INF:
            self._wake_at = when
            _after(self.env, max(0.0, when - now), self._wake)
        for flow in ended:
            flow.payload(now)  # type: ignore[operator]

    # -- what the results report ---------------------------------------------------------------

    def link_report(self, now: float) -> list[dict[str, Any]]:
        """Per link direction that carried data: name, busy seconds, most flows at once, bytes."""
        self.sharing.close(now)
        stats = self.sharing.stats
        names = self.fabric.names
        used = [i for i in range(len(names)) if stats.max_flows[i]]
        used.sort(key=lambda i: (-stats.busy[i], -stats.max_flows[i], names[i]))
        return [
            {
                "link": names[i],
                "busy": stats.busy[i],
                "max_flows": stats.max_flows[i],
                "bytes": stats.bytes[i],
            }
            for i in used
        ]


def _after(env: Any, delay: float, then: Callable[[float], None]) -> None:
    """Call ``then(now)`` ``delay`` seconds from now."""
    timeout = Timeout(env, delay)
    timeout.callbacks.append(lambda _ev: then(env.now))  # type: ignore[union-attr]


def network(st: CommState, sim: Any) -> LinkNetwork:
    """The shared-link network of this run, made on first use."""
    net = getattr(sim, "link_network", None)
    if net is None:
        shared = st.network
        assert isinstance(shared, SharedLinkNetwork), "messages go over links only with a topology"
        net = sim.link_network = LinkNetwork(sim.env, shared, st)
        if sim.tracing:
            net.samples = []
    return net  # type: ignore[no-any-return]


def _handshake(st: CommState, src: int, dst: int) -> float:
    return st.handshake(src, dst)


# ---------------------------------------------------------------------------------------------
# Point-to-point
# ---------------------------------------------------------------------------------------------


class InFlight:
    """An eager message's data on the wire: its arrival once known, the receive waiting for it."""

    __slots__ = ("done", "waiter", "sent")

    def __init__(self, sent: float) -> None:
        self.sent = sent
        self.done: float | None = None
        self.waiter: Request | None = None


def _post(ctx: Context, st: CommState, dest: int, size: float, tag: int, sender: Request | None) -> None:
    """Send now: start an eager flow (or wait for the receive of a rendezvous) and deliver."""
    env = st.env
    now = env.now
    me = ctx.pid
    net = network(st, ctx.sim)
    req = take_receive(st, me, dest, tag)
    if sender is None:
        carrier = InFlight(now)

        def arrived(t: float) -> None:
            carrier.done = t
            waiter = carrier.waiter
            if waiter is not None:
                _complete(env, waiter, now, t)
                ctx.record_message(me, dest, size, tag, now, t)

        if req is not None:
            req.source = me
            req.matched_tag = tag
            carrier.waiter = req
        net.transfer(me, dest, size, 0.0, arrived)
        if req is None:
            _mailbox(st, dest, (_next_seq(st), _INF, now, size, carrier, me, tag))  # type: ignore[arg-type]
        return
    if req is not None:
        req.source = me
        req.matched_tag = tag
        _rendezvous(ctx, st, net, me, dest, size, tag, sender, req)
    else:
        _mailbox(st, dest, (_next_seq(st), _INF, now, size, sender, me, tag))


def _next_seq(st: CommState) -> int:
    seq = st.seq = st.seq + 1
    return seq


def _mailbox(st: CommState, dest: int, msg: Message) -> None:
    box = st.mail[dest]
    key = msg[_TAG] * st.nprocs + msg[_SRC]
    q = box.get(key)
    if q is None:
        q = box[key] = deque()
    q.append(msg)


def _rendezvous(
    ctx: Context,
    st: CommState,
    net: LinkNetwork,
    src: int,
    dst: int,
    size: float,
    tag: int,
    sender: Request,
    req: Request,
) -> None:
    """Both sides are there: the handshake and the transfer start now; both finish at its end."""
    env = st.env
    now = env.now
    sender.start = req.start = now

    def arrived(t: float) -> None:
        _complete(env, sender, now, t)
        _complete(env, req, now, t)
        ctx.record_message(src, dst, size, tag, now, t)

    net.transfer(src, dst, size, _handshake(st, src, dst), arrived)


def _take(ctx: Context, st: CommState, req: Request) -> None:
    """Match a new receive with a sent message, or post it."""
    msg = take_message(st, req.pid, req.peer, req.tag)
    if msg is None:
        _post_receive(st, req)
        return
    req.source = msg[_SRC]
    req.matched_tag = msg[_TAG]
    carrier = msg[_SENDER]
    if isinstance(carrier, InFlight):
        if carrier.done is not None:
            now = st.env.now
            _complete(st.env, req, carrier.sent, carrier.done if carrier.done > now else now)
            ctx.record_message(msg[_SRC], req.pid, msg[_SIZE], msg[_TAG], carrier.sent, req.done)
        else:
            carrier.waiter = req
            req.start = msg[_SENT]
    else:
        _rendezvous(ctx, st, network(st, ctx.sim), msg[_SRC], req.pid, msg[_SIZE], msg[_TAG], carrier, req)  # type: ignore[arg-type]


def _valid_send(ctx: Context, elem: Element, dest: Any, size: Any, tag: Any) -> tuple[int, float, int]:
    return (
        rank(ctx, elem, dest, "destination", wildcard=False),
        size_of(ctx, elem, size),
        _tag(ctx, elem, tag, wildcard=False),
    )


def send(ctx: Context, elem: Element, dest: int, size: float, tag: int, cost: float) -> Any:
    """Blocking send over the links: eager returns at once, rendezvous waits for the transfer."""
    dest, size, tag = _valid_send(ctx, elem, dest, size, tag)
    counted = (yield from spend_cost(ctx, elem, cost)) if cost else False
    st = state(ctx.sim)
    env = ctx.env
    now = env.now
    if size <= st.eager_limit:
        _post(ctx, st, dest, size, tag, None)
        if not counted:
            ctx.record(elem, "comm", now, now)
        return
    req = Request("send", ctx.pid, dest, tag, size, now, 0)
    _post(ctx, st, dest, size, tag, req)
    yield from _wait_one(ctx, elem, req)
    account(ctx, elem, counted, now, req.start, req.done)  # type: ignore[arg-type]


def _wait_one(ctx: Context, elem: Element, req: Request) -> Any:
    env = ctx.env
    if req.done is None:
        req.event = ev = armed_event(env)
        ctx.block(elem, req)
        yield ev
        ctx.unblock()
    elif req.done > env.now:
        yield Timeout(env, req.done - env.now)


def recv(ctx: Context, elem: Element, source: int, size: float, tag: int, cost: float) -> Any:
    """Blocking receive over the links (``source``/``tag`` -1: any)."""
    source = rank(ctx, elem, source, "source", wildcard=True)
    tag = _tag(ctx, elem, tag, wildcard=True)
    counted = (yield from spend_cost(ctx, elem, cost)) if cost else False
    st = state(ctx.sim)
    now = ctx.env.now
    req = Request("recv", ctx.pid, source, tag, size, now, _next_seq(st))
    ctx.matched = req  # its match sets the source
    _take(ctx, st, req)
    yield from _wait_one(ctx, elem, req)
    account(ctx, elem, counted, now, max(req.start, now), req.done)  # type: ignore[arg-type, type-var]


def isend(ctx: Context, elem: Element, dest: int, size: float, tag: int, cost: float) -> Any:
    """Non-blocking send over the links; returns its :class:`Request`."""
    return (yield from posted_isend(ctx, elem, dest, size, tag, cost, _post))


def irecv(ctx: Context, elem: Element, source: int, size: float, tag: int, cost: float) -> Any:
    """Non-blocking receive over the links; returns its :class:`Request`."""
    source = rank(ctx, elem, source, "source", wildcard=True)
    tag = _tag(ctx, elem, tag, wildcard=True)
    counted = (yield from spend_cost(ctx, elem, cost)) if cost else False
    st = state(ctx.sim)
    now = ctx.env.now
    req = Request("recv", ctx.pid, source, tag, size, now, _next_seq(st))
    ctx.matched = req  # its match sets the source
    _take(ctx, st, req)
    if req.done is None or req.done > now:
        _keep_pending(st.pending[ctx.pid], req, now)
    if not counted:
        ctx.record(elem, "comm", now, now)
    return req


# ---------------------------------------------------------------------------------------------
# Collectives
# ---------------------------------------------------------------------------------------------


def collective(ctx: Context, elem: Element, kind: str, root: int, size: float, cost: float) -> Any:
    """Meet the other processes at the next collective call and run its schedule over the links."""
    if kind in _ROOTED:
        root = rank(ctx, elem, root, "root", wildcard=False)
    size = blocks_of(ctx, elem, kind, size) if size.__class__ in (list, tuple) else size_of(ctx, elem, size)
    counted = (yield from spend_cost(ctx, elem, cost)) if cost else False
    env = ctx.env
    now = env.now
    nprocs = ctx.nprocs
    if nprocs == 1:
        if not counted:
            ctx.record(elem, "comm", now, now)
        return
    st, g = _arrive(ctx, elem, kind, root, size, now)
    me = ctx.pid
    g.events[me] = ev = armed_event(env)
    if g.count == nprocs:
        del st.open[g.index]
        _run_schedule(ctx.sim, st, g)
    ctx.block(elem, g)
    yield ev
    ctx.unblock()
    account(ctx, elem, counted, now, g.start, g.start + g.offsets[me])


def _run_schedule(sim: Any, st: CommState, g: Gathering) -> None:
    """Run the collective's rounds as flows; wake each rank at the end of its last round."""
    env = st.env
    model = st.collectives
    p = st.nprocs
    steps: list[Step]
    if g.blocks is not None and g.low != g.size:  # blocks that differ per rank: their own bytes
        blocks = _blocks(g)
        steps = block_schedule(g.kind, model.algorithm(g.kind, mean_block(blocks)), p, blocks, g.root)
    else:
        steps = schedule(g.kind, model.algorithm(g.kind, g.size), p, g.size, g.root)
    g.start = env.now
    g.offsets = [0.0] * p
    last = [-1] * p
    for k, s in enumerate(steps):
        if s.everyone:
            last = [k] * p
        else:
            for r in s.src:
                last[r] = k
            for r in s.dst:
                last[r] = k
    by_step: dict[int, list[int]] = {}
    for r, k in enumerate(last):
        by_step.setdefault(k, []).append(r)
    net = network(st, sim)
    gamma = model.gamma_at(g.size)
    overhead = model.overhead
    eager = st.eager_limit

    def release(ranks: list[int], t: float) -> None:
        for r in ranks:
            g.offsets[r] = t - g.start + overhead
            ev = g.events[r]
            if ev is not None:
                g.events[r] = None
                _complete_event(env, ev, overhead)

    release(by_step.get(-1, []), env.now)
    position = [0, 0]  # step index, repetition

    def next_round(t: float) -> None:
        k, rep = position
        if k >= len(steps):
            return
        s = steps[k]
        nbytes = s.nbytes
        sizes = nbytes if isinstance(nbytes, list) else [nbytes] * len(s.src)
        pending = [len(s.src)]

        def one_done(t_end: float) -> None:
            pending[0] -= 1
            if pending[0] == 0:
                work = gamma * s.reduce_bytes
                if work > 0.0:
                    _after(env, work, round_done)
                else:
                    round_done(t_end)

        def round_done(t_end: float) -> None:
            position[1] += 1
            if position[1] >= s.repeat:
                release(by_step.get(k, []), t_end)
                position[0] += 1
                position[1] = 0
            next_round(t_end)

        for src, dst, n in zip(s.src, s.dst, sizes, strict=True):
            extra = _handshake(st, src, dst) if n > eager else 0.0
            net.transfer(src, dst, n, extra, one_done)
        if not s.src:
            round_done(t)

    next_round(env.now)


def _complete_event(env: Any, ev: Event, delay: float) -> None:
    trigger_at(env, ev, delay)


__all__ = ["LinkNetwork", "InFlight", "network", "send", "recv", "isend", "irecv", "collective", "ANY"]
