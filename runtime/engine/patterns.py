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

from ..errors import LimitError, ModelRuntimeError
from ..spec import Element
from .limits import ENVIRONMENT as LIMIT_VARIABLES
from .limits import current as current_limits
from .process import COMPUTE, WAIT

#: ``inspect.CO_GENERATOR``, the flag of a generator function's code (``inspect`` is not loaded for it)
_CO_GENERATOR = 0x20


def _makes_generators(body: Callable[..., Any]) -> bool:
    """Whether calling ``body`` only makes a generator (a generator function, as generated code's
    bodies are): then a thread can be started on that generator, no model code having run yet."""
    code = getattr(body, "__code__", None)
    return code is not None and bool(code.co_flags & _CO_GENERATOR)


def _call_body(body: Callable[..., Any], ctx: Any, v: Any) -> Any:
    """Call a branch/stage/body function; return its generator or None."""
    gen = body(ctx, v)
    if gen is None or not (hasattr(gen, "send") or gen.__class__ is tuple):
        return None
    return gen


def _model_error(message: str, ctx: Any, elem: Element) -> ModelRuntimeError:
    """A mistake of the model found while ``ctx`` runs ``elem``, naming both."""
    return ModelRuntimeError(
        message, element_name=elem.name, element_id=elem.xmi_id, line=elem.line, pid=ctx.pid, tid=ctx.tid
    )


