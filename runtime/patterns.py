"""Threads inside a process: parallel regions, fork, critical sections, pipelines, task pools.

Each thread is a context of its own (``Context._new_thread``) that shares its process's
variables ``v``, element statistics and node, and competes for the node's cores.  The calling
context waits for its threads without using a core; the region's wall time counts as the
process's compute time (see the modelling choices in ``context.py``).  ``Context`` delegates
``p.parallel``, ``p.fork``, ``p.critical``, ``p.pipeline`` and ``p.taskpool`` here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from simpy.events import AllOf
from simpy.resources.resource import Resource
from simpy.resources.store import Store

from .errors import LimitError, ModelRuntimeError
from .limits import ENVIRONMENT as LIMIT_VARIABLES
from .limits import current as current_limits
from .process import COMPUTE, WAIT
from .spec import Element


def _call_body(body: Callable[..., Any], ctx: Any, v: Any) -> Any:
    """Call a branch/stage/body function; return its generator or None."""
    gen = body(ctx, v)
    if gen is None or not (hasattr(gen, "send") or gen.__class__ is tuple):
        return None
    return gen


def _thread_count(ctx: Any, elem: Element, value: Any, what: str) -> int:
    """Validate a thread or item count given by the model, against its limit."""
    try:
        as_float = float(value)
    except (TypeError, ValueError):
        as_float = math.nan
    if not (0.0 <= as_float < math.inf) or as_float != math.floor(as_float):
        raise ModelRuntimeError(
            f"{what} of {elem.describe()} is {value!r} on {ctx.describe()}: "
            "it must be a non-negative whole number",
            element_name=elem.name,
            element_id=elem.xmi_id,
            line=elem.line,
            pid=ctx.pid,
            tid=ctx.tid,
        )
    count = int(as_float)
    name = "threads" if "thread" in what else "iterations"
    bound = getattr(current_limits(), name)
    if count > bound:
        raise LimitError(
            f"{what} of {elem.describe()} is {value:,.0f} on {ctx.describe()}, more than the limit "
            f"of {bound:,} ({name})",
            kind=name,
            hint=f"raise it with --limit {name}=N or the environment variable {LIMIT_VARIABLES[name]}",
        )
    return count


def _run_threads(ctx: Any, elem: Element, bodies: Sequence[Callable[[Any], Any]], description: str) -> Any:
    """Start one thread per runner, wait for all, account the region on this context."""
    ctx.cur = elem
    env = ctx.env
    start = env._now
    n = len(bodies)
    if n:
        sim = ctx.sim
        procs = [sim.start_thread(ctx._new_thread(tid, n), runner) for tid, runner in enumerate(bodies)]
        ctx.block(elem, description)
        yield AllOf(env, procs)
        ctx.blocked_for = None
    _region_done(ctx, elem, start)


def _region_done(ctx: Any, elem: Element, start: float) -> None:
    """Account a thread region: wall time as process compute, exclusive zero."""
    d = ctx.env._now - start
    i = elem.index
    ctx.calls[i] += 1
    ctx.incl[i] += d
    child = ctx.process.child
    if child is None:
        child = ctx._child_list()
    child[i] += d
    ctx.covered += d
    ctx.totals[COMPUTE] += d
    ctx._note(elem, -1, start, start + d)


def parallel(ctx: Any, elem: Element, threads: int, body: Callable[[Any, Any], Any]) -> Any:
    """OpenMP-style region: ``body(t, v)`` once per thread ``t.tid`` in 0..threads-1."""
    n = _thread_count(ctx, elem, threads, "number of threads")
    v = ctx.v

    def runner(t: Any) -> Any:
        gen = _call_body(body, t, v)
        if gen is not None:
            yield from gen

    return _run_threads(ctx, elem, [runner] * n, f"the {n} threads of parallel region {elem.describe()}")


def fork(ctx: Any, elem: Element, branches: Iterable[Callable[[Any, Any], Any]]) -> Any:
    """Run each branch ``f(t, v)`` concurrently as a thread of this process and join."""
    v = ctx.v
    runners = []
    for branch in branches:

        def runner(t: Any, branch: Callable[[Any, Any], Any] = branch) -> Any:
            gen = _call_body(branch, t, v)
            if gen is not None:
                yield from gen

        runners.append(runner)
    return _run_threads(ctx, elem, runners, f"the {len(runners)} branches of fork {elem.describe()}")


def critical(ctx: Any, elem: Element, name: str, body: Callable[[Any, Any], Any]) -> Any:
    """``body(p, v)`` under this process's lock ``name``; waiting time counts as wait."""
    ctx.enter(elem)
    proc = ctx.process
    locks = proc._locks
    if locks is None:
        locks = proc._locks = {}
    lock = locks.get(name)
    if lock is None:
        lock = locks[name] = Resource(ctx.env, capacity=1)
    env = ctx.env
    t0 = env._now
    request = lock.request()
    if not request.triggered:
        ctx.block(elem, f"lock '{name}'")
    yield request
    ctx.blocked_for = None
    waited = env._now - t0
    if waited > 0.0:
        ctx.totals[WAIT] += waited
        ctx._wait_list()[elem.index] += waited
        ctx._note(elem, WAIT, t0, t0 + waited)
    try:
        gen = _call_body(body, ctx, ctx.v)
        if gen is not None:
            yield from gen
    finally:
        lock.release(request)
    ctx.leave(elem)


