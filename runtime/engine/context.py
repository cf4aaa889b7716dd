"""The context ``p`` that generated model code runs with: one per process and per thread.

Generated code sees a context as ``p`` (see ``docs/architecture.md``): system
parameters, ``compute``, ``enter``/``leave``, communication, threads and
patterns.  The contract is ``uml2perf_runtime.engine.process.ProcessContext``.

Blocking compute, a process's eager and rendezvous send and receive, and collectives without a
local cost take the *direct route* here: they return the event to wait for in a tuple and account
their time at once or in the event's callback; a send or receive with a local cost at a checked
call site spends it in one small generator and then takes that route (see
``docs/runtime-semantics.md``, section 9).  Everything else takes the
general path of ``comm.py`` and ``collectives.py``, which build on these hooks:

Hooks for the communication layer
---------------------------------
``ctx.sim``
    The :class:`~uml2perf_runtime.engine.simulation.Simulation`: ``sim.env`` (the
    ``simpy.Environment``), ``sim.machine``, ``sim.nprocs``, ``sim.nnodes``,
    ``sim.node_of(pid) -> int``, ``sim.contexts`` (main contexts by pid),
    ``sim.comm_state`` (``None`` until the communication layer sets it up
    lazily), ``sim.rng_seed``.
``ctx.pid, ctx.nprocs, ctx.tid, ctx.nthreads, ctx.uid, ctx.node, ctx.nnodes, ctx.ppn``
    System parameters; ``ppn`` is the number of processes placed on this node.
    ``uid = pid * nthreads + tid`` numbers the threads of equally sized regions
    globally (for a main thread ``uid == pid``).
``ctx.process``
    The owning process's main context (itself for a main thread).
``ctx.record(elem, category, start, end)``
    One call per finished operation.  ``category`` is ``"compute"``,
    ``"comm"`` or ``"wait"``.  Adds ``end - start`` to the per-process totals
    and to the element's calls and inclusive time (a leaf: exclusive equals
    inclusive) and, when tracing, emits a trace slice.  A few float additions.
``ctx.record_phase(elem, category, start, end)``
    Like ``record`` for a further phase of the same call (a communication
    element's wait and transfer after its local cost): adds time, no call.
``ctx.record_message(src_pid, dst_pid, size, tag, send_time, recv_time)``
    Optional: draws a flow arrow in the trace; does nothing when not tracing.
``ctx.spend(seconds)``
    A generator (``yield from ctx.spend(c)``) spending the raw cost ``c`` of
    CPU: divided by the machine speed and slowed by contention on the node,
    recorded nowhere.  ``compute(elem, cost)`` is ``spend`` plus
    ``record(elem, "compute", ...)``.
``ctx.block(elem, description)`` / ``ctx.unblock()``
    Mark the context as waiting at ``elem`` for ``description`` before
    yielding an event that another context triggers, and clear it after.
    ``description`` is a string, or a callable returning one (formatted only if
    a deadlock report is built, so blocking stays cheap on the hot path).
    When the event queue runs dry with unfinished contexts the engine builds a
    :class:`~uml2perf_runtime.errors.DeadlockError` from these marks.

Modelling choices
-----------------
* A context blocked in communication or on a lock does not occupy a core: an
  MPI process waiting in ``recv`` is modelled as not computing, so other
  processes and threads of its node may use the core meanwhile.
* Threads (``parallel``, ``fork``, ``pipeline``, ``taskpool``) are contexts of
  their own that share the process's variables ``v``, element statistics and
  node.  They compete with every other runnable context of the node for its
  cores (processor sharing).  The calling context waits for them without
  using a core; the region's wall time counts as the process's compute time,
  and the threads' own compute/communication/wait time is summed (in
  thread-seconds) into the process's separate thread totals.
* Element statistics of threads are folded into their process: inclusive
  times of elements run by threads are thread-seconds (eight threads each
  computing 1 s give the element 8 s), as in thread-aware profilers.
* ``p.random()`` uses ``random.Random(seed * 1_000_003 + pid)`` per process
  (threads share their process's generator; the simulation order is
  deterministic, so the numbers are too).
* ``p.iteration(E)`` counts iterations of loop ``E`` per process over the
  whole run; past ``max_iterations`` it raises
  :class:`~uml2perf_runtime.errors.LimitError`.
"""

from __future__ import annotations

import math
import random as _random
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from simpy.events import Event, Timeout
from simpy.resources.resource import Resource

from ..errors import LimitError, ModelRuntimeError, SimulationError
from ..operations import collectives as _collectives
from ..operations import point_to_point as _comm
from ..operations.registry import OPERATIONS, REDUCING, Operation, bind_operations, route_function
from ..parameters import coerce_value
from ..spec import Element
from . import patterns as _patterns
from .process import CATEGORY_INDEX, CATEGORY_NAMES, COMM, COMPUTE, WAIT, ProcessContext
from .simpy_access import NORMAL, PARKED_REQUEST, armed_event, armed_timeout, ids_of, queue_of
from .simpy_access import push as _push
from .sites import RecvSite, SendSite

_INF = math.inf
#: What a context keeps of its last send and receive call site before its first one (no element
#: is None: the first call always takes the full checks).
_NO_SEND_SITE: tuple[Any, ...] = (None,) * 15
_NO_RECV_SITE: tuple[Any, ...] = (None,) * 7
#: The line of the last rendezvous message a context received, before its first: ``(source, size,
#: communication state, latency + handshake, seconds per byte)``.
_NO_RECV_LINE: tuple[Any, ...] = (None,) * 5


class Variables:
    """The namespace ``v`` of one process's model variables (shared by its threads)."""

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={val!r}" for k, val in sorted(vars(self).items()))
        return f"Variables({items})"


