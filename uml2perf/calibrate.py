"""``uml2perf calibrate``: measure this machine the way programs meet it, and write a machine file.

Every measured key is written as ``{ value = <median>, low = <5th percentile>, high = <95th
percentile> }`` of where one more launch's value falls (:func:`launch_interval`; a plain
number when it has no spread), with its unit and a comment that says how it was measured.
The values come from several *independent launches* (separate
processes, separate ``mpiexec`` runs), never from the fastest repetition: a program meets
whatever state the machine is in when it starts, and one process's repetitions share the
state of that process (its buffers, its placement, the MPI's protocol choices).  What is
measured:

* ``speed``: a reference kernel (numpy sort of 2**16 random doubles); 1.0 when this
  machine is the reference (costs fitted here), else its time on the reference machine
  (``--reference-sort SECONDS``) over the time here;
* peak floating-point rate (a numpy matrix product) and memory bandwidth (a STREAM-like
  triad ``a = b + s*c`` over arrays far larger than the caches), on one core and on all
  cores;
* thread start and per-item hand-off (no-op pools of the standard thread pool with 1 and
  all cores' workers over several item counts: the intercepts give the start of a thread,
  the slopes the per-item cost and how much of it is serialised; one-worker pools of a
  reference numpy sort the wake-up of a caller that sleeps before every result), written
  as the ``[threads]`` keys;
* with mpi4py and an MPI installed: a 2-rank ping-pong over 8 B..4 MiB in every launch,
  the sizes in a shuffled order, each size with a buffer reused from earlier messages and a
  freshly allocated one (the two conditions programs meet); the per-launch, per-condition
  medians give each size's time and interval.  A size whose times fall into separate
  groups is reported as modes (the comment names each and where it appeared).  The eager
  limit is where the time steps (the largest jump of the time between neighbouring
  sizes, on logarithmic scales); the link's per-size-range latency and bandwidth, the
  rendezvous handshake, the wake-up of a rank that shares its core (the same ping-pong
  with two ranks per core, the machine oversubscribed) and the collectives' per-call
  overhead and reduction cost (an allreduce over 8 B..4 MiB whose buffers rotate through
  more memory than the caches hold, so the reduced data comes from memory) follow.

``peak_flops`` (one core), ``memory_bandwidth`` (all cores) and ``core_bandwidth`` (one
core) are the machine file's roofline keys, the thread costs its ``[threads]`` keys, the
network's its ``[network]`` and ``[collectives]`` keys.
"""

from __future__ import annotations

import functools
import json
import math
import mmap
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from uml2perf_runtime.platform.array_operations import ARRAY_OPERATIONS, ELEMENTWISE_OPERATIONS

from .quiet import QuietGate

SORT_ELEMENTS = 1 << 16
TRIAD_ELEMENTS = 1 << 23  # 3 arrays of 64 MiB: far beyond every cache
#: Working sets (bytes per core: the triad's three arrays together) of the ``[caches]`` rows:
#: powers of 4 from 16 KiB to 16 MiB, which step through the first-level, second-level and
#: last-level caches of current CPUs without knowing their sizes.
CACHE_WORKING_SETS = tuple(16384 << (2 * k) for k in range(6))
#: Bytes one timed sample of a cached triad moves (repeated triads): long enough for the timer.
CACHE_SAMPLE_BYTES = 200_000_000
MATMUL_N = 512
#: Allocation sizes whose first touch is timed: below and above :data:`HUGE_PAGE_ADVICE`.
FIRST_TOUCH_BLOCKS = (1 << 20, 16 << 20)
#: From this many bytes on, numpy asks the system to back an array with huge pages (and so
#: does the measurement): first touching them costs a fraction of what small pages cost.
HUGE_PAGE_ADVICE = 4 << 20
#: Tiny array operations timed per sample of ``call_cost``.
CALLS_PER_SAMPLE = 20_000
#: Independent launches of every measurement unless ``--launches`` says otherwise.
DEFAULT_LAUNCHES = 4

T = TypeVar("T")

#: The quiet check of the calibration under way (set by :func:`measure`); None runs launches unchecked.
_gate: QuietGate | None = None


def _launch(run: Callable[[], T]) -> T:
    """One launch of a measurement, repeated by the active :class:`QuietGate` while others disturb it."""
    return run() if _gate is None else _gate.run(run)


@dataclass
class Measured:
    """A key's value (the median), its interval (5th and 95th percentiles) and how it was measured."""

    median: float
    low: float
    high: float
    how: str
    #: measured points behind the value, ``(size, seconds, spread)`` (the ping-pong's table)
    points: tuple[tuple[float, float, float], ...] = ()
    #: a choice the measurement made (the allreduce algorithm that fits best), else empty
    choice: str = ""
    #: the measured values behind the interval (repetitions or launches)
    values: tuple[float, ...] = ()
    #: separate groups among the values, described for the comment (empty: one group)
    modes: str = ""
    #: per launch and condition, the ping-pong's processed table ``(label, ((size, seconds), ...))``
    cells: tuple[tuple[str, tuple[tuple[float, float], ...]], ...] = ()
    #: one value per launch (the launches' medians) when the key was measured in several
    launches: tuple[float, ...] = ()
    #: seconds of each measured case (a size, a buffer condition), one per launch: how runs vary
    series: tuple[tuple[float, ...], ...] = ()

    @property
    def spread(self) -> float:
        """(high - low) / value: the interval's width relative to the value."""
        return (self.high - self.low) / self.median if self.median else 0.0

    @classmethod
    def of(cls, values: Sequence[float], how: str, value: float | None = None) -> Measured:
        """The median (or ``value``) of ``values`` with their 5th..95th percentile interval."""
        mid = statistics.median(values) if value is None else value
        low, high = percentiles(values)
        return cls(mid, min(low, mid), max(high, mid), how, values=tuple(float(v) for v in values))

    @classmethod
    def across_launches(cls, values: Sequence[float], how: str, value: float | None = None) -> Measured:
        """The median (or ``value``) of one value per launch, with the interval another launch lands in.

        See :func:`launch_interval`: the percentiles of a few launches say where *these*
        launches fell, not where the next one will.
        """
        mid = statistics.median(values) if value is None else value
        low, high = launch_interval(values)
        return cls(mid, min(low, mid), max(high, mid), how, values=tuple(float(v) for v in values))


#: The environment variables that set how many threads numpy's BLAS and OpenMP start.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def launch_environment() -> dict[str, str]:
    """The environment of a measurement launch: the caller's, with one BLAS/OpenMP thread.

    ``peak_flops`` is one core's rate (and the all-core rate one process per core), whatever
    threads the caller's environment would give a matrix product: with two threads on two
    cores the same file said twice the rate, and every count of flops was priced twice as fast.
    """
    return dict(os.environ) | dict.fromkeys(THREAD_VARIABLES, "1")


#: The share of launches a key's interval is meant to hold (its ends: 5th and 95th percentiles).
LEVEL = 0.90


def launch_interval(values: Sequence[float], level: float = LEVEL) -> tuple[float, float]:
    """Where the value of one more launch falls with probability ``level``, from ``values`` of launches.

    Two or three launches that happened to agree make a narrow percentile range that the next
    calibration misses; the Student-t prediction interval for a new draw,
    ``mean +- t(level, n-1) * s * sqrt(1 + 1/n)``, grows as fewer launches back it.  It is taken
    on logarithms when every value is positive (times and rates vary by factors) and on the
    plain scale otherwise, and never narrower than the launches' own percentile range.
    """
    data = np.asarray([v for v in values if math.isfinite(v)], dtype=float)
    low, high = percentiles(data.tolist())
    if data.size < 3:
        return low, high
    from scipy.stats import t as student_t

    positive = bool(np.all(data > 0))
    scale = np.log(data) if positive else data
    spread = float(np.std(scale, ddof=1)) * math.sqrt(1 + 1 / data.size)
    half = float(student_t.ppf(0.5 + level / 2, data.size - 1)) * spread
    centre = float(np.mean(scale))
    ends = (centre - half, centre + half)
    t_low, t_high = (math.exp(e) for e in ends) if positive else ends
    if np.all(data >= 0):  # costs and times measured as at least 0 stay so
        t_low = max(t_low, 0.0)
    return min(low, t_low), max(high, t_high)


