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
* with mpi4py and an MPI installed: intra-node latency and bandwidth from a
  ping-pong over message sizes, and the eager limit from the knee where the
  time per message jumps.

``peak_flops`` (one core), ``memory_bandwidth`` (all cores) and
``core_bandwidth`` (one core) are the machine file's roofline keys, the
thread costs its ``[threads]`` keys; the measurements the format has no key
for (the rendezvous intercept) are written as comments with their values.
"""

from __future__ import annotations

import functools
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
    say("memory bandwidth, one core (triad a = b + s*c)")
    triad = triad_seconds(TRIAD_ELEMENTS)
    moved = 5 * 8 * TRIAD_ELEMENTS  # numpy does it in two passes: c read, a written; a and b read, a written
    triad()  # first touch of the output pages is not bandwidth
    med, lo, hi = _repeat(triad, repeats)
    out["core_bandwidth"] = Measured(
        moved / med, moved / hi, moved / lo, f"triad over {TRIAD_ELEMENTS} doubles on one core"
    )
    say(f"memory bandwidth, {cores} cores")
    small = TRIAD_ELEMENTS // cores
    per_thread = [triad_seconds(small) for _ in range(cores)]
    for fn in per_thread:
        fn()
    counter = iter(range(10**9))

    def all_cores() -> float:
        fns = list(per_thread)
        results = [0.0] * cores
        barrier = threading.Barrier(cores)

        def work(i: int) -> None:
            barrier.wait()
            results[i] = fns[i]()

        ts = [threading.Thread(target=work, args=(i,)) for i in range(cores)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        next(counter)
        return max(results)

    med, lo, hi = _repeat(all_cores, repeats)
    moved_all = 5 * 8 * small * cores
    out["memory_bandwidth"] = Measured(
        moved_all / med,
        moved_all / hi,
        moved_all / lo,
        f"triad over {small} doubles per core on {cores} cores at once",
    )
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
    mpi = ping_pong(progress=say)
    out.update(mpi)
    return out


# --------------------------------------------------------------------------- MPI ping-pong

PING_PONG_SIZES = [8 << k for k in range(0, 20, 1)]  # 8 B .. 4 MiB

_PING_PONG = r"""
import sys, time, json
from mpi4py import MPI
import numpy as np
comm = MPI.COMM_WORLD
sizes = json.loads(sys.argv[1]); repeats = int(sys.argv[2])
out = {}
for size in sizes:
    buf = np.zeros(max(size, 1), dtype=np.uint8)
    rounds = 200 if size <= 65536 else 20
    times = []
    for _ in range(repeats):
        comm.Barrier()
        start = time.perf_counter()
        for _ in range(rounds):
            if comm.rank == 0:
                comm.Send([buf, size, MPI.BYTE], dest=1); comm.Recv([buf, size, MPI.BYTE], source=1)
            elif comm.rank == 1:
                comm.Recv([buf, size, MPI.BYTE], source=0); comm.Send([buf, size, MPI.BYTE], dest=0)
        times.append((time.perf_counter() - start) / rounds / 2)
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
    launcher = mpi_available()
    if launcher is None:
        return {}
    if progress:
        progress("MPI ping-pong, 8 B to 4 MiB")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "pingpong.py"
        script.write_text(_PING_PONG)
        command = mpiexec_command(launcher, 2)
        if os.geteuid() == 0 and "--allow-run-as-root" not in command and _is_openmpi(launcher):
            command.append("--allow-run-as-root")
        import json

        try:
            done = subprocess.run(
                command + [sys.executable, str(script), json.dumps(PING_PONG_SIZES), str(repeats)],
                capture_output=True,
                text=True,
                timeout=120,
            )
        except (OSError, subprocess.SubprocessError):
            return {}
        if done.returncode != 0 or not done.stdout.strip():
            return {}
        data = {int(k): v for k, v in json.loads(done.stdout.strip().splitlines()[-1]).items()}
    return fit_ping_pong(data)


def fit_ping_pong(data: dict[int, list[float]]) -> dict[str, Measured]:
    """Latency and bandwidth lines below and above the eager limit (the size where time jumps most)."""
    sizes = sorted(data)
    med = {s: statistics.median(data[s]) for s in sizes}

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
    return out


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
        lines += [
            "",
            "[network]",
            f"eager_limit = {int(values['eager_limit'].median)}" + comment("eager_limit"),
            "",
            "[network.intra_node]",
            f"latency = {values['latency'].median:.4g}" + comment("latency"),
            f"bandwidth = {values['bandwidth'].median:.4g}" + comment("bandwidth"),
            f"# above the eager limit the line starts at {values['rendezvous_latency'].median:.4g} s "
            f"(rendezvous handshake); below it the bandwidth is {values['eager_bandwidth'].median:.4g} B/s",
        ]
    else:
        lines += [
            "",
            "# no MPI measurement: mpi4py or mpiexec is not installed (pip install 'uml2perf[mpi]');",
            "# the runtime's default intra-node link applies",
        ]
    return "\n".join(lines) + "\n"
