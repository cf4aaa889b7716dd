"""Call sites of sends and receives whose arguments never change: checked once, then posted directly.

Generated code makes a site at the start of a function for each send or receive whose
destination or source, size, tag and cost are the same at every call of that function run
(literals, system parameters such as ``p.pid``, model variables that nothing assigns after
``init_globals``; the python handler proves it)::

    send_right = p.send_site(E_send_right, dest=(p.pid + 1) % p.nprocs, size=v.SIZE)
    ...
    yield from send_right()  # the same as yield from p.send(E_send_right, dest=..., size=...)

Calling the site does exactly what ``p.send(...)`` with those arguments does at that moment.
Making one does nothing else (no check, no state): its first call is an ordinary ``p.send``
(or ``p.recv``), whose checks either accept the arguments for the context's direct route or
send the call elsewhere.  When they accepted them, the site keeps what they decided (the
communication state, the link, the queues of the key) and every later call runs only the
direct route's posting: no argument is compared or checked again, no keyword is passed.
Otherwise every call stays an ordinary ``p.send``: the general path, a local cost, a thread's
rendezvous message, a wildcard receive, or a context class with routes of its own (tracing,
shared links, the general context the tests compare with) all behave as before.

The posting below is :meth:`Context.send` and :meth:`Context.recv` after their checks, line for
line, with their rendezvous parts (``_send_rendezvous``, ``_recv_rendezvous``) written out too
(the same times, float additions, sequence numbers and scheduled events, in the same order);
``tests/test_runtime_sites.py`` compares the two on every protocol and queue state.
"""

from __future__ import annotations

import math
from collections import deque
from typing import TYPE_CHECKING, Any

from ..operations import point_to_point as _comm
from .simpy_access import NORMAL, PARKED_REQUEST, armed_event, armed_timeout
from .simpy_access import push as _push

#: no arrival yet: a rendezvous message's place in the mailbox while its sender waits
_INF = math.inf

if TYPE_CHECKING:  # pragma: no cover
    from ..spec import Element