class Context:
    """The context of one simulated process or thread (``p`` in generated code)."""

    __slots__ = (
        # identity and system parameters
        "sim",
        "env",
        "queue",
        "eids",
        "pid",
        "nprocs",
        "tid",
        "nthreads",
        "uid",
        "node",
        "nnodes",
        "ppn",
        "process",
        "v",
        "item",
        "track",
        # CPU
        "cpu",
        "inv_speed",
        "fast_end",
        "fast_start",
        "fast_delay",
        "fast_ev",
        "fast_resume",
        "conv",
        "computing",
        "parked",
        "send_route",
        "recv_route",
        "fast_req",
        "fast_g",
        "wait_ev",
        "park_ev",
        "park_req",
        "send_checked",
        "recv_checked",
        "recv_line",
        "matched",
        # statistics (lists shared by a process and its threads)
        "calls",
        "incl",
        "child",
        "iters",
        "waits",
        "oversubscribed",
        "totals",
        "thread_totals",
        # per-context bookkeeping
        "covered",
        "stack",
        "cur",
        "blocked_elem",
        "blocked_for",
        "finished",
        "finish_time",
        "_rng",
        "_locks",
        "_tracks",
        "_idle",
    )

    def __init__(self, sim: Any, pid: int, node: int, ppn: int, cpu: Any) -> None:
        self.sim = sim
        self.env = sim.env
        #: the event heap and id counter of ``env``, pushed onto directly by the hot paths
        self.queue = queue_of(sim.env)
        self.eids = ids_of(sim.env)
        self.pid = pid
        self.nprocs = sim.nprocs
        self.tid = 0
        self.nthreads = 1
        self.uid = pid
        self.node = node
        self.nnodes = sim.nnodes
        self.ppn = ppn
        self.process = self
        self.v: Any = None
        self.item = 0
        self.track = 0
        self.cpu = cpu
        self.inv_speed = 1.0 / sim.machine.speed
        self.fast_end = -1.0
        self.fast_start = 0.0
        self.fast_delay = 0.0
        self.fast_ev: Event | None = None
        self.fast_resume: list[Any] | None = None
        self.conv: Event | None = None
        #: a compute on a free core is waited for: its process accounts it when it resumes
        self.computing = False
        #: what of the direct route the process accounts as the event it waits on resumes it
        #: (``DirectProcess._resume``, the one place that does): PARKED_REQUEST (a receive or
        #: rendezvous send, ``fast_req``), PARKED_COLLECTIVE (``fast_g``), or 0
        self.parked = 0
        #: this context's own send and recv, bound once: what a local cost hands on to
        self.send_route = self.send
        self.recv_route = self.recv
        self.fast_req: Any = None
        self.fast_g: Any = None
        self.wait_ev: Timeout | None = None
        self.park_ev: Event | None = None
        self.park_req: Any = None
        self.send_checked: tuple[Any, ...] = _NO_SEND_SITE
        self.recv_checked: tuple[Any, ...] = _NO_RECV_SITE
        self.recv_line: tuple[Any, ...] = _NO_RECV_LINE
        #: what the last receive matched: the source's rank, or the request whose match sets it
        #: (read as :attr:`sender`; ``recv+ sender = "W"``)
        self.matched: Any = -1
        n = len(sim.elements)
        self.calls = [0] * n
        self.incl = [0.0] * n
        # Composites and loops are rarer than leaves: their lists are allocated on
        # first use (see _child_list / iteration), which halves the memory of
        # runs with thousands of processes and large models.
        self.child: list[float] | None = None
        self.iters: list[int] | None = None
        #: per-element blocked time (late partners, collectives, locks), allocated on first wait
        self.waits: list[float] | None = None
        #: seconds this process's computations were slowed by sharing cores (runnable without a core)
        self.oversubscribed = 0.0
        self.totals = [0.0, 0.0, 0.0]
        self.thread_totals = [0.0, 0.0, 0.0]
        self.covered = 0.0
        self.stack: list[tuple[Element, float, float]] = []
        self.cur: Element | None = None
        self.blocked_elem: Element | None = None
        self.blocked_for: Any = None
        self.finished = False
        self.finish_time = 0.0
        self._rng: _random.Random | None = None
        self._locks: dict[str, Resource] | None = None
        self._tracks = 0
        #: finished thread contexts of this process, made again by the next thread (see _new_thread)
        self._idle: list[Context] | None = None

    # -- threads -----------------------------------------------------------------

    def _new_thread(self, tid: int, nthreads: int) -> Context:
        """A thread context of this context's process sharing its statistics and ``v``.

        A finished thread of the process is made again when there is one (``_idle``, filled by
        :meth:`thread_ended`): what every thread of a process has alike (identity, node, shared
        statistics, its reusable events and checked call sites, which are checked against each
        call's arguments anyway) is kept, and what is the thread's own is set as for a new one.
        """
        proc = self.process
        idle = proc._idle
        if idle:
            t = idle.pop()
            t.tid = tid
            t.nthreads = nthreads
            t.uid = self.pid * nthreads + tid
            t.item = 0
            proc._tracks += 1
            t.track = proc._tracks
            t.fast_end = -1.0
            t.covered = 0.0
            if t.stack:  # its code returned from inside a composite
                t.stack = []
            t.cur = self.cur
            t.blocked_for = None
            t.finished = False
            t.finish_time = 0.0
            return t
        t = object.__new__(type(self))
        t.sim = self.sim
        t.env = self.env
        t.queue = self.queue
        t.eids = self.eids
        t.pid = self.pid
        t.nprocs = self.nprocs
        t.tid = tid
        t.nthreads = nthreads
        t.uid = self.pid * nthreads + tid
        t.node = self.node
        t.nnodes = self.nnodes
        t.ppn = self.ppn
        t.process = proc
        t.v = self.v
        t.item = 0
        proc._tracks += 1
        t.track = proc._tracks
        t.cpu = self.cpu
        t.inv_speed = self.inv_speed
        t.fast_end = -1.0
        t.fast_start = 0.0
        t.fast_delay = 0.0
        t.fast_ev = None
        t.fast_resume = None
        t.conv = None
        t.computing = False
        t.parked = 0
        t.send_route = t.send
        t.recv_route = t.recv
        t.fast_req = None
        t.fast_g = None
        t.wait_ev = None
        t.park_ev = None
        t.park_req = None
        t.send_checked = _NO_SEND_SITE
        t.recv_checked = _NO_RECV_SITE
        t.recv_line = _NO_RECV_LINE
        t.matched = -1
        t.calls = proc.calls
        t.incl = proc.incl
        t.child = None  # threads use their process's lists (see _child_list)
        t.iters = None
        t.totals = proc.thread_totals
        t.thread_totals = proc.thread_totals
        t.covered = 0.0
        t.stack = []
        t.cur = self.cur
        t.blocked_elem = None
        t.blocked_for = None
        t.finished = False
        t.finish_time = 0.0
        t._rng = None
        t._locks = None
        t._tracks = 0
        t._idle = None
        return t

    def thread_ended(self) -> None:
        """This thread's code has ended: keep its context for the process's next thread."""
        proc = self.process
        idle = proc._idle
        if idle is None:
            idle = proc._idle = []
        idle.append(self)

    # -- parameters and random numbers ------------------------------------------

    def param(self, name: str, default: Any) -> Any:
        """The ``--set`` override of model variable ``name``, else ``default``."""
        overrides = self.sim.overrides
        if name in overrides:
            value = overrides[name]
            if isinstance(value, str):
                value = coerce_value(name, value, default)
                overrides[name] = value
            return value
        return default

    def random(self) -> float:
        """Uniform [0, 1), from this process's own seeded generator."""
        proc = self.process
        rng = proc._rng
        if rng is None:
            rng = proc._rng = _random.Random(self.sim.rng_seed * 1_000_003 + self.pid)
        return rng.random()

    # -- describing ----------------------------------------------------------------

    def describe(self) -> str:
        """``process 3`` or ``process 3 thread 1``: how messages name this context."""
        if self.process is self:
            return f"process {self.pid}"
        return f"process {self.pid} thread {self.tid}"

    def where(self) -> dict[str, Any]:
        """Where this context is and what it waits for, as report data."""
        elem = self.blocked_elem if self.blocked_for is not None else self.cur
        waiting = self.blocked_for
        if callable(waiting):
            waiting = waiting()
        return {
            "pid": self.pid,
            "tid": self.tid,
            "node": self.node,
            "element": elem.as_dict() if elem is not None else None,
            "waiting_for": str(waiting) if waiting is not None else None,
        }

    def _bad_cost(self, elem: Element, cost: Any, what: str = "cost") -> ModelRuntimeError:
        return ModelRuntimeError(
            f"{what} of {elem.describe()} is {cost!r} on {self.describe()}: "
            "a cost must be a finite, non-negative number of seconds",
            element_name=elem.name,
            element_id=elem.xmi_id,
            line=elem.line,
            pid=self.pid,
            tid=self.tid,
            hint="check the cost function and the variables it uses",
        )

    # -- computation ---------------------------------------------------------------

    def compute(self, elem: Element, cost: float) -> Any:
        """Spend ``cost`` seconds of CPU (÷ speed, slowed by contention) and record it.

        On a node with a free core this is one SimPy timeout, returned in a tuple for the
        caller's ``yield from``; ``computing`` tells the process (``DirectProcess._resume``) to
        record the statistics when the timeout resumes it, in the same step and before the model's
        code goes on, where a callback of the timeout would have recorded them (one Python call
        per compute less).  A busy node takes the general path (:meth:`_compute_shared`).
        """
        self.cur = elem
        if 0.0 < cost < _INF:
            cpu = self.cpu
            if not cpu.shared and cpu.busy < cpu.free:
                cpu.busy += 1
                env = self.env
                start = env._now
                delay = cost * self.inv_speed
                self.fast_start = start
                end = self.fast_end = start + delay
                # what Timeout(env, delay) does, with this context's callback already in place;
                # the timeout of the last compute is used again once SimPy has processed it
                timeout = self.fast_ev
                if timeout is None or timeout.callbacks is not None:
                    timeout = self.fast_ev = armed_timeout(env)
                timeout.callbacks = []
                self.computing = True
                self.fast_delay = delay
                _push(self.queue, (end, NORMAL, next(self.eids), timeout))
                return (timeout,)
            return self._compute_shared(elem, cost)
        if cost == 0.0:
            i = elem.index
            self.calls[i] += 1
            # a call of no duration: adding 0.0 would change no total (none is ever -0.0)
            return ()
        raise self._bad_cost(elem, cost)

    def convert(self) -> Event:
        """Called by the node when it starts sharing its cores while this context computes.

        Returns the event of the shared completion that replaces the fast end.  A fast
        compute's timeout no longer resumes the process: its callbacks move to the shared
        completion (see :meth:`_converted`).
        """
        done = self.conv = Event(self.env)
        timeout = self.fast_ev
        if timeout is not None and timeout.callbacks is not None:  # a compute, not a spent cost
            callbacks = timeout.callbacks
            self.fast_resume = callbacks[:]
            callbacks[:] = [self._converted]
            self.computing = False  # accounted by _shared_done, not by the process resuming
        return done

    def _converted(self, timeout: Event) -> None:
        """At the fast end of a converted compute: wait on for the shared completion."""
        done = self.conv
        assert done is not None
        self.conv = None
        resume = self.fast_resume or []
        self.fast_resume = None
        if done.callbacks is not None:
            done.callbacks.append(self._shared_done)
            done.callbacks.extend(resume)
        else:  # already completed: go on at once, as a process yielding a processed event does
            self._shared_done(done)
            for callback in resume:
                callback(done)

    def _shared_done(self, _: Event) -> None:
        env = self.env
        start = self.fast_start
        self.process.oversubscribed += env._now - start - self.fast_delay
        self.cpu.busy -= 1
        d = env._now - start
        i = self.cur.index  # type: ignore[union-attr]
        self.calls[i] += 1
        self.incl[i] += d
        self.covered += d
        self.totals[0] += d

    def _compute_shared(self, elem: Element, cost: float) -> Any:
        """Compute on a node whose cores are all busy: processor sharing (general path)."""
        env = self.env
        start = env._now
        self.fast_ev = None
        yield from self.cpu.run_shared(self, cost * self.inv_speed)
        self.process.oversubscribed += env._now - start - cost * self.inv_speed
        d = env._now - start
        i = elem.index
        self.calls[i] += 1
        self.incl[i] += d
        self.covered += d
        self.totals[0] += d

    def spend(self, seconds: float) -> Any:
        """Spend raw CPU cost ``seconds`` (÷ speed, with contention) without recording it."""
        if seconds > 0.0:
            cpu = self.cpu
            env = self.env
            if not cpu.shared and cpu.busy < cpu.free:
                cpu.busy += 1
                delay = seconds * self.inv_speed
                self.fast_ev = None
                self.fast_end = env._now + delay
                yield Timeout(env, delay)
                if self.conv is not None:
                    ev = self.conv
                    self.conv = None
                    yield ev
                cpu.busy -= 1
            else:
                yield from cpu.run_shared(self, seconds * self.inv_speed)
        elif not seconds == 0.0:
            elem = self.cur
            if elem is None:
                raise SimulationError(f"negative or invalid cost {seconds!r} on {self.describe()}")
            raise self._bad_cost(elem, seconds)

    def record(self, elem: Element, category: str, start: float, end: float) -> None:
        """Account one finished operation of ``elem`` (see the module docstring)."""
        d = end - start
        i = elem.index
        self.calls[i] += 1
        self.incl[i] += d
        self.covered += d
        self.totals[CATEGORY_INDEX[category]] += d
        if category == "wait" and d > 0.0:
            self._wait_list()[i] += d

    def record_phase(self, elem: Element, category: str, start: float, end: float) -> None:
        """Account a further phase of the call last counted by :meth:`record`.

        A communication element spends its cost (compute), then may wait for its partner
        (wait) and transfer (comm): one call, several categories.  This adds the time like
        ``record`` but does not count another call.
        """
        d = end - start
        cat = CATEGORY_INDEX[category]
        self.incl[elem.index] += d
        self.covered += d
        self.totals[cat] += d
        if cat == WAIT and d > 0.0:
            self._wait_list()[elem.index] += d
        self._note(elem, cat, start, end)

    def record_message(
        self, src_pid: int, dst_pid: int, size: float, tag: int, send_time: float, recv_time: float
    ) -> None:
        """Flow arrow for the trace; nothing to do when not tracing."""

    def _note(self, elem: Element, category: int, start: float, end: float) -> None:
        """A trace-only slice (time already accounted elsewhere); no-op when not tracing."""

    # -- blocking ----------------------------------------------------------------------

    def block(self, elem: Element, description: Any) -> None:
        """Mark this context as waiting at ``elem`` for ``description`` (str or callable)."""
        self.blocked_elem = elem
        self.blocked_for = description

    def unblock(self) -> None:
        """Clear the mark set by :meth:`block`."""
        self.blocked_for = None

    # -- composites and loops ----------------------------------------------------------

    def roofline(
        self,
        elem: Element,
        cost: float = 0.0,
        *,
        flops: Any = 0.0,
        bytes: Any = 0.0,  # noqa: A002
        device: str | None = None,
        copy_in: Any = 0.0,
        copy_out: Any = 0.0,
        footprint: Any = None,
        fresh: Any = 0.0,
        allocation: Any = None,
        calls: Any = 0.0,
        operations: Any = (),
    ) -> Any:
        """Run a hardware-aware action: roofline time on a core or a device (see ``roofline.py``)."""
        from ..platform.roofline import roofline

        return roofline(
            self,
            elem,
            cost,
            flops,
            bytes,
            device,
            copy_in,
            copy_out,
            footprint,
            fresh,
            allocation,
            calls,
            operations,
        )

    @property
    def sender(self) -> int:
        """The rank whose message the last blocking receive took (``recv+ sender = "W"``)."""
        matched = self.matched
        return matched if matched.__class__ is int else matched.source

    def sender_to(self, variables: Any, name: str) -> None:
        """Set model variable ``name`` to the source the last ``irecv`` matches, once it completes.

        ``irecv+ sender = "W"``: the wait that completes the request sets the variable (at once when
        the message was there already), as ``MPI_Wait``'s status tells the source.
        """
        _comm.name_sender(self, self.matched, variables, name)

    def no_guard_holds(self, where: str, values: dict[str, Any]) -> None:
        """A decision none of whose guards holds: UML keeps the token there, so the run cannot go on."""
        shown = ", ".join(f"{name} = {value!r}" for name, value in values.items()) or "no variables"
        raise ModelRuntimeError(
            f"no guard of {where} holds on {self.describe()} ({shown}): "
            "under UML the token stays at the decision and this process cannot go on",
            element_name=None,
            element_id=None,
            line=None,
            pid=self.pid,
            tid=self.tid,
            hint="add a branch guarded [else], or change the guards so that one of them always holds",
        )

    def enter(self, elem: Element) -> None:
        """Start of a composite element (call, structured node, loop) on this context."""
        self.cur = elem
        self.stack.append((elem, self.env._now, self.covered))

    def leave(self, elem: Element) -> None:
        """End of the composite opened by the matching :meth:`enter`."""
        try:
            opened, t0, covered0 = self.stack.pop()
        except IndexError:
            raise SimulationError(
                f"leave({elem.describe()}) without a matching enter on {self.describe()}"
            ) from None
        if opened is not elem:
            raise SimulationError(
                f"leave({elem.describe()}) does not match enter({opened.describe()}) on {self.describe()}"
            )
        incl = self.env._now - t0
        i = elem.index
        self.calls[i] += 1
        self.incl[i] += incl
        child = self.process.child
        if child is None:
            child = self._child_list()
        child[i] += self.covered - covered0
        self.covered = covered0 + incl

    def _wait_list(self) -> list[float]:
        """The process's per-element blocked time, allocated on first use (threads share it)."""
        proc = self.process
        if proc.waits is None:
            proc.waits = [0.0] * len(proc.incl)
        return proc.waits

    def _child_list(self) -> list[float]:
        """The process's per-element children time, allocated on first use."""
        proc = self.process
        if proc.child is None:
            proc.child = [0.0] * len(proc.incl)
        return proc.child

    def iteration(self, elem: Element) -> None:
        """Count one iteration of loop ``elem``; raise LimitError past the limit."""
        i = elem.index
        iters = self.process.iters
        if iters is None:
            iters = self.process.iters = [0] * len(self.incl)
        iters[i] += 1
        if iters[i] > self.sim.max_iterations:
            raise LimitError(
                f"loop {elem.describe()} ran more than {self.sim.max_iterations:,} iterations "
                f"on {self.describe()}: check its condition",
                kind="iterations",
                hint="raise the limit with max_iterations if the loop is meant to run that long",
            )

    # -- communication: direct route here, general path in comm.py and collectives.py ----------

    def send(self, elem: Element, dest: int, size: float = 0, tag: int = 0, cost: float = 0.0) -> Any:
        """Blocking send without local cost: posted here, returning what the caller waits for.

        The direct route of ``comm.send``.  An eager message goes to a posted receive (whose event
        is scheduled at the arrival) or into the destination's mailbox as a plain tuple, and the
        send waits for nothing.  A process's own rendezvous send (:meth:`_send_rendezvous`) is
        matched with a posted receive at once or parks on one event its receiver schedules.
        What a call site's arguments decide once (validity, protocol, link, queues) is kept in
        ``send_checked`` while the same element sends the same size to the same destination and tag.
        """
        self.cur = elem
        site = self.send_checked
        (
            site_elem,
            site_dest,
            site_tag,
            site_size,
            site_cls,
            st,
            lat,
            beta,
            wild,
            posted,
            mail,
            calls,
            i,
            key,
            rendezvous,
        ) = site
        if (
            site_elem is not elem
            or dest != site_dest
            or tag != site_tag
            or size != site_size
            or dest.__class__ is not int
            or tag.__class__ is not int
            or size.__class__ is not site_cls
        ):
            nprocs = self.nprocs
            cls = size.__class__
            if (
                dest.__class__ is not int
                or tag.__class__ is not int
                or tag < 0
                or not 0 <= dest < nprocs
                or (cls is not int and cls is not float)
                or not 0 <= size < _INF
            ):
                return _comm.send(self, elem, dest, size, tag, cost)
            if cost:
                return self._after_local_cost(elem, cost, self.send, dest, size, tag)
            sim = self.sim
            st = sim.comm_state or _comm.state(sim)
            me = self.pid
            rendezvous = size > st.eager_limit
            if rendezvous:
                if self.process is not self:  # a thread's rendezvous send: the general path
                    return _comm.send(self, elem, dest, size, tag, cost)
                # the line of the message plus the handshake, summed as comm._match sums them
                lat, beta = st.link(me, dest, size)
                lat = lat + st.handshake(me, dest)
            else:
                lat, beta = st.pair.get(me * nprocs + dest) or st.link(me, dest, size)
            key = tag * nprocs + me
            wild = st.wild[dest]
            # the queues of this key, once they exist (never removed: they can be kept); a queue is
            # still made only when first needed, as the general path does
            posted = st.posted[dest].get(key)
            mail = st.mail[dest].get(key)
            calls = self.calls
            i = elem.index
            site = (elem, dest, tag, size, cls, st, lat, beta, wild, posted, mail, calls, i, key, rendezvous)
            self.send_checked = site
        elif cost:  # the arguments of this site, checked before: spend the cost, then send
            return self._after_local_cost(elem, cost, self.send_route, dest, size, tag)
        env = self.env
        now = env._now
        # eager: when the data arrives; rendezvous: when the transfer ends if it starts now
        arrival = now + lat + size * beta
        seq = st.seq = st.seq + 1
        if wild:  # wildcard receives posted: the first posted matching one
            req = _comm.take_receive(st, self.pid, dest, tag)
        else:
            if posted is None:
                posted = st.posted[dest].get(key)
                if posted is not None:  # the receiver has posted on this key since: keep its queue
                    self.send_checked = site[:9] + (posted,) + site[10:]
            req = posted.popleft() if posted else None
        if rendezvous:
            return self._send_rendezvous(env, now, st, elem, req, dest, size, tag, seq, arrival, mail, i)
        if req is not None:
            req.source = self.pid
            req.matched_tag = tag
            done = arrival if arrival > now else now
            req.start = now
            req.done = done
            ev = req.event
            if ev is not None:  # an armed event (simpy_access): scheduling it triggers it
                req.event = None
                _push(self.queue, (now + (done - now), NORMAL, next(self.eids), ev))  # env.schedule
        else:
            if mail is None:
                mail = self._send_mailbox(st, dest, key)
            mail.append((seq, arrival, now, size, None, self.pid, tag))
        calls[i] += 1
        # a call of no duration: adding 0.0 would change no total (none is ever -0.0)
        return ()

    def send_site(
        self, elem: Element, dest: int, size: float = 0, tag: int = 0, cost: float = 0.0
    ) -> Callable[[], Any]:
        """A send call site whose arguments never change in the calling function run: calling it
        is ``send(elem, dest, size, tag, cost)``, checked once (:mod:`.sites`)."""
        return SendSite(self, elem, dest, size, tag, cost).send

    def recv_site(
        self, elem: Element, source: int = -1, size: float = 0, tag: int = 0, cost: float = 0.0
    ) -> Callable[[], Any]:
        """A receive call site whose arguments never change in the calling function run: calling
        it is ``recv(elem, source, size, tag, cost)``, checked once (:mod:`.sites`)."""
        return RecvSite(self, elem, source, size, tag, cost).recv

    def _send_mailbox(self, st: Any, dest: int, key: int) -> deque[Any]:
        """The mailbox of the send site's key, made on first use and kept by the site from then on."""
        box = st.mail[dest]
        mail = box.get(key)
        if mail is None:
            mail = box[key] = deque()
        site = self.send_checked
        self.send_checked = site[:10] + (mail,) + site[10 + 1 :]
        return mail

    def _send_rendezvous(
        self,
        env: Any,
        now: float,
        st: Any,
        elem: Element,
        req: Any,
        dest: int,
        size: float,
        tag: int,
        seq: int,
        end: float,
        mail: Any,
        i: int,
    ) -> Any:
        """A process's own rendezvous send, its site checked: what ``comm.send`` does above the eager limit.

        With the receive posted (``req``), the transfer runs from now to ``end``: the receive's
        event is scheduled at ``end``, the send is accounted now and waits with one timeout.
        Otherwise the message goes to the mailbox with this context's parked request, and the send
        parks on one event its receiver schedules (accounted as the process resumes, as a receive).
        The times, the accounting and the order of scheduled events are those of the general
        functions (``_post_send``, ``_match``, ``account``), which the tests compare.
        """
        if req is not None:
            req.source = self.pid
            req.matched_tag = tag
            req.start = now
            req.done = end
            ev = req.event
            if ev is not None:  # an armed event (simpy_access): scheduling it triggers it
                req.event = None
                _push(self.queue, (now + (end - now), NORMAL, next(self.eids), ev))
            d = end - now
            self.calls[i] += 1
            self.incl[i] += d
            self.covered += d
            self.totals[1] += d
            if end > now:
                timeout = self.wait_ev
                if timeout is None or timeout.callbacks is not None:
                    timeout = self.wait_ev = armed_timeout(env)
                timeout.callbacks = []
                _push(self.queue, (now + d, NORMAL, next(self.eids), timeout))
                return (timeout,)
            return ()
        # park: the request of the last parked call is used again once complete (nothing else
        # holds it then: the message that carried it has been taken from the mailbox)
        mine = self.park_req
        if mine is None:
            mine = self.park_req = _comm.Request("send", self.pid, dest, tag, size, now, 0)
        else:
            mine.op = "send"
            mine.peer = dest
            mine.tag = tag
            mine.size = size
            mine.posted = now
            mine.seq = 0
            mine.done = None  # not complete; the receiver's match sets start and done
        if mail is None:
            mail = self._send_mailbox(st, dest, tag * self.nprocs + self.pid)
        mail.append((seq, _INF, now, size, mine, self.pid, tag))
        ev = self.park_ev
        if ev is None or ev.callbacks is not None:
            ev = self.park_ev = armed_event(env)
        mine.event = ev
        ev.callbacks = []
        self.parked = PARKED_REQUEST  # accounted as the process resumes (DirectProcess._resume)
        self.fast_req = mine
        self.blocked_elem = elem
        self.blocked_for = mine
        return (ev,)

    def recv(self, elem: Element, source: int = -1, size: float = 0, tag: int = 0, cost: float = 0.0) -> Any:
        """Blocking receive; without local cost, taken here from the mailbox or parked.

        The direct route of ``comm.recv`` for a process's main context: an eager message that
        is there is accounted now and waited for with one timeout; otherwise the receive is
        posted with an event its sender schedules, and the process accounts it as it resumes.  A
        receive from one source with one tag keeps its validated queues in ``recv_checked`` while
        the same element receives from the same source and tag.
        """
        self.cur = elem
        self.matched = source  # a wildcard's route below records the source it matches
        site = self.recv_checked
        site_elem, site_source, site_tag, st, key, mail, posted = site
        if (
            site_elem is not elem
            or source != site_source
            or tag != site_tag
            or source.__class__ is not int
            or tag.__class__ is not int
        ):
            nprocs = self.nprocs
            if (
                source.__class__ is not int
                or tag.__class__ is not int
                or not -1 <= source < nprocs
                or tag < -1
            ):
                return _comm.recv(self, elem, source, size, tag, cost)
            if cost:
                return self._after_local_cost(elem, cost, self.recv, source, size, tag)
            if self.process is not self:
                return _comm.recv(self, elem, source, size, tag, cost)
            sim = self.sim
            st = sim.comm_state or _comm.state(sim)
            if source == -1 or tag == -1:
                return self._recv_any(st, elem, source, size, tag)
            key = tag * nprocs + source
            me = self.pid
            # the mailbox and the posted receives of this key, once they exist (never removed:
            # they can be kept); a queue is still made only when first needed, as the general path does
            mail = st.mail[me].get(key)
            posted = st.posted[me].get(key)
            self.recv_checked = (elem, source, tag, st, key, mail, posted)
        elif cost:  # the arguments of this site, checked before: spend the cost, then receive
            return self._after_local_cost(elem, cost, self.recv_route, source, size, tag)
        env = self.env
        now = env._now
        if mail is None:
            mail = st.mail[self.pid].get(key)
            if mail is not None:  # a sender has used this key since: keep its queue
                self.recv_checked = (elem, source, tag, st, key, mail, posted)
        if mail:
            msg = mail.popleft()
            if msg[4] is not None:  # a rendezvous message: its sender waits
                return self._recv_rendezvous(env, now, st, elem, msg)
            # an eager message: its arrival is known (what _recv_eager does, inline on the hot path)
            arrival = msg[1]
            i = elem.index
            self.calls[i] += 1
            if arrival > now:
                d = arrival - now
                self.incl[i] += d
                self.covered += d
                self.totals[1] += d
                timeout = self.wait_ev
                if timeout is None or timeout.callbacks is not None:
                    timeout = self.wait_ev = armed_timeout(env)
                timeout.callbacks = []
                _push(self.queue, (now + d, NORMAL, next(self.eids), timeout))
                return (timeout,)
            return ()
        # post the receive and park on one event, which the sender schedules
        seq = st.seq = st.seq + 1
        # the request and the event of the last parked receive, used again once it is complete:
        # a request leaves the posted queue when matched, the event is processed before we resume
        req = self.park_req
        if req is None:
            req = self.park_req = _comm.Request("recv", self.pid, source, tag, size, now, seq)
        else:
            req.op = "recv"  # the last parked call may have been a rendezvous send
            req.peer = source
            req.tag = tag
            req.size = size
            req.posted = now
            req.seq = seq
            req.done = None  # not complete; the match sets start, done, source and matched_tag
        if posted is None:
            box = st.posted[self.pid]
            posted = box.get(key)
            if posted is None:
                posted = box[key] = deque()
            self.recv_checked = (elem, source, tag, st, key, mail, posted)
        posted.append(req)
        ev = self.park_ev
        if ev is None or ev.callbacks is not None:
            ev = self.park_ev = armed_event(env)
        req.event = ev
        ev.callbacks = []
        self.parked = PARKED_REQUEST  # accounted as the process resumes (DirectProcess._resume)
        self.fast_req = req
        self.blocked_elem = elem
        self.blocked_for = req
        return (ev,)

    def _recv_rendezvous(self, env: Any, now: float, st: Any, elem: Element, msg: Any) -> Any:
        """A process's own receive of a rendezvous message whose sender waits: ``comm.recv_posted``
        with the message there, inline.

        The transfer runs from now; the sender's event is scheduled at its end, and the receive is
        accounted now and waits with one timeout, with the times, the sequence number and the order
        of scheduled events of the general functions (``_match``, ``account``).  The line and the
        handshake of the last sender and size are kept in ``recv_line``.
        """
        st.seq += 1  # the number the general path gives the receive's request
        src = msg[5]
        size = msg[3]
        line = self.recv_line
        if line[0] != src or line[1] != size or line[2] is not st:
            me = self.pid
            lat, beta = st.link(src, me, size)
            line = self.recv_line = (src, size, st, lat + st.handshake(src, me), beta)
        end = now + line[3] + size * line[4]
        sender = msg[4]
        sender.start = now
        sender.done = end
        ev = sender.event
        if ev is not None:  # an armed event (simpy_access): scheduling it triggers it
            sender.event = None
            _push(self.queue, (now + (end - now), NORMAL, next(self.eids), ev))
        i = elem.index
        d = end - now
        self.calls[i] += 1
        self.incl[i] += d
        self.covered += d
        self.totals[1] += d
        if end > now:
            timeout = self.wait_ev
            if timeout is None or timeout.callbacks is not None:
                timeout = self.wait_ev = armed_timeout(env)
            timeout.callbacks = []
            _push(self.queue, (now + d, NORMAL, next(self.eids), timeout))
            return (timeout,)
        return ()

    def _recv_eager(self, env: Any, now: float, elem: Element, arrival: float) -> Any:
        """Account a receive of an eager message that is there, arriving at ``arrival``."""
        i = elem.index
        if arrival > now:
            d = arrival - now
            self.calls[i] += 1
            self.incl[i] += d
            self.covered += d
            self.totals[1] += d
            # what Timeout(env, d) does; the last one is used again once SimPy has processed it
            timeout = self.wait_ev
            if timeout is None or timeout.callbacks is not None:
                timeout = self.wait_ev = armed_timeout(env)
            timeout.callbacks = []
            _push(self.queue, (now + d, NORMAL, next(self.eids), timeout))
            return (timeout,)
        self.calls[i] += 1
        # a call of no duration: adding 0.0 would change no total (none is ever -0.0)
        return ()

    def _after_local_cost(
        self, elem: Element, cost: float, operation: Callable[..., Any], peer: int, size: float, tag: int
    ) -> Any:
        """A send or receive with a local cost and checked arguments, on its shortest route.

        It spends the cost as the general path's ``spend_cost`` does (``spend``, then ``record``
        of a compute), then takes the operation's route without a cost (direct where there is
        one).  On a node with a free core the spending is written out here: one timeout (the
        context's reused one) and the compute's times added as ``record`` adds them; the call is
        not counted here, because the route counts it, so the call counts once as on the general
        path (the tests compare both paths on random models).
        """
        env = self.env
        start = env._now
        cpu = self.cpu
        if 0.0 < cost < _INF and not cpu.shared and cpu.busy < cpu.free:
            # what spend(cost) does on a free core, without its generator
            cpu.busy += 1
            delay = cost * self.inv_speed
            self.fast_end = start + delay
            timeout = self.wait_ev
            if timeout is None or timeout.callbacks is not None:
                timeout = self.wait_ev = armed_timeout(env)
            timeout.callbacks = []
            _push(self.queue, (start + delay, NORMAL, next(self.eids), timeout))  # Timeout(env, delay)
            yield timeout
            if self.conv is not None:  # the node became oversubscribed meanwhile
                ev = self.conv
                self.conv = None
                yield ev
            cpu.busy -= 1
        else:
            yield from self.spend(cost)
        d = env._now - start
        i = elem.index
        self.incl[i] += d
        self.covered += d
        self.totals[0] += d
        yield from operation(elem, peer, size, tag)

    def _recv_any(self, st: Any, elem: Element, source: int, size: float, tag: int) -> Any:
        """The direct route of a receive from any source or with any tag."""
        msg = _comm.take_message(st, self.pid, source, tag)
        if msg is not None and msg[4] is None:
            self.matched = msg[5]
            env = self.env
            return self._recv_eager(env, env._now, elem, msg[1])
        return _comm.recv_posted(self, st, elem, msg, source, size, tag)

    # isend, irecv, wait and the collectives are bound from the table of operations below the
    # class (operations/registry.py, ``_bind_pair_routes``): each calls its route there.

    def _collective(self, elem: Element, kind: str, root: Any, size: Any, cost: Any) -> Any:
        """A collective without local cost and with valid arguments goes the direct route."""
        self.cur = elem
        cls = size.__class__
        if (
            cost
            or (cls is not int and cls is not float)
            or not 0 <= size < _INF
            or root.__class__ is not int
            or not 0 <= root < self.nprocs
            or (kind in REDUCING and (self.sim.machine.reduce_cost or self.sim.machine.reduce_ranges))
        ):
            return _collectives.collective(self, elem, kind, root, size, cost)
        return _collectives.collective_fast(self, elem, kind, root, size)

    # -- threads and patterns (runtime/engine/patterns.py) --------------------------------------------

    def parallel(self, elem: Element, threads: int, body: Callable[[Context, Any], Any]) -> Any:
        """OpenMP-style region: ``body(t, v)`` once per thread ``t.tid`` in 0..threads-1."""
        return _patterns.parallel(self, elem, threads, body)

    def fork(self, elem: Element, branches: Iterable[Callable[[Context, Any], Any]]) -> Any:
        """Run each branch ``f(t, v)`` concurrently as a thread of this process and join."""
        return _patterns.fork(self, elem, branches)

    def critical(self, elem: Element, name: str, body: Callable[[Context, Any], Any]) -> Any:
        """``body(p, v)`` under this process's lock ``name``; waiting time counts as wait."""
        return _patterns.critical(self, elem, name, body)

    def pipeline(
        self,
        elem: Element,
        items: int,
        stages: Sequence[Callable[[Context, Any], Any]],
        **options: Any,
    ) -> Any:
        """A pipeline over ``items`` (``options``: see :func:`.patterns.pipeline`)."""
        return _patterns.pipeline(self, elem, items, stages, **options)

    def taskpool(
        self,
        elem: Element,
        threads: int,
        items: int,
        body: Callable[[Context, Any], Any],
        **options: Any,
    ) -> Any:
        """``items`` tasks served by ``threads`` workers (see :func:`.patterns.taskpool`)."""
        return _patterns.taskpool(self, elem, threads, items, body, **options)


