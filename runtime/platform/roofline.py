"""Hardware-aware costs: roofline actions, shared memory bandwidth and accelerators.

An action with ``flops`` and/or ``bytes`` tags takes, on a CPU core,

    max(flops / (peak_flops * speed), bytes / bandwidth share) + cost / speed

where the two parts run side by side: the flops through the node's cores
(shared with every other computation, as a plain cost is), the bytes through
the node's memory, or through a cache when the action's data fits in one.

Caches: a machine file's ``[caches] levels`` give faster rates for working sets
up to a size per core (measured by calibrate as a triad over arrays of that
size).  The action's working set is its ``footprint`` tag, by default its
``bytes`` (an action that moves n bytes touches at most n); the first level
whose ``up_to`` holds it prices the bytes, with that level's own bandwidth pool
per node, and a working set beyond every level streams from memory.  Where a
node runs more processes than cores, the processes that share a core share its
caches too: the working set counts that many times.  The data
is taken to be warm, as in a program's loop that reuses it: a level's rate is
what a repeated sweep over that working set achieves.  The memory of a node is a fluid resource: the actions
streaming at a moment share ``memory_bandwidth`` max-min fairly, each capped
by ``core_bandwidth`` (one core cannot pull the whole node's bandwidth); the
shares are recomputed whenever an action starts or stops streaming.  Since
every stream has the same cap, the fair share is simply
``min(core_bandwidth, memory_bandwidth / streams)``.  An action whose bytes
are done but whose flops are not stops streaming (and frees its share).

Two host costs add to a CPU action's time, spent on its core like a plain cost: ``fresh``
bytes of memory the action touches for the first time (allocated anew, as a large temporary
of an array expression or a buffer allocated per call often is: the system maps in and
clears every page of it on first write) at the machine's ``first_touch`` rate for the size of
each ``allocation`` (by default one allocation of all ``fresh`` bytes), when the machine's
``[allocator]`` says they are new pages (a loop's single temporary comes back from the allocator
each iteration: see :class:`~uml2perf_runtime.platform.machine.Allocator`); and ``calls`` library
calls at ``call_cost`` seconds each (what an interpreted program or a library spends per call
beyond the work: an array operation on a tiny array costs this much and no less).

The machine's ``counting_factor`` (1 unless given) multiplies a CPU action's counted work, its
flops, bytes and host costs, not its ``cost`` tag.  ``uml2perf calibrate`` writes it as 1 with an
interval: how far measured times of a catalogue of numpy lines, counted as docs/profile.md
counts them, fall from what their counts price them at.  The prediction stays what the counts
say; its interval draws the factor, so that work priced from counts carries the uncertainty of
counting while work given as a measured ``cost`` does not.

With ``device = "NAME"`` the action runs on one of the node's ``count``
devices of that kind: it queues for a free device (first come, first served:
accelerators run kernels of different processes one after another unless
they are partitioned, so queueing is the conservative and common case), then
``copy_in`` bytes cross the device's link (latency + bytes / bandwidth), the
kernel takes ``max(flops / device peak, bytes / device bandwidth) + cost``,
and ``copy_out`` bytes cross back; the device is held throughout.
"""

from __future__ import annotations

import heapq
import itertools
import math
from typing import Any

from simpy.events import Event, Timeout
from simpy.resources.resource import Resource

from ..errors import MachineError, ModelRuntimeError
from ..spec import Element

#: The simulating context (``uml2perf_runtime.engine.context.Context``, which imports this module).
Context = Any

__all__ = [
    "NodeMemory",
    "alone_seconds",
    "cache_level",
    "host_seconds",
    "new_pages",
    "operations_seconds",
    "roofline",
    "sized",
]


class NodeMemory:
    """The memory bandwidth of one node, shared max-min fairly by its streaming actions."""

    __slots__ = ("bandwidth", "cap", "env", "heap", "rate", "seq", "t_last", "vbytes", "version")

    def __init__(self, env: Any, bandwidth: float, cap: float) -> None:
        self.env = env
        self.bandwidth = bandwidth
        self.cap = min(cap, bandwidth)
        self.heap: list[tuple[float, int, Event]] = []
        self.vbytes = 0.0  # bytes streamed so far by each stream active since the last change
        self.t_last = 0.0
        self.rate = self.cap
        self.version = 0
        self.seq = itertools.count()

    def stream(self, nbytes: float) -> Event:
        """An event that fires once ``nbytes`` have been streamed at this node's fair share."""
        done = Event(self.env)
        self._advance()
        heapq.heappush(self.heap, (self.vbytes + nbytes, next(self.seq), done))
        self._reschedule()
        return done

    def _advance(self) -> None:
        now = self.env._now
        if now > self.t_last:
            self.vbytes += (now - self.t_last) * self.rate
            self.t_last = now

    def _reschedule(self) -> None:
        self.version += 1
        heap = self.heap
        if not heap:
            return
        self.rate = min(self.cap, self.bandwidth / len(heap))
        delay = (heap[0][0] - self.vbytes) / self.rate
        timer = Timeout(self.env, max(0.0, delay), self.version)
        timer.callbacks.append(self._on_timer)

    def _on_timer(self, timer: Event) -> None:
        if timer.value != self.version:
            return  # the set of streams changed since
        self._advance()
        heap = self.heap
        key, _, done = heapq.heappop(heap)
        done.succeed()
        self.vbytes = max(self.vbytes, key)
        limit = self.vbytes * (1 + 1e-12) + 1e-9
        while heap and heap[0][0] <= limit:
            heapq.heappop(heap)[2].succeed()
        self._reschedule()