class SendSite:
    """One send call site of one function run (see the module docstring); :meth:`send` posts."""

    __slots__ = (
        "ctx",
        "elem",
        "dest",
        "size",
        "tag",
        "cost",
        "st",
        "lat",
        "beta",
        "transfer",
        "env",
        "pid",
        "wild",
        "posted",
        "mail",
        "calls",
        "i",
        "key",
        "rendezvous",
        "inner",
    )
    # what the context's checks decided, kept once they accepted the arguments (``send_checked``)
    lat: float
    beta: float
    transfer: float  # size * beta, the same product the context's send computes at each call
    env: Any
    pid: int
    wild: Any
    calls: list[int]
    i: int
    rendezvous: bool

    def __init__(self, ctx: Any, elem: Element, dest: Any, size: Any, tag: Any, cost: Any) -> None:
        self.ctx = ctx
        self.elem = elem
        self.dest = dest
        self.size = size
        self.tag = tag
        self.cost = cost
        self.st: Any = None  # set once the context's checks have accepted the arguments
        #: with a local cost, once the checks accepted the arguments: the site of the same call
        #: without the cost, which the spent cost hands on to (see _checked)
        self.inner: Any = None
        # what the checks decided (``Context.send_checked`` / ``recv_checked``), kept with ``st``
        self.key: int = 0
        self.mail: Any = None
        self.posted: Any = None

    def send(self) -> Any:
        """``ctx.send(elem, dest, size, tag, cost)``; after an accepted first call, its posting only."""
        st = self.st
        if st is None:
            return self._checked()
        ctx = self.ctx
        elem = self.elem
        ctx.cur = elem
        now = self.env._now
        # eager: when the data arrives; rendezvous: when the transfer ends if it starts now
        arrival = now + self.lat + self.transfer
        seq = st.seq = st.seq + 1
        if self.wild:  # wildcard receives posted: the first posted matching one
            req = _comm.take_receive(st, self.pid, self.dest, self.tag)
        else:
            posted = self.posted
            if posted is None:
                posted = st.posted[self.dest].get(self.key)
                if posted is not None:  # the receiver has posted on this key since: keep its queue
                    self.posted = posted
            req = posted.popleft() if posted else None
        mail = self.mail
        if self.rendezvous:  # Context._send_rendezvous, written out: the transfer ends at ``arrival``
            if req is not None:  # the receive is posted: the transfer runs from now
                req.source = self.pid
                req.matched_tag = self.tag
                req.start = now
                req.done = arrival
                ev = req.event
                if ev is not None:  # an armed event (simpy_access): scheduling it triggers it
                    req.event = None
                    _push(ctx.queue, (now + (arrival - now), NORMAL, next(ctx.eids), ev))
                d = arrival - now
                i = self.i
                self.calls[i] += 1
                ctx.incl[i] += d
                ctx.covered += d
                ctx.totals[1] += d
                if arrival > now:
                    timeout = ctx.wait_ev
                    if timeout is None or timeout.callbacks is not None:
                        timeout = ctx.wait_ev = armed_timeout(self.env)
                    timeout.callbacks = []
                    _push(ctx.queue, (now + d, NORMAL, next(ctx.eids), timeout))
                    return (timeout,)
                return ()
            # park: the context's request of its last parked call, used again
            size = self.size
            mine = ctx.park_req
            if mine is None:
                mine = ctx.park_req = _comm.Request("send", self.pid, self.dest, self.tag, size, now, 0)
            else:
                mine.op = "send"
                mine.peer = self.dest
                mine.tag = self.tag
                mine.size = size
                mine.posted = now
                mine.seq = 0
                mine.done = None  # not complete; the receiver's match sets start and done
            if mail is None:
                mail = self._mailbox(st)
            mail.append((seq, _INF, now, size, mine, self.pid, self.tag))
            ev = ctx.park_ev
            if ev is None or ev.callbacks is not None:
                ev = ctx.park_ev = armed_event(self.env)
            mine.event = ev
            ev.callbacks = []
            ctx.parked = PARKED_REQUEST  # accounted as the process resumes (DirectProcess._resume)
            ctx.fast_req = mine
            ctx.blocked_elem = elem
            ctx.blocked_for = mine
            return (ev,)
        if req is not None:
            req.source = self.pid
            req.matched_tag = self.tag
            done = arrival if arrival > now else now
            req.start = now
            req.done = done
            ev = req.event
            if ev is not None:  # an armed event (simpy_access): scheduling it triggers it
                req.event = None
                _push(ctx.queue, (now + (done - now), NORMAL, next(ctx.eids), ev))  # env.schedule
        else:
            if mail is None:
                mail = self._mailbox(st)
            mail.append((seq, arrival, now, self.size, None, self.pid, self.tag))
        self.calls[self.i] += 1
        # a call of no duration: adding 0.0 would change no total (none is ever -0.0)
        return ()

    def _mailbox(self, st: Any) -> deque[Any]:
        """The receiver's mailbox of this site's key, made on first use, kept from then on."""
        box = st.mail[self.dest]
        mail = box.get(self.key)
        if mail is None:
            mail = box[self.key] = deque()
        self.mail = mail
        return mail

    def _checked(self) -> Any:
        """A call before the context's checks accepted the arguments for the direct route: an
        ordinary send, after which the site keeps what the checks decided if they accepted them.

        With a local cost, an accepted site does what the send does at a checked site: it spends
        the cost (``Context._after_local_cost``), which then hands on to the send without the cost;
        here that is a site of its own (``inner``), which posts without checking again.
        """
        ctx = self.ctx
        elem, dest, size, tag, cost = self.elem, self.dest, self.size, self.tag, self.cost
        if self.inner is not None:
            ctx.cur = elem
            return ctx._after_local_cost(elem, cost, self.inner.route, dest, size, tag)
        result = ctx.send(elem, dest, size, tag, cost)
        kept = ctx.send_checked  # what the send's checks decided, when they accepted these arguments
        if (
            kept[0] is elem
            and dest.__class__ is int
            and tag.__class__ is int
            and size.__class__ is kept[4]
            and kept[1] == dest
            and kept[2] == tag
            and kept[3] == size
        ):
            site = self
            if cost:
                site = self.inner = SendSite(ctx, elem, dest, size, tag, 0.0)
            site.lat, site.beta, site.wild, site.posted, site.mail, site.calls = kept[6:12]
            site.i, site.key, site.rendezvous = kept[12:]
            site.transfer = size * site.beta
            site.env = ctx.env
            site.pid = ctx.pid
            site.st = kept[5]
        return result

    def route(self, elem: Element, dest: int, size: float, tag: int) -> Any:
        """The send as a local cost hands on to it (its arguments are this site's own)."""
        return self.send()


