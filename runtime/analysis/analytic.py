"""Analytic fast path: evaluate a model over a whole parameter grid without simulating it.

Many performance models are bulk-synchronous: every process computes on its
own and the processes only meet in collectives (barrier, all-reduce, ...).  For
those, the predicted time is a closed form: per superstep, the slowest process
plus what the collective's algorithm costs on the network (``network.py``).
No event queue is needed, and the same arithmetic can run on numpy arrays that
hold every point of a parameter sweep at once.

So that the fast path can never drift from the simulator's semantics, it runs
the *generated module itself*: the activity functions are executed with an
analytic context ``p`` instead of the simulator's.  Its ``compute`` adds the
cost into a clock array of shape ``(grid points, processes)`` and yields
nothing; its system parameters (``pid``, ``node`` ...) and ``param()`` values
are :class:`Batch` arrays that broadcast over the grid and the processes; its
collectives take the maximum over the process axis and add the algorithm's
per-rank completion offsets, exactly as ``comm.py`` does.

Control flow must be uniform across a batch: ``if v.N > 40`` or
``range(int(v.STEPS))`` on an array whose values differ cannot take one path
for all of them.  :class:`Batch` converts to ``bool``/``int``/``float`` only
when all its elements are equal and raises :class:`NonUniform` otherwise,
saying along which axis the value differs.  The evaluation then narrows the
batch and tries again:

* first one run for all processes and all grid points (``pid`` an array over
  the processes, parameters arrays over the points): 4,096 processes cost
  one run;
* when a value differs between processes (``if pid == 0``), one run per
  process with ``pid`` a plain int, stepped in lock-step from one collective
  to the next, still batched over the grid points;
* when a value differs between grid points, the points are split into groups
  that agree on it, and each group is tried again; a single point with one
  process per run is plain Python arithmetic, exactly what the simulator
  does, so the narrowing always ends.

Anything that needs real simulation raises :class:`NotAnalytic`:
point-to-point messages, threads and patterns, ``p.random()`` (the
simulator's random stream depends on event order, so the fast path refuses to
guess it), more processes on a node than it has cores, processes that do not
meet in the same collective, and costs the simulator would reject.  Callers
(``uml2perf sweep``) then simulate those points.
"""

from __future__ import annotations

import itertools
import math
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import functions as _functions
from ..engine.process import ProcessContext
from ..operations.registry import OPERATIONS, REDUCING, Operation, bind_operations
from ..platform.network import VARIABLE_BLOCKS
from ..spec import Element, ModelSpec

__all__ = [
    "NotAnalytic",
    "NonUniform",
    "Batch",
    "Table",
    "evaluate",
    "is_analytic",
    "NON_ANALYTIC_KINDS",
    "evaluate_points",
    "grid_points",
]

#: Element kinds whose semantics need the event-driven simulator: the operations the table does
#: not give a closed form (all but the collectives, whose schedules are evaluated here) and the
#: thread patterns.
NON_ANALYTIC_KINDS = frozenset(name for name, op in OPERATIONS.items() if op.analytic is None) | frozenset(
    {"parallel", "fork", "critical", "pipeline", "taskpool"}
)

#: Grid keys that are machine configuration rather than model variables.
SYSTEM_KEYS = ("procs", "nodes")

#: Up to this many grid points, per-process runs go point by point on plain floats.
_SCALAR_POINTS = 16


class NotAnalytic(Exception):
    """The model (or this point of it) cannot be evaluated analytically; simulate it instead."""

    def __init__(self, reason: str, element: Element | None = None) -> None:
        where = f" at {element.describe()}" if element is not None else ""
        super().__init__(f"{reason}{where}")
        self.reason = reason
        self.element = element


class NonUniform(NotAnalytic):
    """Control flow depends on a value that differs inside the batch: narrow the batch and retry.

    ``across_processes`` says the value differs between processes (run them
    one by one); otherwise ``groups`` partitions the grid points (row numbers
    of the batch) by the value, so each group takes one path.
    """

    def __init__(
        self, reason: str, *, across_processes: bool = False, groups: list[list[int]] | None = None
    ) -> None:
        super().__init__(reason)
        self.across_processes = across_processes
        self.groups = groups


# --------------------------------------------------------------------------------------------- Batch