def pipeline(
    ctx,
    elem: Element,
    items: int,
    stages: Sequence[Callable[[Any, Any], Any]],
    *,
    overhead: float = 0.0,
    startup: float = 0.0,
) -> Any:
    """A pipeline over ``items``: stage s handles item k after stage s-1 did item k.

    Each stage is a thread (``tid`` = stage index) calling ``stage(t, v)``
    once per item with ``t.item = k``; stages are connected by unbounded
    queues, so a stage waits only for its predecessor.  ``overhead`` seconds
    of CPU are spent by a stage for every item it hands on (queueing,
    wake-up), ``startup`` once by the calling thread before the stages start.
    """
    n = _thread_count(ctx, elem, items, "number of items")
    overhead = _pattern_cost(ctx, elem, overhead, "overhead")
    stages = tuple(stages)
    count = len(stages)
    v = ctx.v
    queues = [Store(ctx.env) for _ in range(count - 1)] if n else []

    def make_runner(s: int) -> Callable[[Any], Any]:
        stage = stages[s]
        inbox = queues[s - 1] if s > 0 else None
        outbox = queues[s] if s < count - 1 else None

        def runner(t: Any) -> Any:
            env = t.env
            for k in range(n):
                if inbox is not None:
                    t0 = env._now
                    get = inbox.get()
                    if not get.triggered:
                        t.block(elem, lambda s=s, k=k: f"item {k} from stage {s - 1} of pipeline")
                    yield get
                    t.blocked_for = None
                    waited = env._now - t0
                    if waited > 0.0:
                        t.totals[WAIT] += waited
                        t._note(elem, WAIT, t0, t0 + waited)
                t.item = k
                if overhead > 0.0:
                    yield from _overhead(t, elem, overhead)
                gen = _call_body(stage, t, v)
                if gen is not None:
                    yield from gen
                if outbox is not None:
                    outbox.put(k)

        return runner

    runners = [make_runner(s) for s in range(count)] if n else []
    region = _run_threads(ctx, elem, runners, f"the {count} stages of pipeline {elem.describe()}")
    return _after_startup(ctx, elem, _pattern_cost(ctx, elem, startup, "startup"), region)


def _pattern_cost(ctx: Any, elem: Element, value: Any, what: str) -> float:
    """An ``overhead`` or ``startup`` tag of a pipeline or task pool: seconds, finite, at least 0."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if not (0.0 <= seconds < math.inf):
        raise ctx._bad_cost(elem, value, what)
    return seconds


def _overhead(ctx: Any, t_elem: Element, seconds: float) -> Any:
    """Spend a per-item overhead on this thread's core, accounted to the pattern as compute."""
    t0 = ctx.env._now
    yield from ctx.spend(seconds)
    ctx.record_phase(t_elem, "compute", t0, ctx.env._now)


def _after_startup(ctx: Any, elem: Element, seconds: float, region: Any) -> Any:
    """Spend the pattern's start-up cost on the calling thread, then run the region."""
    if seconds > 0.0:
        t0 = ctx.env._now
        yield from ctx.spend(seconds)
        ctx.record_phase(elem, "compute", t0, ctx.env._now)
    return (yield from region)


def taskpool(
    ctx,
    elem: Element,
    threads: int,
    items: int,
    body: Callable[[Any, Any], Any],
    *,
    overhead: float = 0.0,
    startup: float = 0.0,
) -> Any:
    """``items`` tasks served by ``threads`` workers from a shared queue, in order.

    ``overhead`` seconds of CPU are spent by a worker for every task it
    takes (dequeueing, dispatch), ``startup`` once by the calling thread
    before the workers start.
    """
    n_threads = _thread_count(ctx, elem, threads, "number of threads")
    n_items = _thread_count(ctx, elem, items, "number of items")
    overhead = _pattern_cost(ctx, elem, overhead, "overhead")
    v = ctx.v
    next_item = [0]

    def runner(t: Any) -> Any:
        while next_item[0] < n_items:
            k = next_item[0]
            next_item[0] = k + 1
            t.item = k
            if overhead > 0.0:
                yield from _overhead(t, elem, overhead)
            gen = _call_body(body, t, v)
            if gen is not None:
                yield from gen

    if n_items and not n_threads:
        raise ModelRuntimeError(
            f"task pool {elem.describe()} has {n_items} items but no threads on {ctx.describe()}",
            element_name=elem.name,
            element_id=elem.xmi_id,
            line=elem.line,
            pid=ctx.pid,
            tid=ctx.tid,
        )
    workers = min(n_threads, n_items)
    region = _run_threads(
        ctx, elem, [runner] * workers, f"the {workers} workers of task pool {elem.describe()}"
    )
    return _after_startup(ctx, elem, _pattern_cost(ctx, elem, startup, "startup"), region)


__all__ = ["parallel", "fork", "critical", "pipeline", "taskpool"]
