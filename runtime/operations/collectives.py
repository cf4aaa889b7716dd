"""Collective operations of simulated MPI processes (SimPy): meeting, matching, timing.

The k-th collective call of every process meets the k-th call of all others
(``MPI_COMM_WORLD``); kind and root must agree.  When the last process arrives, each process
finishes at the completion time of its position in the algorithm's schedule
(:mod:`uml2perf_runtime.platform.network`).  The element's local ``cost`` is ``compute`` time, the time
before the last process arrived ``wait``, the algorithm's time ``comm``
(``docs/runtime-semantics.md``, section 3).
"""

from __future__ import annotations

import math
from typing import Any

from simpy.events import Event, Timeout

from ..engine.simpy_access import NORMAL, PARKED_COLLECTIVE, armed_event
from ..engine.simpy_access import push as _push
from ..errors import SimulationError
from ..platform.network import VARIABLE_BLOCKS
from ..spec import Element
from .point_to_point import (
    ROOTED,
    CommState,
    Context,
    account,
    call_name,
    rank,
    size_of,
    spend_cost,
    state,
    trigger_at,
)
from .registry import REDUCING

_INF = float("inf")


class Gathering:
    """The k-th collective call while processes arrive at it."""

    __slots__ = (
        "index",
        "kind",
        "root",
        "size",
        "elem",
        "first_pid",
        "arrived",
        "count",
        "events",
        "reductions",
        "start",
        "offsets",
        "contexts",
        "low",
        "blocks",
    )

    def __init__(
        self,
        index: int,
        kind: str,
        root: int,
        elem: Element,
        first_pid: int,
        nprocs: int,
        contexts: Any = None,
    ) -> None:
        self.contexts = contexts
        self.index = index
        self.kind = kind
        self.root = root
        self.size = 0.0
        #: the smallest size given, and per rank the size (or alltoall row) it gave: blocks that
        #: differ per rank (``MPI_Gatherv``...) are priced by their own bytes (``_offsets``)
        self.low = _INF
        self.blocks: list[Any] = [0.0] * nprocs
        self.elem = elem
        self.first_pid = first_pid
        self.arrived: list[float | None] = [None] * nprocs
        self.count = 0
        self.events: list[Event | None] = [None] * nprocs
        self.start = 0.0
        self.offsets: list[float] = []
        #: per rank, the part of ``offsets`` that is reduction work on the rank's core (or None)
        self.reductions: list[float] | None = None

    def __call__(self) -> str:
        missing = [q for q, t in enumerate(self.arrived) if t is None]
        shown = ", ".join(str(q) for q in missing[:12]) + (", ..." if len(missing) > 12 else "")
        done = [q for q in missing if self.contexts is not None and self.contexts[q].finished]
        gone = ""
        if done:
            names = ", ".join(str(q) for q in done[:12]) + (", ..." if len(done) > 12 else "")
            gone = f"; process{'es' if len(done) > 1 else ''} {names} finished without calling it"
        return (
            f"{call_name(self.kind, self.root)} (collective call #{self.index + 1}): waiting for "
            f"process{'es' if len(missing) > 1 else ''} {shown} "
            f"({self.count} of {len(self.arrived)} arrived{gone})"
        )


def _arrive(
    ctx: Context, elem: Element, kind: str, root: int, size: float, now: float
) -> tuple[CommState, Gathering]:
    """The process joins its next collective call: the shared state and the gathering it joined.

    Both routes (:func:`collective` and :func:`collective_fast`) arrive this way; the first
    process to reach call #n opens its gathering, a later one that calls another collective (or
    another root) there is a mismatch.
    """
    sim = ctx.sim
    st = sim.comm_state or state(sim)
    me = ctx.pid
    index = st.coll_calls[me]
    st.coll_calls[me] = index + 1
    g = st.open.get(index)
    if g is None:
        g = st.open[index] = Gathering(index, kind, root, elem, me, ctx.nprocs, sim.contexts)
    elif g.kind != kind or g.root != root:
        raise _mismatch(ctx, elem, g, kind, root)
    g.arrived[me] = now
    g.count += 1
    g.blocks[me] = size
    if size.__class__ is tuple:  # an alltoall's row: one block per destination
        g.low = -1.0
        size = max(size)
    if size > g.size:
        g.size = size
    if size < g.low:
        g.low = size
    return st, g