class Batch(np.ndarray):
    """An array of one model value across grid points and/or processes.

    Arithmetic and comparisons stay elementwise (it is an ``ndarray``); what
    generated code needs as *one* value (an ``if``, a loop count, ``float()``)
    is granted only when every element is equal, else :class:`NonUniform`.
    """

    def _one(self) -> Any:
        arr = self.view(np.ndarray)
        flat = arr.ravel()
        if flat.size == 0:
            raise NonUniform("an empty value was used as a single value")
        first = flat[0]
        if flat.size > 1 and not bool(np.all(flat == first)):
            raise self._non_uniform(arr)
        return first.item()

    @staticmethod
    def _non_uniform(arr: np.ndarray) -> NonUniform:
        """Say along which axis the value differs, grouping grid rows by their value."""
        reason = "control flow depends on a value that differs across the batch"
        if arr.ndim != 2:
            return NonUniform(reason, across_processes=True)
        if arr.shape[1] > 1 and not bool(np.all(arr == arr[:, :1])):
            return NonUniform(reason, across_processes=True)
        groups: dict[Any, list[int]] = {}
        for row, value in enumerate(arr[:, 0].tolist()):
            groups.setdefault(value, []).append(row)
        return NonUniform(reason, groups=list(groups.values()))

    def __bool__(self) -> bool:
        return bool(self._one())

    def __int__(self) -> int:
        return int(self._one())

    def __float__(self) -> float:
        return float(self._one())

    def __index__(self) -> int:
        value = self._one()
        if isinstance(value, float):
            if not value.is_integer():
                raise TypeError(f"{value!r} cannot be used as a whole number")
            return int(value)
        return int(value)

    __hash__ = None  # type: ignore[assignment]  # numpy arrays are unhashable; so is a Batch


def batch(values: Any) -> Batch:
    """An array (any shape) as a :class:`Batch`."""
    return np.asarray(values).view(Batch)


def _as_batch(result: Any) -> Any:
    return result.view(Batch) if isinstance(result, np.ndarray) and not isinstance(result, Batch) else result


# ------------------------------------------------------------------------- generated module rebinding


def _dispatching(scalar: Callable[..., Any], vector: Callable[..., Any]) -> Callable[..., Any]:
    """A function that uses the scalar version on scalars and the numpy version on arrays."""

    def call(*args: Any) -> Any:
        for arg in args:
            if isinstance(arg, np.ndarray):
                return _as_batch(vector(*args))
        return scalar(*args)

    call.__name__ = getattr(scalar, "__name__", "function")
    call.__doc__ = f"{call.__name__} on scalars or, elementwise, on arrays"
    return call


def _rebind(spec: ModelSpec) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """Copies of the model's ``init`` and ``main`` whose library functions accept arrays.

    Generated modules import ``ceil``, ``log``, ``min``... from
    ``uml2perf_runtime.functions``; those are the scalar ``math`` versions.
    Every function of the module is re-created over a copy of its globals in
    which each library name dispatches to the numpy version for arrays, so the
    model's own code runs unchanged on batches.  The original module is not
    touched: simulations in the same process keep the fast scalar functions.
    """
    if spec.main is None:
        raise NotAnalytic("the model has no main activity")
    original = spec.main.__globals__
    namespace = dict(original)
    vector = _functions.VECTOR
    for name, scalar in _functions.SCALAR.items():
        if name in namespace and namespace[name] is scalar and callable(scalar):
            namespace[name] = _dispatching(scalar, vector[name])
    for name, value in original.items():
        if isinstance(value, types.FunctionType) and value.__globals__ is original:
            clone = types.FunctionType(
                value.__code__, namespace, value.__name__, value.__defaults__, value.__closure__
            )
            clone.__kwdefaults__ = value.__kwdefaults__
            namespace[name] = clone

    def find(func: Callable[..., Any]) -> Callable[..., Any]:
        if isinstance(func, types.FunctionType) and func.__globals__ is original:
            return namespace.get(func.__name__, func)
        return func

    return find(spec.init), find(spec.main)


# ------------------------------------------------------------------------------------- the context


@dataclass(frozen=True)
class _Collective:
    """What an analytic context yields at a collective: the driver synchronises on it."""

    kind: str
    elem: Element
    root: Any
    size: Any
    cost: Any


class _Variables:
    """The namespace ``v`` of the model variables of one analytic run."""


def _check_cost(elem: Element, cost: Any) -> None:
    if isinstance(cost, np.ndarray):
        if not bool(np.all(np.asarray(cost) >= 0.0)):
            raise NotAnalytic("a negative or invalid cost (the simulator reports it)", elem)
    elif not cost >= 0.0:
        raise NotAnalytic("a negative or invalid cost (the simulator reports it)", elem)