def _pair_body(op: Operation) -> str | None:
    """A method's body on the per-pair network: the collective's direct or general route, or the
    operation's route function (``Routes.pair``)."""
    if op.scope == "collective":
        root = "root" if op.rooted else "0"
        size = "size" if "size" in op.argument_names else "0"
        return f"return self._collective(elem, {op.name!r}, {root}, {size}, cost)"
    if op.routes.pair is None:
        return None
    return f"self.cur = elem\nreturn _route_{op.name}(self, elem, {', '.join(op.argument_names)}, cost)"


bind_operations(
    Context,
    _pair_body,
    {f"_route_{name}": route_function(op.routes.pair) for name, op in OPERATIONS.items() if op.routes.pair},
)


class GeneralContext(Context):
    """A context that takes the general path for every operation: generators all the way.

    It computes exactly what :class:`Context` computes, more slowly; tracing builds on it, and
    the tests compare the two on random models.
    """

    __slots__ = ()

    def send(self, elem: Element, dest: int, size: float = 0, tag: int = 0, cost: float = 0.0) -> Any:
        self.cur = elem
        return _comm.send(self, elem, dest, size, tag, cost)

    def recv(self, elem: Element, source: int = -1, size: float = 0, tag: int = 0, cost: float = 0.0) -> Any:
        self.cur = elem
        return _comm.recv(self, elem, source, size, tag, cost)

    def _collective(self, elem: Element, kind: str, root: Any, size: Any, cost: Any) -> Any:
        self.cur = elem
        return _collectives.collective(self, elem, kind, root, size, cost)

    def send_site(
        self, elem: Element, dest: int, size: float = 0, tag: int = 0, cost: float = 0.0
    ) -> Callable[[], Any]:
        return partial(self.send, elem, dest, size, tag, cost)

    def recv_site(
        self, elem: Element, source: int = -1, size: float = 0, tag: int = 0, cost: float = 0.0
    ) -> Callable[[], Any]:
        return partial(self.recv, elem, source, size, tag, cost)

    def compute(self, elem: Element, cost: float) -> Any:
        self.cur = elem
        if cost > 0.0:
            if cost == math.inf:
                raise self._bad_cost(elem, cost)
            env = self.env
            start = env._now
            cpu = self.cpu
            if not cpu.shared and cpu.busy < cpu.free:
                cpu.busy += 1
                delay = cost * self.inv_speed
                self.fast_ev = None
                self.fast_end = start + delay
                yield Timeout(env, delay)
                if self.conv is not None:  # the node became oversubscribed meanwhile
                    ev = self.conv
                    self.conv = None
                    yield ev
                    self.process.oversubscribed += env._now - start - delay
                cpu.busy -= 1
            else:
                yield from cpu.run_shared(self, cost * self.inv_speed)
                self.process.oversubscribed += env._now - start - cost * self.inv_speed
            d = env._now - start
        elif cost == 0.0:
            d = 0.0
        else:
            raise self._bad_cost(elem, cost)
        i = elem.index
        self.calls[i] += 1
        self.incl[i] += d
        self.covered += d
        self.totals[0] += d


