"""The one module that reaches into SimPy's internals; every other module goes through it.

The direct routes of the runtime schedule events without SimPy's public calls, which would cost
a second event or a generator frame per message.  What they rely on is SimPy 4.1's layout
(pinned ``simpy>=4.1,<4.2`` in ``pyproject.toml``; ``tests/test_simpy_contract.py`` checks
every name here against the installed SimPy):

* the event queue is a heap list ``env._queue`` of ``(time, priority, id, event)`` entries with
  ids from the counter ``env._eid`` (:func:`queue_of`, :func:`ids_of`, :data:`push`,
  :data:`NORMAL`); the hot paths fetch the two handles once per context and push entries
  themselves, so scheduling costs what ``env.schedule`` costs without its call;
* an event that has succeeded with ``None`` carries ``_ok = True`` and ``_value = None``:
  :func:`armed_event` and :func:`armed_timeout` make such events once, and the runtime keeps
  them armed and uses them again after SimPy has processed them (their ``callbacks`` is then
  None), so triggering one is only pushing it onto the queue;
* a process resumes by reading ``_ok``/``_value`` of the event it waited for and marks itself
  with ``_target``: :class:`DirectProcess` is SimPy's ``Process._resume`` with the model's
  generator entered directly.

One read stays outside: the modules that account time per event (contexts, operations, cores,
thread patterns, tokens) read the clock as ``env._now``, an attribute read, where the public
``env.now`` is a property call per read (measured: about 3% of a ring with local costs).  The
contract test checks that ``env._now`` is the clock, and no other module touches anything else
of SimPy's internals.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from heapq import heappush
from typing import Any

import simpy
from simpy.core import NORMAL, URGENT, StopSimulation
from simpy.events import PENDING, Event, Timeout
from simpy.events import _describe_frame as _simpy_describe_frame

#: The SimPy versions whose internals this module matches (also pinned in ``pyproject.toml``).
SUPPORTED_SIMPY = (4, 1)

#: ``heapq.heappush``: pushes a ``(time, NORMAL, next(ids), event)`` entry onto :func:`queue_of`.
push = heappush

#: What a context's ``parked`` says its process accounts as the parked event resumes it
#: (:class:`DirectProcess`): a receive or rendezvous send (its ``fast_req``), a collective (``fast_g``).
PARKED_REQUEST = 1
PARKED_COLLECTIVE = 2

__all__ = [
    "NORMAL",
    "URGENT",
    "StopSimulation",
    "PENDING",
    "SUPPORTED_SIMPY",
    "push",
    "PARKED_REQUEST",
    "PARKED_COLLECTIVE",
    "queue_of",
    "ids_of",
    "armed_event",
    "armed_timeout",
    "trigger_at",
    "timer_value",
    "event_count",
    "schedule_urgent",
    "DirectProcess",
]

_new = object.__new__


def queue_of(env: simpy.Environment) -> list[Any]:
    """The environment's event heap (entries ``(time, priority, id, event)``)."""
    queue: list[Any] = env._queue
    return queue


def ids_of(env: simpy.Environment) -> Iterator[int]:
    """The environment's counter of event ids (``next()`` of it orders same-time entries)."""
    ids: Iterator[int] = env._eid
    return ids


def armed_event(env: simpy.Environment) -> Event:
    """An event that has succeeded with ``None`` and is not scheduled yet (callbacks ``[]``).

    Pushing it onto the queue at a time is all that triggers it; once SimPy has processed it
    (``callbacks is None``) it can be given new callbacks and pushed again.
    """
    ev = _new(Event)
    ev.env = env
    ev.callbacks = []
    ev._ok = True  # type: ignore[attr-defined]
    ev._value = None  # type: ignore[attr-defined]
    return ev


def armed_timeout(env: simpy.Environment) -> Timeout:
    """A :class:`~simpy.events.Timeout` made as :func:`armed_event` makes an event (delay 0 until pushed)."""
    timeout = _new(Timeout)
    timeout.env = env
    timeout.callbacks = []
    timeout._ok = True  # type: ignore[attr-defined]
    timeout._value = None  # type: ignore[attr-defined]
    timeout._delay = 0.0  # type: ignore[attr-defined]
    return timeout


def trigger_at(env: simpy.Environment, event: Event, delay: float) -> None:
    """Succeed ``event`` with ``None`` ``delay`` seconds from now in one scheduling step.

    What ``simpy.Timeout`` does for its own events; doing it on an event a process already waits
    for saves the second event a ``succeed()`` plus ``Timeout`` would cost.
    """
    event._ok = True  # type: ignore[attr-defined]
    event._value = None  # type: ignore[attr-defined]
    env.schedule(event, NORMAL, delay)


def timer_value(timer: Event) -> Any:
    """The value a processed timer event carries (its version stamp)."""
    return timer._value  # type: ignore[attr-defined]


def event_count(env: simpy.Environment) -> int:
    """Number of events scheduled so far (SimPy numbers them consecutively)."""
    counter = getattr(env, "_eid", None)
    if counter is None:
        return 0
    # itertools.count's repr ("count(256128)") holds the next value without consuming it
    inside = repr(counter).partition("(")[2]
    digits = inside[: len(inside) - len(inside.lstrip("0123456789"))]
    return int(digits) if digits else 0


