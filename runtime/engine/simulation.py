"""The simulation engine: placement, CPU contention, running, limits, deadlock detection.

One :class:`Simulation` evaluates one model on one machine with SimPy.  Each
process runs ``spec.init`` then ``spec.main`` with its own :class:`Context`;
threads are extra contexts started by the pattern methods of the context.

The cores of each node are a :class:`~uml2perf_runtime.engine.cpu.NodeCPU`; model parameters are
checked by :mod:`uml2perf_runtime.parameters`, errors of model code explained by
:mod:`uml2perf_runtime.engine.diagnosis`.

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
import math
import os
import sys
import threading
import time as _time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import GeneratorType
from typing import Any

import simpy
from simpy.events import Event

from ..errors import DeadlockError, LimitError, SimulationError
from ..output.progress import progress_line
from ..parameters import coerce_value, validate_overrides
from ..platform.interface import Network, network_of
from ..platform.machine import PLACEMENTS, Machine
from ..spec import Element, ModelSpec
from .collector import collector_paused, release_cycles
from .context import Context, GeneralContext, TracingContext, Variables
from .cpu import NodeCPU
from .limits import current as current_limits
from .simpy_access import DirectProcess, StopSimulation, event_count, schedule_urgent

DEFAULT_MAX_ITERATIONS = 10_000_000


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
        #: what-if runs: the factor a thread inherits from the containers that started it
        self.thread_scale: dict[Any, float] = {}
        self._memories: dict[tuple[int, int], Any] = {}
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
        #: the network of this run (per pair, or shared links with a topology), chosen once here
        self.network = network_of(machine)
        cls = context_class(self.network, tracing, general)
        #: the shared links of the machine's topology (``operations.over_links``), made on first message
        self.link_network: Any = None
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

    def start_thread(self, ctx: Context, runner: Callable[[Context], Any]) -> simpy.Process:
        """Start thread context ``ctx`` running ``runner(ctx)``; returns its SimPy process."""
        if self.tracing:
            self.track_labels[(ctx.pid, ctx.track)] = f"thread {ctx.tid} of {ctx.nthreads}"
        self.live[ctx] = None
        ctx.cpu.members[ctx] = None
        return _ThreadProcess(self, ctx, runner)

    def start_generator(self, ctx: Context, body: Any) -> simpy.Process:
        """Start thread context ``ctx`` running the generator ``body`` (of a generator function: no
        model code has run yet); its SimPy process resumes ``body`` from its first step on."""
        if self.tracing:
            self.track_labels[(ctx.pid, ctx.track)] = f"thread {ctx.tid} of {ctx.nthreads}"
        self.live[ctx] = None
        ctx.cpu.members[ctx] = None
        return _GeneratorProcess(self, ctx, body)

    def _start_process(self, ctx: Context) -> simpy.Process:
        """Start the main context ``ctx``: a :class:`_ModelProcess` running the model's code."""
        self.live[ctx] = None
        ctx.cpu.members[ctx] = None
        return _ModelProcess(self, ctx)

    def _ended(self, ctx: Context, exc: Exception | None) -> None:
        """The model code of ``ctx`` (a process or a thread) returned (``exc`` None) or raised ``exc``."""
        if exc is None:
            ctx.finished = True
            ctx.finish_time = self.env._now
        elif isinstance(exc, SimulationError):
            self._fail(exc)
        else:
            from .diagnosis import model_error  # only for a failing model: it reads source lines

            self._fail(model_error(exc, ctx, self.elements))
        self._retire(ctx)
        if ctx.process is not ctx:
            # A finished thread's context serves the process's next thread (Context._new_thread):
            # a run of many short threads makes no garbage of contexts (each refers to itself
            # through its bound callbacks, so the collector would have to free them).
            ctx.thread_ended()

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
        """Run to completion; returns :class:`~uml2perf_runtime.output.results.Results`."""
        from ..output.results import Results

        wall0 = _time.perf_counter()
        for ctx in self.contexts:
            self._start_process(ctx)
        recursion_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(recursion_limit, CALL_DEPTH_LIMIT))
        try:
            with collector_paused(), progress_line(self._progress_sample, self.progress):
                stopped_by_limit = self._loop()
        finally:
            sys.setrecursionlimit(recursion_limit)
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

    # -- hardware-aware actions (see uml2perf_runtime.platform.roofline) ----------------------------

    def memory(self, node: int, level: int = -1) -> Any:
        """The shared bandwidth of ``node``'s memory (``level`` -1) or of its cache ``level``.

        Created on first use.  Each level is a pool of its own: actions streaming from a
        cache do not take bandwidth from those streaming from memory (caches are per core or
        far wider than the memory bus; what they share is measured into the level's rates).
        """
        found = self._memories.get((node, level))
        if found is None:
            from ..platform.roofline import NodeMemory

            machine = self.machine
            if level < 0:
                bandwidth = machine.memory_bandwidth
                assert bandwidth is not None
                cap = machine.core_bandwidth or bandwidth
            else:
                cache = machine.caches[level]
                bandwidth, cap = cache.bandwidth, cache.core_bandwidth
            found = self._memories[node, level] = NodeMemory(self.env, bandwidth, cap)
        return found

    def devices(self, node: int, kind: str) -> Any:
        """The queue in front of the ``kind`` devices of ``node`` (created on first use)."""
        found = self._devices.get((node, kind))
        if found is None:
            from ..platform.roofline import device_resource

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
            from ..errors import MachineError

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