class TracingContext(GeneralContext):
    """A context that also writes every operation to the trace (chosen at start, not per call)."""

    __slots__ = ()

    def compute(self, elem: Element, cost: float) -> Any:
        start = self.env._now
        yield from GeneralContext.compute(self, elem, cost)
        self.sim.trace_events.append((self.pid, self.track, elem.index, COMPUTE, start, self.env._now))

    def record(self, elem: Element, category: str, start: float, end: float) -> None:
        Context.record(self, elem, category, start, end)
        self.sim.trace_events.append((self.pid, self.track, elem.index, CATEGORY_INDEX[category], start, end))

    def record_message(
        self, src_pid: int, dst_pid: int, size: float, tag: int, send_time: float, recv_time: float
    ) -> None:
        self.sim.trace_messages.append((src_pid, dst_pid, size, tag, send_time, recv_time))

    def _note(self, elem: Element, category: int, start: float, end: float) -> None:
        self.sim.trace_events.append((self.pid, self.track, elem.index, category, start, end))

    def leave(self, elem: Element) -> None:
        start = self.stack[-1][1] if self.stack else self.env._now
        Context.leave(self, elem)
        self.sim.trace_events.append((self.pid, self.track, elem.index, -1, start, self.env._now))


if TYPE_CHECKING:  # pragma: no cover - mypy checks that the context keeps the process contract

    def _conforms(ctx: Context) -> ProcessContext:
        return ctx


__all__ = [
    "Context",
    "TracingContext",
    "GeneralContext",
    "Variables",
    "CATEGORY_INDEX",
    "CATEGORY_NAMES",
    "COMPUTE",
    "COMM",
    "WAIT",
]