class AnalyticContext:
    """The ``p`` of one analytic run: all processes at once (vector level) or one process.

    ``clock``, ``compute_time``, ``comm_time`` and ``wait_time`` are arrays of
    shape ``(grid points, processes covered)``, or plain floats when the
    context is one process at one grid point (plain Python arithmetic is ten
    times cheaper than numpy on one number, and is what the simulator does).
    """

    def __init__(self, run: _Run, pid: Any, node: Any, ppn: Any, width: int) -> None:
        self.run = run
        self.pid = pid
        self.uid = pid
        self.node = node
        self.ppn = ppn
        self.nprocs = run.nprocs
        self.nnodes = run.nnodes
        self.tid = 0
        self.nthreads = 1
        self.item = 0
        self.v: Any = None
        self.clock: Any
        self.compute_time: Any
        self.comm_time: Any
        self.wait_time: Any
        if run.points == 1 and width == 1:
            self.clock = self.compute_time = self.comm_time = self.wait_time = 0.0
        else:
            shape = (run.points, width)
            self.clock = np.zeros(shape)
            self.compute_time = np.zeros(shape)
            self.comm_time = np.zeros(shape)
            self.wait_time = np.zeros(shape)
        self.iters: dict[int, int] = {}

    # -- parameters -----------------------------------------------------------------------------
    def param(self, name: str, default: Any) -> Any:
        """The swept or overridden value of ``name`` (a Batch over grid points), else ``default``."""
        values = self.run.params
        if name in values:
            return values[name]
        return default

    def random(self) -> float:
        raise NotAnalytic("p.random() draws from the simulator's per-process stream")

    # -- computation ----------------------------------------------------------------------------
    def compute(self, elem: Element, cost: Any) -> Iterator[Any]:
        """Advance the clocks by ``cost`` seconds at machine speed (no contention by construction)."""
        _check_cost(elem, cost)
        delay = cost * self.run.inv_speed
        self.clock = self.clock + delay
        self.compute_time = self.compute_time + delay
        return
        yield  # pragma: no cover - makes this a generator, as the simulator's compute is

    def roofline(self, elem: Element, cost: float = 0.0, **tags: Any) -> Any:
        """Memory bandwidth and devices are shared resources: such actions are simulated."""
        raise NotAnalytic(f"{elem.describe()} is a roofline action (shared memory bandwidth and devices)")

    def no_guard_holds(self, where: str, values: dict[str, Any]) -> None:
        """No guard holds at some point: the simulation reports it with the values (see Context)."""
        raise NotAnalytic(f"no guard of {where} holds")

    def enter(self, elem: Element) -> None:
        """Composite elements only matter for the per-element profile, which the fast path omits."""

    def leave(self, elem: Element) -> None:
        """See :meth:`enter`."""

    def iteration(self, elem: Element) -> None:
        """Count ``while`` iterations with the simulator's limit, so a runaway loop stops here too."""
        count = self.iters.get(elem.index, 0) + 1
        self.iters[elem.index] = count
        if count > self.run.max_iterations:
            raise NotAnalytic(f"loop ran more than {self.run.max_iterations:,} iterations", elem)

    # -- the operations of the table are bound below the class (``_analytic_body``) -----------

    def send_site(self, elem: Element, dest: Any, size: Any = 0, tag: Any = 0, cost: Any = 0.0) -> Any:
        """A send call site made once (``engine/sites.py``): calling it is the send, refused here."""
        return partial(self._refuse, elem, _MESSAGES)

    def recv_site(self, elem: Element, source: Any = -1, size: Any = 0, tag: Any = 0, cost: Any = 0.0) -> Any:
        """A receive call site made once: calling it is the receive, refused here."""
        return partial(self._refuse, elem, _MESSAGES)

    # -- everything that needs the simulator ---------------------------------------------------
    def _refuse(self, elem: Element, what: str) -> Any:
        raise NotAnalytic(f"{what} needs the event-driven simulator", elem)

    def fork(self, elem: Element, branches: Any) -> Any:
        return self._refuse(elem, _THREADS)

    def parallel(self, elem: Element, threads: int, body: Any) -> Any:
        return self._refuse(elem, _THREADS)

    def critical(self, elem: Element, name: str, body: Any) -> Any:
        return self._refuse(elem, _THREADS)

    def pipeline(self, elem: Element, items: int, stages: Any, **options: Any) -> Any:
        return self._refuse(elem, _THREADS)

    def taskpool(
        self,
        elem: Element,
        threads: int,
        items: int,
        body: Any,
        **options: Any,
    ) -> Any:
        return self._refuse(elem, _THREADS)