def _number(ctx: Context, elem: Element, what: str, value: Any) -> float:
    """A non-negative, finite quantity of an action (flops, bytes, copies)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not (0.0 <= number < math.inf):
        raise ModelRuntimeError(
            f"{what} of {elem.describe()} is {value!r} on {ctx.describe()}: "
            "it must be a finite number of at least 0",
            element_name=elem.name,
            element_id=elem.xmi_id,
            line=elem.line,
            pid=ctx.pid,
            tid=ctx.tid,
            hint="check the tag's expression and the variables it uses",
        )
    return number


#: The action tag that needs each machine key (for the error when the key is missing).
_NEEDED_BY = {
    "peak_flops": "flops",
    "memory_bandwidth": "bytes",
    "first_touch": "fresh",
    "call_cost": "calls",
}


def _machine_value(ctx: Context, key: str, value: float | None, elem: Element) -> float:
    if value is None:
        raise MachineError(
            f"{elem.describe()} gives {_NEEDED_BY.get(key, key)}, but machine '{ctx.sim.machine.name}' "
            f"has no '{key}'",
            hint=f"add '{key} = ...' to the machine file (see samples/machines/gpu-node.toml; "
            "uml2perf calibrate measures it)",
        )
    return value


def roofline(
    ctx: Context,
    elem: Element,
    cost: float,
    flops: Any,
    nbytes: Any,
    device: str | None,
    copy_in: Any,
    copy_out: Any,
    footprint: Any = None,
    fresh: Any = 0.0,
    allocation: Any = None,
    calls: Any = 0.0,
    operations: Any = (),
) -> Any:
    """Generator behind ``p.roofline(...)``: run one hardware-aware action (see the module docstring)."""
    sim = ctx.sim
    flops_v = _number(ctx, elem, "flops", flops)
    bytes_v = _number(ctx, elem, "bytes", nbytes)
    copy_in_v = _number(ctx, elem, "copy_in", copy_in)
    copy_out_v = _number(ctx, elem, "copy_out", copy_out)
    cost_v = _number(ctx, elem, "cost", cost)
    target = sim.device_for(elem, device)
    factor = sim.machine.counting_factor if target is None else 1.0
    if fresh or calls:  # most actions have neither: no conversions for them
        cost_v += factor * host_seconds(ctx, elem, fresh, allocation, calls)
    if operations:
        cost_v += factor * operations_seconds(ctx, elem, operations)
    if factor != 1.0:  # a sample of how far counted work may be from its counts (see the module)
        flops_v *= factor
        bytes_v *= factor
    env = ctx.env
    start = env._now
    ctx.cur = elem
    if target is None:  # a CPU core
        machine = sim.machine
        waits = []
        if bytes_v > 0.0:
            working_set = bytes_v if footprint is None else _number(ctx, elem, "footprint", footprint)
            if machine.caches:
                # processes time-sliced on one core keep their data in that core's caches together
                crowding = max(1.0, ctx.ppn / machine.cores_per_node)
                level = cache_level(machine.caches, working_set * crowding)
            else:
                level = -1
            if level < 0:
                _machine_value(ctx, "memory_bandwidth", machine.memory_bandwidth, elem)
            waits.append(sim.memory(ctx.node, level).stream(bytes_v))
        if flops_v > 0.0:
            work = flops_v / _machine_value(ctx, "peak_flops", machine.peak_flops, elem)
            waits.append(env.process(ctx.spend(work)))
        if waits:
            yield env.all_of(waits)  # the roofline: the slower of the two sides
        if cost_v > 0.0:
            yield from ctx.spend(cost_v)  # a cost tag adds to it
    else:
        unit = sim.devices(ctx.node, target)
        spec = sim.machine.devices[target]
        request = unit.request()
        if not request.triggered:
            ctx.block(elem, f"a free '{target}' device")
        yield request
        ctx.blocked_for = None
        try:
            queued = env._now - start
            if queued > 0.0:
                ctx.record(elem, "wait", start, start + queued)
            kernel = max(flops_v / spec.peak_flops, bytes_v / spec.memory_bandwidth) + cost_v
            transfers = (spec.link.time(copy_in_v) if copy_in_v > 0 else 0.0) + (
                spec.link.time(copy_out_v) if copy_out_v > 0 else 0.0
            )
            busy = kernel + transfers
            if busy > 0.0:
                yield Timeout(env, busy)
        finally:
            unit.release(request)
        if queued > 0.0:
            ctx.record_phase(elem, "compute", start + queued, env._now)
            return
    ctx.record(elem, "compute", start, env._now)


def operations_seconds(ctx: Context, elem: Element, operations: Any) -> float:
    """Seconds of the array operations an action names, ``((name, elements, runs), ...)``, at
    the machine's ``[operations]`` rates, each run's range chosen by its elements (on top of the
    action's bytes; see :mod:`.array_operations`)."""
    from .array_operations import OPERATIONS_HINT, operation_seconds

    table = ctx.sim.machine.operations
    seconds = 0.0
    for name, count, times in operations:
        elements = _number(ctx, elem, f"operations {name}", count)
        runs = _number(ctx, elem, f"runs of operations {name}", times)
        if elements <= 0.0 or runs <= 0.0:
            continue
        try:
            seconds += runs * operation_seconds(table, name, elements)
        except KeyError:
            raise MachineError(
                f"{elem.describe()} names array operation {name!r}, but machine "
                f"'{ctx.sim.machine.name}' has no '{name}' in [operations]",
                hint=OPERATIONS_HINT,
            ) from None
    return seconds


def host_seconds(ctx: Context, elem: Element, fresh: Any, allocation: Any, calls: Any) -> float:
    """Seconds of first-touching ``fresh`` bytes and of ``calls`` library calls, on the action's core."""
    seconds = 0.0
    fresh_v = _number(ctx, elem, "fresh", fresh)
    if fresh_v > 0.0:
        machine = ctx.sim.machine
        block = fresh_v if allocation is None else _number(ctx, elem, "allocation", allocation)
        if new_pages(machine, fresh_v, block):
            rate = sized(machine.first_touch, block)
            seconds += fresh_v / _machine_value(ctx, "first_touch", rate, elem)
    calls_v = _number(ctx, elem, "calls", calls)
    if calls_v > 0.0:
        seconds += calls_v * _machine_value(ctx, "call_cost", ctx.sim.machine.call_cost, elem)
    return seconds


def alone_seconds(
    machine: Any,
    flops: float = 0.0,
    nbytes: float = 0.0,
    footprint: float | None = None,
    fresh: float = 0.0,
    allocation: float | None = None,
    calls: float = 0.0,
) -> float:
    """Seconds a CPU action with these counts takes in one process alone on an idle node.

    The simulator's price of the action without contention (one stream gets the smaller of its
    level's core and node rates, flops run on a core of their own): what ``uml2perf calibrate``
    compares its catalogue of counted kernels with.  A count that needs a key the machine lacks
    raises :class:`MachineError`.
    """
    seconds = 0.0
    if nbytes > 0.0:
        working_set = nbytes if footprint is None else footprint
        level = cache_level(machine.caches, working_set) if machine.caches else -1
        if level < 0:
            if machine.memory_bandwidth is None:
                raise MachineError(f"machine '{machine.name}' has no 'memory_bandwidth' to price bytes")
            core, node = machine.core_bandwidth or machine.memory_bandwidth, machine.memory_bandwidth
        else:
            core, node = machine.caches[level].core_bandwidth, machine.caches[level].bandwidth
        seconds = nbytes / min(core, node)
    if flops > 0.0:
        if machine.peak_flops is None:
            raise MachineError(f"machine '{machine.name}' has no 'peak_flops' to price flops")
        seconds = max(seconds, flops / (machine.peak_flops * machine.speed))
    host = 0.0  # spent on the core like a cost tag: at the machine's speed
    block = fresh if allocation is None else allocation
    if fresh > 0.0 and new_pages(machine, fresh, block):
        rate = sized(machine.first_touch, block)
        if rate is None:
            raise MachineError(f"machine '{machine.name}' has no 'first_touch' to price fresh memory")
        host += fresh / rate
    if calls > 0.0:
        if machine.call_cost is None:
            raise MachineError(f"machine '{machine.name}' has no 'call_cost' to price calls")
        host += calls * machine.call_cost
    return seconds + host / machine.speed


def new_pages(machine: Any, fresh: float, block: float) -> bool:
    """Whether ``fresh`` bytes in ``block``-byte blocks are new pages (always without ``[allocator]``)."""
    return machine.allocator is None or machine.allocator.new_pages(fresh, block)


def sized(ranges: Any, size: float) -> float | None:
    """The number of the first ``(up_to, number)`` range that holds ``size``; None when there are none."""
    for up_to, number in ranges:
        if size <= up_to:
            return number
    return None


def cache_level(levels: Any, working_set: float) -> int:
    """The index of the first cache level whose ``up_to`` holds ``working_set`` bytes; -1: memory."""
    for index, level in enumerate(levels):
        if working_set <= level.up_to:
            return index
    return -1


def device_resource(env: Any, count: int) -> Resource:
    """The devices of one kind on one node: a queue in front of ``count`` of them."""
    return Resource(env, capacity=count)