class _ModelProcess(DirectProcess):
    """The SimPy process of one simulated process: it resumes the model's generator itself.

    SimPy's ``Process._resume`` with what a wrapper generator around the model's code would do
    folded in: ending (``Simulation._ended``) when the code returns or raises an exception,
    so that every resumption enters the model's generator directly, one generator frame less
    per event.  The first resumption runs ``spec.init`` and starts ``spec.main`` (in
    :meth:`_begin`), then hands the process over to the model's own generator.
    """

    def __init__(self, sim: Simulation, ctx: Context) -> None:
        self.sim = sim
        self.ctx = ctx
        super().__init__(sim.env, self._begin())

    def invalid_yield(self, value: object) -> Exception:
        """A hand-edited module yielded ``value``: an error naming its line, not SimPy's."""
        return _invalid_yield(self._generator, value)

    def _begin(self) -> Any:
        """Initialise the variables, start the main activity, then let it run as the process."""
        ctx = self.ctx
        spec = self.sim.spec
        spec.init(ctx, ctx.v)
        main = spec.main
        if main is not None:
            yield from self._enter(main(ctx, ctx.v))

    def _enter(self, gen: Any) -> Any:
        """Run a body's generator to its first event, then hand the process over to it.

        ``gen`` may also be None or the events of a body that is no generator (a tuple or a
        list), which are waited for here.
        """
        if not isinstance(gen, GeneratorType):
            if gen is not None:
                yield from gen
            return
        try:
            first = gen.send(None)
        except StopIteration:
            return
        self._generator = gen  # resumed directly from now on; the generators entering it are done
        yield first


class _ThreadProcess(_ModelProcess):
    """The SimPy process of a thread: ``runner(ctx)``'s generator, resumed directly.

    Like a process's own model code (:class:`_ModelProcess`), the thread's body is entered
    without a wrapper generator, and its end or its error goes through ``Simulation._ended``.
    """

    def __init__(self, sim: Simulation, ctx: Context, runner: Callable[[Context], Any]) -> None:
        self.runner = runner
        super().__init__(sim, ctx)

    def _begin(self) -> Any:
        """Start the thread's body, then let it run as the process."""
        yield from self._enter(self.runner(self.ctx))


class _GeneratorProcess(_ModelProcess):
    """The SimPy process of a thread whose body is a generator already made (``start_generator``).

    Making a generator runs none of its code, so the process is SimPy's own start on it: its first
    resumption enters the body, with no starting generator in between (``_ThreadProcess`` needs
    one to call its runner at the thread's first step).
    """

    def __init__(self, sim: Simulation, ctx: Context, body: Any) -> None:
        self.sim = sim
        self.ctx = ctx
        DirectProcess.__init__(self, sim.env, body)


def _invalid_yield(generator: Any, value: object) -> SimulationError:
    """A model function that yields something other than the runtime's operations (a hand edit)."""
    frame = getattr(generator, "gi_frame", None)
    where = ""
    if frame is not None:
        where = f" at line {frame.f_lineno} of {frame.f_code.co_filename}, in {frame.f_code.co_name}"
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return SimulationError(
        f"the model yields {shown}{where}: model functions yield only the runtime's operations "
        "('yield from p.compute(...)' and the like)",
        hint="the module was changed by hand: convert the export again, or yield from a runtime operation",
    )