def _analytic_body(op: Operation) -> str:
    """A method's body in the closed form: a collective's schedule (evaluated where the processes
    meet), or a refusal for operations that need the simulator."""
    if op.analytic == "schedule":
        root = "root" if op.rooted else "0"
        size = "size" if "size" in op.argument_names else "0"
        return f"yield _Collective({op.name!r}, elem, {root}, {size}, cost)"
    return "return self._refuse(elem, _MESSAGES)"


_MESSAGES = "point-to-point communication"
_THREADS = "threads and patterns"

bind_operations(AnalyticContext, _analytic_body, {"_Collective": _Collective, "_MESSAGES": _MESSAGES})

if TYPE_CHECKING:  # pragma: no cover - mypy checks that the analytic context keeps the process contract

    def _conforms(ctx: AnalyticContext) -> ProcessContext:
        return ctx


# ----------------------------------------------------------------------------------------- the driver


@dataclass
class _Run:
    """One analytic evaluation: a machine shape and a batch of grid points."""

    nprocs: int
    nnodes: int
    points: int
    params: Mapping[str, Any]
    inv_speed: float
    max_iterations: int
    node_of: np.ndarray
    collectives: Any  # network.CollectiveModel


def _per_point(value: Any, rows: int) -> np.ndarray:
    """``value`` (scalar or array over grid points and processes) as a ``(rows, width)`` array."""
    arr = np.atleast_2d(np.asarray(value, dtype=float))
    return np.broadcast_to(arr, (rows, arr.shape[1]))


def _synchronise(run: _Run, contexts: Sequence[AnalyticContext], tokens: Sequence[_Collective]) -> None:
    """Apply one collective that every process has reached, exactly as ``comm.py`` does.

    Each process first spends its local ``cost`` (compute time); the algorithm
    starts when the last process has arrived and each rank leaves at that
    instant plus its own completion offset from
    :class:`~uml2perf_runtime.platform.network.CollectiveModel`.  Time from a process's
    arrival to the start is *wait*, the offset is *comm*.  Kind and root must
    agree on every process (the simulator reports a mismatch); the size used
    is the largest any process gives.
    """
    first = tokens[0]
    rows = run.points
    for token in tokens[1:]:
        if token.kind != first.kind:
            raise NotAnalytic(
                f"processes meet in different collectives ({first.kind} at {first.elem.describe()} "
                f"and {token.kind} at {token.elem.describe()}); the simulator reports the mismatch"
            )
    for ctx, token in zip(contexts, tokens, strict=False):
        if isinstance(token.cost, np.ndarray) or token.cost:
            _check_cost(token.elem, token.cost)
            delay = token.cost * run.inv_speed
            ctx.clock = ctx.clock + delay
            ctx.compute_time = ctx.compute_time + delay
    if run.nprocs == 1:
        return
    blocks = _blocks_per_point(first.kind, tokens, rows, run.nprocs, first.elem)
    roots, size_of = _roots_and_sizes(tokens, rows, first.elem)
    clock = _matrix(contexts, "clock", rows)
    offsets = np.empty((rows, run.nprocs))
    reduced = np.zeros((rows, run.nprocs))  # the reduction's arithmetic: work on each rank's core
    cache: dict[tuple[int, float], tuple[list[float], list[float] | None]] = {}
    for g in range(rows):
        root = roots[g]
        if not (root == int(root) and 0 <= root < run.nprocs):
            raise NotAnalytic("a collective has an invalid root; the simulator reports it", first.elem)
        if blocks is not None and blocks[g] is not None:  # blocks that differ per rank
            offsets[g] = run.collectives.block_offsets(first.kind, int(root), blocks[g])
            continue
        key = (int(root), float(size_of[g]))
        if key not in cache:
            cache[key] = (
                run.collectives.offsets(first.kind, key[0], key[1]),
                run.collectives.reductions(first.kind, key[0], key[1]) if first.kind in REDUCING else None,
            )
        offsets[g], reductions = cache[key]
        if reductions is not None:
            reduced[g] = reductions
    start = clock.max(axis=1, keepdims=True)
    finish = start + offsets
    wait = start - clock
    comm = offsets - reduced
    if isinstance(contexts[0].clock, float):
        waits, comms, finishes = wait[0].tolist(), comm[0].tolist(), finish[0].tolist()
        works = reduced[0].tolist()
        for j, ctx in enumerate(contexts):
            ctx.wait_time += waits[j]
            ctx.comm_time += comms[j]
            ctx.compute_time += works[j]
            ctx.clock = finishes[j]
        return
    col = 0
    for ctx in contexts:
        part = slice(col, col + ctx.clock.shape[1])
        ctx.wait_time = ctx.wait_time + wait[:, part]
        ctx.comm_time = ctx.comm_time + comm[:, part]
        ctx.compute_time = ctx.compute_time + reduced[:, part]
        ctx.clock = finish[:, part].copy()
        col = part.stop