def _offsets(st: CommState, g: Gathering) -> list[float]:
    """Per-rank completion offsets of the call: of its blocks when they differ per rank in a
    collective that allows that (gather, scatter, allgather, alltoall), else of its size.

    Equal blocks take the same schedule as they always have (its cache, bit for bit); the size
    of any other collective is the largest one given, as before.
    """
    if g.low != g.size and g.kind in VARIABLE_BLOCKS:
        return st.collectives.block_offsets(g.kind, g.root, _blocks(g))
    return st.collectives.offsets(g.kind, g.root, g.size)


def _blocks(g: Gathering) -> Any:
    """The call's blocks as the network model takes them: per rank a number, or for an alltoall
    per rank its row (a rank that gave one number sends that many bytes to each)."""
    if g.kind != "alltoall":
        return tuple(float(b) for b in g.blocks)
    p = len(g.blocks)
    return tuple(tuple(float(x) for x in b) if b.__class__ is tuple else (float(b),) * p for b in g.blocks)


def blocks_of(ctx: Context, elem: Element, kind: str, value: Any) -> Any:
    """An alltoall's per-destination sizes, checked: a tuple of one non-negative number of bytes
    per rank (the generated code's ``size=[... for dest in range(p.nprocs)]``)."""
    where = f"{_source(ctx)}{elem.describe()} on {ctx.describe()}"
    if kind != "alltoall":
        raise SimulationError(
            f"{where}: {call_name(kind, 0)} is given one size per destination; only alltoall+ sends "
            "a block of its own to each rank",
            hint="give this collective one size (it may read pid: each rank's own block)",
        )
    row = tuple(value)
    if len(row) != ctx.nprocs:
        raise SimulationError(
            f"{where}: {len(row)} sizes for {ctx.nprocs} processes", hint="give one size per destination rank"
        )
    checked = []
    for dest, item in enumerate(row):
        try:
            size = float(item)
        except (TypeError, ValueError):
            size = math.nan
        if not 0.0 <= size < _INF:
            raise SimulationError(
                f"{where}: the size of the block for dest = {dest} is {item!r}",
                hint="a size is a non-negative number of bytes for every destination; "
                "check the size expression (it reads pid, dest and the model's variables)",
            )
        checked.append(size)
    return tuple(checked)


def _source(ctx: Context) -> str:
    """``model.uml: `` (the file the model was generated from), or nothing when unknown."""
    source = getattr(getattr(ctx.sim, "spec", None), "source", None)
    return f"{source}: " if source else ""


def collective(ctx: Context, elem: Element, kind: str, root: int, size: float, cost: float) -> Any:
    """Meet the other processes at this process's next collective call and run the algorithm."""
    if kind in ROOTED and (root.__class__ is not int or not 0 <= root < ctx.nprocs):
        root = rank(ctx, elem, root, "root", wildcard=False)
    cls = size.__class__
    if cls is list or cls is tuple:
        size = blocks_of(ctx, elem, kind, size)
    elif (cls is not int and cls is not float) or not 0 <= size < _INF:
        size = size_of(ctx, elem, size)
    counted = (yield from spend_cost(ctx, elem, cost)) if cost else False
    env = ctx.env
    now = env._now
    nprocs = ctx.nprocs
    if nprocs == 1:
        if not counted:
            ctx.record(elem, "comm", now, now)
        return
    st, g = _arrive(ctx, elem, kind, root, size, now)
    me = ctx.pid
    if g.count < nprocs:
        g.events[me] = ev = armed_event(env)
        ctx.block(elem, g)
        yield ev
        ctx.unblock()
    else:
        del st.open[g.index]
        offsets = _offsets(st, g)
        reductions = st.collectives.reductions(kind, root, g.size) if kind in REDUCING else None
        g.start = now
        g.offsets = offsets
        if reductions is not None:
            # the network part ends before the rank combines what it received on its core
            g.reductions = reductions
            offsets = [t - r for t, r in zip(offsets, reductions, strict=True)]
        for q, waiting in enumerate(g.events):
            if waiting is not None:
                trigger_at(env, waiting, offsets[q])
        if offsets[me] > 0.0:
            yield Timeout(env, offsets[me])
    reduction = g.reductions[me] if g.reductions is not None else 0.0
    account(ctx, elem, counted, now, g.start, g.start + g.offsets[me] - reduction)
    if reduction > 0.0:
        start = env._now
        yield from ctx.spend(reduction * ctx.sim.machine.speed)
        ctx.record_phase(elem, "compute", start, env._now)


