"""Point-to-point messages of simulated MPI processes (SimPy), and the state and helpers
the communication layer shares with ``collectives.py``.

:class:`~uml2perf_runtime.engine.context.Context` takes the direct route for a blocking send or
receive without local cost (in its own methods, on the state kept here) and delegates
everything else to the generator functions of this module (``yield from comm.send(ctx, elem,
dest, size, tag, cost)`` and so on).  The full semantics, with formulas, are in
``docs/runtime-semantics.md``; in short:

Point-to-point
    Messages match by (source, destination, tag) and are non-overtaking per such triple, as in
    MPI.  ``source = -1`` / ``tag = -1`` in a receive match any source / tag; among several
    candidate messages the one sent first wins, and among several posted receives a message
    goes to the one posted first.  A message of ``size`` bytes takes ``latency + size /
    bandwidth`` of the link class between the two processes' nodes.  Messages up to the
    machine's eager limit (default 64 KiB) are *eager*: the send returns once its local cost is
    spent and the data arrives ``latency + size/bandwidth`` later.  Larger messages use the
    *rendezvous* protocol: the transfer starts when both the send and the matching receive are
    posted, and both sides finish when it ends.

Accounting
    The element's local ``cost`` is ``compute`` time; time blocked before the partner (or the
    last process of a collective) arrived is ``wait``; the transfer or algorithm time is
    ``comm``.  The first phase is recorded with ``ctx.record`` (which counts the call), further
    phases with ``ctx.record_phase``.

The direct route of a blocking send/receive pair allocates one message tuple and schedules at
most one SimPy event: a waiting receiver gets a single ``Event`` that the sender schedules
directly at the arrival time.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Final

from simpy.events import Event, Timeout

from ..engine.simpy_access import PARKED_REQUEST, armed_event, trigger_at
from ..errors import SimulationError
from ..platform.interface import network_of
from ..platform.machine import DEFAULT_EAGER_LIMIT
from ..spec import Element
from .registry import OPERATIONS

#: The context of a simulated process or thread (``uml2perf_runtime.engine.context.Context``, which
#: imports this module): the hooks this layer uses are listed in that module's docstring.
Context = Any

ANY = -1
_INF = math.inf

#: Collectives with a root process, from the table of operations.
ROOTED = frozenset(name for name, op in OPERATIONS.items() if op.rooted)


# ---------------------------------------------------------------------------------------------
# State
# ---------------------------------------------------------------------------------------------


#: One message in flight, sent and not yet received: ``(seq, arrival, sent, size, sender, src,
#: tag)``.  ``sent`` is when the send was posted (after its local cost), ``arrival`` when an eager
#: message's data is at the receiver (infinite for rendezvous), ``sender`` the send's
#: :class:`Request` for the rendezvous protocol (None for eager messages, whose sender never
#: waits).  A plain tuple: a send makes one, and nothing more.
Message = tuple[int, float, float, float, "Request | None", int, int]
_SEQ: Final = 0
_ARRIVAL: Final = 1
_SENT: Final = 2
_SIZE: Final = 3
_SENDER: Final = 4
_SRC: Final = 5
_TAG: Final = 6


class Request:
    """A pending or finished send or receive (what ``isend``/``irecv`` return).

    ``start`` and ``done`` are the times the transfer began and ended, known once the request
    is matched (``done is None`` before).  ``event`` exists only while a context waits for a
    request whose end is not yet known.  Calling a request describes it for deadlock reports.
    """

    __slots__ = (
        "op",
        "pid",
        "peer",
        "tag",
        "size",
        "posted",
        "seq",
        "start",
        "done",
        "event",
        "source",
        "matched_tag",
        "into",
    )

    def __init__(self, op: str, pid: int, peer: int, tag: int, size: float, posted: float, seq: int) -> None:
        self.op = op
        self.pid = pid
        self.peer = peer
        self.tag = tag
        self.size = size
        self.posted = posted
        self.seq = seq
        self.start: float | None = None
        self.done: float | None = None
        self.event: Event | None = None
        self.source: int | None = None
        self.matched_tag: int | None = None
        #: ``(variables, name)``: the model variable the matched source goes to as a wait
        #: completes the request (``irecv+ sender = "W"``), or None
        self.into: tuple[Any, str] | None = None

    @property
    def complete(self) -> bool:
        """True once the request has been matched (its end time is known)."""
        return self.done is not None

    def __call__(self) -> str:
        if self.op == "recv":
            src = "any process" if self.peer == ANY else f"process {self.peer}"
            tag = "any tag" if self.tag == ANY else f"tag {self.tag}"
            return f"recv from {src} {tag}"
        return (
            f"send of {_fmt_bytes(self.size)} to process {self.peer} tag {self.tag}: "
            f"rendezvous, waiting for the matching receive"
        )

    def __repr__(self) -> str:
        state = f"done at {self.done:g}s" if self.done is not None else "pending"
        return f"<Request {self()} {state}>"


class CommState:
    """Per-simulation state of the communication layer (``sim.comm_state``)."""

    __slots__ = (
        "env",
        "nprocs",
        "mail",
        "posted",
        "wild",
        "pending",
        "seq",
        "pair",
        "node_of",
        "machine",
        "network",
        "eager_limit",
        "wakeup",
        "coll_calls",
        "open",
        "_collectives",
    )

    def __init__(self, sim: Any) -> None:
        self.env = sim.env
        self.nprocs: int = sim.nprocs
        n = self.nprocs
        #: per destination: tag * nprocs + source -> unmatched messages in send order
        self.mail: list[dict[int, deque[Message]]] = [{} for _ in range(n)]
        #: per destination: tag * nprocs + source -> posted receives without wildcards, in post order
        self.posted: list[dict[int, deque[Request]]] = [{} for _ in range(n)]
        #: per destination: posted receives with a wildcard source or tag, in post order
        self.wild: list[list[Request]] = [[] for _ in range(n)]
        #: per process: requests of isend/irecv that ``wait(E, None)`` has not yet seen complete
        self.pending: list[list[Request]] = [[] for _ in range(n)]
        self.seq = 0
        self.pair: dict[int, tuple[float, float]] = {}
        self.node_of = [sim.node_of(pid) for pid in range(n)]
        self.machine = sim.machine
        #: the run's :class:`~..platform.interface.Network`, which prices messages and collectives
        self.network = getattr(sim, "network", None) or network_of(sim.machine)
        limit = getattr(sim.machine, "eager_limit", None)
        self.eager_limit = DEFAULT_EAGER_LIMIT if limit is None else limit
        #: per node: the seconds a message to a process there adds (the machine's ``wakeup`` on a
        #: node running more processes than cores, where a receiver must get a core to take it)
        crowded = getattr(sim.machine, "crowded_wakeup", None)
        self.wakeup: list[float] = crowded(self.node_of) if crowded is not None else []
        self.coll_calls = [0] * n
        #: collective call index -> its ``collectives.Gathering`` while processes arrive
        self.open: dict[int, Any] = {}
        self._collectives: Any = None

    def link(self, src: int, dst: int, size: float = 0.0) -> tuple[float, float]:
        """``(latency, seconds per byte)`` of a ``size``-byte message between two processes.

        A plain link (one line for every size) is cached per pair in ``pair``; a link with
        pieces per size range answers the line of the piece ``size`` falls in, and is never put
        in ``pair`` (so a caller that looks there first comes here with the size).
        """
        key = src * self.nprocs + dst
        hit = self.pair.get(key)
        if hit is None:
            na, nb = self.node_of[src], self.node_of[dst]
            network = self.network
            alpha, beta = network.pair_line(na, nb, size)
            extra = self.wakeup[nb] if self.wakeup else 0.0
            if network.sized(na, nb):
                return (alpha + extra, beta) if extra else (alpha, beta)
            hit = self.pair[key] = (alpha + extra if extra else alpha, beta)
        return hit

    def handshake(self, src: int, dst: int) -> float:
        """Seconds of the rendezvous handshake between two processes (the link's ``handshake``)."""
        return self.network.handshake(self.node_of[src], self.node_of[dst])

    @property
    def collectives(self) -> Any:
        """The collective cost model of this machine and placement (built on first use).

        It is a :class:`~uml2perf_runtime.platform.network.CollectiveModel`, imported here because its
        schedules need numpy and a model without collectives should not pay for importing it.
        """
        model = self._collectives
        if model is None:
            model = self._collectives = self.network.collective_model(self.node_of)
        return model


def state(sim: Any) -> CommState:
    """The communication state of ``sim``, created on first use."""
    st = sim.comm_state
    if st is None:
        st = sim.comm_state = CommState(sim)
    return st


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _fmt_bytes(size: float) -> str:
    return f"{int(size)} bytes" if float(size).is_integer() else f"{size:g} bytes"


def call_name(kind: str, root: int) -> str:
    return f"{kind}(root={root})" if kind in ROOTED else kind


def _complete(env: Any, req: Request, start: float, done: float) -> None:
    """Mark ``req`` matched; wake its waiter at ``done`` if it is already waiting."""
    req.start = start
    req.done = done
    ev = req.event
    if ev is not None:
        req.event = None
        trigger_at(env, ev, done - env._now)


def _error(ctx: Context, elem: Element, message: str, hint: str) -> SimulationError:
    return SimulationError(f"{elem.describe()} on {ctx.describe()}: {message}", hint=hint)


def rank(ctx: Context, elem: Element, value: Any, what: str, wildcard: bool) -> int:
    """Validate a process number given by the model (``-1`` allowed as wildcard where valid)."""
    try:
        as_float = float(value)
    except (TypeError, ValueError):
        as_float = math.nan
    rank = int(as_float) if as_float == as_float and math.isfinite(as_float) else None
    low = ANY if wildcard else 0
    if rank is None or rank != as_float or not low <= rank < ctx.nprocs:
        allowed = f"0..{ctx.nprocs - 1}" + (" or -1 for any" if wildcard else "")
        raise _error(
            ctx,
            elem,
            f"{what} is {value!r}, but there are {ctx.nprocs} processes",
            f"{what} must be a process number {allowed}; check its expression",
        )
    return rank


def _tag(ctx: Context, elem: Element, value: Any, wildcard: bool) -> int:
    try:
        as_float = float(value)
    except (TypeError, ValueError):
        as_float = math.nan
    low = ANY if wildcard else 0
    if not math.isfinite(as_float) or as_float != int(as_float) or as_float < low:
        raise _error(
            ctx,
            elem,
            f"message tag is {value!r}",
            "a tag is a whole number >= 0" + (" (or -1 for any tag)" if wildcard else ""),
        )
    return int(as_float)


def size_of(ctx: Context, elem: Element, value: Any) -> float:
    try:
        size = float(value)
    except (TypeError, ValueError):
        size = math.nan
    if not 0.0 <= size < math.inf:
        raise _error(
            ctx,
            elem,
            f"message size is {value!r}",
            "a size is a non-negative number of bytes; check the size expression",
        )
    return size


def spend_cost(ctx: Context, elem: Element, cost: float) -> Any:
    """Spend and record the element's local cost; returns whether a call was recorded."""
    if cost:
        env = ctx.env
        t0 = env._now
        yield from ctx.spend(cost)
        ctx.record(elem, "compute", t0, env._now)
        return True
    return False


def account(ctx: Context, elem: Element, counted: bool, posted: float, start: float, end: float) -> None:
    """Record the blocked interval ``[posted, end]``: ``wait`` before ``start``, ``comm`` after."""
    if start > posted:
        if counted:
            ctx.record_phase(elem, "wait", posted, start)
        else:
            ctx.record(elem, "wait", posted, start)
            counted = True
    else:
        start = posted
    if end > start or not counted:
        if counted:
            ctx.record_phase(elem, "comm", start, end)
        else:
            ctx.record(elem, "comm", start, end)


# ---------------------------------------------------------------------------------------------
# Matching
# ---------------------------------------------------------------------------------------------


def take_message(st: CommState, me: int, source: int, tag: int) -> Message | None:
    """Remove and return the first sent message matching a receive, or None."""
    box = st.mail[me]
    if source != ANY and tag != ANY:
        q = box.get(tag * st.nprocs + source)
        return q.popleft() if q else None
    n = st.nprocs
    best: deque[Message] | None = None
    for key, q in box.items():
        if q and (source == ANY or key % n == source) and (tag == ANY or key // n == tag):
            if best is None or q[0][_SEQ] < best[0][_SEQ]:
                best = q
    return best.popleft() if best is not None else None


def take_receive(st: CommState, src: int, dst: int, tag: int) -> Request | None:
    """Remove and return the first posted receive matching a message, or None."""
    q = st.posted[dst].get(tag * st.nprocs + src)
    req = q[0] if q else None
    wild = st.wild[dst]
    if wild:
        for i, w in enumerate(wild):
            if (w.peer == ANY or w.peer == src) and (w.tag == ANY or w.tag == tag):
                if req is None or w.seq < req.seq:
                    del wild[i]
                    return w
                break
    if req is not None:
        q.popleft()  # type: ignore[union-attr]
    return req


def _post_receive(st: CommState, req: Request) -> None:
    if req.peer == ANY or req.tag == ANY:
        st.wild[req.pid].append(req)
        return
    key = req.tag * st.nprocs + req.peer
    box = st.posted[req.pid]
    q = box.get(key)
    if q is None:
        q = box[key] = deque()
    q.append(req)


def _match(ctx: Context, st: CommState, msg: Message, dst: int, req: Request) -> None:
    """Pair a message to ``dst`` with a receive, both present now; set both requests' times."""
    env = st.env
    now = env._now
    src = msg[_SRC]
    req.source = src
    req.matched_tag = msg[_TAG]
    sender = msg[_SENDER]
    if sender is None:  # eager: the data left at msg.sent and arrives at msg.arrival
        arrival = msg[_ARRIVAL]
        _complete(env, req, msg[_SENT], arrival if arrival > now else now)
    else:  # rendezvous: the handshake and the transfer start now that both sides are there
        size = msg[_SIZE]
        lat, beta = st.link(src, dst, size)
        arrival = now + (lat + st.handshake(src, dst)) + size * beta
        _complete(env, sender, now, arrival)
        _complete(env, req, now, arrival)
    ctx.record_message(src, dst, msg[_SIZE], msg[_TAG], req.start, arrival)  # type: ignore[arg-type]


def _post_send(ctx: Context, st: CommState, dest: int, size: float, tag: int, sender: Request | None) -> None:
    """Create a message now and deliver it to a posted receive or the mailbox."""
    env = st.env
    now = env._now
    me = ctx.pid
    if sender is None:
        lat, beta = st.link(me, dest, size)
        arrival = now + lat + size * beta
    else:
        arrival = math.inf
    seq = st.seq = st.seq + 1
    msg: Message = (seq, arrival, now, size, sender, me, tag)
    req = take_receive(st, me, dest, tag)
    if req is not None:
        _match(ctx, st, msg, dest, req)
    else:
        box = st.mail[dest]
        key = tag * st.nprocs + me
        q = box.get(key)
        if q is None:
            q = box[key] = deque()
        q.append(msg)


# ---------------------------------------------------------------------------------------------
# Point-to-point operations
# ---------------------------------------------------------------------------------------------


def recv_posted(
    ctx: Context, st: CommState, elem: Element, msg: Message | None, source: int, size: float, tag: int
) -> Any:
    """The direct route of a receive that must wait: post it (or match a rendezvous message).

    ``msg`` is a rendezvous message already taken from the mailbox, or None.  Returns what the
    caller's ``yield from`` waits for; the time is accounted as :func:`recv` accounts it.
    """
    env = ctx.env
    now = env._now
    me = ctx.pid
    seq = st.seq = st.seq + 1
    req = Request("recv", me, source, tag, size, now, seq)
    ctx.matched = req  # its match sets the source
    if msg is not None:
        _match(ctx, st, msg, me, req)
    else:
        _post_receive(st, req)
    done = req.done
    if done is None:
        req.event = ev = armed_event(env)
        ctx.parked = PARKED_REQUEST  # accounted as the process resumes (DirectProcess._resume)
        ctx.fast_req = req
        ctx.blocked_elem = elem
        ctx.blocked_for = req
        return (ev,)
    account(ctx, elem, False, now, req.start, done)  # type: ignore[arg-type]
    return (Timeout(env, done - now),) if done > now else ()


def send(ctx: Context, elem: Element, dest: int, size: float, tag: int, cost: float) -> Any:
    """Blocking send: eager (returns after ``cost``) or rendezvous (waits for the receiver)."""
    if dest.__class__ is not int or not 0 <= dest < ctx.nprocs:
        dest = rank(ctx, elem, dest, "destination", wildcard=False)
    if tag.__class__ is not int or tag < 0:
        tag = _tag(ctx, elem, tag, wildcard=False)
    cls = size.__class__
    if (cls is not int and cls is not float) or not 0 <= size < _INF:
        size = size_of(ctx, elem, size)
    counted = (yield from spend_cost(ctx, elem, cost)) if cost else False
    sim = ctx.sim
    st = sim.comm_state or state(sim)
    env = ctx.env
    now = env._now
    if size <= st.eager_limit:
        _post_send(ctx, st, dest, size, tag, None)
        if not counted:
            ctx.record(elem, "comm", now, now)
        return
    req = Request("send", ctx.pid, dest, tag, size, now, 0)
    _post_send(ctx, st, dest, size, tag, req)
    if req.done is None:
        req.event = ev = armed_event(env)
        ctx.block(elem, req)
        yield ev
        ctx.unblock()
    elif req.done > env._now:
        yield Timeout(env, req.done - env._now)
    account(ctx, elem, counted, now, req.start, req.done)  # type: ignore[arg-type]


def recv(ctx: Context, elem: Element, source: int, size: float, tag: int, cost: float) -> Any:
    """Blocking receive from ``source`` (-1: any) with ``tag`` (-1: any)."""
    if source.__class__ is not int or not ANY <= source < ctx.nprocs:
        source = rank(ctx, elem, source, "source", wildcard=True)
    if tag.__class__ is not int or tag < ANY:
        tag = _tag(ctx, elem, tag, wildcard=True)
    counted = (yield from spend_cost(ctx, elem, cost)) if cost else False
    sim = ctx.sim
    st = sim.comm_state or state(sim)
    env = ctx.env
    me = ctx.pid
    now = env._now
    msg = take_message(st, me, source, tag)
    if msg is not None and msg[_SENDER] is None:
        # Fast path: an eager message already sent; no request object needed.
        ctx.matched = msg[_SRC]
        arrival = msg[_ARRIVAL]
        if arrival > now:
            yield Timeout(env, arrival - now)
        else:
            arrival = now
        ctx.record_message(msg[_SRC], me, msg[_SIZE], msg[_TAG], msg[_SENT], arrival)
        if counted:
            if arrival > now:
                ctx.record_phase(elem, "comm", now, arrival)
        else:
            ctx.record(elem, "comm", now, arrival)
        return
    seq = st.seq = st.seq + 1
    req = Request("recv", me, source, tag, size, now, seq)
    ctx.matched = req  # its match sets the source
    if msg is not None:
        _match(ctx, st, msg, me, req)
    else:
        _post_receive(st, req)
    if req.done is None:
        req.event = ev = armed_event(env)
        ctx.block(elem, req)
        yield ev
        ctx.unblock()
    elif req.done > env._now:
        yield Timeout(env, req.done - env._now)
    account(ctx, elem, counted, now, req.start, req.done)  # type: ignore[arg-type]


def isend(ctx: Context, elem: Element, dest: int, size: float, tag: int, cost: float) -> Any:
    """Non-blocking send; returns a :class:`Request` (complete at once for eager messages)."""
    return (yield from posted_isend(ctx, elem, dest, size, tag, cost, _post_send))


def posted_isend(
    ctx: Context,
    elem: Element,
    dest: int,
    size: float,
    tag: int,
    cost: float,
    post: Callable[[Context, CommState, int, float, int, Request | None], None],
) -> Any:
    """A non-blocking send whose message ``post`` hands to the network (per pair or on links).

    An eager message is complete at once (``post`` gets no request); a rendezvous one stays
    pending until its transfer ends.
    """
    dest = rank(ctx, elem, dest, "destination", wildcard=False)
    tag = _tag(ctx, elem, tag, wildcard=False)
    size = size_of(ctx, elem, size)
    counted = (yield from spend_cost(ctx, elem, cost)) if cost else False
    st = state(ctx.sim)
    now = ctx.env._now
    req = Request("send", ctx.pid, dest, tag, size, now, 0)
    if size <= st.eager_limit:
        post(ctx, st, dest, size, tag, None)
        req.start = req.done = now
    else:
        post(ctx, st, dest, size, tag, req)
        _keep_pending(st.pending[ctx.pid], req, now)
    if not counted:
        ctx.record(elem, "comm", now, now)
    return req


def irecv(ctx: Context, elem: Element, source: int, size: float, tag: int, cost: float) -> Any:
    """Non-blocking receive; returns a :class:`Request` to pass to ``wait``."""
    source = rank(ctx, elem, source, "source", wildcard=True)
    tag = _tag(ctx, elem, tag, wildcard=True)
    counted = (yield from spend_cost(ctx, elem, cost)) if cost else False
    st = state(ctx.sim)
    now = ctx.env._now
    seq = st.seq = st.seq + 1
    req = Request("recv", ctx.pid, source, tag, size, now, seq)
    ctx.matched = req  # its match sets the source (irecv+ sender: see name_sender)
    msg = take_message(st, ctx.pid, source, tag)
    if msg is not None:
        _match(ctx, st, msg, ctx.pid, req)
    else:
        _post_receive(st, req)
    if req.done is None or req.done > now:
        _keep_pending(st.pending[ctx.pid], req, now)
    if not counted:
        ctx.record(elem, "comm", now, now)
    return req


def _keep_pending(pending: list[Request], req: Request, now: float) -> None:
    """Remember an unfinished request of a process for ``wait(E, None)``.

    Finished requests are dropped now and then, so a model that posts without
    ever waiting does not keep them all.
    """
    pending.append(req)
    if len(pending) % 64 == 0:
        pending[:] = [r for r in pending if r.done is None or r.done > now]


def _requests(ctx: Context, elem: Element, requests: Any) -> list[Request]:
    if isinstance(requests, Request):
        return [requests]
    if requests is None:
        return list(state(ctx.sim).pending[ctx.pid])
    if isinstance(requests, Iterable):
        reqs = list(requests)
        if all(isinstance(r, Request) for r in reqs):
            return reqs
    raise _error(
        ctx,
        elem,
        f"wait needs the requests returned by isend/irecv, got {requests!r}",
        "pass the variable that holds the result of p.isend(...) or p.irecv(...), or a list of them",
    )


def wait(ctx: Context, elem: Element, requests: Any, cost: float) -> Any:
    """Wait until every given request is complete (``MPI_Waitall``; one request also works).

    ``requests`` None means every request this process posted with isend/irecv
    and no ``wait(E, None)`` has seen complete yet (what generated code passes:
    a UML wait action names no requests).  The threads of a process share that
    set, so a thread may wait for a request another thread posted.
    The blocked time is ``comm`` from the start of the last-finishing transfer on, ``wait``
    before it.
    """
    everything = requests is None
    reqs = _requests(ctx, elem, requests)
    counted = (yield from spend_cost(ctx, elem, cost)) if cost else False
    env = ctx.env
    posted = env._now
    for req in reqs:
        if req.pid != ctx.pid:
            raise _error(
                ctx,
                elem,
                f"waits for a request of process {req.pid}",
                "a process can only wait for its own isend/irecv requests",
            )
        if req.done is None:
            ev = req.event  # another thread of this process may wait for it already
            if ev is None:
                req.event = ev = armed_event(env)
            ctx.block(elem, req)
            yield ev
            ctx.unblock()
    for req in reqs:
        if req.into is not None:  # irecv+ sender = "W": the status's source
            setattr(req.into[0], req.into[1], req.source)
    if everything:
        pending = state(ctx.sim).pending[ctx.pid]
        now = env._now
        seen = set(map(id, reqs))
        pending[:] = [r for r in pending if id(r) not in seen and (r.done is None or r.done > now)]
    if not reqs:
        if not counted:
            ctx.record(elem, "comm", posted, posted)
        return
    last = max(reqs, key=lambda r: r.done)  # type: ignore[arg-type, return-value]
    done: float = last.done  # type: ignore[assignment]
    if done > env._now:
        yield Timeout(env, done - env._now)
    account(ctx, elem, counted, posted, max(last.start, posted), max(done, posted))  # type: ignore[type-var]


def name_sender(ctx: Context, req: Any, variables: Any, name: str) -> None:
    """Let the completion of ``req`` (the process's last ``irecv``) set ``variables.name`` to the
    source it matched: now if it is complete already, else when a wait completes it."""
    if not isinstance(req, Request) or req.op != "recv":
        raise SimulationError(
            f"process {ctx.pid}: 'sender' names no receive: the last receive of the process is not an irecv",
            hint="put the sender tag on the irecv+ whose source it names",
        )
    if req.done is not None and req.done <= ctx.env._now and req not in state(ctx.sim).pending[ctx.pid]:
        setattr(variables, name, req.source)
    else:
        req.into = (variables, name)


__all__ = [
    "name_sender",
    "Message",
    "Request",
    "CommState",
    "state",
    "send",
    "recv",
    "isend",
    "irecv",
    "wait",
    "recv_posted",
    "take_message",
    "take_receive",
    "account",
    "call_name",
    "ROOTED",
    "trigger_at",
    "spend_cost",
    "rank",
    "size_of",
    "ANY",
]