def _blocks_per_point(
    kind: str, tokens: Sequence[_Collective], rows: int, nprocs: int, elem: Element
) -> list[Any] | None:
    """Per grid point, the call's blocks when they differ per rank (as the simulator's
    ``collectives._offsets`` takes them), or None where they are equal; None for a collective
    whose size is one for all.  An alltoall's sizes per destination are a list per process."""
    if kind not in VARIABLE_BLOCKS:
        return None
    if kind == "alltoall":
        if not any(isinstance(t.size, (list, tuple)) for t in tokens):
            found = _uneven(np.concatenate([_per_point(t.size, rows) for t in tokens], axis=1), elem, None)
            if found is None:
                return None
            # a rank that gives one size sends that many bytes to each rank
            return [None if b is None else tuple((x,) * nprocs for x in b) for b in found]
        parts = []
        for t in tokens:
            width = _width(t.size)
            if isinstance(t.size, (list, tuple)):
                if len(t.size) != nprocs:
                    raise NotAnalytic(
                        "a collective is given a wrong number of sizes; the simulator reports it", elem
                    )
                columns = [np.broadcast_to(_per_point(x, rows), (rows, width)) for x in t.size]
                parts.append(np.stack(columns, axis=2))
            else:
                parts.append(np.repeat(_per_point(t.size, rows)[:, :, None], nprocs, axis=2))
        matrix = np.concatenate(parts, axis=1)  # (points, sources, destinations)
        return _uneven(matrix, elem, nprocs)
    return _uneven(np.concatenate([_per_point(t.size, rows) for t in tokens], axis=1), elem, None)


def _width(size: Any) -> int:
    """How many processes one token's size covers (a context may run several at once)."""
    items = size if isinstance(size, (list, tuple)) else [size]
    return max((np.atleast_2d(np.asarray(x, dtype=float)).shape[1] for x in items), default=1)


def _uneven(values: np.ndarray, elem: Element, nprocs: int | None) -> list[Any] | None:
    """Per point, the blocks as a tuple (rows of tuples for an alltoall) where they differ."""
    if not bool(np.all((values >= 0.0) & (values < math.inf))):
        raise NotAnalytic("a collective has an invalid size; the simulator reports it", elem)
    flat = values.reshape(values.shape[0], -1)
    if nprocs is None and bool(np.all(flat == flat[:, :1])):
        return None
    found: list[Any] = []
    for g in range(values.shape[0]):
        if nprocs is None:
            row = values[g]
            found.append(None if bool(np.all(row == row[0])) else tuple(float(x) for x in row))
        else:
            found.append(tuple(tuple(float(x) for x in line) for line in values[g]))
    return found


def _roots_and_sizes(
    tokens: Sequence[_Collective], rows: int, elem: Element
) -> tuple[list[Any], list[float]]:
    """One root and one size per grid point: roots must agree, the size is the largest given."""
    if not any(isinstance(t.root, np.ndarray) or isinstance(t.size, np.ndarray) for t in tokens):
        root_values = {t.root for t in tokens}
        sizes = [max(t.size) if isinstance(t.size, (list, tuple)) else t.size for t in tokens]
        if len(root_values) > 1:
            raise NotAnalytic(
                "processes give different roots to a collective; the simulator reports it", elem
            )
        if not all(0.0 <= size < math.inf for size in sizes):
            raise NotAnalytic("a collective has an invalid size; the simulator reports it", elem)
        return [tokens[0].root] * rows, [float(max(sizes))] * rows
    root_matrix = np.concatenate([_per_point(t.root, rows) for t in tokens], axis=1)
    if not bool(np.all(root_matrix == root_matrix[:, :1])):
        raise NotAnalytic("processes give different roots to a collective; the simulator reports it", elem)
    size_matrix = np.concatenate([_per_point(_largest(t.size), rows) for t in tokens], axis=1)
    if not bool(np.all((size_matrix >= 0.0) & (size_matrix < math.inf))):
        raise NotAnalytic("a collective has an invalid size; the simulator reports it", elem)
    return root_matrix[:, 0].tolist(), size_matrix.max(axis=1).tolist()


def _largest(size: Any) -> Any:
    """A size, or of an alltoall's sizes per destination the largest (elementwise)."""
    if isinstance(size, (list, tuple)):
        return np.maximum.reduce([np.asarray(x, dtype=float) for x in size])
    return size