class RecvSite:
    """One receive call site of one function run (see the module docstring); :meth:`recv` takes."""

    __slots__ = (
        "ctx",
        "elem",
        "source",
        "size",
        "tag",
        "cost",
        "st",
        "key",
        "mail",
        "posted",
        "me",
        "i",
        "env",
        "inner",
    )
    # kept with what the checks decided (``recv_checked``): the receiving process, the element's
    # index and the environment
    me: int
    i: int
    env: Any

    def __init__(self, ctx: Any, elem: Element, source: Any, size: Any, tag: Any, cost: Any) -> None:
        self.ctx = ctx
        self.elem = elem
        self.source = source
        self.size = size
        self.tag = tag
        self.cost = cost
        self.st: Any = None  # set once the context's checks have accepted the arguments
        #: with a local cost, once the checks accepted the arguments: the site of the same call
        #: without the cost, which the spent cost hands on to (see _checked)
        self.inner: Any = None
        # what the checks decided (``Context.send_checked`` / ``recv_checked``), kept with ``st``
        self.key: int = 0
        self.mail: Any = None
        self.posted: Any = None

    def recv(self) -> Any:
        """``ctx.recv(elem, source, size, tag, cost)``; after an accepted first call, its taking only."""
        st = self.st
        if st is None:
            return self._checked()
        ctx = self.ctx
        elem = self.elem
        ctx.cur = elem
        ctx.matched = self.source
        env = self.env
        now = env._now
        mail = self.mail
        if mail is None:
            mail = st.mail[self.me].get(self.key)
            if mail is not None:  # a sender has used this key since: keep its queue
                self.mail = mail
        if mail:
            msg = mail.popleft()
            sender = msg[4]
            if sender is not None:  # a rendezvous message whose sender waits: Context._recv_rendezvous
                st.seq += 1  # the number the general path gives the receive's request
                src = msg[5]
                size = msg[3]
                line = ctx.recv_line  # the line and handshake of the last sender and size
                if line[0] != src or line[1] != size or line[2] is not st:
                    me = self.me
                    lat, beta = st.link(src, me, size)
                    line = ctx.recv_line = (src, size, st, lat + st.handshake(src, me), beta)
                end = now + line[3] + size * line[4]
                sender.start = now
                sender.done = end
                ev = sender.event
                if ev is not None:  # an armed event (simpy_access): scheduling it triggers it
                    sender.event = None
                    _push(ctx.queue, (now + (end - now), NORMAL, next(ctx.eids), ev))
                i = self.i
                d = end - now
                ctx.calls[i] += 1
                ctx.incl[i] += d
                ctx.covered += d
                ctx.totals[1] += d
                if end > now:
                    timeout = ctx.wait_ev
                    if timeout is None or timeout.callbacks is not None:
                        timeout = ctx.wait_ev = armed_timeout(env)
                    timeout.callbacks = []
                    _push(ctx.queue, (now + d, NORMAL, next(ctx.eids), timeout))
                    return (timeout,)
                return ()
            # an eager message: its arrival is known
            arrival = msg[1]
            i = self.i
            ctx.calls[i] += 1
            if arrival > now:
                d = arrival - now
                ctx.incl[i] += d
                ctx.covered += d
                ctx.totals[1] += d
                timeout = ctx.wait_ev
                if timeout is None or timeout.callbacks is not None:
                    timeout = ctx.wait_ev = armed_timeout(env)
                timeout.callbacks = []
                _push(ctx.queue, (now + d, NORMAL, next(ctx.eids), timeout))
                return (timeout,)
            return ()
        # post the receive and park on one event, which the sender schedules
        seq = st.seq = st.seq + 1
        # the request and the event of the last parked receive, used again once it is complete
        req = ctx.park_req
        source = self.source
        tag = self.tag
        size = self.size
        if req is None:
            req = ctx.park_req = _comm.Request("recv", ctx.pid, source, tag, size, now, seq)
        else:
            req.op = "recv"  # the last parked call may have been a rendezvous send
            req.peer = source
            req.tag = tag
            req.size = size
            req.posted = now
            req.seq = seq
            req.done = None  # not complete; the match sets start, done, source and matched_tag
        posted = self.posted
        if posted is None:
            box = st.posted[self.me]
            posted = box.get(self.key)
            if posted is None:
                posted = box[self.key] = deque()
            self.posted = posted
        posted.append(req)
        ev = ctx.park_ev
        if ev is None or ev.callbacks is not None:
            ev = ctx.park_ev = armed_event(env)
        req.event = ev
        ev.callbacks = []
        ctx.parked = PARKED_REQUEST  # accounted as the process resumes (DirectProcess._resume)
        ctx.fast_req = req
        ctx.blocked_elem = elem
        ctx.blocked_for = req
        return (ev,)

    def _checked(self) -> Any:
        """A call before the context's checks accepted the arguments for the direct route: an
        ordinary receive, after which the site keeps what the checks decided if they accepted them
        (with a local cost as :meth:`SendSite._checked` does)."""
        ctx = self.ctx
        elem, source, size, tag, cost = self.elem, self.source, self.size, self.tag, self.cost
        if self.inner is not None:
            ctx.cur = elem
            return ctx._after_local_cost(elem, cost, self.inner.route, source, size, tag)
        result = ctx.recv(elem, source, size, tag, cost)
        kept = ctx.recv_checked  # what the receive's checks decided, when they accepted these arguments
        if (
            kept[0] is elem
            and source.__class__ is int
            and tag.__class__ is int
            and kept[1] == source
            and kept[2] == tag
        ):
            site = self
            if cost:
                site = self.inner = RecvSite(ctx, elem, source, size, tag, 0.0)
            site.key = kept[4]
            site.mail = kept[5]
            site.posted = kept[6]
            site.me = ctx.pid
            site.i = elem.index
            site.env = ctx.env
            site.st = kept[3]
        return result

    def route(self, elem: Element, source: int, size: float, tag: int) -> Any:
        """The receive as a local cost hands on to it (its arguments are this site's own)."""
        return self.recv()