def percentiles(
    values: Sequence[float], low: float = 5.0, high: float = 95.0, nearest: bool = False
) -> tuple[float, float]:
    """The ``low``-th and ``high``-th percentiles (linear interpolation between measured values;
    ``nearest`` keeps to measured values, for sizes)."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return math.nan, math.nan
    if nearest:
        return float(np.percentile(data, low, method="nearest")), float(
            np.percentile(data, high, method="nearest")
        )
    return float(np.percentile(data, low)), float(np.percentile(data, high))


#: Two groups of values are separate modes when the larger starts at least this factor above
#: the smaller's end (and each holds a fifth of the values, at least two).
MODE_GAP = 1.5


def modes_of(labelled: Sequence[tuple[str, float]], unit: str = "s") -> str:
    """Separate groups among labelled values, described for a comment; empty when they form one.

    The values are sorted and cut at their largest ratio gap; a gap of at least
    :data:`MODE_GAP` with a fifth of the values (two at least) on each side is two modes.
    """
    ordered = sorted(labelled, key=lambda item: item[1])
    n = len(ordered)
    least = max(2, math.ceil(n / 5))
    if n < 2 * least:
        return ""
    gaps = [
        (ordered[i + 1][1] / ordered[i][1] if ordered[i][1] > 0 else math.inf, i)
        for i in range(least - 1, n - least)
    ]
    ratio, cut = max(gaps)
    if ratio < MODE_GAP:
        return ""
    groups = (ordered[: cut + 1], ordered[cut + 1 :])
    return "; ".join(
        f"{_shown(statistics.median(v for _, v in group), unit)} in {_where(label for label, _ in group)}"
        for group in groups
    )


def _shown(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value * 1e6:.3g} us"
    return f"{value:.4g} {unit}".rstrip()


def _where(labels: Any) -> str:
    """``launches 1, 3 (reused), 2 (fresh)``: where a mode appeared, short."""
    names = sorted(set(labels))
    return ", ".join(names) if len(names) <= 6 else ", ".join(names[:6]) + f" and {len(names) - 6} more"


def pooled(launches: Sequence[Measured], how: str) -> Measured:
    """One key from several launches: the median of the launches' values, the interval of all values.

    The interval takes the 5th..95th percentiles of every launch's repetitions together,
    widened to where another launch's value would fall (:func:`launch_interval`), and
    always holds the value; launches whose values differ by more than :data:`MODE_GAP` are
    named as modes.
    """
    middles = [m.median for m in launches]
    every = [v for m in launches for v in (m.values or (m.median,))]
    mid = statistics.median(middles)
    low, high = percentiles(every)
    if len(launches) > 1:
        launch_low, launch_high = launch_interval(middles)
        low, high = min(low, launch_low), max(high, launch_high)
    modes = modes_of([(f"launch {i + 1}", v) for i, v in enumerate(middles)], unit="")
    note = f"; {len(launches)} launches" if len(launches) > 1 else ""
    return Measured(
        mid,
        min(low, mid),
        max(high, mid),
        how + note,
        choice=launches[0].choice,
        values=tuple(every),
        modes=modes,
        launches=tuple(middles),
    )


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


def triad_loop(working_set: int) -> tuple[Callable[[], float], float]:
    """A timed loop of triads over ``working_set`` bytes of arrays, and the bytes it moves.

    The loop repeats the triad until it has moved about :data:`CACHE_SAMPLE_BYTES`, so a
    working set that fits in a cache is read from that cache (the first pass warms it), the
    way a program's loop sweeps the same arrays again and again; one timer pair per sample.
    """
    n = max(1, working_set // 24)
    b = np.ones(n)
    c = np.full(n, 2.0)
    a = np.empty(n)
    per_triad = 5 * 8 * n  # numpy's two passes, as in the memory triad
    inner = max(2, CACHE_SAMPLE_BYTES // per_triad)
    multiply, add = np.multiply, np.add

    def run() -> float:
        start = time.perf_counter()
        for _ in range(inner):
            multiply(c, 3.0, out=a)
            add(a, b, out=a)
        return time.perf_counter() - start

    run()
    return run, float(per_triad * inner)


#: A process that times fresh numpy arrays as a program's temporaries get them (see
#: :func:`first_touch_rates`): ``[[fresh, again], ...]`` seconds per block size, as JSON.
_FIRST_TOUCH = r"""
import json, sys, time
import numpy as np
blocks = json.loads(sys.argv[1]); repeats = int(sys.argv[2])
out = {block: [] for block in blocks}
for _ in range(repeats):
    for block in blocks:
        start = time.perf_counter()
        x = np.empty(block // 8)
        x.fill(1.0)
        first = time.perf_counter()
        x.fill(2.0)
        again = time.perf_counter()
        del x
        out[block].append([first - start, again - first])
print(json.dumps(out))
"""

#: glibc's allocator settings for that process: blocks come from the heap (as temporaries do once
#: the allocator has raised its mapping threshold) and every free at the top goes back to the
#: system (as it does when a kernel's temporaries are freed together), so each block is fresh.
FRESH_HEAP = {"MALLOC_MMAP_THRESHOLD_": str(1 << 30), "MALLOC_TRIM_THRESHOLD_": "0"}


def first_touch_seconds(block: int) -> tuple[float, float]:
    """Seconds to write ``block`` bytes of newly mapped memory, and to write them again.

    The fallback of :func:`first_touch_rates` where the allocator cannot be told to hand out
    fresh memory (not glibc): a block mapped directly, with the huge-page advice numpy gives
    from :data:`HUGE_PAGE_ADVICE` on.
    """
    region = mmap.mmap(-1, block)
    try:
        if block >= HUGE_PAGE_ADVICE and hasattr(mmap, "MADV_HUGEPAGE"):
            region.madvise(mmap.MADV_HUGEPAGE)
        view = np.frombuffer(region, dtype=np.float64)
        start = time.perf_counter()
        view.fill(1.0)
        first = time.perf_counter()
        view.fill(2.0)
        again = time.perf_counter()
        del view
    finally:
        region.close()
    return first - start, again - first


def _fresh_heap_seconds(repeats: int) -> dict[int, list[tuple[float, float]]] | None:
    """``(fresh, again)`` seconds per block from a process whose every numpy block is fresh; None if
    that process could not be run or its blocks were not fresh (an allocator that ignores the settings)."""
    command = [sys.executable, "-c", _FIRST_TOUCH, json.dumps(list(FIRST_TOUCH_BLOCKS)), str(repeats)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=120, env=os.environ | FRESH_HEAP
        )
        found = {
            int(block): [tuple(pair) for pair in pairs] for block, pairs in json.loads(done.stdout).items()
        }
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    for pairs in found.values():
        if statistics.median(fresh - again for fresh, again in pairs) <= 0:
            return None
    return found  # type: ignore[return-value]


def first_touch_rates(repeats: int) -> dict[str, Measured]:
    """``first_touch {block}`` and ``first_touch``: bytes/s of first touch beyond the write (one core).

    What a program meets: the temporaries of a numpy kernel come from the heap, and when several
    are freed together the allocator gives the memory back, so the next run's temporaries map it
    in again.  A separate process is set up so (:data:`FRESH_HEAP`) and writes a new numpy array of
    each block size twice: the first write's time less the second's is the first touch.
    """
    repeats = max(repeats, 5)
    pairs = _fresh_heap_seconds(repeats)
    how = "new numpy arrays from a heap that gives freed memory back"
    if pairs is None:
        how = "newly mapped memory"
        pairs = {block: [] for block in FIRST_TOUCH_BLOCKS}
        for _ in range(repeats):
            for block in FIRST_TOUCH_BLOCKS:  # interleaved, so a disturbance does not hit one size alone
                pairs[block].append(first_touch_seconds(block))
    samples = {
        block: [block / max(fresh - again, 1e-9) for fresh, again in found] for block, found in pairs.items()
    }
    out: dict[str, Measured] = {}
    for block, rates in samples.items():
        out[f"first_touch {block}"] = Measured.of(
            rates, f"writing {block:,} bytes of {how} less writing them again, one core"
        )
    sizes = " and ".join(f"{block:,}" for block in FIRST_TOUCH_BLOCKS)
    out["first_touch"] = Measured.of(
        [rate for rates in samples.values() for rate in rates],
        f"writing {how} less writing it again, blocks of {sizes} bytes alike, one core",
    )
    return out


#: A loop's temporaries as a program makes them: ``count`` new numpy arrays of ``block`` bytes,
#: written and freed together, after warm-up iterations; prints the median count of page faults
#: one iteration takes (0 when the allocator hands back pages it kept).
_ALLOCATOR = r"""
import json, resource, statistics, sys
import numpy as np
block, count, rounds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])