def schedule_urgent(env: simpy.Environment, callback: Callable[[Event], None]) -> None:
    """Schedule ``callback`` as an urgent, succeeded event now (safe from another thread: one push)."""
    event = armed_event(env)
    event.callbacks.append(callback)  # type: ignore[union-attr]
    env.schedule(event, priority=URGENT)


class DirectProcess(simpy.Process):
    """SimPy's process, resumed straight into the generator its :meth:`_begin` hands over.

    A subclass starts it with its first generator (which sets ``self._generator`` to the
    model's own generator once that has started) and sets ``sim`` and ``ctx``: when the code
    returns or raises ``exc``, the process calls ``sim._ended(ctx, exc)`` (``exc`` None for a
    return), directly, as a wrapper generator would.  Each resumption sends the event's value
    into the model's generator with no wrapper frame in between.  A resumption at the end of a
    compute of the context (``ctx.computing``) first records it (see ``Context.compute``), and so
    does one at the end of a parked receive, rendezvous send or collective (``ctx.parked``).
    """

    sim: Any
    ctx: Any

    def __init__(self, env: simpy.Environment, generator: Any) -> None:
        super().__init__(env, generator)
        #: ``_resume`` bound once: what each resumption appends to the next event's callbacks
        #: (SimPy binds a new method object per event; an equal one, so removing it still works).
        #: It is the one SimPy's start event (``Initialize``) already holds as its only callback,
        #: so a process that waits once binds nothing more; None once the code has ended.
        self.resume: Any = self._target.callbacks[0]  # type: ignore[index]

    def invalid_yield(self, value: object) -> Exception:
        """The error for a generator that yielded ``value``, not an event (SimPy's message here)."""
        descr = _simpy_describe_frame(self._generator.gi_frame)  # type: ignore[attr-defined]
        return RuntimeError(f'\n{descr}Invalid yield value "{value}"')

    def _resume(self, event: Event) -> None:
        env = self.env
        env._active_proc = self  # type: ignore[attr-defined]
        ctx = self.ctx
        if ctx.computing:
            # The end of the context's compute on a free core (``Context.compute``), which resumes
            # the process: its statistics are recorded here, before the model's code goes on, as a
            # callback of the timeout would record them, without the call of one.
            ctx.computing = False
            ctx.cpu.busy -= 1
            d = env._now - ctx.fast_start  # type: ignore[attr-defined]
            i = ctx.cur.index
            ctx.calls[i] += 1
            ctx.incl[i] += d
            ctx.covered += d
            ctx.totals[0] += d
        elif ctx.parked:
            # The end of a parked call of the context's direct route: a receive or rendezvous send
            # (``Context.recv``, ``Context.send``, their call sites, ``comm.recv_posted``) or a
            # collective (``collective_fast``), accounted here, the one place that does, as
            # ``comm.account`` would, in the same step and before the model's code goes on.
            ctx.blocked_for = None
            if ctx.parked == PARKED_REQUEST:
                req = ctx.fast_req
                ctx.fast_req = None
                i = ctx.blocked_elem.index
                posted = req.posted
                start = req.start
                end = req.done
            else:
                g = ctx.fast_g
                ctx.fast_g = None
                i = ctx.cur.index
                posted = ctx.fast_start
                start = g.start
                end = start + g.offsets[ctx.pid]
            ctx.parked = 0
            ctx.calls[i] += 1
            if start > posted:
                d = start - posted
                ctx.incl[i] += d
                ctx.covered += d
                ctx.totals[2] += d
                waits = ctx.process.waits
                if waits is None:
                    waits = ctx._wait_list()
                waits[i] += d
                if end > start:
                    d = end - start
                    ctx.incl[i] += d
                    ctx.covered += d
                    ctx.totals[1] += d
            else:
                d = end - posted
                ctx.incl[i] += d
                ctx.covered += d
                ctx.totals[1] += d
        while True:
            try:
                if event._ok:  # type: ignore[attr-defined]
                    event = self._generator.send(event._value)  # type: ignore[attr-defined]
                else:
                    # the process must handle the failed event or fail itself (as SimPy does)
                    event._defused = True  # type: ignore[attr-defined]
                    value = event._value  # type: ignore[attr-defined]
                    exc = type(value)(*value.args)
                    exc.__cause__ = value
                    event = self._generator.throw(exc)  # type: ignore[attr-defined]
            except StopIteration:
                self.sim._ended(self.ctx, None)
                self._ok = True
                self._value = None
                break
            except Exception as exc:  # noqa: BLE001 - model code may raise anything
                self.sim._ended(self.ctx, exc)
                self._ok = True
                self._value = None
                break
            except BaseException as exc:  # what SimPy does with it: the process fails
                self._ok = False
                exc.__traceback__ = exc.__traceback__.tb_next if exc.__traceback__ else None
                self._value = exc
                break
            try:
                callbacks = event.callbacks
            except AttributeError:
                if hasattr(event, "callbacks"):
                    raise
                raise self.invalid_yield(event) from None
            if callbacks is not None:
                callbacks.append(self.resume)
                self._target = event
                env._active_proc = None  # type: ignore[attr-defined]
                return
        # the code has ended: the process event fires now, as SimPy's does
        self.resume = None  # no cycle through the bound method: an ended process is freed at once
        env.schedule(self)
        self._target = None  # type: ignore[assignment]
        env._active_proc = None  # type: ignore[attr-defined]