def _thread_count(ctx: Any, elem: Element, value: Any, what: str) -> int:
    """Validate a thread or item count given by the model, against its limit."""
    try:
        as_float = float(value)
    except (TypeError, ValueError):
        as_float = math.nan
    if not (0.0 <= as_float < math.inf) or as_float != math.floor(as_float):
        raise _model_error(
            f"{what} of {elem.describe()} is {value!r} on {ctx.describe()}: "
            "it must be a non-negative whole number",
            ctx,
            elem,
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


def _run_generators(ctx: Any, elem: Element, n: int, body: Callable[[Any, Any], Any]) -> Any:
    """``_run_threads`` for ``n`` threads of one generator function ``body``: each thread's process
    starts on the generator ``body(t, v)`` itself (``Simulation.start_generator``)."""
    ctx.cur = elem
    env = ctx.env
    start = env._now
    if n:
        sim = ctx.sim
        v = ctx.v
        procs = []
        for tid in range(n):
            t = ctx._new_thread(tid, n)
            procs.append(sim.start_generator(t, body(t, v)))
        # formatted only if a deadlock report needs it
        ctx.block(elem, lambda: f"the {n} threads of parallel region {elem.describe()}")
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
    if _makes_generators(body):
        return _run_generators(ctx, elem, n, body)
    v = ctx.v

    def runner(t: Any) -> Any:
        # the body's generator (or None), which the thread's process runs itself: no generator here
        return _call_body(body, t, v)

    return _run_threads(ctx, elem, [runner] * n, f"the {n} threads of parallel region {elem.describe()}")


def fork(ctx: Any, elem: Element, branches: Iterable[Callable[[Any, Any], Any]]) -> Any:
    """Run each branch ``f(t, v)`` concurrently as a thread of this process and join."""
    v = ctx.v
    runners = []
    for branch in branches:

        def runner(t: Any, branch: Callable[[Any, Any], Any] = branch) -> Any:
            return _call_body(branch, t, v)  # run by the thread's process itself, as in parallel()

        runners.append(runner)
    return _run_threads(ctx, elem, runners, f"the {len(runners)} branches of fork {elem.describe()}")


def _acquire(ctx: Any, elem: Element, name: str, what: str) -> Any:
    """Wait for this process's lock ``name`` (made on first use): ``(lock, request, start of the wait)``.

    While it waits the process is blocked on ``what`` (deadlock reports name it); the
    caller accounts the waiting time as its element needs and releases ``request``.
    """
    proc = ctx.process
    locks = proc._locks
    if locks is None:
        locks = proc._locks = {}
    lock = locks.get(name)
    if lock is None:
        lock = locks[name] = Resource(ctx.env, capacity=1)
    t0 = ctx.env._now
    request = lock.request()
    if not request.triggered:
        ctx.block(elem, what)
    yield request
    ctx.blocked_for = None
    return lock, request, t0


def critical(ctx: Any, elem: Element, name: str, body: Callable[[Any, Any], Any]) -> Any:
    """``body(p, v)`` under this process's lock ``name``; waiting time counts as wait."""
    ctx.enter(elem)
    lock, request, t0 = yield from _acquire(ctx, elem, name, f"lock '{name}'")
    waited = ctx.env._now - t0
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


#: A pipeline stage's worker about to run a stage that is a task pool: ``id(worker) -> True``.
#: The pool's first call on that worker runs its body once for the worker's item (the stage's
#: workers are the pool's workers) instead of starting threads of its own.
_POOL_STAGES: dict[int, bool] = {}

#: The lock every hand-off of a process holds (an interpreter lock, a shared queue's lock).
HANDOFF_LOCK = "\0hand-off"


def pipeline(
    ctx: Any,
    elem: Element,
    items: int,
    stages: Sequence[Callable[[Any, Any], Any]],
    *,
    overhead: float | None = None,
    startup: float | None = None,
    handoff: float | None = None,
    threads: Sequence[Any] | None = None,
    pools: Sequence[int] = (),
    ordered: Any = False,
    wakeup: float | None = None,
) -> Any:
    """A pipeline over ``items``: stage s handles item k after stage s-1 did item k.

    Stage ``s`` has ``threads[s]`` workers (default one each, ``tid`` numbering
    the workers of all stages in stage order) pulling items from the stage's
    inbox, an unbounded queue that the previous stage fills; each calls
    ``stage(t, v)`` once per item with ``t.item = k``.  A stage of several
    workers hands items on as they finish, or in item order when ``ordered``.
    For every item it takes, a worker spends ``handoff`` seconds holding the
    process's one hand-off lock (serialised: an interpreter or queue lock),
    then ``overhead`` seconds of its own (in parallel); the calling thread
    spends ``startup`` seconds before the workers start.  A worker that had to
    wait for its item resumes ``wakeup`` seconds later, holding the lock.
    Costs not given come from the machine's ``[threads]`` keys (none: nothing).  The stages
    numbered in ``pools`` are task pools: their workers are the pool's, so the
    pool's call in such a stage runs its body once, for the worker's item.
    """
    n = _thread_count(ctx, elem, items, "number of items")
    stages = tuple(stages)
    count = len(stages)
    workers = _stage_threads(ctx, elem, threads, count, n)
    costs = _costs(ctx, elem, overhead, handoff, startup, sum(workers) if n else 0)
    overhead_s, handoff_s, _ = costs
    wakeup_s = _wakeup(ctx, elem, wakeup)
    v = ctx.v
    queues = [Store(ctx.env) for _ in range(count - 1)] if n else []
    in_order = bool(ordered)
    pooled = [s in pools for s in range(count)]

    def make_runner(s: int) -> Callable[[Any], Any]:
        stage = stages[s]
        inbox = queues[s - 1] if s > 0 else None
        outbox = queues[s] if s < count - 1 else None
        taken = [0]
        finished: set[int] = set()
        released = [0]
        pool_stage = pooled[s]

        def runner(t: Any) -> Any:
            env = t.env
            while taken[0] < n:
                k = taken[0]
                taken[0] = k + 1
                if inbox is not None:
                    t0 = env._now
                    get = inbox.get()
                    slept = not get.triggered
                    if slept:
                        t.block(elem, lambda s=s: f"an item from stage {s - 1} of pipeline")
                    k = yield get
                    t.blocked_for = None
                    waited = env._now - t0
                    if waited > 0.0:
                        t.totals[WAIT] += waited
                        t._note(elem, WAIT, t0, t0 + waited)
                    if slept and wakeup_s > 0.0:
                        yield from _handoff(t, elem, wakeup_s)
                t.item = k
                if handoff_s > 0.0:
                    yield from _handoff(t, elem, handoff_s)
                if overhead_s > 0.0:
                    yield from _overhead(t, elem, overhead_s)
                if pool_stage:
                    _POOL_STAGES[id(t)] = True
                try:
                    gen = _call_body(stage, t, v)
                    if gen is not None:
                        yield from gen
                finally:
                    _POOL_STAGES.pop(id(t), None)
                if outbox is None:
                    continue
                if not in_order:
                    outbox.put(k)
                    continue
                finished.add(k)
                while released[0] in finished:
                    finished.discard(released[0])
                    outbox.put(released[0])
                    released[0] += 1

        return runner

    runners = [runner for s in range(count) for runner in [make_runner(s)] * workers[s]] if n else []
    total = len(runners)
    region = _run_threads(
        ctx, elem, runners, f"the {total} workers of the {count} stages of pipeline {elem.describe()}"
    )
    return _after_startup(ctx, elem, costs[2], region)


def _stage_threads(
    ctx: Any, elem: Element, threads: Sequence[Any] | None, count: int, items: int
) -> list[int]:
    """Workers of each stage: one each, or the pipeline's ``threads`` (one count per stage)."""
    if threads is None:
        return [1] * count
    threads = tuple(threads)
    if len(threads) != count:
        raise _model_error(
            f"pipeline {elem.describe()} has {count} stages but {len(threads)} thread counts on "
            f"{ctx.describe()}",
            ctx,
            elem,
        )
    out = [
        _thread_count(ctx, elem, value, f"number of threads of stage {s + 1}")
        for s, value in enumerate(threads)
    ]
    for s, w in enumerate(out):
        if items and not w:
            raise _model_error(
                f"stage {s + 1} of pipeline {elem.describe()} has no threads for its {items} items on "
                f"{ctx.describe()}",
                ctx,
                elem,
            )
    bound = current_limits().threads
    if sum(out) > bound:
        raise LimitError(
            f"the stages of pipeline {elem.describe()} have {sum(out):,} threads on {ctx.describe()}, "
            f"more than the limit of {bound:,} (threads)",
            kind="threads",
            hint=f"raise it with --limit threads=N or the environment variable {LIMIT_VARIABLES['threads']}",
        )
    return out


def _costs(
    ctx: Any, elem: Element, overhead: Any, handoff: Any, startup: Any, started: int
) -> tuple[float, float, float]:
    """``(overhead, handoff, startup)`` seconds of a pattern: its tags, else the machine's ``[threads]``.

    The machine's ``start`` is per thread started, so a pattern without a
    ``startup`` tag that starts ``started`` threads spends ``started × start``.
    """
    machine = ctx.sim.machine.threads
    if overhead is not None:
        o = _pattern_cost(ctx, elem, overhead, "overhead")
    else:
        o = machine.overhead if machine is not None else 0.0
    if handoff is not None:
        h = _pattern_cost(ctx, elem, handoff, "handoff")
    else:
        h = machine.handoff if machine is not None else 0.0
    if startup is not None:
        s = _pattern_cost(ctx, elem, startup, "startup")
    else:
        s = machine.start * started if machine is not None else 0.0
    return o, h, s


def _wakeup(ctx: Any, elem: Element, wakeup: Any) -> float:
    """Seconds a thread that waited for an item takes to resume: the argument, else the machine's."""
    if wakeup is not None:
        return _pattern_cost(ctx, elem, wakeup, "wakeup")
    machine = ctx.sim.machine.threads
    return machine.wakeup if machine is not None else 0.0


def _pattern_cost(ctx: Any, elem: Element, value: Any, what: str) -> float:
    """An ``overhead``, ``handoff`` or ``startup`` tag of a pipeline or task pool: seconds, finite, ≥ 0."""
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


def _handoff(ctx: Any, elem: Element, seconds: float) -> Any:
    """Spend a hand-off holding the process's hand-off lock; waiting for the lock counts as wait."""
    lock, request, t0 = yield from _acquire(ctx, elem, HANDOFF_LOCK, "the hand-off lock of its process")
    if ctx.env._now > t0:
        ctx.record_phase(elem, "wait", t0, ctx.env._now)
    try:
        yield from _overhead(ctx, elem, seconds)
    finally:
        lock.release(request)


def _after_startup(ctx: Any, elem: Element, seconds: float, region: Any) -> Any:
    """Spend the pattern's start-up cost on the calling thread, then run the region."""
    if seconds > 0.0:
        t0 = ctx.env._now
        yield from ctx.spend(seconds)
        ctx.record_phase(elem, "compute", t0, ctx.env._now)
    return (yield from region)


def taskpool(
    ctx: Any,
    elem: Element,
    threads: int,
    items: int,
    body: Callable[[Any, Any], Any],
    *,
    overhead: float | None = None,
    startup: float | None = None,
    handoff: float | None = None,
    wakeup: float | None = None,
) -> Any:
    """``items`` tasks served by ``threads`` workers from a shared queue, in order.

    For every task it takes a worker spends ``handoff`` seconds holding the
    process's hand-off lock (serialised), then ``overhead`` seconds of its own
    (in parallel); the calling thread spends ``startup`` seconds before the
    workers start.  Costs not given come from the machine's ``[threads]``
    keys.  With a ``wakeup`` cost the calling thread collects the results as
    they come: whenever one arrives while it sleeps, it spends ``wakeup``
    seconds holding the lock before it takes all that are there.  A pool that
    is a stage of a pipeline with thread counts is run by that stage's
    workers: each call runs the body once, for the worker's item.
    """
    if _POOL_STAGES.pop(id(ctx), False):
        return _pool_stage_item(ctx, elem, threads, body, overhead, handoff)
    n_threads = _thread_count(ctx, elem, threads, "number of threads")
    n_items = _thread_count(ctx, elem, items, "number of items")
    v = ctx.v
    next_item = [0]
    if n_items and not n_threads:
        raise _model_error(
            f"task pool {elem.describe()} has {n_items} items but no threads on {ctx.describe()}",
            ctx,
            elem,
        )
    workers = min(n_threads, n_items)
    overhead_s, handoff_s, startup_s = _costs(ctx, elem, overhead, handoff, startup, workers)
    wakeup_s = _wakeup(ctx, elem, wakeup)
    results = Store(ctx.env) if wakeup_s > 0.0 and workers else None

    def runner(t: Any) -> Any:
        while next_item[0] < n_items:
            k = next_item[0]
            next_item[0] = k + 1
            t.item = k
            if handoff_s > 0.0:
                yield from _handoff(t, elem, handoff_s)
            if overhead_s > 0.0:
                yield from _overhead(t, elem, overhead_s)
            gen = _call_body(body, t, v)
            if gen is not None:
                yield from gen
            if results is not None:
                results.put(k)

    def collector(t: Any) -> Any:
        assert results is not None
        for _ in range(n_items):
            get = results.get()
            slept = not get.triggered
            if slept:
                t.block(elem, "the next result of its task pool")
            yield get
            t.blocked_for = None
            if slept:
                yield from _handoff(t, elem, wakeup_s)

    runners = [runner] * workers + ([collector] if results is not None else [])
    region = _run_threads(ctx, elem, runners, f"the {workers} workers of task pool {elem.describe()}")
    return _after_startup(ctx, elem, startup_s, region)


def _pool_stage_item(
    ctx: Any, elem: Element, threads: Any, body: Callable[[Any, Any], Any], overhead: Any, handoff: Any
) -> Any:
    """One item of a pipeline stage that is this task pool, on the stage's worker ``ctx``.

    The pipeline spent the hand-off and start-up; the pool's own ``overhead``
    and ``handoff`` tags, when it has them, are spent on top for the item.
    """
    _thread_count(ctx, elem, threads, "number of threads")
    ctx.enter(elem)
    if handoff is not None and (seconds := _pattern_cost(ctx, elem, handoff, "handoff")) > 0.0:
        yield from _handoff(ctx, elem, seconds)
    if overhead is not None and (seconds := _pattern_cost(ctx, elem, overhead, "overhead")) > 0.0:
        yield from _overhead(ctx, elem, seconds)
    gen = _call_body(body, ctx, ctx.v)
    if gen is not None:
        yield from gen
    ctx.leave(elem)


__all__ = ["parallel", "fork", "critical", "pipeline", "taskpool"]