def _matrix(contexts: Sequence[AnalyticContext], attr: str, rows: int) -> np.ndarray:
    """One attribute of every context as a ``(grid points, processes)`` array."""
    if isinstance(getattr(contexts[0], attr), float):
        return np.array([[getattr(c, attr) for c in contexts]], dtype=float)
    parts = [getattr(c, attr) for c in contexts]
    return np.concatenate(
        [np.broadcast_to(np.asarray(x, dtype=float), (rows, x.shape[1])) for x in parts], axis=1
    )


def _drive(run: _Run, contexts: list[AnalyticContext], generators: list[Iterator[Any]]) -> None:
    """Step every process to its next collective, synchronise, repeat until all have finished."""
    active = list(range(len(generators)))
    while active:
        tokens: list[_Collective] = []
        done: list[int] = []
        for index in active:
            try:
                token = next(generators[index])
            except StopIteration:
                done.append(index)
                continue
            except NotAnalytic:
                raise
            except Exception as exc:  # model code failed: the simulator reports it, naming the element
                raise NotAnalytic(
                    f"model code raised {type(exc).__name__} (the simulator reports it)"
                ) from exc
            if not isinstance(token, _Collective):
                raise NotAnalytic("the model yields to the simulator directly")
            tokens.append(token)
        if done and tokens:
            raise NotAnalytic(
                "some processes finish while others wait in a collective (the simulator "
                "reports the deadlock)",
                tokens[0].elem,
            )
        if not tokens:
            return
        _synchronise(run, [contexts[i] for i in active], tokens)


def _start(init: Callable[..., Any], main: Callable[..., Any], ctx: AnalyticContext) -> Iterator[Any]:
    """Initialise the variables and start the main activity of one context."""
    ctx.v = _Variables()
    init(ctx, ctx.v)
    gen = main(ctx, ctx.v)
    if gen is None or not hasattr(gen, "send"):
        return iter(())
    return gen


# ------------------------------------------------------------------------------------- public API


@dataclass
class Table:
    """Rows of an evaluation: the grid parameters, then ``time`` and per-process means.

    ``method`` says how each row was obtained (``vector``, ``per-process``,
    ``per-point`` or ``simulation``) so a reader can see where the fast path held.
    """

    parameters: tuple[str, ...]
    rows: list[dict[str, Any]] = field(default_factory=list)

    RESULT_COLUMNS = ("time", "compute", "comm", "wait", "method")

    @property
    def columns(self) -> tuple[str, ...]:
        return (*self.parameters, *self.RESULT_COLUMNS)

    def column(self, name: str) -> np.ndarray:
        return np.asarray([row[name] for row in self.rows])

    def __len__(self) -> int:
        return len(self.rows)


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """The Cartesian product of ``grid`` in key order, last key varying fastest (deterministic)."""
    keys = list(grid)
    return [
        dict(zip(keys, combo, strict=False)) for combo in itertools.product(*(list(grid[k]) for k in keys))
    ]


@dataclass(frozen=True)
class _Plan:
    """Where the processes of one machine shape run, and what the network costs there."""

    machine: Any
    node_of: np.ndarray
    placement: str

    @property
    def nnodes(self) -> int:
        return int(self.machine.nodes)

    @property
    def cores_per_node(self) -> int:
        return int(self.machine.cores_per_node)


def _plan(machine: Any, procs: int | None, nodes: int | None, placement: str | None) -> _Plan:
    """Place the processes exactly as :func:`~uml2perf_runtime.engine.simulation.simulate` does.

    The simulator's own placement method is called (on a stand-in carrying
    the few attributes it reads), so a change of policy there applies here too.
    """
    from types import SimpleNamespace

    from ..engine.simulation import Simulation
    from ..errors import SimulationError

    if nodes is not None:
        machine = machine.with_nodes(int(nodes))
    nprocs = machine.cores if procs is None else procs
    if not isinstance(nprocs, int) or isinstance(nprocs, bool) or nprocs < 1:
        raise SimulationError(f"the number of processes must be a whole number of at least 1, got {procs!r}")
    policy = placement or machine.placement
    stand_in = SimpleNamespace(nnodes=machine.nodes, placement=policy, machine=machine, nprocs=nprocs)
    node_of = np.fromiter(
        (Simulation._place(stand_in, pid) for pid in range(nprocs)),  # type: ignore[arg-type]
        dtype=np.int64,
        count=nprocs,
    )
    return _Plan(machine, node_of, policy)


