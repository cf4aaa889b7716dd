"""``uml2perf calibrate``: measure this machine and write a machine file that says how.

Each number is the median of several repetitions (the spread is written next
to it), measured the way programs run: numpy kernels with their results kept,
on one core and on every core at once.  What is measured:

* ``speed``: a reference kernel (numpy sort of 2**16 random doubles); 1.0 when
  this machine is the reference (costs fitted here), else its time on the
  reference machine (``--reference-sort SECONDS``) over the time here;
* peak floating-point rate (a numpy matrix product) and memory bandwidth (a
  STREAM-like triad ``a = b + s*c`` over arrays far larger than the caches),
  on one core and on all cores;
* thread start and per-item hand-off (no-op pools of the standard thread
  pool with 1 and all cores' workers over several item counts: the
  intercepts give the start of a thread, the slopes the per-item cost and
  how much of it is serialised; one-worker pools of a reference numpy sort
  the wake-up of a caller that sleeps before every result), written as the
  ``[threads]`` keys;
* with mpi4py and an MPI installed: intra-node latency and bandwidth per
  message-size range and the rendezvous handshake from a ping-pong over message
  sizes, the eager limit from the knee where the time per message jumps, the
  wake-up of a rank that shares its core, and the collectives' per-call overhead
  and reduction cost from an allreduce over sizes (the fastest repetition each).

``peak_flops`` (one core), ``memory_bandwidth`` (all cores) and
``core_bandwidth`` (one core) are the machine file's roofline keys, the
thread costs its ``[threads]`` keys, the network's its ``[network]`` and
``[collectives]`` keys.
"""

from __future__ import annotations

import functools
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SORT_ELEMENTS = 1 << 16
TRIAD_ELEMENTS = 1 << 23  # 3 arrays of 64 MiB: far beyond every cache
MATMUL_N = 512


@dataclass
class Measured:
    """A median over repetitions and its spread (min, max)."""

    median: float
    low: float
    high: float
    how: str
    #: measured points behind the value, ``(size, seconds, spread)`` (the ping-pong's table)
    points: tuple[tuple[float, float, float], ...] = ()
    #: a choice the measurement made (the allreduce algorithm that fits best), else empty
    choice: str = ""

    @property
    def spread(self) -> float:
        return (self.high - self.low) / self.median if self.median else 0.0


def _repeat(fn: Callable[[], float], repeats: int) -> tuple[float, float, float]:
    values = [fn() for _ in range(repeats)]
    return statistics.median(values), min(values), max(values)


