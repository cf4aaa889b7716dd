"""The simulation engine: placement, CPU contention, running, limits, deadlock detection.

One :class:`Simulation` evaluates one model on one machine with SimPy.  Each
process runs ``spec.init`` then ``spec.main`` with its own :class:`Context`;
threads are extra contexts started by the pattern methods of the context.

CPU model
---------
Every node has ``cores_per_node`` cores shared by all runnable compute
segments of its processes and threads (processor sharing): with ``n``
runnable segments on ``c`` cores each progresses at ``min(1, c/n) × speed``.
While a node has a free core a segment is a plain SimPy timeout (the fast
path, no bookkeeping beyond a counter).  The moment a segment arrives at a
node whose cores are all busy, the node switches to exact processor sharing:
the in-flight timeouts are converted (their remaining work joins the shared
set) and finishing times are recomputed on every arrival and departure, with
a virtual-time clock so each change costs O(log n).  When the last shared
segment finishes the node returns to the fast path.  A converted segment's
original timeout still wakes its process, which then waits for the shared
completion; that completion is never earlier, because sharing never runs
faster than a dedicated core.

Limits
------
``max_time`` (simulated seconds), ``max_iterations`` (per loop and process,
see ``Context.iteration``) and ``max_events`` (SimPy events) end the run with
:class:`~uml2perf_runtime.errors.LimitError`.  When no event is left but some
context has not finished, the run ends with
:class:`~uml2perf_runtime.errors.DeadlockError` listing who waits for what.
"""

from __future__ import annotations

import contextlib
import gc
import heapq
import itertools
import linecache
import math
import os
import re
import sys
import threading
import time as _time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

import simpy
from simpy.core import StopSimulation
from simpy.events import Event, Timeout

from .context import Context, GeneralContext, TracingContext, Variables
from .errors import DeadlockError, LimitError, ModelRuntimeError, ParameterError, SimulationError
from .limits import current as current_limits
from .machine import PLACEMENTS, Machine
from .model import Element, ModelSpec
from .progress import progress_line

DEFAULT_MAX_ITERATIONS = 10_000_000
_RUNTIME_DIR = str(Path(__file__).resolve().parent)


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
        self.members: dict[Context, None] = {}
        self.heap: list[tuple[float, int, Event]] = []
        self.vtime = 0.0
        self.t_last = 0.0
        self.rate = 1.0
        self.version = 0
        self.seq = itertools.count()

    def run_shared(self, ctx: Context, work: float) -> Any:
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
        if timer._value != self.version:
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