def _evaluate_shape(
    spec: ModelSpec,
    plan: _Plan,
    points: list[dict[str, Any]],
    fixed: Mapping[str, Any],
    max_iterations: int,
) -> list[dict[str, Any]]:
    """Evaluate the grid points that share one machine shape, batching as widely as control flow allows.

    The first attempt runs all points and all processes at once.  When a
    branch or loop count differs between processes, the processes are run one
    by one (still batched over points); when it differs between grid points,
    the points are split into groups that agree on it and each group is tried
    again.  A single point with one process per run has plain scalar control
    flow, so the recursion always ends.
    """
    from ..platform.interface import network_of

    node_of = plan.node_of
    nprocs = len(node_of)
    cores = plan.cores_per_node
    ppn_by_node = np.bincount(node_of, minlength=plan.nnodes)
    if ppn_by_node.max(initial=0) > cores:
        raise NotAnalytic(
            f"{int(ppn_by_node.max())} processes share a node of {cores} cores (contention "
            "needs the simulator)"
        )
    load = float(getattr(plan.machine, "background_load", 0.0) or 0.0)
    if load and ppn_by_node.max(initial=0) + load > cores:
        raise NotAnalytic(
            f"processes share their cores with a background load of {load:g} cores "
            "(contention needs the simulator)"
        )
    machine = plan.machine
    collectives = network_of(machine).collective_model(node_of.tolist())
    init, main = _rebind(spec)
    names = [k for k in points[0] if k not in SYSTEM_KEYS]
    inv_speed = 1.0 / float(machine.speed)

    def params_for(chosen: list[dict[str, Any]]) -> dict[str, Any]:
        values: dict[str, Any] = dict(fixed)
        for name in names:
            if len(chosen) == 1:
                values[name] = chosen[0][name]  # one point: plain Python values, as the simulator sees
            else:
                values[name] = batch(np.asarray([pt[name] for pt in chosen])[:, None])
        return values

    def run_batch(chosen: list[dict[str, Any]], per_process: bool) -> list[dict[str, Any]]:
        run = _Run(
            nprocs,
            plan.nnodes,
            len(chosen),
            params_for(chosen),
            inv_speed,
            max_iterations,
            node_of,
            collectives,
        )
        if per_process:
            contexts = [
                AnalyticContext(run, pid, int(node_of[pid]), int(ppn_by_node[node_of[pid]]), 1)
                for pid in range(nprocs)
            ]
        else:
            contexts = [
                AnalyticContext(
                    run,
                    batch(np.arange(nprocs)[None, :]),
                    batch(node_of[None, :]),
                    batch(ppn_by_node[node_of][None, :]),
                    nprocs,
                )
            ]
        generators = [_start(init, main, ctx) for ctx in contexts]
        _drive(run, contexts, generators)
        return _summaries(run, contexts, chosen)

    def attempt(chosen: list[dict[str, Any]], per_process: bool) -> list[dict[str, Any]]:
        if per_process and 1 < len(chosen) <= _SCALAR_POINTS:
            # a few points, one process per run: plain floats beat small numpy arrays
            return [row for point in chosen for row in attempt([point], True)]
        try:
            return run_batch(chosen, per_process or nprocs == 1)
        except NonUniform as exc:
            if exc.across_processes and not per_process:
                return attempt(chosen, True)
            groups = exc.groups if exc.groups and len(exc.groups) > 1 else None
            if groups is None:
                if len(chosen) == 1:
                    raise NotAnalytic(f"internal: scalar evaluation was not uniform ({exc})") from exc
                groups = [[i] for i in range(len(chosen))]
            rows: dict[int, dict[str, Any]] = {}
            for group in groups:
                for i, row in zip(group, attempt([chosen[i] for i in group], per_process), strict=False):
                    rows[i] = row
            return [rows[i] for i in range(len(chosen))]

    return attempt(points, False)