def iteration():
    arrays = [np.empty(block // 8) for _ in range(count)]
    for a in arrays:
        a.fill(1.0)

for _ in range(3):
    iteration()
faults = []
for _ in range(rounds):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    iteration()
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(json.dumps(statistics.median(faults)))
"""

#: Blocks of the allocator's reuse test (the loop keeps 1, 2, 3 of them alive at once).
REUSE_BLOCK = 1 << 20
REUSE_COUNTS = (1, 2, 3)
#: Block sizes tried one at a time for the size from which every block is mapped anew.
MAPPED_BLOCKS = tuple(4 << (20 + k) for k in range(5))  # 4 MiB .. 64 MiB


def _iteration_faults(block: int, count: int, rounds: int = 9) -> float | None:
    """Median page faults of one loop iteration (:data:`_ALLOCATOR`), in a fresh process; None if it fails."""
    command = [sys.executable, "-c", _ALLOCATOR, str(block), str(count), str(rounds)]
    env = {key: value for key, value in os.environ.items() if key not in FRESH_HEAP}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
        return float(json.loads(done.stdout))
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def allocator_reuse() -> dict[str, Measured]:
    """``[allocator]``: when a loop's temporaries are new pages (``reuse_below``, ``mapped_from``).

    Page faults, not times: a loop iteration whose temporaries come back from the allocator
    faults no page in, one whose memory went back to the system faults in every page of it, so
    the count says which without a timer's noise.  Each case runs in a process of its own,
    since an allocator's thresholds move with everything the process freed before.  Empty
    when the processes cannot run (``resource`` is POSIX) or the allocator never reuses.
    """
    if os.name != "posix":
        return {}
    reuse: int | None = None
    tried: list[str] = []
    for count in REUSE_COUNTS:
        faults = _iteration_faults(REUSE_BLOCK, count)
        if faults is None:
            return {}
        tried.append(f"{count} x {REUSE_BLOCK >> 20} MiB: {faults:g}")
        if faults >= 1 and reuse is None:
            reuse = count
    if reuse is None:
        reuse = REUSE_COUNTS[-1] + 1
    if reuse <= 1:
        return {}  # every fresh byte is new pages: the machine file needs no [allocator]
    out = {
        "reuse_below": Measured(
            float(reuse),
            float(reuse),
            float(reuse),
            "page faults of a loop iteration whose temporaries of one block size are freed together ("
            + "; ".join(tried)
            + " faults)",
        )
    }
    for block in MAPPED_BLOCKS:
        faults = _iteration_faults(block, 1)
        if faults is not None and faults >= 1:
            out["mapped_from"] = Measured(
                float(block),
                float(block),
                float(block),
                f"the smallest of {', '.join(f'{b >> 20}' for b in MAPPED_BLOCKS)} MiB whose single "
                f"temporary faults in pages every iteration ({faults:g} faults)",
            )
            break
    return out


def _typical_calls() -> list[Callable[[], Any]]:
    """One of each kind of call docs/profile.md counts in ``calls``, on arrays of 8 elements.

    Operators and ufuncs (with a new result and into ``out=``), a scalar times an array, a
    comparison, reductions (a sum, a maximum, a dot product), indexing through an index array, an
    assignment into a slice, new arrays (``np.empty``, ``np.zeros``, a copy, a concatenation, a
    type conversion), a selection (``np.where``) and a call of a Python function of the program.
    A program's calls are a mix of such kinds, and their costs differ by up to ten times.
    """
    a, b, out = np.ones(8), np.full(8, 2.0), np.empty(8)
    index = np.arange(8)[::-1].copy()
    bigger = np.zeros(10)

    def program_function(x: Any) -> Any:
        return x

    return [
        lambda: a + b,
        lambda: np.add(a, b, out=out),
        lambda: 2.0 * a,
        lambda: a < b,
        lambda: a.sum(),
        lambda: a.max(),
        lambda: np.dot(a, b),
        lambda: a[index],
        lambda: bigger.__setitem__(slice(1, 9), a),
        lambda: np.empty(8),
        lambda: np.zeros(8),
        lambda: a.copy(),
        lambda: np.concatenate((a, b)),
        lambda: a.astype(np.int64),
        lambda: np.where(a < b, a, b),
        lambda: program_function(a),
    ]


def call_seconds(calls: int = CALLS_PER_SAMPLE) -> float:
    """Seconds of one library call beyond its work: the mean over :func:`_typical_calls`.

    The mean, not the cheapest kind: an action's ``calls`` counts every kind alike, so the
    cost of one is what a call of a mix costs on average.
    """
    kinds = _typical_calls()
    each = max(1, calls // len(kinds))
    start = time.perf_counter()
    for kind in kinds:
        for _ in range(each):
            kind()
    return (time.perf_counter() - start) / (each * len(kinds))


#: Elementwise operations whose cost calibrate weighs against an addition (numpy ufuncs), and
#: array operations (not elementwise) it weighs too (see :func:`_array_operations`): the names an
#: ``operations`` tag may give, which the runtime's ``[operations]`` table prices.
WEIGHED_OPERATIONS = ELEMENTWISE_OPERATIONS
#: Elements per timed call of an elementwise operation: 128 KiB per array, cached, and long
#: enough that the call's own cost is small beside its work.
WEIGHT_ELEMENTS = 16384
#: Elements of the array operations timed again over larger arrays: 512 KiB, 2 MiB, 8 MiB per
#: array of doubles (out of a core's nearest caches, beyond its own) and 32 MiB (as large as the
#: last-level caches of most machines, so that every pass streams).  An operation's time per
#: element changes with the size of its arrays, by several times for some between two of these.
LARGER_ELEMENTS = (65_536, 262_144, 1_048_576, 4_194_304)
#: The sizes whose weights are also written as comments (for models that count weights as flops).
COMMENTED_ELEMENTS = (262_144, 4_194_304)


def operation_seconds(name: str, elements: int = WEIGHT_ELEMENTS, calls: int = 200) -> float:
    """Seconds per element of numpy's ``name`` over cached arrays (in place, so no allocation)."""
    a = np.linspace(0.5, 1.5, elements)
    b = np.linspace(1.5, 0.5, elements)
    out = np.empty(elements)
    ufunc = getattr(np, name)
    arguments = (a, b) if ufunc.nin == 2 else (a,)
    ufunc(*arguments, out=out)
    start = time.perf_counter()
    for _ in range(calls):
        ufunc(*arguments, out=out)
    return (time.perf_counter() - start) / (calls * elements)


def _array_operations(elements: int) -> dict[str, Callable[[], Any]]:
    """numpy operations that run far below the speed of their data, over ``elements`` cached ones.

    Each is a line programs hold whose bytes alone price it several times too low: a running sum
    (each element waits for the one before), sums and arg-minima along short rows (numpy's
    per-row overhead), counting into bins (a scattered increment per element), a gather through
    an index array and a transposed copy (an element per cache line), a choice by a mask
    (``np.where``), a selection by one (``x[mask]``: a branch per element, mispredicted most
    when half the elements are kept, so it is timed with a half and with a tenth kept) and an
    addition of two blocks cut from a wider array (``g[:, :-2] + g[:, 2:]``: rows that are not one
    contiguous run leave numpy's fast loop, and each element costs two to three times an
    addition's), and an integer remainder and quotient (``k % 7``, ``k // 7``: integer division
    has no fast vector instruction, unlike integer addition).
    """
    rng = np.random.default_rng(7)
    x = rng.random(elements)
    y = rng.random(elements)
    out = np.empty(elements)
    rows = x.reshape(elements // 8, 8)
    sums = np.empty(elements // 8)
    bins = rng.integers(0, 1024, elements)
    index = rng.permutation(elements)
    side = int(elements**0.5)
    square = x[: side * side].reshape(side, side)
    target = np.empty((side, side))
    mask = x > 0.5
    rare = x < 0.1
    ints = rng.integers(0, 1 << 30, elements)
    quotients = np.empty(elements, dtype=ints.dtype)
    wide = rng.random((side, 2 * side))
    left, right = wide[:, :side], wide[:, side:]

    def transpose() -> Any:
        target[...] = square.T
        return target

    return {
        "add": lambda: np.add(x, y, out=out),  # what the others are weighed against
        "cumsum": lambda: np.cumsum(x, out=out),
        "sum(axis=1)": lambda: rows.sum(axis=1, out=sums),
        "argmin(axis=1)": lambda: rows.argmin(axis=1),
        "bincount": lambda: np.bincount(bins, minlength=1024),
        "gather": lambda: np.take(x, index, out=out),
        "transpose": transpose,
        "where": lambda: np.where(mask, x, 0.0),
        "x[mask]": lambda: x[mask],
        "x[mask/10]": lambda: x[rare],
        "block": lambda: np.add(left, right, out=target),
        "int_remainder": lambda: np.remainder(ints, 7, out=quotients),
        "int_divide": lambda: np.floor_divide(ints, 7, out=quotients),
    }


def array_operation_seconds(
    run: Callable[[], Any], elements: int = WEIGHT_ELEMENTS, calls: int = 100
) -> float:
    """Seconds per element of one of :func:`_array_operations` (after a warm call)."""
    run()
    start = time.perf_counter()
    for _ in range(calls):
        run()
    return (time.perf_counter() - start) / (calls * elements)


def operation_weights(core_flops: float, repeats: int) -> dict[str, Measured]:
    """``weight NAME``: the flops to count per element of an elementwise operation.

    An addition or a multiplication counts one flop and its bytes price it (numpy's elementwise
    loops run at the speed of the data).  A division, a square root or a transcendental function
    takes longer than its data: its weight is one flop plus its time beyond an addition's at the
    one-core ``peak_flops``, so that counting ``weight`` flops per element prices it right.
    """
    times: dict[str, list[float]] = {name: [] for name in ("add", *WEIGHED_OPERATIONS, *ARRAY_OPERATIONS)}
    arrays = _array_operations(WEIGHT_ELEMENTS)
    for _ in range(max(repeats, 3)):
        for name in times:  # interleaved
            run = arrays.get(name)
            times[name].append(operation_seconds(name) if run is None else array_operation_seconds(run))
    weights = _weights(times, core_flops, f"{WEIGHT_ELEMENTS:,} cached doubles", "", cached=True)
    for elements in LARGER_ELEMENTS:
        weights |= sized_weights(core_flops, repeats, elements)
    return weights


def size_suffix(elements: int) -> str:
    """The suffix of the weights' keys over arrays of ``elements`` doubles: `` 2 MiB``, `` 512 KiB``."""
    size = 8 * elements
    return f" {size // 2**20} MiB" if size >= 2**20 else f" {size // 2**10} KiB"


def sized_weights(core_flops: float, repeats: int, elements: int) -> dict[str, Measured]:
    """``weight NAME 2 MiB``: the array operations' weights over arrays of ``elements`` doubles.

    A gather, a transpose or a choice by a mask waits for the memory in ways an addition's
    stream does not (a line per element, a stall per mispredicted branch), so their time beyond
    an addition's grows several times once their arrays leave a core's caches; the bytes a user
    counts are priced at the caches' and the memory's bandwidths there, and the weight is what
    the operation takes beyond that.
    """
    times: dict[str, list[float]] = {name: [] for name in ("add", *ARRAY_OPERATIONS)}
    arrays = _array_operations(elements)
    for _ in range(max(repeats, 3)):
        for name in times:  # interleaved
            times[name].append(array_operation_seconds(arrays[name], elements, calls=2))
    beyond = elements >= LARGER_ELEMENTS[-1]
    over = f"{elements:,} doubles" + (" from memory" if beyond else "")
    return _weights(times, core_flops, over, size_suffix(elements), cached=not beyond)


#: Bytes per element docs/profile.md counts for each timed operation, over cached arrays and from
#: memory (a gathered element or a transposed one costs a cache line from memory); an addition
#: reads two doubles and writes one, a function of one argument one.  Operations not named count
#: an addition's 24.
_COUNTED_BYTES: dict[str, tuple[float, float]] = {
    "sqrt": (16, 16),
    "exp": (16, 16),
    "log": (16, 16),
    "sin": (16, 16),
    "floor": (16, 16),
    "cumsum": (16, 16),
    "sum(axis=1)": (9, 9),
    "argmin(axis=1)": (9, 9),
    "bincount": (8, 8),
    "gather": (24, 80),
    "transpose": (16, 72),
    "where": (17, 17),
    "x[mask]": (13, 13),
    "x[mask/10]": (9.8, 9.8),
    "int_remainder": (16, 16),
    "int_divide": (16, 16),
}


def _weights(
    times: dict[str, list[float]], core_flops: float, over: str, suffix: str, cached: bool
) -> dict[str, Measured]:
    """Each operation's flops per element: one, plus its time beyond what its counted bytes take
    at the addition's pace, at ``core_flops`` (so the weight adds what the bytes do not price)."""
    add_per_byte = statistics.median(times["add"]) / 24
    out: dict[str, Measured] = {}
    for name in times:
        if name == "add":
            continue
        beyond = [max(0.0, t - add_per_byte * _bytes_of(name, cached)) for t in times[name]]
        out[f"weight {name}{suffix}"] = Measured.of(
            [1.0 + extra * core_flops for extra in beyond],
            f"numpy {name} over {over} against an addition, at peak_flops",
        )
        out[f"{OPERATION_PREFIX}{name}{suffix}"] = Measured.of(
            beyond, f"numpy {name} over {over}, beyond its counted bytes at an addition's pace"
        )
    return out


def _bytes_of(name: str, cached: bool) -> float:
    """The bytes per element docs/profile.md counts for operation ``name``."""
    over_cached, from_memory = _COUNTED_BYTES.get(name, (24.0, 24.0))
    return over_cached if cached else from_memory


#: Prefix of the keys of an array operation's seconds per element beyond its counted bytes
#: (``[operations]``), like the weights, by size.
OPERATION_PREFIX = "operation "


def _operation_ranges() -> list[tuple[str, int | None]]:
    """Each measured size's key suffix and where its range ends in ``[operations]`` (bytes):
    halfway, on a log scale, to the next size measured; the last range takes every larger array."""
    sizes = [WEIGHT_ELEMENTS, *LARGER_ELEMENTS]
    suffixes = ["", *(size_suffix(n) for n in LARGER_ELEMENTS)]
    ends: list[int | None] = [int(8 * math.sqrt(a * b)) for a, b in zip(sizes, sizes[1:], strict=False)]
    return list(zip(suffixes, [*ends, None], strict=True))


def operations_text(values: dict[str, Measured]) -> list[str]:
    """``[operations]``: each operation's seconds per element, by the size of its arrays."""
    from uml2perf_runtime.platform.array_operations import OPERATION_NAMES

    rows: list[str] = []
    for name in OPERATION_NAMES:
        keys = [(f"{OPERATION_PREFIX}{name}{suffix}", up_to) for suffix, up_to in _operation_ranges()]
        found = [(values[key], up_to) for key, up_to in keys if key in values]
        if not found:
            continue
        if len(found) == 1:
            rows.append(f'"{name}" = {number_text(found[0][0])}')
            continue
        ranges = []
        for index, (m, up_to) in enumerate(found):
            last = index == len(found) - 1
            ranges.append(
                ("" if last or up_to is None else f"up_to = {up_to}, ") + f"seconds = {number_text(m)}"
            )
        rows.append(f'"{name}" = [' + ", ".join("{ " + r + " }" for r in ranges) + "]")
    if not rows:
        return []
    return [
        "",
        "# seconds per element of the array operations an action's 'operations' tag names, beyond the",
        "# time of the bytes docs/profile.md counts for them; by the bytes of the arrays (8 per element):",
        "# numpy over arrays of 128 KiB (cached), 512 KiB, 2, 8 and 32 MiB, each up to halfway to the next",
        "[operations]",
        *rows,
    ]


#: The comment of each group of weights: the names, the suffix of their keys, the comment's first
#: line and the start of its second.
_WEIGHT_COMMENTS = (
    (
        WEIGHED_OPERATIONS,
        "",
        "# flops to count per element of elementwise operations (an addition or a multiplication is 1;",
        "# numpy over cached arrays, at peak_flops)",
    ),
    (
        ARRAY_OPERATIONS,
        "",
        "# and per element of array operations slower than their data (on top of their bytes; rows",
        "# of 8, a gather through a permutation, a square transpose, 128 x 128 blocks; per mask element)",
    ),
    *(
        (
            ARRAY_OPERATIONS,
            size_suffix(n),
            f"# the same array operations over arrays of{size_suffix(n)} (on top of their bytes at the"
            " rates of",
            f"# their sizes; take the weights of the size nearest the action's arrays),{size_suffix(n)}",
        )
        for n in COMMENTED_ELEMENTS
    ),
)


def weights_text(values: dict[str, Measured]) -> list[str]:
    """A comment: the flops to count per element of the weighed operations."""
    lines: list[str] = []
    for names, suffix, first, second in _WEIGHT_COMMENTS:
        keys = [(name, f"weight {name}{suffix}") for name in names]
        shown = ", ".join(f"{name} {values[key].median:.3g}" for name, key in keys if key in values)
        if shown:
            lines += [first, f"{second}: {shown}"]
    return lines


def _cache_rounds(working_sets: Sequence[int], repeats: int, barrier: Any = None) -> list[list[float]]:
    """Seconds of ``repeats`` samples at each working set (interleaved), optionally in step with others."""
    loops = [triad_loop(size)[0] for size in working_sets]
    times: list[list[float]] = [[] for _ in working_sets]
    for _ in range(repeats):
        for index, run in enumerate(loops):
            if barrier is not None:
                barrier.wait()
            times[index].append(run())
    return times


def _cache_worker(working_sets: Sequence[int], repeats: int, barrier: Any, results: Any) -> None:
    """One process of the all-cores cached triad (see :func:`cache_bandwidths`)."""
    results.put(_cache_rounds(working_sets, repeats, barrier))


def cache_bandwidths(
    repeats: int,
    cores: int,
    say: Callable[[str], None] | None = None,
    working_sets: Sequence[int] = CACHE_WORKING_SETS,
) -> dict[str, Measured]:
    """Triad bandwidth at each working set (:data:`CACHE_WORKING_SETS`): one core, then every core.

    Keys ``cache_core <bytes>`` (one core alone) and ``cache_node <bytes>`` (all cores at once,
    each over its own arrays of that size, summed): the ``[caches]`` rows.  All cores run as
    processes, not threads: at a few KiB a triad is shorter than the interpreter lock's switch
    interval, so threads would measure the lock instead of the caches.
    """
    import multiprocessing

    say = say or (lambda _m: None)
    sizes = list(working_sets)
    say(f"cache bandwidths, one core ({len(sizes)} working sets, {sizes[0]:,} to {sizes[-1]:,} bytes)")
    moved = [triad_loop(size)[1] for size in sizes]
    alone = _cache_rounds(sizes, repeats)
    out: dict[str, Measured] = {}
    for size, nbytes, times in zip(sizes, moved, alone, strict=True):
        out[f"cache_core {size}"] = Measured.of(
            [nbytes / t for t in times],
            f"triad over {size} bytes of arrays on one core (median of {repeats})",
        )
    say(f"cache bandwidths, {cores} cores at once")
    context = multiprocessing.get_context()
    barrier = context.Barrier(cores)
    results = context.Queue()
    workers = [
        context.Process(target=_cache_worker, args=(sizes, repeats, barrier, results), daemon=True)
        for _ in range(cores)
    ]
    for worker in workers:
        worker.start()
    per_worker = [results.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    for index, (size, nbytes) in enumerate(zip(sizes, moved, strict=True)):
        slowest = [max(run[index][r] for run in per_worker) for r in range(repeats)]
        out[f"cache_node {size}"] = Measured.of(
            [cores * nbytes / t for t in slowest],
            f"triad over {size} bytes of arrays per core on {cores} cores at once, "
            f"one process each (median of {repeats})",
        )
    return out


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
        key: Measured.of([e[i] for e in each], f"{how}: {what[i]}", value=middle[i])
        for i, key in enumerate(("thread_start", "thread_handoff", "thread_overhead"))
    }
    out["thread_wakeup"] = Measured.of(
        wakeups,
        f"one-worker pools of numpy sorts of {TASK_ELEMENTS} doubles over the same items: per item "
        "beyond the sort alone and the no-op hand-off (the caller wakes for every result)",
        value=wakeup(statistics.median, middle),
    )
    return out


def _nth(index: int, values: list[float]) -> float:
    return values[index]


def threads_section(values: dict[str, Measured], comments: bool = True) -> str:
    """The ``[threads]`` table of a machine file from :func:`thread_costs`."""
    lines = ["[threads]"]
    for name in ("start", "handoff", "overhead", "wakeup"):
        m = values[f"thread_{name}"]
        note = f"  # seconds; {m.how}" + (f"; modes: {m.modes}" if m.modes else "") if comments else ""
        lines.append(f"{name} = {number_text(m)}{note}")
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

    def rates(fn: Callable[[], float], moved: float, how: str) -> Measured:
        times = [fn() for _ in range(repeats)]
        value = moved / (min(times) if fastest else statistics.median(times))
        return Measured.of([moved / t for t in times], how, value=value)

    out: dict[str, Measured] = {}
    say("memory bandwidth, one core (triad a = b + s*c)")
    triad = triad_seconds(TRIAD_ELEMENTS)
    moved = 5 * 8 * TRIAD_ELEMENTS  # numpy does it in two passes: c read, a written; a and b read, a written
    triad()  # first touch of the output pages is not bandwidth
    out["core_bandwidth"] = rates(
        triad, moved, f"triad over {TRIAD_ELEMENTS} doubles on one core ({pick} {repeats})"
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

    out["memory_bandwidth"] = rates(
        all_cores,
        5 * 8 * small * cores,
        f"triad over {small} doubles per core on {cores} cores at once ({pick} {repeats})",
    )
    return out


def measure_here(
    repeats: int = 11, progress: Callable[[str], None] | None = None, reference_sort: float | None = None
) -> dict[str, Measured]:
    """Every measurement that runs inside this process (all but MPI), each with its repetitions."""
    say = progress or (lambda _m: None)
    cores = os.cpu_count() or 1
    out: dict[str, Measured] = {}
    say("reference kernel (numpy sort of 65,536 doubles)")
    sorts = [sort_seconds() for _ in range(max(repeats, 9))]
    med = statistics.median(sorts)
    if reference_sort is None:
        # this machine is the reference: costs fitted here are in its seconds
        out["speed"] = Measured(
            1.0,
            1.0,
            1.0,
            f"this machine is the reference (numpy sort of {SORT_ELEMENTS} doubles: "
            f"{med * 1e3:.3f} ms; pass --reference-sort with another machine's time to compare)",
            values=tuple(med / t for t in sorts),
        )
    else:
        out["speed"] = Measured.of(
            [reference_sort / t for t in sorts],
            f"numpy sort of {SORT_ELEMENTS} doubles took {med * 1e3:.3f} ms against "
            f"{reference_sort * 1e3:.3f} ms on the reference machine",
        )
    out.update(memory_bandwidths(repeats, cores, say))
    out.update(cache_bandwidths(repeats, cores, say))
    say("peak floating-point rate (numpy matrix product)")
    mm = matmul_seconds(MATMUL_N)
    flops = 2 * MATMUL_N**3
    mm()
    out["core_flops"] = Measured.of(
        [flops / mm() for _ in range(repeats)], f"{MATMUL_N}x{MATMUL_N} matrix product, one call"
    )
    out["peak_flops"] = Measured.of(
        [cores * flops / _on_all_cores(mm, cores) for _ in range(repeats)],
        f"{cores} matrix products at once, one per core",
    )
    say("first touch of fresh memory and the cost of a library call")
    out.update(first_touch_rates(repeats))
    out.update(allocator_reuse())
    call_seconds(1000)  # warm
    out.update(operation_weights(out["core_flops"].median, repeats))
    out["call_cost"] = Measured.of(
        [call_seconds() for _ in range(repeats)],
        f"{CALLS_PER_SAMPLE:,} calls of {len(_typical_calls())} kinds (operators, reductions, indexing, "
        "new arrays, a Python function) on 8-element numpy arrays in a Python loop, mean per call",
    )
    say("a catalogue of counted numpy lines (how far counts price them from their time)")
    out.update(counted_times())
    say("thread start and hand-off (no-op thread pools)")
    out.update(thread_costs(repeats, cores))
    return out


#: What a launch of :func:`measure_here` in its own process runs (its result as JSON on stdout).
_HERE = (
    "import json, sys\n"
    "from uml2perf.calibrate import measure_here, to_json\n"
    "ref = None if sys.argv[2] == '-' else float(sys.argv[2])\n"
    "print(json.dumps(to_json(measure_here(int(sys.argv[1]), reference_sort=ref))))\n"
)


def to_json(values: dict[str, Measured]) -> dict[str, Any]:
    return {key: {"median": m.median, "values": list(m.values), "how": m.how} for key, m in values.items()}


def _from_json(data: dict[str, Any]) -> dict[str, Measured]:
    return {
        key: Measured(
            m["median"], m["median"], m["median"], m["how"], values=tuple(m["values"] or (m["median"],))
        )
        for key, m in data.items()
    }


def measure_launches(
    repeats: int,
    launches: int,
    progress: Callable[[str], None] | None = None,
    reference_sort: float | None = None,
) -> dict[str, Measured]:
    """:func:`measure_here` in ``launches`` separate processes, pooled (:func:`pooled`).

    One launch measures in this process (the tests' way, and the quickest); more launches
    each start a fresh interpreter, which meets the machine anew (page placement, caches,
    the scheduler's choice of core).
    """
    say = progress or (lambda _m: None)
    if launches <= 1:
        return _launch(lambda: measure_here(repeats, say, reference_sort))
    runs: list[dict[str, Measured]] = []
    command = [
        sys.executable,
        "-c",
        _HERE,
        str(repeats),
        "-" if reference_sort is None else repr(reference_sort),
    ]
    env = launch_environment()
    for index in range(launches):
        say(f"kernels, memory, flop rate and thread costs: launch {index + 1} of {launches}")
        done = _launch(lambda: subprocess.run(command, capture_output=True, text=True, timeout=900, env=env))
        if done.returncode != 0:
            raise RuntimeError(f"a measurement launch failed: {done.stderr.strip()[-400:]}")
        runs.append(_from_json(json.loads(done.stdout.strip().splitlines()[-1])))
    out = {key: pooled([run[key] for run in runs], runs[0][key].how) for key in runs[0]}
    if reference_sort is None:
        out["speed"] = replace(out["speed"], median=1.0, low=1.0, high=1.0, modes="")
    return out


def measure(
    repeats: int = 11,
    progress: Callable[[str], None] | None = None,
    reference_sort: float | None = None,
    launches: int = DEFAULT_LAUNCHES,
    mpi: bool = True,
    gate: QuietGate | None = None,
) -> dict[str, Measured]:
    """Every measurement of the machine (MPI ones only with ``mpi`` and when mpi4py and mpiexec are there).

    With a ``gate``, every launch (process or ``mpiexec`` run) is quiet-checked and a launch
    disturbed by others is repeated; the gate then holds the counts for the machine file.
    """
    global _gate
    say = progress or (lambda _m: None)
    if gate is not None and gate.progress is None:
        gate.progress = say
    _gate = gate
    try:
        out = measure_launches(repeats, launches, say, reference_sort)
        if mpi:
            out.update(measure_mpi(repeats=repeats, progress=say, launches=launches))
    finally:
        _gate = None
    found = run_to_run(launch_groups(out))
    if found is not None:
        out["run_to_run"] = found
    factor = counting_factor(out)
    if factor is not None:
        out["counting_factor"] = factor
    return out


#: Keys of the catalogue's kernel times: ``"counted NAME N"`` (seconds of one run at N elements).
COUNTED_PREFIX = "counted "


def counted_times() -> dict[str, Measured]:
    """Seconds of every kernel of :data:`uml2perf.counting.COUNTED_KERNELS` at every size."""
    from .counting import counted

    return {
        f"{COUNTED_PREFIX}{key}": Measured.of([seconds], "counted numpy line")
        for key, seconds in counted().items()
    }


def counting_factor(values: dict[str, Measured]) -> Measured | None:
    """``counting_factor``: 1, with the 5th..95th percentiles of the catalogue's measured/priced times.

    Each kernel of the catalogue is priced by its counts (docs/profile.md's rules, the array
    operations' weights included) on the machine file these ``values`` make, for one process
    alone, and compared with its measured time.  The spread of the ratios is how far a count
    may be from the time on this machine; the value stays 1, so that a prediction is what its
    counts say and only its interval moves.  None without the catalogue's times or a machine
    that prices flops and bytes.
    """
    import tomllib

    from uml2perf_runtime.errors import MachineError
    from uml2perf_runtime.platform.machine import Machine

    from .counting import COUNTED_KERNELS, ratios

    times = {
        key[len(COUNTED_PREFIX) :]: m.median for key, m in values.items() if key.startswith(COUNTED_PREFIX)
    }
    sizes = tuple(sorted({int(key.rsplit(" ", 1)[1]) for key in times}))
    if not times or any(f"{k.name} {n}" not in times for k in COUNTED_KERNELS for n in sizes):
        return None
    try:
        machine = Machine.from_dict(tomllib.loads(machine_text(values)))
        weights = {
            f"{name}{suffix}": values[f"weight {name}{suffix}"].median
            for name in ARRAY_OPERATIONS
            for suffix in ("", *(size_suffix(n) for n in COMMENTED_ELEMENTS))
            if f"weight {name}{suffix}" in values
        }
        table = ratios(machine, times, sizes, weights)
    except (KeyError, MachineError, ValueError):
        return None
    found = [v for row in table.values() for v in row.values()]
    low, high = percentiles(found)
    worst = max(table, key=lambda name: max(table[name].values()))
    return Measured(
        1.0,
        min(low, 1.0),
        max(high, 1.0),
        f"measured over priced time of {len(COUNTED_KERNELS)} numpy lines at {len(sizes)} sizes counted as "
        f"docs/profile.md counts them (median {statistics.median(found):.3g}, most off: {worst}); the "
        "interval of work priced from its counts",
        values=tuple(found),
    )


# --------------------------------------------------------------------------- MPI ping-pong

PING_PONG_SIZES = [8 << k for k in range(0, 20, 1)]  # 8 B .. 4 MiB
#: The two buffer conditions of every ping-pong size: reused from earlier messages, newly allocated.
BUFFERS = ("reused", "fresh")
#: Prefix of the conditions of launches whose ranks the MPI left unbound (``--oversubscribe``).
UNBOUND = "unbound"
#: Every condition of a ping-pong size: each buffer, in launches as users start them (ranks bound
#: to cores) and in launches with the ranks unbound.
CONDITIONS = (*BUFFERS, *(f"{UNBOUND} {how}" for how in BUFFERS))

_PING_PONG = r"""
import sys, time, json, random
from mpi4py import MPI
import numpy as np
comm = MPI.COMM_WORLD
sizes = json.loads(sys.argv[1]); repeats = int(sys.argv[2]); seed = int(sys.argv[3])
random.Random(seed).shuffle(sizes)
peer = comm.rank ^ 1

def bounce(buf, size, rounds):
    for _ in range(rounds):  # in pairs: rank 2k with rank 2k + 1
        if comm.rank % 2 == 0:
            comm.Send([buf, size, MPI.BYTE], dest=peer); comm.Recv([buf, size, MPI.BYTE], source=peer)
        else:
            comm.Recv([buf, size, MPI.BYTE], source=peer); comm.Send([buf, size, MPI.BYTE], dest=peer)

out = {}
for size in sizes:
    rounds = max(4, min(200, (1 << 21) // max(size, 1)))
    kept = np.zeros(max(size, 1), dtype=np.uint8)
    bounce(kept, size, 1)
    found = {"reused": [], "fresh": []}
    for r in range(repeats):
        for how in (("reused", "fresh") if r % 2 == 0 else ("fresh", "reused")):
            buf = kept if how == "reused" else np.zeros(max(size, 1), dtype=np.uint8)
            comm.Barrier()
            start = time.perf_counter()
            bounce(buf, size, rounds)
            found[how].append(comm.allreduce((time.perf_counter() - start) / rounds / 2, op=MPI.MAX))
    out[size] = found
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


def mpiexec_command(launcher: str, ranks: int, unbound: bool = False) -> list[str]:
    """``mpiexec -n RANKS`` as a user launches a program here, ranks bound to cores where they fit.

    Open MPI binds each rank to a core when there are no more ranks than cores, and leaves them
    unbound with ``--oversubscribe``; the flag is given only when the ranks outnumber the cores
    (it is needed then) or when ``unbound`` asks for that condition (calibrate measures both).
    Run as root, Open MPI needs ``--allow-run-as-root``.
    """
    command = [launcher, "-n", str(ranks)]
    openmpi = _is_openmpi(launcher)
    if openmpi and hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-run-as-root")
    if openmpi and (unbound or ranks > (os.cpu_count() or 1)):
        command.append("--oversubscribe")
    return command


@functools.lru_cache(maxsize=8)
def _is_openmpi(launcher: str) -> bool:
    if "openmpi" in Path(launcher).resolve().as_posix().lower():
        return True
    try:
        text = subprocess.run([launcher, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "Open MPI" in text or "OpenRTE" in text


#: A ping-pong's measurements: one dict per launch, size -> condition -> repetitions (seconds).
Launches = list[dict[int, dict[str, list[float]]]]


def ping_pong_launches(
    repeats: int, launches: int, ranks: int = 2, sizes: Sequence[int] | None = None, unbound: int = 0
) -> Launches:
    """The ping-pong over ``sizes`` in ``launches`` separate ``mpiexec`` runs (sizes shuffled in each).

    Then ``unbound`` more launches with the ranks left unbound by the MPI: their conditions
    carry the :data:`UNBOUND` prefix.  A user's ``mpiexec -n 2`` binds each rank to a core; a
    launch that oversubscribes (or asks to be allowed to) does not, and then the two ranks
    sometimes share a core: small messages wait for the other rank to be scheduled, large ones
    are copied within one cache.  Both are what programs meet here, so both are measured.
    """
    found: Launches = []
    for index in range(launches + unbound):
        loose = index >= launches
        line = _run_mpi_script(
            _PING_PONG,
            ranks,
            [json.dumps(list(sizes or PING_PONG_SIZES)), str(repeats), str(1000 + index)],
            unbound=loose,
        )
        if line is None:
            continue
        measured = {int(k): v for k, v in json.loads(line).items()}
        if loose:
            measured = {k: {f"{UNBOUND} {how}": t for how, t in v.items()} for k, v in measured.items()}
        found.append(measured)
    return found


def ping_pong(
    repeats: int = 7, progress: Callable[[str], None] | None = None, launches: int = DEFAULT_LAUNCHES
) -> dict[str, Measured]:
    """The intra-node link from 2-rank ping-pongs over :data:`PING_PONG_SIZES` (empty without MPI)."""
    if mpi_available() is None:
        return {}
    unbound = max(1, launches // 2) if launches > 1 and _is_openmpi(mpi_available() or "") else 0
    if progress:
        progress(
            f"MPI ping-pong, 8 B to 4 MiB, {launches} launches with ranks bound to cores"
            + (f" and {unbound} with ranks unbound" if unbound else "")
            + " (sizes shuffled, reused and fresh buffers)"
        )
    data = ping_pong_launches(repeats, launches, unbound=unbound)
    if not data:
        return {}
    return fit_ping_pong(data)


def _cells(data: Launches | dict[int, list[float]]) -> list[tuple[str, dict[int, float]]]:
    """Per launch and buffer condition, each size's median one-way time: ``(label, {size: seconds})``.

    A plain ``{size: repetitions}`` is one launch of one condition.
    """
    if isinstance(data, dict):
        return [("launch 1", {int(s): statistics.median(v) for s, v in data.items()})]
    cells = []
    for index, launch in enumerate(data):
        for how in CONDITIONS:
            if all(how in launch[s] and launch[s][how] for s in launch):
                cells.append((f"{index + 1} {how}", {s: statistics.median(launch[s][how]) for s in launch}))
    return cells


def condition(label: str) -> str:
    """A cell label's condition: ``reused`` of ``3 reused``, ``unbound fresh`` of ``5 unbound fresh``."""
    return label.split(" ", 1)[1] if " " in label else label


def eager_step(times: dict[int, float], lowest: int = 512, highest: int = 1 << 18) -> int | None:
    """The eager limit: the size after which the one-way time steps, or None when nothing steps.

    On logarithmic scales the time of doubling sizes grows smoothly (flat where latency rules,
    slope 1 where bandwidth does); the protocol change adds a step.  The step is the pair of
    neighbouring sizes whose growth most exceeds the growth on both sides of it (the largest
    second difference of log time over the sizes), taken only where the time grows at least
    15% more than its neighbours' growth.
    """
    sizes = sorted(times)
    logs = [math.log(max(times[s], 1e-15)) for s in sizes]
    best: tuple[float, int] | None = None
    for k in range(1, len(sizes) - 2):
        if not lowest <= sizes[k] <= highest:
            continue
        grow = logs[k + 1] - logs[k]
        around = (logs[k] - logs[k - 1] + logs[k + 2] - logs[k + 1]) / 2
        score = grow - around
        if best is None or score > best[0]:
            best = (score, sizes[k])
    if best is None or best[0] < math.log(1.15):
        return None
    return best[1]


def fit_ping_pong(data: Launches | dict[int, list[float]]) -> dict[str, Measured]:
    """Latency, bandwidth, eager limit, handshake and the measured table from the ping-pong launches.

    Each size's time is the median over the launches of their medians with a reused buffer:
    the message of a program's loop goes from and into memory it used before (every message
    but its first), and the first touch of new pages is the cost of the kernel that writes
    them, which ``fit`` measures the way programs run it.  The intervals come from the same
    fits done on each launch and buffer condition alone, fresh buffers included (a program
    that receives into new arrays meets them).  Launches with the ranks unbound are in
    neither: a user's ``mpiexec -n 2`` binds them; they are named among the modes.
    """
    cells = _cells(data)
    sizes = sorted(set.intersection(*(set(c) for _, c in cells)))
    steady = [c for label, c in cells if condition(label) == "reused"] or [c for _, c in cells]
    med = {s: statistics.median(c[s] for c in steady) for s in sizes}
    found = eager_step(med)
    eager = found if found is not None else _knee(med)
    eagers = [e for _, c in cells if (e := eager_step(c)) is not None]
    following = [s for s in sizes if s > eager]
    ratio = med[following[0]] / med[eager] if following else 1.0
    small = [s for s in sizes if s <= eager]
    large = [s for s in sizes if s > eager]

    def line(times: dict[int, float], chosen: list[int]) -> tuple[float, float]:
        x = np.array(chosen, float)
        y = np.array([times[s] for s in chosen])
        slope, intercept = np.polyfit(x, y, 1, w=1 / y)
        return max(float(intercept), 1e-9), (1 / float(slope) if slope > 0 else float("inf"))

    bound = [(label, c) for label, c in cells if not condition(label).startswith(UNBOUND)] or cells

    def keyed(pick: Callable[[dict[int, float]], float], how: str, unit: str = "s") -> Measured:
        each = [pick(c) for _, c in cells]
        finite = [pick(c) for _, c in bound]
        finite = [v for v in finite if math.isfinite(v)]
        value = pick(med)
        m = Measured.across_launches(finite or [value], how, value=value)
        if len(cells) > 1:
            m.modes = modes_of([(label, v) for (label, _), v in zip(cells, each, strict=True)], unit)
        return m

    has_small, has_large = len(small) >= 2, len(large) >= 2
    out = {
        "latency": keyed(
            lambda t: line(t, small)[0] if has_small else t[sizes[0]],
            f"ping-pong, one way, line over {small[0]}..{small[-1]} B",
        ),
        "bandwidth": keyed(
            lambda t: line(t, large)[1] if has_large else math.inf,
            f"ping-pong, one way, slope over {large[0] if large else '-'}..{large[-1] if large else '-'} B",
            "B/s",
        ),
        "eager_limit": _sizes_measured(
            eagers or [eager],
            f"the one-way time steps after {eager} B (the next size takes {ratio:.2f}x as long: "
            f"{med[eager] * 1e6:.3g} us to {med[following[0]] * 1e6 if following else 0:.3g} us)"
            if found is not None
            else f"no step in the one-way time: knee of the best split into two lines after {eager} B",
            value=float(eager),
        ),
        "rendezvous_latency": keyed(
            lambda t: line(t, large)[0] if has_large else t[sizes[0]],
            "intercept of the line above the eager limit",
        ),
        "eager_bandwidth": keyed(
            lambda t: line(t, small)[1] if has_small else math.inf,
            "slope of the line up to the eager limit",
            "B/s",
        ),
    }
    out.update(_handshake_and_table(cells, med, eager, bound))
    return out


def _sizes_measured(sizes: Sequence[float], how: str, value: float) -> Measured:
    """A size found per launch: the value, and the 5th..95th percentiles among the sizes found."""
    low, high = percentiles(sizes, nearest=True)
    return Measured(value, min(low, value), max(high, value), how, values=tuple(float(s) for s in sizes))


def _knee(med: dict[int, float]) -> int:
    """The split into two ``alpha + n*beta`` lines (below / above) with the smallest relative error."""
    sizes = sorted(med)

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
    return min(scored)[1] if scored else 65536


def _handshake(times: dict[int, float], eager: int) -> float:
    sizes = sorted(times)
    above = [s for s in sizes if s > eager][:3]
    if len(above) < 2:
        return 0.0
    slope, intercept = np.polyfit(np.array(above, float), np.array([times[s] for s in above]), 1)
    return max(0.0, float(intercept) - times[sizes[0]])


def _table(times: dict[int, float], eager: int, handshake: float) -> list[tuple[float, float]]:
    """``(size, one-way seconds)``: non-decreasing each side of the eager limit, less the handshake above."""
    points: list[tuple[float, float]] = []
    floor = {False: 0.0, True: 0.0}
    for s in sorted(times):
        rendezvous = s > eager
        t = max(times[s] - (handshake if rendezvous else 0.0), floor[rendezvous], 1e-12)
        floor[rendezvous] = t
        points.append((float(s), t))
    return points


def _handshake_and_table(
    cells: list[tuple[str, dict[int, float]]],
    med: dict[int, float],
    eager: int,
    bound: list[tuple[str, dict[int, float]]] | None = None,
) -> dict[str, Measured]:
    """The rendezvous handshake and the link's measured table (handshake taken out above the limit).

    The handshake is what a rendezvous message pays beyond an eager one of no size: the
    intercept of the line through the first sizes above the eager limit, less the time of the
    smallest message.  The table is each size's median one-way time, made non-decreasing on
    each side of the eager limit (a larger message never takes less time; repetitions on a
    shared machine sometimes say otherwise), less the handshake above the limit.  Each size's
    spread is its interval's width over its time, and its modes are kept for the comment.
    """
    bound = bound or cells
    sizes = sorted(med)
    above = [s for s in sizes if s > eager][:3]
    handshake = _handshake(med, eager)
    how_hs = (
        f"intercept of the ping-pong line over {above[0]}..{above[-1]} B (first rendezvous sizes) "
        f"less the one-way time of {sizes[0]} B ({med[sizes[0]] * 1e6:.3g} us)"
        if len(above) >= 2
        else "no sizes above the eager limit were measured"
    )
    table = _table(med, eager, handshake)
    points = []
    size_modes = []
    for (size, t), s in zip(table, sizes, strict=True):
        low, high = percentiles([c[s] for _, c in bound])
        points.append((size, t, (high - low) / med[s] if med[s] else 0.0))
        found = modes_of([(label, c[s]) for label, c in cells])
        if found:
            size_modes.append(f"{s} B: {found}")
    worst = max((p[2] for p in points), default=0.0)
    return {
        "handshake": Measured.across_launches(
            [_handshake(c, eager) for _, c in bound], how_hs, value=handshake
        ),
        "link_table": Measured(
            med[sizes[0]],
            med[sizes[0]],
            med[sizes[0]],
            f"median over the launches of each size's median one-way ping-pong time with a reused "
            f"buffer ({len(sizes)} sizes, {sizes[0]}..{sizes[-1]} B, in shuffled order); 5th..95th "
            f"percentiles of {len(cells)} launches and buffer conditions up to {worst * 100:.0f}% of "
            "the time apart",
            tuple(points),
            modes=" | ".join(size_modes),
            cells=tuple((label, tuple(_table(c, eager, _handshake(c, eager)))) for label, c in cells),
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


#: Sizes (bytes) after which a link range may end, besides the eager limit: every factor of 4.
RANGE_CUTS = frozenset(float(4**k) for k in range(4, 13))  # 256 B .. 16 MiB
#: A link range is added only when it divides the fit's squared relative error by at least this.
RANGE_GAIN = 2.0


def link_ranges(
    points: tuple[tuple[float, float, float], ...], eager: float, max_ranges: int = 6, target: float = 0.03
) -> list[tuple[float, float, float]]:
    """``(up_to, latency, seconds per byte)`` ranges fitted to measured ``(size, seconds, _)`` points.

    A segmented regression: the sizes are cut into consecutive ranges, each priced by its own
    line (:func:`_line_fit`), never across the eager limit (the protocols are different
    curves); the cuts minimise the squared relative error (dynamic programming over the
    measured sizes).  A range ends only at one of :data:`RANGE_CUTS` or at the eager limit, so
    that two calibrations cut their tables at the same sizes and their ranges can be compared
    key by key (free cuts follow the noise of the measurement).  Ranges are added, up to
    ``max_ranges``, while the root-mean-square relative error is above ``target`` and each new
    range at least halves the squared error: a missed change of slope does that, the noise of
    the measured points does not, so noisier measurements do not get more ranges.  A range
    covers the sizes up to its last measured size; the sizes between two ranges take the upper
    one's line; the last range has no bound.
    """
    pts = sorted((float(s), float(t)) for s, t, _ in points)
    n = len(pts)
    cache: dict[tuple[int, int], tuple[float, float, float]] = {}
    ends = {j for j in range(1, n + 1) if j == n or pts[j - 1][0] in RANGE_CUTS or pts[j - 1][0] == eager}

    def fit(i: int, j: int) -> tuple[float, float, float]:  # points i..j-1
        if (i, j) not in cache:
            crosses = pts[i][0] <= eager < pts[j - 1][0]
            alone = j - i < 2 and n > 1  # a line through one point says nothing of the sizes around it
            cache[(i, j)] = (0.0, 0.0, math.inf) if crosses or alone else _line_fit(pts[i:j])
        return cache[(i, j)]

    best: list[list[tuple[float, list[int]]]] = [[(math.inf, [])] * (n + 1) for _ in range(max_ranges + 1)]
    best[0][0] = (0.0, [])
    for k in range(1, max_ranges + 1):
        for j in sorted(ends):
            options = [
                (best[k - 1][i][0] + fit(i, j)[2], [*best[k - 1][i][1], j])
                for i in range(j)
                if best[k - 1][i][0] < math.inf
            ]
            best[k][j] = min(options, default=(math.inf, []), key=lambda o: o[0])
    chosen: list[int] = []
    error = math.inf
    for k in range(1, max_ranges + 1):
        total, cuts = best[k][n]
        if total == math.inf:
            continue
        if chosen and (math.sqrt(error / n) <= target or total > error / RANGE_GAIN):
            break  # good enough, or one more range would only follow the noise
        chosen, error = cuts, total
    ranges = []
    start = 0
    for end in chosen:
        alpha, beta, _ = fit(start, end)
        ranges.append((pts[end - 1][0], alpha, beta))
        start = end
    ranges[-1] = (math.inf, ranges[-1][1], ranges[-1][2])
    return ranges


# --------------------------------------------------------------------------- MPI allreduce

ALLREDUCE_SIZES = [8, 64, 512, 4096, 32768, 131072, 524288, 1 << 20, 1 << 22]
#: Bytes the allreduce's buffers rotate through: more than the last-level caches hold, so the
#: reduced data comes from memory (a reduction in cache costs a fraction of one from memory).
ROTATE_BYTES = 96 << 20
#: Message size of the crowded ping-pong that measures the wake-up.
WAKEUP_SIZE = 8

_ALLREDUCE = r"""
import sys, time, json, random
from mpi4py import MPI
import numpy as np
comm = MPI.COMM_WORLD
sizes = json.loads(sys.argv[1]); repeats = int(sys.argv[2]); seed = int(sys.argv[3])
rotate = int(sys.argv[4])
random.Random(seed).shuffle(sizes)
out = {}
for size in sizes:
    count = max(1, min(16384, rotate // max(size, 1)))
    sends = [np.ones(max(size // 8, 1)) for _ in range(count)]
    recvs = [np.ones_like(sends[0]) for _ in range(count)]  # touched: no page faults in the timing
    rounds = max(4, min(200, (1 << 21) // max(size, 1)))
    comm.Allreduce(sends[0], recvs[0])
    times = []
    k = 0
    for _ in range(repeats):
        comm.Barrier()
        start = time.perf_counter()
        for _ in range(rounds):
            comm.Allreduce(sends[k % count], recvs[k % count])
            k += 1
        times.append(comm.allreduce((time.perf_counter() - start) / rounds, op=MPI.MAX))
    out[size] = times
    del sends, recvs
if comm.rank == 0:
    print(json.dumps(out))
"""


def _run_mpi_script(
    source: str, ranks: int, args: list[str], timeout: float = 120, unbound: bool = False
) -> str | None:
    """Run a Python script under mpiexec; its last line of output, or None when it failed."""
    launcher = mpi_available()
    if launcher is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "measure.py"
        script.write_text(source)
        argv = mpiexec_command(launcher, ranks, unbound) + [sys.executable, str(script), *args]
        try:
            done = _launch(lambda: subprocess.run(argv, capture_output=True, text=True, timeout=timeout))
        except (OSError, subprocess.SubprocessError):
            return None
    if done.returncode != 0 or not done.stdout.strip():
        return None
    return done.stdout.strip().splitlines()[-1]


def allreduce_launches(
    repeats: int = 7, launches: int = DEFAULT_LAUNCHES, rotate: int = ROTATE_BYTES
) -> list[dict[int, list[float]]]:
    """Seconds per ``MPI_Allreduce`` (sum of doubles) on 2 ranks, by size, per launch (sizes shuffled).

    The buffers rotate through ``rotate`` bytes (0: one pair of buffers reduced again and again,
    as a program's loop reduces the buffer it just computed).
    """
    found = []
    for index in range(launches):
        line = _run_mpi_script(
            _ALLREDUCE,
            2,
            [
                json.dumps(ALLREDUCE_SIZES),
                str(repeats),
                str(2000 + index + (0 if rotate else 100)),
                str(rotate),
            ],
        )
        if line is not None:
            found.append({int(k): v for k, v in json.loads(line).items()})
    return found


def crowded_ping_pong(repeats: int = 7, launches: int = DEFAULT_LAUNCHES) -> dict[str, Measured]:
    """``[network] wakeup``: what a message adds when two ranks share every core.

    The ping-pong of :data:`WAKEUP_SIZE` bytes runs in pairs on twice as many ranks as cores
    (the machine oversubscribed), so a rank waiting for its message shares its core with
    another rank; the one-way time less the one-way time of two ranks on their own cores is
    the wake-up.  Each launch pairs one oversubscribed and one plain run; the median over
    the launches is the value.  Empty without MPI.
    """
    cores = os.cpu_count() or 1
    alone: list[float] = []
    crowded: list[float] = []
    for index in range(launches):
        for ranks, into in ((2, alone), (2 * cores, crowded)):
            line = _run_mpi_script(_PING_PONG, ranks, [json.dumps([WAKEUP_SIZE]), str(repeats), str(index)])
            if line is not None:
                into.append(statistics.median(json.loads(line)[str(WAKEUP_SIZE)]["reused"]))
    if not alone or not crowded:
        return {}
    t_alone, t_crowded = statistics.median(alone), statistics.median(crowded)
    each = [max(0.0, c - a) for c, a in zip(crowded, alone, strict=False)]
    how = (
        f"one-way ping-pong of {WAKEUP_SIZE} B in pairs on {2 * cores} ranks ({t_crowded * 1e6:.3g} us, "
        f"two ranks per core) less on 2 ranks ({t_alone * 1e6:.3g} us), medians of {len(crowded)} launches"
    )
    m = Measured.across_launches(each, how, value=max(0.0, t_crowded - t_alone))
    m.modes = modes_of([(f"launch {i + 1}", v) for i, v in enumerate(crowded)])
    return {"wakeup": m}


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
    sizes = sorted(data)
    med = np.array([statistics.median(data[s]) for s in sizes])
    net, reduced = _allreduce_parts(sizes, network, algorithm)
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
    spread = max((max(data[s]) - min(data[s])) / statistics.median(data[s]) for s in sizes)
    how = (
        f"2-rank MPI_Allreduce of {sizes[0]}..{sizes[-1]} B ({len(sizes)} sizes, median of the "
        f"launches' medians, which differ by up to {spread * 100:.0f}%): time beyond the messages of the "
        f"{algorithm} algorithm, fitted as "
        f"overhead + reduce_cost * reduced bytes (fit error mean {errors.mean() * 100:.0f}%, "
        f"max {errors.max() * 100:.0f}%)"
    )
    return _CollectiveFit(algorithm, overhead, gamma, float(np.sqrt(np.mean(errors**2))), how)


def collective_costs(launches: list[dict[int, list[float]]], network: str) -> dict[str, Measured]:
    """Overhead and reduction cost from the allreduce launches: the best algorithm on the medians.

    The value is the fit to each size's median over the launches' medians; the interval comes
    from the same algorithm fitted to each launch alone.
    """
    sizes = sorted(set.intersection(*(set(run) for run in launches)))
    middles = {s: [statistics.median(run[s]) for run in launches] for s in sizes}
    best = fit_collective_algorithm(middles, network)
    algorithm = best["collective_overhead"].choice or "auto"
    if len(launches) < 2:
        return best
    each = [_collective_fit({s: run[s] for s in sizes}, network, algorithm) for run in launches]
    out = {}
    for key, pick in (("collective_overhead", "overhead"), ("reduce_cost", "reduce_cost")):
        m = best[key]
        values = [getattr(fit, pick) for fit in each]
        spread = Measured.across_launches(values, m.how, value=m.median)
        out[key] = replace(m, low=spread.low, high=spread.high, values=spread.values)
    return out


def cached_reduce_cost(
    launches: list[dict[int, list[float]]], network: str, algorithm: str, overhead: float
) -> Measured:
    """``reduce_cost`` of buffers reused in a loop (in cache): the allreduce with one pair of buffers.

    The per-call overhead is the one fitted with buffers from memory (the same calls, the same
    MPI); what the reused buffers change is the cost of combining, so only that is fitted, on
    relative errors, to each size's median over the launches, and to each launch alone for the
    interval.
    """
    sizes = sorted(set.intersection(*(set(run) for run in launches)))

    def fitted(data: dict[int, list[float]]) -> tuple[float, float]:
        net, reduced = _allreduce_parts(sorted(data), network, algorithm)
        med = np.array([statistics.median(data[s]) for s in sorted(data)])
        rest, weights = med - net - overhead, 1.0 / med
        column = reduced * weights
        gamma = max(0.0, float(column @ (rest * weights)) / float(column @ column))
        errors = np.abs(net + overhead + gamma * reduced - med) / med
        return gamma, float(errors.max())

    middles = {s: [statistics.median(run[s]) for run in launches] for s in sizes}
    gamma, worst = fitted(middles)
    how = (
        f"the same allreduce with one pair of buffers reduced again and again ({len(sizes)} sizes, "
        f"{sizes[0]}..{sizes[-1]} B, {algorithm} algorithm, the overhead above): time beyond the messages "
        f"and the overhead per reduced byte (fit error up to {worst * 100:.0f}%)"
    )
    if len(launches) < 2:
        return Measured(gamma, gamma, gamma, how)
    each = [fitted({s: run[s] for s in sizes})[0] for run in launches]
    spread = Measured.across_launches(each, how, value=gamma)
    return replace(spread, median=gamma, low=min(spread.low, gamma), high=max(spread.high, gamma))


def _allreduce_parts(sizes: list[int], network: str, algorithm: str) -> tuple[np.ndarray, np.ndarray]:
    """Per size: the allreduce's time in messages alone, and its reduced bytes (the seconds at gamma 1)."""
    import tomllib

    from uml2perf_runtime.platform.machine import Machine
    from uml2perf_runtime.platform.network import CollectiveModel

    table = tomllib.loads('name = "fit"\nnodes = 1\ncores_per_node = 2\n' + network)
    table.pop("collectives", None)
    if algorithm != "auto":
        table["collectives"] = {"allreduce": algorithm}
    machine = Machine.from_dict(table)
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
    return net, np.array([reducing.duration("allreduce", 0, s) for s in sizes]) - net


def measure_mpi(
    repeats: int = 7, progress: Callable[[str], None] | None = None, launches: int = DEFAULT_LAUNCHES
) -> dict[str, Measured]:
    """Every MPI measurement: the ping-pong's links, then the allreduce's per-call costs, then the wake-up."""
    out = ping_pong(repeats=repeats, progress=progress, launches=launches)
    if not out:
        return out
    if progress:
        progress(f"MPI allreduce, 8 B to 4 MiB, {launches} launches (buffers rotating beyond the caches)")
    data = allreduce_launches(repeats=repeats, launches=launches)
    if data:
        out.update(collective_costs(data, network_text(out, collectives=False)))
        sizes = sorted(set.intersection(*(set(run) for run in data)))
        out["reduce_cost"] = replace(
            out["reduce_cost"], series=tuple(tuple(statistics.median(run[s]) for run in data) for s in sizes)
        )
        if progress:
            progress(f"MPI allreduce, 8 B to 4 MiB, {launches} launches (one pair of buffers, reused)")
        reused = allreduce_launches(repeats=repeats, launches=launches, rotate=0)
        if reused:
            out["reduce_cost_cached"] = cached_reduce_cost(
                reused,
                network_text(out, collectives=False),
                out["collective_overhead"].choice or "auto",
                out["collective_overhead"].median,
            )
    if progress:
        progress(f"MPI ping-pong with two ranks per core, {launches} launches")
    out.update(crowded_ping_pong(repeats=repeats, launches=launches))
    return out


# --------------------------------------------------------------------------- run to run

#: Keys measured per launch as rates (more is faster): their launches' times go as 1 / value.
RATE_KEYS = ("core_bandwidth", "memory_bandwidth", "core_flops", "peak_flops")


def launch_groups(values: dict[str, Measured]) -> list[list[tuple[float, ...]]]:
    """Seconds of every case measured in several launches, grouped by the launches that measured them.

    A group is one series of launches (separate processes or ``mpiexec`` runs); in it, each case
    is a tuple with one value per launch, in launch order, so that the cases' values at the same
    index come from the same launch.  Groups: the rate keys (as ``1 / rate``: the in-process
    launches), the ping-pong sizes of both buffers in the launches as users start them, the same
    in the launches with unbound ranks, the allreduce sizes.
    """
    groups: list[list[tuple[float, ...]]] = [
        [tuple(1.0 / v for v in values[key].launches if v > 0) for key in RATE_KEYS if key in values]
    ]
    if "link_table" in values:
        cells = values["link_table"].cells
        for conditions in (BUFFERS, tuple(f"{UNBOUND} {how}" for how in BUFFERS)):
            group: list[tuple[float, ...]] = []
            for how in conditions:
                tables = [dict(table) for label, table in cells if condition(label) == how]
                for size in sorted(set.intersection(*(set(t) for t in tables)) if tables else ()):
                    group.append(tuple(t[size] for t in tables))
            groups.append(group)
    if "reduce_cost" in values:
        groups.append(list(values["reduce_cost"].series))
    return [group for group in groups if group]


def launch_series(values: dict[str, Measured]) -> list[tuple[float, ...]]:
    """Every case of :func:`launch_groups`, one tuple per case, one value per launch."""
    return [case for group in launch_groups(values) for case in group]


def run_to_run(groups: Sequence[Sequence[Sequence[float]]]) -> Measured | None:
    """How much one launch of a whole program runs faster or slower than its typical launch.

    What moves every operation of a run at once (the cores a launch is given, where its pages
    land, what else runs) moves every case a launch measured: per launch, the median over its
    group's cases of each case's deviation from the case's median launch (on logarithms) is
    that launch's factor.  A case that alone jumps between modes (a message size that runs in
    two modes) moves its own key's interval, not this factor.  The interval is where one more
    launch's factor falls (:func:`launch_interval` over the factors of every group); the value
    is 1, since the keys hold the typical launch.  None when fewer than 3 launches of 4 cases
    were measured.
    """
    factors: list[float] = []
    cases = 0
    for group in groups:
        usable = [[t for t in case if t > 0 and math.isfinite(t)] for case in group]
        usable = [case for case in usable if len(case) >= 3]
        if not usable:
            continue
        launches = min(len(case) for case in usable)
        logs = np.log(np.array([case[:launches] for case in usable]))
        deviations = logs - np.median(logs, axis=1, keepdims=True)
        factors += [math.exp(v) for v in np.median(deviations, axis=0)]
        cases += len(usable)
    if cases < 4 or len(factors) < 3:
        return None
    low, high = launch_interval(factors)
    return Measured(
        1.0,
        min(low, 1.0),
        max(high, 1.0),
        f"each launch's median deviation over the cases it measured from their median launches, "
        f"{len(factors)} launches measuring {cases} cases (kernels, ping-pong sizes and buffers, "
        f"allreduce sizes)",
        values=tuple(factors),
    )


# --------------------------------------------------------------------------- machine file


def number_text(m: Measured, digits: int = 4) -> str:
    """``{ value = V, low = L, high = H }`` of a key, or the plain value when it has no spread."""
    value = f"{m.median:.{digits}g}"
    low, high = f"{m.low:.{digits}g}", f"{m.high:.{digits}g}"
    if low == value == high or not (math.isfinite(m.low) and math.isfinite(m.high)):
        return value
    return f"{{ value = {value}, low = {low}, high = {high} }}"


def _note(m: Measured) -> str:
    return f"; modes: {m.modes}" if m.modes else ""


def _range_intervals(
    cells: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    low: float,
    up_to: float,
    value: tuple[float, float],
) -> tuple[Measured, Measured | None]:
    """A range's latency and bandwidth with intervals: how far each launch's times lie from the line.

    A range holds a few sizes, and its line fitted to each launch alone traded latency against
    slope: drawn independently, those latencies and bandwidths made intervals hundreds of times
    the time.  Instead, at each size of the range, each launch and buffer condition (launches
    with unbound ranks left out: they are modes of the comments) gives the ratio of its time to
    the line's, and :func:`launch_interval` says where another launch's ratio falls; the widest
    of these over the range's sizes scales the latency and divides the bandwidth.  A message in
    the range then moves by at most the factor its sizes were seen to move, however the two are
    drawn, and a slow mode at some of the sizes still widens the interval.
    """
    alpha, beta = value
    by_size: dict[float, list[float]] = {}
    for label, table in cells:
        if condition(label).startswith(UNBOUND):
            continue
        for size, t in table:
            if low < size <= up_to and alpha + size * beta > 0:
                by_size.setdefault(size, []).append(t / (alpha + size * beta))
    f_low, f_high = 1.0, 1.0
    for ratios in by_size.values():
        if len(ratios) > 1:
            r_low, r_high = launch_interval(ratios)
            f_low, f_high = min(f_low, r_low), max(f_high, r_high)
    f_low = max(f_low, 1e-3)  # a launch 1000 times faster than the line is no launch
    every = tuple(r for ratios in by_size.values() for r in ratios)
    latency = Measured(alpha, alpha * f_low, alpha * f_high, "", values=every)
    if beta <= 0:
        return latency, None
    bandwidth = Measured(1.0 / beta, 1.0 / (beta * f_high), 1.0 / (beta * f_low), "", values=every)
    return latency, bandwidth


def network_text(values: dict[str, Measured], collectives: bool = True) -> str:
    """The machine file's ``[network]`` (and ``[collectives]``) tables from the MPI measurements."""
    eager_m = values["eager_limit"]
    eager = int(eager_m.median)
    eager_m = replace(eager_m, low=float(int(eager_m.low)), high=float(int(eager_m.high)))
    lines = [
        "[network]",
        f"eager_limit = {number_text(eager_m, 10)}  # bytes; {eager_m.how}"
        + (f"; per launch and buffer: {sorted({int(v) for v in eager_m.values})}" if eager_m.values else ""),
    ]
    if "wakeup" in values:
        w = values["wakeup"]
        lines.append(f"wakeup = {number_text(w)}  # seconds; {w.how}{_note(w)}")
    table_m = values["link_table"]
    lines += [
        "",
        "# one line per message-size range: a message of n bytes up to 'up_to' takes latency + n/bandwidth;",
        "# each range's line is fitted to the measured one-way ping-pong times in it",
        "# (" + table_m.how + "),",
        "# less the handshake above the eager limit; its interval: where another launch's time at each size",
        "# of the range lies from the line (ratios of each bound launch and buffer condition; the widest",
        f"# over the range's sizes); single line for reference: latency {values['latency'].median:.4g} s, "
        f"bandwidth {values['bandwidth'].median:.4g} B/s",
    ]
    if table_m.modes:
        lines.append(
            "# sizes whose times fall into separate modes (one-way time in which launches and buffers):"
        )
        lines += [f"#   {text}" for text in table_m.modes.split(" | ")]
    hs = values["handshake"]
    lines += [
        "[network.intra_node]",
        f"handshake = {number_text(hs)}  # seconds; {hs.how}{_note(hs)}",
        "ranges = [",
    ]
    table = table_m.points
    low = 0.0
    for up_to, alpha, beta in link_ranges(table, eager):
        inside = [(size, t, spread) for size, t, spread in table if low < size <= up_to]
        latency, bandwidth = _range_intervals(table_m.cells, low, up_to, (alpha, beta))
        low = up_to
        shown_bw = "inf" if bandwidth is None else number_text(bandwidth, 6)
        head = (
            "  { "
            + ("" if up_to == math.inf else f"up_to = {int(up_to)}, ")
            + f"latency = {number_text(latency, 6)}, "
        )
        worst = max((abs(alpha + size * beta - t) / t for size, t, _ in inside), default=0.0)
        spread = max((sp for _, _, sp in inside), default=0.0)
        note = (
            f"  # fitted to {len(inside)} sizes {int(inside[0][0])}..{int(inside[-1][0])} B: "
            f"error up to {worst * 100:.0f}%, 5th..95th percentiles up to {spread * 100:.0f}% apart"
        )
        lines.append(head + f"bandwidth = {shown_bw} }}," + note)
    lines.append("]")
    lines.append("# measured one-way times (handshake taken out above the eager limit), bytes: seconds")
    for k in range(0, len(table), 5):
        lines.append("#   " + ", ".join(f"{int(size)}: {t:.4g}" for size, t, _ in table[k : k + 5]))
    if collectives and "collective_overhead" in values:
        o, g = values["collective_overhead"], values["reduce_cost"]
        lines += ["", "[collectives]", f"overhead = {number_text(o)}  # seconds per call; {o.how}"]
        cached = values.get("reduce_cost_cached")
        if cached is None:
            lines.append(f"reduce_cost = {number_text(g)}  # seconds per reduced byte; " + g.how)
        else:
            lines += [
                "# seconds per reduced byte: buffers a loop reduces again and again (in cache) up to the",
                "# largest size measured so, buffers from memory beyond",
                "reduce_cost = [",
                f"  {{ up_to = {max(ALLREDUCE_SIZES)}, cost = {number_text(cached)} }},  # {cached.how}",
                f"  {{ cost = {number_text(g)} }},  # buffers rotating beyond the caches: {g.how}",
                "]",
            ]
        algorithm = o.choice
        if algorithm and algorithm != "auto":
            lines.append(
                f'allreduce = "{algorithm}"  # the algorithm whose model fits the measured allreduce best'
            )
    return "\n".join(lines) + "\n"


def caches_measured(values: dict[str, Measured]) -> list[int]:
    """The working sets at which the cached triad was measured on one core and on all cores."""
    return [
        size
        for size in CACHE_WORKING_SETS
        if f"cache_core {size}" in values and f"cache_node {size}" in values
    ]


def caches_text(values: dict[str, Measured]) -> str:
    """The ``[caches]`` table: one row per measured working set, bandwidths with their intervals."""
    lines = [
        "# cache-aware roofline: an action whose working set (its footprint, by default its bytes)",
        "# fits in 'up_to' bytes per core streams at these rates instead of the memory's: a triad",
        "# swept again and again over arrays of that size, on one core alone and on all cores at once",
        "[caches]",
        "levels = [",
    ]
    for size in caches_measured(values):
        alone, node = values[f"cache_core {size}"], values[f"cache_node {size}"]
        lines.append(
            f"  {{ up_to = {size}, core_bandwidth = {number_text(alone)}, bandwidth = {number_text(node)} }},"
            f"  # bytes/s; {_launches_note(alone)}"
        )
    return "\n".join([*lines, "]"]) + "\n"


def host_text(values: dict[str, Measured]) -> list[str]:
    """``first_touch`` and ``call_cost``: the host costs of actions.

    ``first_touch`` is one number when the allocation sizes measured agree (their intervals
    overlap), and ranges by allocation size when they do not (a machine that backs large
    allocations with huge pages).
    """
    blocks = [block for block in FIRST_TOUCH_BLOCKS if f"first_touch {block}" in values]
    lines: list[str] = []
    if blocks:
        lines += [
            "",
            "# an action's 'fresh' bytes (memory it allocates anew and writes) cost this much beyond",
            "# the write, by the size of each allocation; its 'calls' cost call_cost each",
        ]
        found = [values[f"first_touch {block}"] for block in blocks]
        if "first_touch" in values and all(
            m.low <= other.high and other.low <= m.high for m in found for other in found
        ):
            m = values["first_touch"]
            lines.append(f"first_touch = {number_text(m)}  # bytes/s; {m.how}{_note(m)}")
        else:
            lines.append("first_touch = [")
            for index, (block, m) in enumerate(zip(blocks, found, strict=True)):
                bound = (
                    "" if index == len(blocks) - 1 else f"up_to = {_range_bound(block, blocks[index + 1])}, "
                )
                lines.append(f"  {{ {bound}bandwidth = {number_text(m)} }},  # bytes/s; {m.how}{_note(m)}")
            lines.append("]")
    if "call_cost" in values:
        m = values["call_cost"]
        lines.append(f"call_cost = {number_text(m, 3)}  # seconds; {m.how}{_note(m)}")
    if "counting_factor" in values:
        m = values["counting_factor"]
        lines.append(f"counting_factor = {number_text(m, 3)}  # factor; {m.how}")
    return lines


def allocator_text(values: dict[str, Measured]) -> list[str]:
    """The ``[allocator]`` table: when an action's ``fresh`` bytes are new pages."""
    if "reuse_below" not in values:
        return []
    reuse = values["reuse_below"]
    lines = [
        "",
        "# a loop's temporaries come back from the allocator without new pages while an action's",
        "# 'fresh' bytes stay below reuse_below times its 'allocation', and its blocks below mapped_from",
        "[allocator]",
        f"reuse_below = {number_text(reuse)}  # blocks; {reuse.how}",
    ]
    if "mapped_from" in values:
        mapped = values["mapped_from"]
        lines.append(f"mapped_from = {int(mapped.median)}  # bytes; {mapped.how}")
    return lines


def _range_bound(block: int, following: int) -> int:
    """Where the range of a measured allocation size ends: just below the huge-page advice when
    the next size is above it (the page size changes there), else halfway to the next size."""
    if block < HUGE_PAGE_ADVICE <= following:
        return HUGE_PAGE_ADVICE - 1
    return (block + following) // 2


def _launches_note(m: Measured) -> str:
    """How many launches a key pools (its method is in the table's header), and its modes."""
    count = max(1, len(m.launches))
    return f"{count} launch{'es' if count > 1 else ''}{_note(m)}"


def variability_text(m: Measured) -> str:
    """The ``[variability]`` table: the factor by which a whole run moves from launch to launch."""
    return (
        "# a whole run's time varies from launch to launch by this factor: 'uml2perf run' draws it\n"
        "# into the prediction interval (the prediction itself is the typical launch, factor 1)\n"
        "[variability]\n"
        f"run_to_run = {number_text(m)}  # factor; {m.how}\n"
    )


def machine_text(values: dict[str, Measured], name: str = "calibrated", gate: QuietGate | None = None) -> str:
    """A machine file whose comments say how each number was measured (and, with ``gate``, how quietly)."""
    cores = os.cpu_count() or 1

    def key(label: str, key: str, unit: str) -> str:
        m = values[key]
        return f"{label} = {number_text(m)}  # {unit}; {m.how}{_note(m)}"

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    speed = values["speed"]
    lines = [
        f"# Machine file written by 'uml2perf calibrate' on {time.strftime('%Y-%m-%d %H:%M:%S')}",
        f"# load average at the start: {load:.2f} on {cores} cores"
        + (
            "  (LOADED: numbers below may be pessimistic; calibrate again when the machine is quiet)"
            if load > 0.5 * cores
            else ""
        ),
        *([f"# {gate.describe()}"] if gate is not None else []),
        "# measured keys: { value = median of independent launches, low/high = where one more launch's",
        "# value falls nine times in ten (5th/95th percentiles) }; 'uml2perf run' predicts at the values",
        "# and draws samples through the intervals for its prediction interval",
        f'name = "{name}"',
        "nodes = 1",
        f"cores_per_node = {cores}",
        f"speed = {number_text(speed)}  # {speed.how}",
        "",
        "",
        "# roofline: flop/s of one core, bytes/s of the node's memory (shared) and of one core alone",
        key("peak_flops", "core_flops", "flop/s"),
        key("memory_bandwidth", "memory_bandwidth", "bytes/s"),
        key("core_bandwidth", "core_bandwidth", "bytes/s"),
        f"# all cores at once: {number_text(values['peak_flops'])} flop/s; {values['peak_flops'].how}",
        *weights_text(values),
        *host_text(values),
        *([""] + caches_text(values).rstrip("\n").splitlines() if caches_measured(values) else []),
        *allocator_text(values),
        *operations_text(values),
        "",
        "# thread costs (seconds) of task pools and pipelines that give no startup/handoff/overhead tags",
        threads_section(values).rstrip("\n"),
    ]
    if "run_to_run" in values:
        lines += ["", variability_text(values["run_to_run"]).rstrip("\n")]
    if "latency" in values:
        lines += ["", network_text(values).rstrip("\n")]
    else:
        lines += [
            "",
            "# no MPI measurement: mpi4py or mpiexec is not installed (pip install 'uml2perf[mpi]');",
            "# the runtime's default intra-node link applies",
        ]
    return "\n".join(lines) + "\n"