def _on_all_cores(fn: Callable[[], float], cores: int) -> float:
    """Run ``fn`` in ``cores`` threads at once (numpy releases the GIL); the slowest thread's time."""
    results = [0.0] * cores
    barrier = threading.Barrier(cores)

    def worker(i: int) -> None:
        barrier.wait()
        results[i] = fn()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(cores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return max(results)


def sort_seconds() -> float:
    data = np.random.default_rng(0).random(SORT_ELEMENTS)
    start = time.perf_counter()
    kept = np.sort(data)
    elapsed = time.perf_counter() - start
    del kept
    return elapsed


def triad_seconds(elements: int = TRIAD_ELEMENTS) -> Callable[[], float]:
    b = np.ones(elements)
    c = np.full(elements, 2.0)
    a = np.empty(elements)

    def run() -> float:
        start = time.perf_counter()
        np.multiply(c, 3.0, out=a)
        np.add(a, b, out=a)
        return time.perf_counter() - start

    return run


def matmul_seconds(n: int = MATMUL_N) -> Callable[[], float]:
    x = np.random.default_rng(1).random((n, n))
    y = np.random.default_rng(2).random((n, n))

    def run() -> float:
        start = time.perf_counter()
        np.dot(x, y)
        return time.perf_counter() - start

    return run


#: Items passed through the no-op pools that the thread costs are fitted to: pools of the sizes
#: programs use; a long pool is more often stopped by other programs than a short one, which
#: bends the line on a shared machine.
POOL_ITEMS = (8, 16, 32, 64, 128)


def pool_seconds(threads: int, items: int) -> float:
    """Wall time of a standard thread pool passing ``items`` no-ops through ``threads`` workers.

    ``concurrent.futures.ThreadPoolExecutor.map`` with the results kept, timed
    from the first submission (which starts the workers) to the last result.
    """
    from concurrent.futures import ThreadPoolExecutor

    data = [None] * items
    with ThreadPoolExecutor(max_workers=threads) as executor:
        start = time.perf_counter()
        kept = list(executor.map(_no_op, data))
        elapsed = time.perf_counter() - start
    del kept
    return elapsed


def _no_op(item: object) -> object:
    return item


#: The task of the pools that time the wake-up: a numpy sort of this many doubles (the interpreter
#: lock is free meanwhile), long enough that the caller sleeps before every result.
TASK_ELEMENTS = 1 << 14


def task_pool_seconds(items: int) -> float:
    """Wall time of a one-worker standard thread pool over ``items`` reference tasks."""
    from concurrent.futures import ThreadPoolExecutor

    data = _task_inputs(items)
    with ThreadPoolExecutor(max_workers=1) as executor:
        start = time.perf_counter()
        kept = list(executor.map(_sort_task, data))
        elapsed = time.perf_counter() - start
    del kept
    return elapsed


def task_seconds(calls: int = 16) -> float:
    """Seconds per call of the reference task, alone in a worker thread (after an untimed call)."""
    data = _task_inputs(calls)

    def run() -> float:
        _sort_task(data[0])
        start = time.perf_counter()
        for a in data[1:]:
            _sort_task(a)
        return (time.perf_counter() - start) / (calls - 1)

    return _on_all_cores(run, 1)


def _task_inputs(items: int) -> list[np.ndarray]:
    base = np.random.default_rng(7).random(TASK_ELEMENTS)
    return [base.copy() for _ in range(items)]


def _sort_task(a: np.ndarray) -> float:
    return float(np.sort(a)[0])


def _line(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Least-squares ``(intercept, slope)`` of ys over xs, in relative errors (the intercept matters)."""
    y = np.asarray(ys, float)
    slope, intercept = np.polyfit(np.asarray(xs, float), y, 1, w=1.0 / np.maximum(y, 1e-12))
    return float(intercept), float(slope)


def split_thread_costs(intercepts: dict[int, float], slopes: dict[int, float]) -> tuple[float, float, float]:
    """``(start, handoff, overhead)`` from no-op pools of 1 and C workers.

    A pool of T workers over n items takes ``T·start + n·max(handoff, (handoff + overhead)/T)``
    when ``handoff`` is serialised (one lock) and ``overhead`` runs in parallel.  So
    ``start`` is the least-squares fit of the intercepts to ``T·start``, and the
    one-worker slope is ``handoff + overhead``.  A C-worker slope above 1/C of it is
    the lock's pace, ``handoff``; at or below it the workers' pace, and the items
    pass in parallel (``handoff`` 0: the lock never limits C workers).  Negative
    parts (noise) become 0; one core makes it all hand-off.
    """
    counts = sorted(intercepts)
    start = max(0.0, sum(t * intercepts[t] for t in counts) / sum(t * t for t in counts))
    one = max(0.0, slopes[1])
    many = max(counts)
    if many == 1:
        return start, one, 0.0
    paced = max(0.0, slopes[many])
    handoff = min(paced, one) if paced > one / many else 0.0
    return start, handoff, one - handoff


def thread_costs(repeats: int, cores: int) -> dict[str, Measured]:
    """``thread_start``, ``_handoff``, ``_overhead`` and ``_wakeup``: the machine's ``[threads]`` keys.

    No-op pools of 1 and ``cores`` workers over :data:`POOL_ITEMS` items, each
    size ``repeats`` times; the medians per size give the values, fits of each
    repetition alone their spread.
    """
    counts = sorted({1, max(1, cores)})
    times = {t: {n: [pool_seconds(t, n) for _ in range(repeats)] for n in POOL_ITEMS} for t in counts}

    def split(pick: Callable[[list[float]], float]) -> tuple[float, float, float]:
        lines = {t: _line(POOL_ITEMS, [pick(times[t][n]) for n in POOL_ITEMS]) for t in counts}
        intercepts = {t: a for t, (a, _) in lines.items()}
        return split_thread_costs(intercepts, {t: b for t, (_, b) in lines.items()})

    middle = split(statistics.median)
    each = [split(functools.partial(_nth, r)) for r in range(repeats)]
    tasks = {n: [task_pool_seconds(n) for _ in range(repeats)] for n in POOL_ITEMS}
    alone = [task_seconds() for _ in range(repeats)]

    def wakeup(pick: Callable[[list[float]], float], costs: tuple[float, float, float]) -> float:
        """Per item of a pool of real tasks, beyond the task and the no-op hand-off: the caller's wake-up."""
        slope = _line(POOL_ITEMS, [pick(tasks[n]) for n in POOL_ITEMS])[1]
        return max(0.0, slope - pick(alone) - costs[1] - costs[2])

    wakeups = [wakeup(functools.partial(_nth, r), each[r]) for r in range(repeats)]
    how = (
        f"no-op thread pools (concurrent.futures) of {' and '.join(map(str, counts))} workers over "
        f"{', '.join(map(str, POOL_ITEMS))} items, {repeats} runs each"
    )
    what = ("per thread started", "per item, serialised", "per item, in parallel")
    out = {
        key: Measured(middle[i], min(e[i] for e in each), max(e[i] for e in each), f"{how}: {what[i]}")
        for i, key in enumerate(("thread_start", "thread_handoff", "thread_overhead"))
    }
    out["thread_wakeup"] = Measured(
        wakeup(statistics.median, middle),
        min(wakeups),
        max(wakeups),
        f"one-worker pools of numpy sorts of {TASK_ELEMENTS} doubles over the same items: per item "
        "beyond the sort alone and the no-op hand-off (the caller wakes for every result)",
    )
    return out


def _nth(index: int, values: list[float]) -> float:
    return values[index]


def threads_section(values: dict[str, Measured], comments: bool = True) -> str:
    """The ``[threads]`` table of a machine file from :func:`thread_costs`."""
    lines = ["[threads]"]
    for name in ("start", "handoff", "overhead", "wakeup"):
        m = values[f"thread_{name}"]
        note = f"  # {m.how}; min..max {m.low:.3g}..{m.high:.3g}" if comments else ""
        lines.append(f"{name} = {m.median:.4g}{note}")
    return "\n".join(lines) + "\n"


def memory_bandwidths(
    repeats: int, cores: int, say: Callable[[str], None] | None = None, fastest: bool = False
) -> dict[str, Measured]:
    """``core_bandwidth`` (a triad on one core) and ``memory_bandwidth`` (a triad on every core at once).

    Bytes per second of a STREAM-like triad over arrays far larger than the caches; the median
    of the repetitions, or with ``fastest`` the fastest one (what a quiet machine gives: on a
    shared machine, a repetition in which another program held a core is slower).
    """
    say = say or (lambda _m: None)
    pick = "fastest of" if fastest else "median of"

    def timed(fn: Callable[[], float]) -> tuple[float, float, float]:
        med, lo, hi = _repeat(fn, repeats)
        return (lo if fastest else med), lo, hi

    out: dict[str, Measured] = {}
    say("memory bandwidth, one core (triad a = b + s*c)")
    triad = triad_seconds(TRIAD_ELEMENTS)
    moved = 5 * 8 * TRIAD_ELEMENTS  # numpy does it in two passes: c read, a written; a and b read, a written
    triad()  # first touch of the output pages is not bandwidth
    mid, lo, hi = timed(triad)
    out["core_bandwidth"] = Measured(
        moved / mid,
        moved / hi,
        moved / lo,
        f"triad over {TRIAD_ELEMENTS} doubles on one core ({pick} {repeats})",
    )
    say(f"memory bandwidth, {cores} cores")
    small = TRIAD_ELEMENTS // cores
    per_thread = [triad_seconds(small) for _ in range(cores)]
    for fn in per_thread:
        fn()

    def all_cores() -> float:
        results = [0.0] * cores
        barrier = threading.Barrier(cores)

        def work(i: int) -> None:
            barrier.wait()
            results[i] = per_thread[i]()

        ts = [threading.Thread(target=work, args=(i,)) for i in range(cores)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return max(results)

    mid, lo, hi = timed(all_cores)
    moved_all = 5 * 8 * small * cores
    out["memory_bandwidth"] = Measured(
        moved_all / mid,
        moved_all / hi,
        moved_all / lo,
        f"triad over {small} doubles per core on {cores} cores at once ({pick} {repeats})",
    )
    return out


def measure(
    repeats: int = 11, progress: Callable[[str], None] | None = None, reference_sort: float | None = None
) -> dict[str, Measured]:
    """Every measurement of the machine (MPI ones only when mpi4py and mpiexec are there)."""
    say = progress or (lambda _m: None)
    cores = os.cpu_count() or 1
    out: dict[str, Measured] = {}
    say("reference kernel (numpy sort of 65,536 doubles)")
    med, lo, hi = _repeat(sort_seconds, max(repeats, 9))
    if reference_sort is None:
        # this machine is the reference: costs fitted here are in its seconds
        out["speed"] = Measured(
            1.0,
            med / hi,
            med / lo,
            f"this machine is the reference (numpy sort of {SORT_ELEMENTS} doubles: "
            f"{med * 1e3:.3f} ms; pass --reference-sort with another machine's time to compare)",
        )
    else:
        out["speed"] = Measured(
            reference_sort / med,
            reference_sort / hi,
            reference_sort / lo,
            f"numpy sort of {SORT_ELEMENTS} doubles took {med * 1e3:.3f} ms against "
            f"{reference_sort * 1e3:.3f} ms on the reference machine",
        )
    out.update(memory_bandwidths(repeats, cores, say))
    say("peak floating-point rate (numpy matrix product)")
    mm = matmul_seconds(MATMUL_N)
    flops = 2 * MATMUL_N**3
    mm()
    med, lo, hi = _repeat(mm, repeats)
    out["core_flops"] = Measured(
        flops / med, flops / hi, flops / lo, f"{MATMUL_N}x{MATMUL_N} matrix product, one call"
    )
    med, lo, hi = _repeat(lambda: _on_all_cores(mm, cores), repeats)
    out["peak_flops"] = Measured(
        cores * flops / med,
        cores * flops / hi,
        cores * flops / lo,
        f"{cores} matrix products at once, one per core",
    )
    say("thread start and hand-off (no-op thread pools)")
    out.update(thread_costs(repeats, cores))
    out.update(measure_mpi(progress=say))
    return out


# --------------------------------------------------------------------------- MPI ping-pong

PING_PONG_SIZES = [8 << k for k in range(0, 20, 1)]  # 8 B .. 4 MiB

_PING_PONG = r"""
import sys, time, json
from mpi4py import MPI
import numpy as np
comm = MPI.COMM_WORLD
sizes = json.loads(sys.argv[1]); repeats = int(sys.argv[2])
peer = comm.rank ^ 1
out = {}
for size in sizes:
    buf = np.zeros(max(size, 1), dtype=np.uint8)
    rounds = max(4, min(200, (1 << 21) // max(size, 1)))
    times = []
    for _ in range(repeats):
        comm.Barrier()
        start = time.perf_counter()
        for _ in range(rounds):  # in pairs: rank 2k with rank 2k + 1
            if comm.rank % 2 == 0:
                comm.Send([buf, size, MPI.BYTE], dest=peer); comm.Recv([buf, size, MPI.BYTE], source=peer)
            else:
                comm.Recv([buf, size, MPI.BYTE], source=peer); comm.Send([buf, size, MPI.BYTE], dest=peer)
        times.append(comm.allreduce((time.perf_counter() - start) / rounds / 2, op=MPI.MAX))
    out[size] = sorted(times)
if comm.rank == 0:
    print(json.dumps(out))
"""


def mpi_available() -> str | None:
    """The mpiexec to use when mpi4py imports, else None."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return None
    return shutil.which("mpiexec") or shutil.which("mpirun")


def mpiexec_command(launcher: str, ranks: int) -> list[str]:
    command = [launcher, "-n", str(ranks)]
    if (
        hasattr(os, "geteuid")
        and os.geteuid() == 0
        and "openmpi" in Path(launcher).resolve().as_posix().lower()
        or os.environ.get("OMPI_ALLOW_RUN_AS_ROOT")
    ):
        command.append("--allow-run-as-root")
    if "openmpi" in Path(launcher).resolve().as_posix().lower() or _is_openmpi(launcher):
        command += ["--oversubscribe"]
    return command


def _is_openmpi(launcher: str) -> bool:
    try:
        text = subprocess.run([launcher, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "Open MPI" in text or "OpenRTE" in text


def ping_pong(repeats: int = 5, progress: Callable[[str], None] | None = None) -> dict[str, Measured]:
    """The intra-node link from a 2-rank ping-pong over :data:`PING_PONG_SIZES` (empty without MPI)."""
    import json

    if mpi_available() is None:
        return {}
    if progress:
        progress("MPI ping-pong, 8 B to 4 MiB")
    line = _run_mpi_script(_PING_PONG, 2, [json.dumps(PING_PONG_SIZES), str(repeats)])
    if line is None:
        return {}
    return fit_ping_pong({int(k): v for k, v in json.loads(line).items()})


def quiet_time(values: list[float]) -> float:
    """The time of a size as the MPI measurements take it: the fastest repetition.

    Each repetition is a mean over many calls; on a machine others share, a repetition that a
    preemption hit is slower by whole scheduler slices, and the median of a handful is often
    one of them.  The fastest repetition is the machine's own cost (what a quiet run sees).
    """
    return min(values)


def fit_ping_pong(data: dict[int, list[float]]) -> dict[str, Measured]:
    """Latency and bandwidth lines below and above the eager limit (the size where time jumps most)."""
    sizes = sorted(data)
    med = {s: quiet_time(data[s]) for s in sizes}

    # the knee: the split into two alpha + n*beta lines (below / above) with the smallest relative error
    def rel_error(chosen: list[int]) -> float:
        if len(chosen) < 2:
            return 0.0
        x = np.array(chosen, float)
        y = np.array([med[s] for s in chosen])
        slope, intercept = np.polyfit(x, y, 1, w=1 / y)
        return float((((slope * x + intercept) - y) / y) ** 2 @ np.ones(len(x)))

    candidates = [s for s in sizes if 1024 <= s <= 1 << 18]
    scored = [
        (rel_error([s2 for s2 in sizes if s2 <= s]) + rel_error([s2 for s2 in sizes if s2 > s]), s)
        for s in candidates
    ]
    eager = min(scored)[1] if scored else 65536
    following = [s for s in sizes if s > eager]
    ratio = med[following[0]] / med[eager] if following else 1.0
    small = [s for s in sizes if s <= eager]
    large = [s for s in sizes if s > eager]

    def line(chosen: list[int]) -> tuple[float, float]:
        x = np.array(chosen, float)
        y = np.array([med[s] for s in chosen])
        slope, intercept = np.polyfit(x, y, 1, w=1 / y)
        return max(float(intercept), 1e-9), (1 / float(slope) if slope > 0 else float("inf"))

    lat, bw = line(small) if len(small) >= 2 else (med[sizes[0]], float("inf"))
    lat_l, bw_l = line(large) if len(large) >= 2 else (lat, bw)
    out = {
        "latency": Measured(
            lat,
            lat * min(data[sizes[0]]) / med[sizes[0]],
            lat * max(data[sizes[0]]) / med[sizes[0]],
            f"ping-pong, one way, line over {small[0]}..{small[-1]} B",
        ),
        "bandwidth": Measured(
            bw_l,
            bw_l,
            bw_l,
            f"ping-pong, one way, slope over {large[0] if large else '-'}..{large[-1] if large else '-'} B",
        ),
        "eager_limit": Measured(
            float(eager),
            float(eager),
            float(eager),
            f"knee of the ping-pong time after {eager} B (the next size takes {ratio:.2f}x as long; best "
            "split into two latency + size/bandwidth lines)",
        ),
        "rendezvous_latency": Measured(lat_l, lat_l, lat_l, "intercept of the line above the eager limit"),
        "eager_bandwidth": Measured(bw, bw, bw, "slope of the line up to the eager limit"),
    }
    out.update(_handshake_and_table(data, med, eager))
    return out


def _handshake_and_table(
    data: dict[int, list[float]], med: dict[int, float], eager: int
) -> dict[str, Measured]:
    """The rendezvous handshake and the link's measured table (handshake taken out above the limit).

    The handshake is what a rendezvous message pays beyond an eager one of no size: the
    intercept of the line through the first sizes above the eager limit, less the time of the
    smallest message.  The table is the median one-way time of every size, made non-decreasing
    on each side of the eager limit (a larger message never takes less time; repetitions on a
    shared machine sometimes say otherwise), less the handshake above the limit.
    """
    sizes = sorted(med)
    above = [s for s in sizes if s > eager][:3]
    smallest = med[sizes[0]]
    if len(above) >= 2:
        x = np.array(above, float)
        y = np.array([med[s] for s in above])
        slope, intercept = np.polyfit(x, y, 1)
        handshake = max(0.0, float(intercept) - smallest)
        how_hs = (
            f"intercept of the ping-pong line over {above[0]}..{above[-1]} B (first rendezvous sizes) "
            f"less the one-way time of {sizes[0]} B ({smallest * 1e6:.3g} us)"
        )
    else:
        handshake, how_hs = 0.0, "no sizes above the eager limit were measured"
    spreads = {s: (statistics.median(data[s]) - med[s]) / med[s] if med[s] else 0.0 for s in sizes}
    points: list[tuple[float, float, float]] = []
    floor = {False: 0.0, True: 0.0}
    for s in sizes:
        rendezvous = s > eager
        t = max(med[s] - (handshake if rendezvous else 0.0), floor[rendezvous], 1e-12)
        floor[rendezvous] = t
        points.append((float(s), t, spreads[s]))
    worst = max(spreads.values(), default=0.0)
    return {
        "handshake": Measured(handshake, handshake, handshake, how_hs),
        "link_table": Measured(
            smallest,
            smallest,
            smallest,
            "fastest of the repetitions' mean one-way ping-pong time of each size "
            f"({len(sizes)} sizes, {sizes[0]}..{sizes[-1]} B; "
            f"the median is up to {worst * 100:.0f}% slower)",
            tuple(points),
        ),
    }


def _line_fit(points: list[tuple[float, float]]) -> tuple[float, float, float]:
    """``(latency, seconds per byte, sum of squared relative errors)`` of a line through points.

    Least squares on relative errors, latency and slope both at least 0 (one point: its time).
    """
    x = np.array([p[0] for p in points])
    y = np.array([p[1] for p in points])
    if len(points) == 1:
        return float(y[0]), 0.0, 0.0
    w = 1.0 / y
    a = np.column_stack([np.ones(len(x)), x]) * w[:, None]
    alpha, beta = (float(v) for v in np.linalg.lstsq(a, y * w, rcond=None)[0])
    if beta < 0:
        alpha, beta = float(np.sum(w * w * y) / np.sum(w * w)), 0.0
    if alpha < 0:
        alpha, beta = 0.0, float(np.sum(w * w * x * y) / np.sum(w * w * x * x))
    err = ((alpha + beta * x - y) / y) ** 2
    return alpha, beta, float(err.sum())


def link_ranges(
    points: tuple[tuple[float, float, float], ...], eager: float, max_ranges: int = 6, target: float = 0.03
) -> list[tuple[float, float, float]]:
    """``(up_to, latency, seconds per byte)`` ranges fitted to measured ``(size, seconds, _)`` points.

    A segmented regression: the sizes are cut into consecutive ranges, each priced by its own
    line (:func:`_line_fit`), never across the eager limit (the protocols are different
    curves); the cuts minimise the squared relative error (dynamic programming over the
    measured sizes).  The fewest ranges whose root-mean-square relative error is at most
    ``target`` are taken, at most ``max_ranges``.  A range covers the sizes up to its last
    measured size; the sizes between two ranges take the upper one's line; the last range has
    no bound.
    """
    pts = sorted((float(s), float(t)) for s, t, _ in points)
    n = len(pts)
    cache: dict[tuple[int, int], tuple[float, float, float]] = {}

    def fit(i: int, j: int) -> tuple[float, float, float]:  # points i..j-1
        if (i, j) not in cache:
            crosses = pts[i][0] <= eager < pts[j - 1][0]
            alone = j - i < 2 and n > 1  # a line through one point says nothing of the sizes around it
            cache[(i, j)] = (0.0, 0.0, math.inf) if crosses or alone else _line_fit(pts[i:j])
        return cache[(i, j)]

    best: list[list[tuple[float, list[int]]]] = [[(math.inf, [])] * (n + 1) for _ in range(max_ranges + 1)]
    best[0][0] = (0.0, [])
    for k in range(1, max_ranges + 1):
        for j in range(1, n + 1):
            options = [
                (best[k - 1][i][0] + fit(i, j)[2], [*best[k - 1][i][1], j])
                for i in range(j)
                if best[k - 1][i][0] < math.inf
            ]
            best[k][j] = min(options, default=(math.inf, []), key=lambda o: o[0])
    chosen: list[int] = []
    for k in range(1, max_ranges + 1):
        total, cuts = best[k][n]
        if total < math.inf:
            chosen = cuts
            if math.sqrt(total / n) <= target:
                break
    ranges = []
    start = 0
    for end in chosen:
        alpha, beta, _ = fit(start, end)
        ranges.append((pts[end - 1][0], alpha, beta))
        start = end
    ranges[-1] = (math.inf, ranges[-1][1], ranges[-1][2])
    return ranges


# --------------------------------------------------------------------------- MPI allreduce

ALLREDUCE_SIZES = [8, 64, 512, 4096, 32768, 131072, 524288, 1 << 20]
#: Message size of the crowded ping-pong that measures the wake-up.
WAKEUP_SIZE = 8

_ALLREDUCE = r"""
import sys, time, json
from mpi4py import MPI
import numpy as np
comm = MPI.COMM_WORLD
sizes = json.loads(sys.argv[1]); repeats = int(sys.argv[2])
out = {}
for size in sizes:
    send = np.ones(max(size // 8, 1)); recv = np.empty_like(send)
    rounds = max(4, min(200, (1 << 21) // max(size, 1)))
    comm.Allreduce(send, recv)
    times = []
    for _ in range(repeats):
        comm.Barrier()
        start = time.perf_counter()
        for _ in range(rounds):
            comm.Allreduce(send, recv)
        times.append(comm.allreduce((time.perf_counter() - start) / rounds, op=MPI.MAX))
    out[size] = sorted(times)
if comm.rank == 0:
    print(json.dumps(out))
"""


def _run_mpi_script(source: str, ranks: int, args: list[str], timeout: float = 120) -> str | None:
    """Run a Python script under mpiexec; its last line of output, or None when it failed."""
    launcher = mpi_available()
    if launcher is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "measure.py"
        script.write_text(source)
        command = mpiexec_command(launcher, ranks)
        if os.geteuid() == 0 and "--allow-run-as-root" not in command and _is_openmpi(launcher):
            command.append("--allow-run-as-root")
        try:
            done = subprocess.run(
                command + [sys.executable, str(script), *args],
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except (OSError, subprocess.SubprocessError):
            return None
    if done.returncode != 0 or not done.stdout.strip():
        return None
    return done.stdout.strip().splitlines()[-1]


def allreduce_times(repeats: int = 7) -> dict[int, list[float]]:
    """Seconds per ``MPI_Allreduce`` (sum of doubles) on 2 ranks, by size: sorted repetitions."""
    import json

    line = _run_mpi_script(_ALLREDUCE, 2, [json.dumps(ALLREDUCE_SIZES), str(repeats)])
    if line is None:
        return {}
    return {int(k): v for k, v in json.loads(line).items()}


def crowded_ping_pong(repeats: int = 5) -> dict[str, Measured]:
    """``[network] wakeup``: what a message adds when two ranks share every core.

    The ping-pong of :data:`WAKEUP_SIZE` bytes runs in pairs on twice as many ranks as cores, so
    a rank waiting for its message shares its core with another rank (the MPI then yields the
    core while it polls); the one-way time less the one-way time of two ranks on their own cores
    is the wake-up.  Empty without MPI.
    """
    import json

    cores = os.cpu_count() or 1
    sizes = [WAKEUP_SIZE]
    alone = _run_mpi_script(_PING_PONG, 2, [json.dumps(sizes), str(repeats)])
    crowded = _run_mpi_script(_PING_PONG, 2 * cores, [json.dumps(sizes), str(repeats)])
    if alone is None or crowded is None:
        return {}
    t_alone = quiet_time(json.loads(alone)[str(WAKEUP_SIZE)])
    t_crowded = quiet_time(json.loads(crowded)[str(WAKEUP_SIZE)])
    wakeup = max(0.0, t_crowded - t_alone)
    how = (
        f"one-way ping-pong of {WAKEUP_SIZE} B in pairs on {2 * cores} ranks ({t_crowded * 1e6:.3g} us, "
        f"two ranks per core) less on 2 ranks ({t_alone * 1e6:.3g} us), fastest of {repeats}"
    )
    return {"wakeup": Measured(wakeup, wakeup, wakeup, how)}


def fit_collective_costs(
    data: dict[int, list[float]], network: str, algorithm: str = "auto"
) -> dict[str, Measured]:
    """``[collectives] overhead`` and ``reduce_cost`` from allreduce times and the measured links.

    The network model (``network``: the machine-file text of the measured links) prices the
    messages of the allreduce ``algorithm`` at each size; what the measurement takes beyond that
    is fitted as ``overhead + reduce_cost * reduced bytes`` (the bytes the algorithm combines on
    its critical path), by least squares on relative errors with both at least 0.
    """
    return _collective_fit(data, network, algorithm).measured()


def fit_collective_algorithm(data: dict[int, list[float]], network: str) -> dict[str, Measured]:
    """The allreduce algorithm whose model, fitted as above, follows the measured times best.

    MPIs choose their algorithms by rules of their own; which one this MPI uses shows in how
    its time grows with the size (a full exchange and a full reduction per round, or halves).
    Each of the runtime's algorithms is fitted; the lowest root-mean-square relative error wins
    (``auto``, MPICH's rules, on a tie), and the comment lists every algorithm's error.
    """
    from uml2perf_runtime.platform.network import ALGORITHMS

    fits = [_collective_fit(data, network, name) for name in ("auto", *ALGORITHMS["allreduce"])]
    best = min(fits, key=lambda fit: fit.rms_error)
    errors = ", ".join(f"{fit.algorithm} {fit.rms_error * 100:.0f}%" for fit in fits)
    return best.measured(f"; root-mean-square fit error by algorithm: {errors}")


@dataclass(frozen=True)
class _CollectiveFit:
    """One allreduce algorithm's fitted per-call overhead and reduction cost."""

    algorithm: str
    overhead: float
    reduce_cost: float
    rms_error: float
    how: str

    def measured(self, more: str = "") -> dict[str, Measured]:
        o, g = self.overhead, self.reduce_cost
        return {
            "collective_overhead": Measured(o, o, o, self.how, choice=self.algorithm),
            "reduce_cost": Measured(g, g, g, "the same fit" + more),
        }


def _collective_fit(data: dict[int, list[float]], network: str, algorithm: str) -> _CollectiveFit:
    import tomllib

    from uml2perf_runtime.platform.machine import Machine
    from uml2perf_runtime.platform.network import CollectiveModel

    table = tomllib.loads('name = "fit"\nnodes = 1\ncores_per_node = 2\n' + network)
    table.pop("collectives", None)
    if algorithm != "auto":
        table["collectives"] = {"allreduce": algorithm}
    machine = Machine.from_dict(table)
    sizes = sorted(data)
    med = np.array([quiet_time(data[s]) for s in sizes])
    plain = CollectiveModel.for_machine(machine, [0, 0])
    reducing = CollectiveModel(
        [0, 0],
        machine.link,
        machine.collectives,
        1.0,
        levels=machine.link_levels(),
        eager_limit=plain.eager_limit,
    )
    net = np.array([plain.duration("allreduce", 0, s) for s in sizes])
    reduced = np.array([reducing.duration("allreduce", 0, s) for s in sizes]) - net
    rest = med - net
    weights = 1.0 / med

    def solve(columns: list[np.ndarray]) -> np.ndarray:
        a = np.column_stack(columns) * weights[:, None]
        return np.linalg.lstsq(a, rest * weights, rcond=None)[0]

    overhead, gamma = (float(x) for x in solve([np.ones(len(sizes)), reduced]))
    if gamma < 0:
        overhead, gamma = float(solve([np.ones(len(sizes))])[0]), 0.0
    if overhead < 0:
        overhead, gamma = 0.0, max(0.0, float(solve([reduced])[0]))
    predicted = net + overhead + gamma * reduced
    errors = np.abs(predicted - med) / med
    spread = max((statistics.median(data[s]) - min(data[s])) / min(data[s]) for s in sizes)
    how = (
        f"2-rank MPI_Allreduce of {sizes[0]}..{sizes[-1]} B ({len(sizes)} sizes, fastest repetition; "
        f"the median is up to {spread * 100:.0f}% slower): time beyond the messages of the "
        f"{algorithm} algorithm, fitted as "
        f"overhead + reduce_cost * reduced bytes (fit error mean {errors.mean() * 100:.0f}%, "
        f"max {errors.max() * 100:.0f}%)"
    )
    return _CollectiveFit(algorithm, overhead, gamma, float(np.sqrt(np.mean(errors**2))), how)


def measure_mpi(repeats: int = 11, progress: Callable[[str], None] | None = None) -> dict[str, Measured]:
    """Every MPI measurement: the ping-pong's links, then the allreduce's per-call costs."""
    out = ping_pong(repeats=repeats, progress=progress)
    if not out:
        return out
    if progress:
        progress("MPI allreduce, 8 B to 1 MiB")
    data = allreduce_times(repeats=repeats)
    if data:
        out.update(fit_collective_algorithm(data, network_text(out, collectives=False)))
    if progress:
        progress("MPI ping-pong with two ranks per core")
    out.update(crowded_ping_pong(repeats=repeats))
    return out


def network_text(values: dict[str, Measured], collectives: bool = True) -> str:
    """The machine file's ``[network]`` (and ``[collectives]``) tables from the MPI measurements."""

    eager = int(values["eager_limit"].median)
    lines = [
        "[network]",
        f"eager_limit = {eager}  # {values['eager_limit'].how}",
    ]
    if "wakeup" in values:
        lines.append(f"wakeup = {values['wakeup'].median:.4g}  # {values['wakeup'].how}")
    lines += [
        "",
        "# one line per message-size range: a message of n bytes up to 'up_to' takes latency + n/bandwidth;",
        "# each range's line is fitted to the measured one-way ping-pong times in it",
        "# (" + values["link_table"].how + "),",
        f"# less the handshake above the eager limit; single line for reference: latency "
        f"{values['latency'].median:.4g} s, bandwidth {values['bandwidth'].median:.4g} B/s",
        "[network.intra_node]",
        f"handshake = {values['handshake'].median:.4g}  # {values['handshake'].how}",
        "ranges = [",
    ]
    table = values["link_table"].points
    low = 0.0
    for up_to, alpha, beta in link_ranges(table, eager):
        inside = [(size, t, spread) for size, t, spread in table if low < size <= up_to]
        low = up_to
        bandwidth = "inf" if beta <= 0 else f"{1.0 / beta:.6g}"
        head = "  { " + ("" if up_to == math.inf else f"up_to = {int(up_to)}, ") + f"latency = {alpha:.6g}, "
        worst = max((abs(alpha + size * beta - t) / t for size, t, _ in inside), default=0.0)
        spread = max((sp for _, _, sp in inside), default=0.0)
        note = (
            f"  # fitted to {len(inside)} sizes {int(inside[0][0])}..{int(inside[-1][0])} B: "
            f"error up to {worst * 100:.0f}%, median up to {spread * 100:.0f}% slower"
        )
        lines.append(head + f"bandwidth = {bandwidth} }}," + note)
    lines.append("]")
    lines.append("# measured one-way times (handshake taken out above the eager limit), bytes: seconds")
    for k in range(0, len(table), 5):
        lines.append("#   " + ", ".join(f"{int(size)}: {t:.4g}" for size, t, _ in table[k : k + 5]))
    if collectives and "collective_overhead" in values:
        lines += [
            "",
            "[collectives]",
            f"overhead = {values['collective_overhead'].median:.4g}  # {values['collective_overhead'].how}",
            f"reduce_cost = {values['reduce_cost'].median:.4g}  # seconds per reduced byte; "
            + values["reduce_cost"].how,
        ]
        algorithm = values["collective_overhead"].choice
        if algorithm and algorithm != "auto":
            lines.append(
                f'allreduce = "{algorithm}"  # the algorithm whose model fits the measured allreduce best'
            )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- machine file


def machine_text(values: dict[str, Measured], name: str = "calibrated") -> str:
    """A machine file whose comments say how each number was measured."""
    cores = os.cpu_count() or 1

    def comment(key: str) -> str:
        m = values[key]
        return f"  # {m.how}; spread {m.spread * 100:.1f}% (min..max of the repetitions)"

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        f"# Machine file written by 'uml2perf calibrate' on {time.strftime('%Y-%m-%d %H:%M:%S')}",
        f"# load average at the start: {load:.2f} on {cores} cores"
        + (
            "  (LOADED: numbers below may be pessimistic; calibrate again when the machine is quiet)"
            if load > 0.5 * cores
            else ""
        ),
        f'name = "{name}"',
        "nodes = 1",
        f"cores_per_node = {cores}",
        f"speed = {values['speed'].median:.4g}" + comment("speed"),
        "",
        "",
        "# roofline: flop/s of one core, bytes/s of the node's memory (shared) and of one core alone",
        f"peak_flops = {values['core_flops'].median:.4g}" + comment("core_flops"),
        f"memory_bandwidth = {values['memory_bandwidth'].median:.4g}" + comment("memory_bandwidth"),
        f"core_bandwidth = {values['core_bandwidth'].median:.4g}" + comment("core_bandwidth"),
        f"# all cores at once: {values['peak_flops'].median:.4g} flop/s"
        + comment("peak_flops").replace("  #", ";"),
        "",
        "# thread costs (seconds) of task pools and pipelines that give no startup/handoff/overhead tags",
        threads_section(values).rstrip("\n"),
    ]
    if "latency" in values:
        lines += ["", network_text(values).rstrip("\n")]
    else:
        lines += [
            "",
            "# no MPI measurement: mpi4py or mpiexec is not installed (pip install 'uml2perf[mpi]');",
            "# the runtime's default intra-node link applies",
        ]
    return "\n".join(lines) + "\n"