def _summaries(
    run: _Run, contexts: Sequence[AnalyticContext], chosen: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    clock = _matrix(contexts, "clock", run.points)
    compute, comm, wait = (
        _matrix(contexts, attr, run.points) for attr in ("compute_time", "comm_time", "wait_time")
    )
    rows = []
    for g, point in enumerate(chosen):
        rows.append(
            {
                **point,
                "time": float(clock[g].max()),
                "compute": float(compute[g].mean()),
                "comm": float(comm[g].mean()),
                "wait": float(wait[g].mean()),
                "method": "analytic",
            }
        )
    return rows


def _static_refusal(spec: ModelSpec) -> str | None:
    """Why the model cannot be analytic, judged from its element kinds alone (None: it may be)."""
    for elem in spec.elements:
        if elem.kind in NON_ANALYTIC_KINDS:
            return f"element {elem.describe()} is a {elem.kind}"
    return None


def _refuse_shared_links(spec: ModelSpec, plan: _Plan) -> None:
    """Decline a model that sends messages between nodes of a machine with a topology.

    Over shared links a message's time depends on the others in flight, which the analytic
    path does not follow; it stays exact (and is used) when everything runs on one node or the
    model sends nothing.
    """
    from ..platform.interface import network_of

    reason = network_of(plan.machine).analytic_refusal(spec.elements, plan.node_of.tolist())
    if reason is not None:
        raise NotAnalytic(reason)


def evaluate_points(
    spec: ModelSpec,
    machine: Any,
    points: Sequence[Mapping[str, Any]],
    *,
    overrides: Mapping[str, Any] | None = None,
    procs: int | None = None,
    nodes: int | None = None,
    placement: str | None = None,
    max_iterations: int | None = None,
) -> tuple[list[dict[str, Any] | None], list[str]]:
    """Evaluate each point analytically where possible.

    Returns one row per point (``None`` where the point needs the simulator)
    and the distinct reasons why some points did.  Points that share a machine
    shape (``procs``, ``nodes``) are evaluated together, at the widest level
    their control flow allows.  Values must already have their parameters'
    types (as :func:`~uml2perf_runtime.engine.simulation.validate_overrides` gives them).
    """
    from ..engine.simulation import DEFAULT_MAX_ITERATIONS
    from ..platform.machine import Machine

    rows: list[dict[str, Any] | None] = [None] * len(points)
    reason = _static_refusal(spec)
    if reason:
        return rows, [reason]
    machine = machine if machine is not None else Machine.default()
    limit = DEFAULT_MAX_ITERATIONS if max_iterations is None else max_iterations
    fixed = dict(overrides or {})
    shapes: dict[tuple[Any, Any], list[int]] = {}
    for index, point in enumerate(points):
        shapes.setdefault((point.get("procs", procs), point.get("nodes", nodes)), []).append(index)
    reasons: dict[str, None] = {}
    for (shape_procs, shape_nodes), indices in shapes.items():
        chosen = [dict(points[i]) for i in indices]
        try:
            plan = _plan(machine, shape_procs, shape_nodes, placement)
            _refuse_shared_links(spec, plan)
            shape_rows = _evaluate_shape(spec, plan, chosen, fixed, limit)
        except NotAnalytic as exc:
            reasons[str(exc)] = None
            continue
        for i, row in zip(indices, shape_rows, strict=False):
            rows[i] = row
    return rows, list(reasons)


def evaluate(
    spec: ModelSpec,
    machine: Any = None,
    grid: Mapping[str, Sequence[Any]] | None = None,
    *,
    overrides: Mapping[str, Any] | None = None,
    procs: int | None = None,
    nodes: int | None = None,
    placement: str | None = None,
    max_iterations: int | None = None,
) -> Table:
    """Predict ``spec`` at every point of ``grid`` analytically; raise :class:`NotAnalytic` if it cannot.

    ``grid`` maps ``procs``, ``nodes`` and model variable names to the values
    to sweep (Cartesian product in key order, the last key varying fastest).
    ``overrides`` fixes other variables (like ``--set``); ``procs``/``nodes``
    apply where the grid does not sweep them.  Textual values are converted
    to the types of the parameters' defaults, as ``--set`` does.
    """
    from ..engine.simulation import validate_overrides

    grid = {k: list(v) for k, v in (grid or {}).items()}
    model_keys = [k for k in grid if k not in SYSTEM_KEYS]
    for key in model_keys:
        grid[key] = [validate_overrides(spec, {key: value})[key] for value in grid[key]]
    fixed = validate_overrides(spec, overrides or {})
    points = grid_points(grid) if grid else [{}]
    rows, reasons = evaluate_points(
        spec,
        machine,
        points,
        overrides=fixed,
        procs=procs,
        nodes=nodes,
        placement=placement,
        max_iterations=max_iterations,
    )
    if any(row is None for row in rows):
        raise NotAnalytic("; ".join(reasons) or "not analytic")
    return Table(tuple(grid), [row for row in rows if row is not None])


def is_analytic(
    spec: ModelSpec,
    machine: Any = None,
    *,
    overrides: Mapping[str, Any] | None = None,
    procs: int | None = None,
    nodes: int | None = None,
    placement: str | None = None,
) -> bool:
    """True when :func:`evaluate` can predict ``spec`` at this configuration."""
    try:
        evaluate(spec, machine, None, overrides=overrides, procs=procs, nodes=nodes, placement=placement)
    except NotAnalytic:
        return False
    return True