class Simulation:
    """One evaluation of a model on a machine (see the module docstring)."""

    def __init__(
        self,
        spec: ModelSpec,
        machine: Machine,
        nprocs: int,
        *,
        overrides: Mapping[str, Any] | None = None,
        seed: int = 0,
        placement: str = "block",
        tracing: bool = False,
        max_time: float | None = None,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
        max_events: int | None = None,
        progress: bool = False,
        general: bool = False,
    ) -> None:
        if placement not in PLACEMENTS:
            raise SimulationError(f"placement must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
        self.spec = spec
        self.machine = machine
        self.elements: tuple[Element, ...] = tuple(spec.elements)
        _check_elements(spec, self.elements)
        self.nprocs = nprocs
        self.nnodes = machine.nodes
        self.placement = placement
        self.rng_seed = seed
        self.max_time = max_time
        self.max_iterations = max_iterations
        self.max_events = max_events
        self._events_exceeded = False
        self.property_threshold: float = 0.01
        self.cost_scale: list[float] | None = None
        self._memories: dict[int, Any] = {}
        self._devices: dict[tuple[int, str], Any] = {}
        #: ``device = "auto"`` actions met in this run, and the mapping chosen for them (index -> device)
        self.auto_elements: dict[int, Element] = {}
        self.mapping: dict[int, str | None] = {}
        self.progress = progress
        self.overrides: dict[str, Any] = validate_overrides(spec, overrides or {})
        self.env = simpy.Environment()
        self.comm_state: Any = None
        self.tracing = tracing
        self.trace_events: list[tuple[int, int, int, int, float, float]] = []
        self.trace_messages: list[tuple[int, int, float, int, float, float]] = []
        self.track_labels: dict[tuple[int, int], str] = {}
        self.error: SimulationError | None = None
        self.live: dict[Context, None] = {}
        self.cpus = [
            NodeCPU(self.env, machine.cores_per_node, machine.background_load) for _ in range(self.nnodes)
        ]
        self._nodes = [self._place(pid) for pid in range(nprocs)]
        ppn = [0] * self.nnodes
        for node in self._nodes:
            ppn[node] += 1
        self.procs_per_node = ppn
        cls = TracingContext if tracing else GeneralContext if general else Context
        self.contexts: list[Context] = []
        for pid, node in enumerate(self._nodes):
            ctx = cls(self, pid, node, ppn[node], self.cpus[node])
            ctx.v = Variables()
            self.contexts.append(ctx)
        self.events = 0
        self.wall_time = 0.0

    # -- placement ---------------------------------------------------------------------

    def _place(self, pid: int) -> int:
        """Node of process ``pid``: block fills a node's cores before the next node."""
        nodes = self.nnodes
        if self.placement == "round_robin":
            return pid % nodes
        per_node = max(self.machine.cores_per_node, -(-self.nprocs // nodes))
        return min(pid // per_node, nodes - 1)

    def node_of(self, pid: int) -> int:
        """The node process ``pid`` is placed on."""
        return self._nodes[pid]

    # -- processes and threads ------------------------------------------------------------

    def _start(self, ctx: Context, generator: Any) -> simpy.Process:
        self.live[ctx] = None
        ctx.cpu.members[ctx] = None
        return self.env.process(generator)

    def start_thread(self, ctx: Context, runner: Callable[[Context], Any]) -> simpy.Process:
        """Start thread context ``ctx`` running ``runner(ctx)``; returns its SimPy process."""
        if self.tracing:
            self.track_labels[(ctx.pid, ctx.track)] = f"thread {ctx.tid} of {ctx.nthreads}"
        return self._start(ctx, self._run_thread(ctx, runner))

    def _run_process(self, ctx: Context) -> Any:
        spec = self.spec
        try:
            spec.init(ctx, ctx.v)
            main = spec.main
            if main is not None:
                gen = main(ctx, ctx.v)
                if gen is not None:
                    yield from gen
        except SimulationError as exc:
            self._fail(exc)
        except Exception as exc:  # noqa: BLE001 - model code may raise anything
            self._fail(model_error(exc, ctx, self.elements))
        else:
            ctx.finished = True
            ctx.finish_time = self.env._now
        self._retire(ctx)

    def _run_thread(self, ctx: Context, runner: Callable[[Context], Any]) -> Any:
        try:
            gen = runner(ctx)
            if gen is not None:
                yield from gen
        except SimulationError as exc:
            self._fail(exc)
        except Exception as exc:  # noqa: BLE001
            self._fail(model_error(exc, ctx, self.elements))
        else:
            ctx.finished = True
            ctx.finish_time = self.env._now
        self._retire(ctx)

    def _retire(self, ctx: Context) -> None:
        del self.live[ctx]
        del ctx.cpu.members[ctx]

    def _fail(self, exc: SimulationError) -> None:
        """Keep the first error and stop the simulation at once."""
        if self.error is None:
            self.error = exc
            stop = Event(self.env)
            stop.callbacks.append(StopSimulation.callback)
            stop.succeed()

    # -- running ------------------------------------------------------------------------

    def run(self) -> Any:
        """Run to completion; returns :class:`~uml2perf_runtime.results.Results`."""
        from .results import Results

        wall0 = _time.perf_counter()
        for ctx in self.contexts:
            self._start(ctx, self._run_process(ctx))
        gc_was_enabled = gc.isenabled()
        gc.disable()
        recursion_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(recursion_limit, CALL_DEPTH_LIMIT))
        try:
            with progress_line(self._progress_sample, self.progress):
                stopped_by_limit = self._loop()
        finally:
            sys.setrecursionlimit(recursion_limit)
            if gc_was_enabled:
                gc.enable()
        self.wall_time = _time.perf_counter() - wall0
        self.events = _event_count(self.env)
        if self.error is not None:
            raise self.error
        if self.live:
            if stopped_by_limit == "events":
                budget = self.max_events if self.max_events is not None else current_limits().events
                raise LimitError(
                    f"the simulation processed more than {budget:,} events at simulated time "
                    f"{self.env.now:.6g} s and has not finished ({self._running_summary()})",
                    kind="events",
                    running=self._where_all(),
                    hint="check for loops that never end, or raise the limit with --limit events=N "
                    "or the environment variable UML2PERF_MAX_EVENTS",
                )
            if stopped_by_limit == "time":
                raise LimitError(
                    f"simulated time reached the limit of {self.max_time:.6g} s before the model "
                    f"finished ({self._running_summary()})",
                    kind="time",
                    running=self._where_all(),
                    hint="raise max_time, or check the costs and loop counts of the model",
                )
            raise self._deadlock()
        return Results.from_simulation(self)

    # -- hardware-aware actions (see uml2perf_runtime.roofline) ----------------------------

    def memory(self, node: int) -> Any:
        """The shared memory bandwidth of ``node`` (created on first use)."""
        found = self._memories.get(node)
        if found is None:
            from .roofline import NodeMemory

            machine = self.machine
            bandwidth = machine.memory_bandwidth
            assert bandwidth is not None
            found = self._memories[node] = NodeMemory(
                self.env, bandwidth, machine.core_bandwidth or bandwidth
            )
        return found

    def devices(self, node: int, kind: str) -> Any:
        """The queue in front of the ``kind`` devices of ``node`` (created on first use)."""
        found = self._devices.get((node, kind))
        if found is None:
            from .roofline import device_resource

            found = self._devices[node, kind] = device_resource(self.env, self.machine.devices[kind].count)
        return found

    def device_for(self, elem: Element, device: str | None) -> str | None:
        """Where an action runs: None for a CPU core, else a device kind of the machine."""
        if device is None or device == "cpu":
            return None
        if device == "auto":
            self.auto_elements.setdefault(elem.index, elem)
            return self.mapping.get(elem.index)
        if device not in self.machine.devices:
            from .errors import MachineError

            known = ", ".join(sorted(self.machine.devices)) or "none"
            raise MachineError(
                f"{elem.describe()} runs on device {device!r}, but machine '{self.machine.name}' has no "
                f"[devices.{device}] (its devices: {known})",
                hint=f'add a [devices.{device}] table to the machine file, or use device = "cpu"',
            )
        return device

    def apply_speedups(self, speedups: Mapping[str, float]) -> None:
        """Make the named elements (and what runs inside them) compute ``factor`` times faster.

        Contexts of a what-if run are of a subclass whose ``compute`` and
        ``spend`` divide the cost; ordinary runs keep the plain hot path.
        """
        factors = resolve_speedups(self.elements, speedups)
        scale = [1.0] * len(self.elements)
        for index, factor in factors.items():
            scale[index] = 1.0 / factor
        base = type(self.contexts[0]) if self.contexts else Context
        scaled = _scaled_context_class(base)
        for ctx in self.contexts:
            ctx.__class__ = scaled
        self.cost_scale = scale

    def _progress_sample(self) -> tuple[float, int, int]:
        """Simulated time, processes still running, processes in all (read by the progress line)."""
        try:
            running = len({ctx.pid for ctx in tuple(self.live)})
        except RuntimeError:  # the event loop changed the set while we read it: sample again later
            running = self.nprocs
        return self.env.now, running, self.nprocs

    def _loop(self) -> str | None:
        """Process events; returns ``"time"``/``"events"`` if a limit stopped the run.

        Without limits this is SimPy's own loop.  With a limit, each event is
        checked first, so the clock never passes ``max_time`` and a deadlock is
        reported at the time of the last event that really happened.
        """
        env = self.env
        if self.max_time is None and self.max_events is None:
            with _event_watchdog(self, current_limits().events):
                env.run()
            return "events" if self._events_exceeded else None
        limit = self.max_time if self.max_time is not None else math.inf
        budget = self.max_events if self.max_events is not None else -1
        step = env.step
        peek = env.peek
        try:
            while True:
                upcoming = peek()
                if upcoming == math.inf:
                    return None
                if upcoming > limit:
                    return "time"
                if budget == 0:
                    return "events"
                budget -= 1
                step()
        except StopSimulation:
            return None

    # -- reports ----------------------------------------------------------------------------

    def _where_all(self) -> list[dict[str, Any]]:
        ordered = sorted(self.live, key=lambda c: (c.pid, c.track))
        return [ctx.where() for ctx in ordered]

    def _running_summary(self) -> str:
        pids = sorted({ctx.pid for ctx in self.live})
        shown = ", ".join(str(p) for p in pids[:10]) + (", ..." if len(pids) > 10 else "")
        return f"{len(pids)} process{'es' if len(pids) != 1 else ''} still running: {shown}"

    def _deadlock(self) -> DeadlockError:
        report = self._where_all()
        lines = []
        for entry in report[:20]:
            who = f"process {entry['pid']}" + (f" thread {entry['tid']}" if entry["tid"] else "")
            elem = entry["element"]
            at = "before its first element" if elem is None else _describe_dict(elem)
            waits = entry["waiting_for"] or "an event that never happens"
            lines.append(f"  {who} (node {entry['node']}) waits at {at} for {waits}")
        if len(report) > 20:
            lines.append(f"  ... and {len(report) - 20} more")
        pids = {entry["pid"] for entry in report}
        message = (
            f"deadlock at simulated time {self.env.now:.6g} s: {len(pids)} "
            f"process{'es' if len(pids) != 1 else ''} cannot finish\n" + "\n".join(lines)
        )
        return DeadlockError(
            message,
            report=report,
            time=self.env.now,
            hint="check that every receive has a matching send (source, tag) and "
            "that all processes reach the same collectives",
        )


def _describe_dict(elem: Mapping[str, Any]) -> str:
    where = []
    if elem.get("id"):
        where.append(f"xmi:id={elem['id']}")
    if elem.get("line"):
        where.append(f"line {elem['line']}")
    return f"'{elem['name']}'" + (f" ({', '.join(where)})" if where else "")


def resolve_speedups(elements: tuple[Element, ...], speedups: Mapping[str, float]) -> dict[int, float]:
    """Element index -> factor for ``--speedup NAME=FACTOR`` (names or xmi ids; errors say what is close)."""
    import difflib

    by_name: dict[str, list[Element]] = {}
    for elem in elements:
        by_name.setdefault(elem.name, []).append(elem)
        if elem.xmi_id:
            by_name.setdefault(elem.xmi_id, []).append(elem)
    found: dict[int, float] = {}
    for name, factor in speedups.items():
        if not isinstance(factor, (int, float)) or isinstance(factor, bool) or not (0 < factor < math.inf):
            raise SimulationError(
                f"--speedup {name}={factor}: the factor must be a positive, finite number",
                hint="e.g. --speedup SFT=2 predicts SFT running twice as fast",
            )
        matches = by_name.get(name)
        if not matches:
            close = difflib.get_close_matches(name, [e.name for e in elements], 3, 0.6)
            hint = (
                f"did you mean {', '.join(repr(c) for c in close)}?"
                if close
                else "give an element name or xmi id from the profile table"
            )
            raise SimulationError(f"--speedup {name}={factor}: the model has no element {name!r}", hint=hint)
        for elem in matches:
            found[elem.index] = float(factor)
    return found


_SCALED_CLASSES: dict[type, type] = {}


def _scaled_context_class(base: type) -> type:
    """A subclass of ``base`` whose computations are scaled by the simulation's ``cost_scale``."""
    found = _SCALED_CLASSES.get(base)
    if found is not None:
        return found

    def factor(ctx: Any, elem: Element | None) -> float:
        scale = ctx.sim.cost_scale
        value = scale[elem.index] if elem is not None else 1.0
        for entered, *_ in ctx.stack:
            value *= scale[entered.index]
        return value

    def compute(self: Any, elem: Element, cost: float) -> Any:
        return base.compute(self, elem, cost * factor(self, elem) if cost > 0.0 else cost)

    def spend(self: Any, seconds: float) -> Any:
        return base.spend(self, seconds * factor(self, self.cur) if seconds > 0.0 else seconds)

    found = type(f"Scaled{base.__name__}", (base,), {"__slots__": (), "compute": compute, "spend": spend})
    _SCALED_CLASSES[base] = found
    return found


@contextlib.contextmanager
def _event_watchdog(sim: Simulation, budget: int) -> Iterator[None]:
    """Stop an unlimited run once it has processed more than ``budget`` events, at no cost per event.

    A watcher thread reads SimPy's event counter twice a second; past the
    budget it schedules one urgent event whose callback stops the loop.  A
    single ``heappush`` is atomic under the interpreter lock, so scheduling
    from the watcher is safe; the run may overshoot by half a second of events.
    """
    finished = threading.Event()
    env = sim.env

    def stop(_: Event) -> None:
        sim._events_exceeded = True
        raise StopSimulation(None)

    def watch() -> None:
        while not finished.wait(WATCHDOG_INTERVAL):
            if _event_count(env) > budget:
                event = Event(env)
                event._ok = True
                event._value = None
                event.callbacks.append(stop)
                env.schedule(event, priority=0)
                return

    watcher = threading.Thread(target=watch, name="uml2perf-event-limit", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        finished.set()
        watcher.join()


#: Python's recursion limit while a model runs: every activity a call chain enters adds a level
#: of ``yield from`` (a chain of 1,000 activities is deeper than Python's default of 1,000).
CALL_DEPTH_LIMIT = 20_000

#: How often the event-limit watcher looks at the event counter (seconds).
WATCHDOG_INTERVAL = 0.5


def _event_count(env: simpy.Environment) -> int:
    """Number of events scheduled during the run (SimPy numbers them consecutively)."""
    counter = getattr(env, "_eid", None)
    if counter is None:
        return 0
    # itertools.count's repr holds the next value without consuming it.
    match = re.search(r"\((\d+)", repr(counter))
    return int(match.group(1)) if match else 0


def _check_elements(spec: ModelSpec, elements: tuple[Element, ...]) -> None:
    for position, elem in enumerate(elements):
        if elem.index != position:
            raise SimulationError(
                f"model '{spec.name}': element {elem.describe()} has index {elem.index} but is at "
                f"position {position} of ELEMENTS",
                hint="regenerate the model module; element indices must number ELEMENTS in order",
            )


# -- model errors ---------------------------------------------------------------------------

_XMI_ID = re.compile(r"xmi:id=([^\s,)]+)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _model_frames(tb: TracebackType | None) -> list[tuple[FrameType, int]]:
    """Frames of model code (outside this runtime), innermost first."""
    frames = []
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_RUNTIME_DIR):
            frames.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    frames.reverse()
    return frames


def _element_of_frame(frame: FrameType, lineno: int, by_id: dict[str, Element]) -> tuple[Element, str] | None:
    """The element a failing line of generated code belongs to, and what was evaluated."""
    filename = frame.f_code.co_filename
    line = linecache.getline(filename, lineno, frame.f_globals)
    if "rt.count(" in line:  # a repeat count: the element is the first one the loop body names
        for number in range(lineno + 1, lineno + 20):
            following = linecache.getline(filename, number, frame.f_globals)
            for name in _NAME.findall(following):
                candidate = frame.f_globals.get(name)
                if isinstance(candidate, Element):
                    return candidate, "repeat count of"
    for name in _NAME.findall(line):
        candidate = frame.f_globals.get(name)
        if isinstance(candidate, Element):
            what = "cost of" if ".compute(" in line else "arguments of"
            return candidate, what
    first = frame.f_code.co_firstlineno
    for number in range(lineno - 1, first - 1, -1):
        text = linecache.getline(filename, number, frame.f_globals).strip()
        if text.startswith("#"):
            match = _XMI_ID.search(text)
            if match and match.group(1) in by_id:
                return by_id[match.group(1)], "code of"
    return None


_ASSIGNED = re.compile(r"^\s*v\.([A-Za-z_][A-Za-z0-9_]*)\s*=")


def _variable_of_frames(frames: list[tuple[FrameType, int]]) -> str | None:
    """The model variable whose value a failing generated line computes (``v.X = ...``), if any."""
    for frame, lineno in frames:
        line = linecache.getline(frame.f_code.co_filename, lineno, frame.f_globals)
        match = _ASSIGNED.match(line)
        if match:
            return match.group(1)
    return None


def model_error(exc: Exception, ctx: Context, elements: tuple[Element, ...]) -> ModelRuntimeError:
    """Turn an exception raised by model code into a message naming element and process.

    The element is found from the traceback (the generated line that failed
    names its element, or a comment carrying its XMI id precedes it), else it
    is the last element the context reached.
    """
    by_id = {e.xmi_id: e for e in elements if e.xmi_id}
    found = None
    frames = _model_frames(exc.__traceback__)
    for frame, lineno in frames:
        found = _element_of_frame(frame, lineno, by_id)
        if found is not None:
            break
    variable = _variable_of_frames(frames) if found is None else None
    if isinstance(exc, (ArithmeticError, ValueError)) and str(exc):
        text = str(exc)
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if found is not None:
        elem, what = found
        where = f"in {what} {elem.describe()}"
    elif variable is not None:
        elem = None
        where = f"in the value of model variable {variable!r} (its default, or its --set/sidecar value)"
    elif ctx.cur is not None:
        elem = ctx.cur
        where = f"after {elem.describe()}"
    else:
        elem = None
        where = "before the first element"
    error = ModelRuntimeError(
        f"{text} {where} on {ctx.describe()}",
        element_name=elem.name if elem else None,
        element_id=elem.xmi_id if elem else None,
        line=elem.line if elem else None,
        pid=ctx.pid,
        tid=ctx.tid,
        original=exc,
        hint="check the cost function or code fragment and the variables it uses "
        "(--set NAME=VALUE overrides a model variable)",
    )
    error.__cause__ = exc
    return error


# -- overrides --------------------------------------------------------------------------------

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def _number(text: str) -> int | float:
    """``"64"`` -> 64, ``"1e3"`` -> 1000, ``"2.5"`` -> 2.5; ValueError otherwise."""
    try:
        return int(text)
    except ValueError:
        pass
    value = float(text)
    if value.is_integer() and "." not in text:
        return int(value)
    return value


def coerce_value(name: str, value: Any, default: Any) -> Any:
    """Convert a textual override to the type of the parameter's default."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        if isinstance(default, bool):
            low = text.lower()
            if low in _TRUE:
                return True
            if low in _FALSE:
                return False
            raise ValueError(text)
        if isinstance(default, int):
            return _number(text)
        if isinstance(default, float):
            return float(text)
        if isinstance(default, str):
            return value
        try:
            return _number(text)
        except ValueError:
            return value
    except ValueError:
        kind = "true or false" if isinstance(default, bool) else "a number"
        raise ParameterError(
            f"--set {name}={value}: {name} must be {kind} (its default is {default!r})"
        ) from None


def validate_overrides(spec: ModelSpec, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Check override names against the model's parameters and convert their values."""
    defaults = dict(spec.parameters)
    unknown = sorted(name for name in overrides if name not in defaults)
    if unknown:
        known = ", ".join(defaults) if defaults else "(none)"
        raise ParameterError(
            f"model '{spec.name}' has no parameter{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(n) for n in unknown)}; its parameters are: {known}"
        )
    values = {name: coerce_value(name, value, defaults[name]) for name, value in overrides.items()}
    for name, value in values.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ParameterError(
                f"--set {name}={value}: {name} must be a finite number",
                hint="infinite or not-a-number values would make every time meaningless",
            )
    return values


# -- entry point --------------------------------------------------------------------------------


def simulate(
    spec: ModelSpec,
    machine: Machine | None = None,
    procs: int | None = None,
    nodes: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    seed: int = 0,
    placement: str | None = None,
    trace: str | Path | None = None,
    max_time: float | None = None,
    max_iterations: int | None = None,
    max_events: int | None = None,
    progress: bool = False,
    min_severity: float | None = None,
    critical_path: bool = False,
    speedups: Mapping[str, float] | None = None,
) -> Any:
    """Evaluate ``spec`` on ``machine`` and return its :class:`~uml2perf_runtime.results.Results`.

    ``min_severity`` is the smallest severity of a performance property reported
    (default :data:`~uml2perf_runtime.properties.DEFAULT_THRESHOLD`).
    ``critical_path`` keeps the run's timeline in memory and fills
    ``Results.critical_path``; ``speedups`` maps element names or xmi ids to
    factors: those elements (and everything inside them) compute that many
    times faster (a what-if prediction).

    ``progress`` shows a status line on standard error during runs longer than a second.

    ``procs`` defaults to every core of the machine (``nodes`` × ``cores_per_node``);
    ``nodes`` overrides the machine's node count; ``placement`` (``"block"`` or
    ``"round_robin"``) overrides the machine's policy; ``trace`` is the path of a
    Chrome/Perfetto trace to write (atomically), or ``True`` to keep the timeline
    in ``Results.timeline`` only (for plots).
    """
    machine = machine if machine is not None else Machine.default()
    if nodes is not None:
        machine = machine.with_nodes(nodes)
    nprocs = machine.cores if procs is None else procs
    if not isinstance(nprocs, int) or isinstance(nprocs, bool) or nprocs < 1:
        raise SimulationError(f"the number of processes must be a whole number of at least 1, got {procs!r}")
    limits = current_limits()
    limits.check("processes", nprocs, "the number of processes")
    limits.check("nodes", machine.nodes, f"the number of nodes of machine '{machine.name}'")
    limits.check("cores", machine.cores_per_node, f"the cores per node of machine '{machine.name}'")
    if max_time is not None and not (max_time > 0):
        raise SimulationError(f"max_time must be a positive number of seconds, got {max_time!r}")
    if max_iterations is not None and max_iterations < 1:
        raise SimulationError(f"max_iterations must be at least 1, got {max_iterations!r}")
    if max_events is not None and max_events < 1:
        raise SimulationError(f"max_events must be at least 1, got {max_events!r}")
    if min_severity is not None and not (0.0 <= min_severity <= 1.0):
        raise SimulationError(f"the minimum severity must be between 0 and 1, got {min_severity!r}")

    def once(mapping: dict[int, str | None], final: bool) -> tuple[Any, Simulation]:
        sim = Simulation(
            spec,
            machine,
            nprocs,
            overrides=overrides,
            seed=seed,
            placement=placement or machine.placement,
            tracing=final and ((trace is not None and trace is not False) or critical_path),
            max_time=max_time,
            max_iterations=max_iterations or DEFAULT_MAX_ITERATIONS,
            max_events=max_events,
            progress=progress and final,
        )
        sim.mapping = dict(mapping)
        if speedups:
            sim.apply_speedups(speedups)
        if min_severity is not None:
            sim.property_threshold = min_severity
        return sim.run(), sim

    results, sim = once({}, final=True)
    if sim.auto_elements and machine.devices:
        from .mapping import choose_mapping

        def evaluate(mapping: dict[int, str | None]) -> float:
            return float(once(mapping, final=False)[0].time)

        chosen, alternatives = choose_mapping(
            sorted(sim.auto_elements), [None, *sorted(machine.devices)], evaluate
        )
        if any(device is not None for device in chosen.values()):
            results, sim = once(chosen, final=True)
        results.mapping = {
            sim.auto_elements[i].name if i in sim.auto_elements else str(i): device or "cpu"
            for i, device in sorted(chosen.items())
        }
        results.alternatives = alternatives
    if isinstance(trace, (str, os.PathLike)):
        from .trace import write_trace

        write_trace(trace, sim)
    return results


__all__ = [
    "Simulation",
    "NodeCPU",
    "simulate",
    "coerce_value",
    "validate_overrides",
    "model_error",
    "DEFAULT_MAX_ITERATIONS",
]