def collective_fast(ctx: Context, elem: Element, kind: str, root: int, size: float) -> Any:
    """The direct route of :func:`collective`: no local cost, validated arguments.

    Returns what the caller's ``yield from`` waits for (the event the last process schedules,
    or the timeout of the last process's own part, or nothing); the context's callback
    accounts the time exactly as :func:`collective` does.
    """
    env = ctx.env
    now = env._now
    nprocs = ctx.nprocs
    if nprocs == 1:
        ctx.record(elem, "comm", now, now)
        return ()
    st, g = _arrive(ctx, elem, kind, root, size, now)
    me = ctx.pid
    ctx.fast_start = now
    if g.count < nprocs:
        # park on the context's event of its last parked operation, used again once SimPy has
        # processed it (a process waits in one operation at a time): what Event(env) makes,
        # without a new object per call (as Context.recv does); the process accounts the wait as
        # the event resumes it (DirectProcess._resume)
        ev = ctx.park_ev
        if ev is None or ev.callbacks is not None:
            ev = ctx.park_ev = armed_event(env)
        ev.callbacks = []
        ctx.parked = PARKED_COLLECTIVE
        g.events[me] = ev
        ctx.fast_g = g
        ctx.blocked_elem = elem
        ctx.blocked_for = g
        return (ev,)
    del st.open[g.index]
    offsets = _offsets(st, g)
    g.start = now
    g.offsets = offsets
    queue, eid = ctx.queue, ctx.eids
    for q, waiting in enumerate(g.events):
        if waiting is not None:
            # what trigger_at(env, waiting, offsets[q]) does (SimPy's schedule), inline: this loop
            # wakes every other rank at each collective call; the events are armed (simpy_access)
            _push(queue, (now + offsets[q], NORMAL, next(eid), waiting))
    mine = offsets[me]
    if mine > 0.0:
        ctx.parked = PARKED_COLLECTIVE  # accounted as the process resumes, as a wait above is
        ctx.fast_g = g
        return (Timeout(env, mine),)
    account(ctx, elem, False, now, now, now + mine)
    return ()


def _mismatch(ctx: Context, elem: Element, g: Gathering, kind: str, root: int) -> SimulationError:
    return SimulationError(
        f"collective calls do not match: process {ctx.pid} calls {call_name(kind, root)} at "
        f"{elem.describe()} as its collective call #{g.index + 1}, but process {g.first_pid} "
        f"calls {call_name(g.kind, g.root)} at {g.elem.describe()} as its call #{g.index + 1}",
        hint="every process must call the same collectives in the same order with the same root "
        "(all processes form one communicator); check the guards and loops around these elements",
    )


def barrier(ctx: Context, elem: Element, cost: float) -> Any:
    """Synchronise all processes."""
    return collective(ctx, elem, "barrier", 0, 0, cost)


def bcast(ctx: Context, elem: Element, root: int, size: float, cost: float) -> Any:
    """Broadcast ``size`` bytes from ``root`` to every process."""
    return collective(ctx, elem, "bcast", root, size, cost)


def reduce(ctx: Context, elem: Element, root: int, size: float, cost: float) -> Any:
    """Combine ``size`` bytes of every process at ``root``."""
    return collective(ctx, elem, "reduce", root, size, cost)


def allreduce(ctx: Context, elem: Element, size: float, cost: float) -> Any:
    """Combine ``size`` bytes of every process and give the result to all."""
    return collective(ctx, elem, "allreduce", 0, size, cost)


def gather(ctx: Context, elem: Element, root: int, size: float, cost: float) -> Any:
    """Collect ``size`` bytes from every process at ``root`` (``p * size`` in total)."""
    return collective(ctx, elem, "gather", root, size, cost)


def scatter(ctx: Context, elem: Element, root: int, size: float, cost: float) -> Any:
    """Send a different ``size``-byte block from ``root`` to every process."""
    return collective(ctx, elem, "scatter", root, size, cost)


def allgather(ctx: Context, elem: Element, size: float, cost: float) -> Any:
    """Every process contributes ``size`` bytes and receives everybody's (``p * size``)."""
    return collective(ctx, elem, "allgather", 0, size, cost)


def alltoall(ctx: Context, elem: Element, size: float, cost: float) -> Any:
    """Every process sends a distinct ``size``-byte block to every other process."""
    return collective(ctx, elem, "alltoall", 0, size, cost)


__all__ = [
    "Gathering",
    "blocks_of",
    "collective",
    "collective_fast",
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "gather",
    "scatter",
    "allgather",
    "alltoall",
]