def context_class(network: Network, tracing: bool, general: bool = False) -> type[Context]:
    """The class of a run's process contexts: the routes its network's messages take, traced or not."""
    if network.routes == "links":
        from .link_context import context_class as link_class

        return link_class(tracing)
    return TracingContext if tracing else GeneralContext if general else Context


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


_SCALED_CLASSES: dict[type[Context], type[Context]] = {}


def _scaled_context_class(base: type[Context]) -> type[Context]:
    """A subclass of ``base`` whose computations are scaled by the simulation's ``cost_scale``."""
    found = _SCALED_CLASSES.get(base)
    if found is not None:
        return found

    def enclosing(ctx: Any) -> float:
        """The factor of the containers ``ctx`` is inside: its own stack and, for a thread, its starter's."""
        scale = ctx.sim.cost_scale
        value = ctx.sim.thread_scale.get(ctx, 1.0)
        for entered, *_ in ctx.stack:
            value *= scale[entered.index]
        return value

    def factor(ctx: Any, elem: Element | None) -> float:
        return (ctx.sim.cost_scale[elem.index] if elem is not None else 1.0) * enclosing(ctx)

    def new_thread(self: Any, tid: int, nthreads: int) -> Any:
        # a thread starts with an empty stack: it inherits the factor of the container that started it
        thread = base._new_thread(self, tid, nthreads)
        inherited = enclosing(self)
        region = self.cur  # a thread region is current but not entered on the stack
        if region is not None and not (self.stack and self.stack[-1][0] is region):
            inherited *= self.sim.cost_scale[region.index]
        if inherited != 1.0:
            self.sim.thread_scale[thread] = inherited
        else:  # a finished thread's context made again may still have its last factor here
            self.sim.thread_scale.pop(thread, None)
        return thread

    def compute(self: Any, elem: Element, cost: float) -> Any:
        return base.compute(self, elem, cost * factor(self, elem) if cost > 0.0 else cost)

    def spend(self: Any, seconds: float) -> Any:
        return base.spend(self, seconds * factor(self, self.cur) if seconds > 0.0 else seconds)

    def after_local_cost(self: Any, elem: Element, cost: float, *route: Any) -> Any:
        # the direct route of a local cost spends it without calling spend: scaled here as spend is
        scaled_cost = cost * factor(self, self.cur) if cost > 0.0 else cost
        return base._after_local_cost(self, elem, scaled_cost, *route)

    scaled: type[Context] = type(
        f"Scaled{base.__name__}",
        (base,),
        {
            "__slots__": (),
            "compute": compute,
            "spend": spend,
            "_after_local_cost": after_local_cost,
            "_new_thread": new_thread,
        },
    )
    _SCALED_CLASSES[base] = scaled
    return scaled


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
                schedule_urgent(env, stop)
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
    return event_count(env)


def _check_elements(spec: ModelSpec, elements: tuple[Element, ...]) -> None:
    for position, elem in enumerate(elements):
        if elem.index != position:
            raise SimulationError(
                f"model '{spec.name}': element {elem.describe()} has index {elem.index} but is at "
                f"position {position} of ELEMENTS",
                hint="regenerate the model module; element indices must number ELEMENTS in order",
            )


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
    """Evaluate ``spec`` on ``machine`` and return its :class:`~uml2perf_runtime.output.results.Results`.

    ``min_severity`` is the smallest severity of a performance property reported
    (default :data:`~uml2perf_runtime.analysis.properties.DEFAULT_THRESHOLD`).
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

    runs = 0

    def once(mapping: dict[int, str | None], final: bool) -> tuple[Any, Simulation]:
        nonlocal runs
        if runs:
            release_cycles()
        runs += 1
        # Building the processes and collecting the statistics allocate as much as the run itself
        # and create no cycle worth collecting: the collector stays paused from start to results.
        with collector_paused():
            return _build_and_run(mapping, final)

    def _build_and_run(mapping: dict[int, str | None], final: bool) -> tuple[Any, Simulation]:
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
        from ..platform.mapping import choose_mapping

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
        from ..output.trace import write_trace

        write_trace(trace, sim)
    return results


__all__ = [
    "Simulation",
    "simulate",
    "coerce_value",
    "validate_overrides",
    "NodeCPU",
    "DEFAULT_MAX_ITERATIONS",
]
