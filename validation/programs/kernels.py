"""The numpy kernels of the thread cases and the real programs that run them.

The programs: a task pool (the standard thread pool), a two-stage pipeline
(one thread per stage, a queue between them), a pipeline whose stages are
pools of T threads each, and a pool of T workers each running a pipeline
over its share of the items.  Every program keeps the results of its last
stage (a fresh array per item), as real programs do; a first stage's
results are handed on and freed once the next stage made its own.  Each
run starts as a new program would, with the memory earlier runs freed given
back to the system (:func:`fresh_memory`): otherwise a run's time would
depend on which runs came before it in this process.

:func:`micro` times one kernel the way a program runs it: in worker
threads (as many at once as the program keeps busy, at most one per core),
results kept (inside a fresh thread pool, as the pools run them) or handed on.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from queue import SimpleQueue
from threading import Thread
from typing import Any

import numpy as np

KERNELS = {
    "sort": lambda a: np.sort(a),
    "increment": lambda a: a + 1.0,
    "noop": lambda a: a,
}


def fresh_memory() -> None:
    """Give the memory freed so far back to the system (glibc's ``malloc_trim``), where there is one.

    What a program keeps then lands on fresh pages, as in a program that allocates its results
    for the first time, instead of on pages an earlier measurement freed a moment ago.
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


def inputs(n: int, items: int) -> list[np.ndarray]:
    rng = np.random.default_rng(n)
    base = rng.random(n)
    return [base.copy() for _ in range(items)]


def micro(kernel: str, n: int, repeats: int, *, kept: bool = True, concurrency: int = 1) -> list[float]:
    """Seconds per call of one kernel on n elements, timed the way a program runs it.

    ``kept``: the calls run where a pool's tasks run — in a fresh standard
    thread pool of ``concurrency`` workers, the caller keeping every result —
    and each is timed inside its worker.  Results kept land in fresh memory
    (page faults included), as in the programs; a plain thread run again and
    again in one process would reuse the memory of the run before and measure
    2–4 times less.  Otherwise (a stage that hands its results on) each of
    ``concurrency`` threads times its calls after an untimed first one and
    frees each result two calls later, as a stage's consumer frees them.
    """
    fn = KERNELS[kernel]
    if kept:
        fresh_memory()
        data = inputs(n, repeats)
        inside: list[float] = []

        def timed(a: np.ndarray) -> np.ndarray:
            start = time.perf_counter()
            result = fn(a)
            inside.append(time.perf_counter() - start)
            return result

        with ThreadPoolExecutor(max_workers=concurrency) as executor:
            results = list(executor.map(timed, data))
        del results
        return inside
    fresh_memory()
    per_thread = [inputs(n, repeats + 1) for _ in range(concurrency)]
    times: list[list[float]] = [[] for _ in range(concurrency)]
    barrier = threading.Barrier(concurrency)

    def work(i: int) -> None:
        held: list[Any] = []
        mine = per_thread[i]
        fn(mine[0])  # untimed: the thread's first call
        barrier.wait()
        for a in mine[1:]:
            start = time.perf_counter()
            result = fn(a)
            times[i].append(time.perf_counter() - start)
            held.append(result)
            if len(held) > 2:
                del held[0]

    threads = [Thread(target=work, args=(i,)) for i in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [t for per in times for t in per]


def pool(kernel: str, n: int, items: int, threads: int) -> float:
    """Wall time of a task pool of ``threads`` workers over ``items`` arrays."""
    fn = KERNELS[kernel]
    fresh_memory()  # a run starts as a new program would: nothing freed to reuse
    data = inputs(n, items)
    with ThreadPoolExecutor(max_workers=threads) as executor:
        start = time.perf_counter()
        kept = list(executor.map(fn, data))
        elapsed = time.perf_counter() - start
    del kept
    return elapsed


def _pipeline_threads(
    first: str, second: str, data: list[np.ndarray], kept: list[np.ndarray]
) -> list[Thread]:
    """The two stage threads of a pipeline over ``data``, appending to ``kept`` (not started)."""
    f, g = KERNELS[first], KERNELS[second]
    queue: SimpleQueue[np.ndarray | None] = SimpleQueue()

    def stage1() -> None:
        for a in data:
            queue.put(f(a))
        queue.put(None)

    def stage2() -> None:
        while (a := queue.get()) is not None:
            kept.append(g(a))

    return [Thread(target=stage1), Thread(target=stage2)]


def pipeline(first: str, second: str, n: int, items: int) -> float:
    """Wall time of a two-stage pipeline (one thread per stage, a queue between them)."""
    fresh_memory()  # a run starts as a new program would: nothing freed to reuse
    data = inputs(n, items)
    kept: list[np.ndarray] = []
    threads = _pipeline_threads(first, second, data, kept)
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start


def pipeline_of_pools(first: str, second: str, n: int, items: int, threads: int) -> float:
    """Wall time of pipe(tpool_T(first), tpool_T(second)): T threads per stage, a queue between.

    The first stage's workers take the arrays from a shared queue and put
    their results on the second stage's queue, whose workers keep theirs.
    """
    f, g = KERNELS[first], KERNELS[second]
    fresh_memory()  # a run starts as a new program would: nothing freed to reuse
    data = inputs(n, items)
    todo: SimpleQueue[np.ndarray | None] = SimpleQueue()
    between: SimpleQueue[np.ndarray | None] = SimpleQueue()
    kept: list[np.ndarray] = []
    left = [threads]
    lock = threading.Lock()
    for a in data:
        todo.put(a)
    for _ in range(threads):
        todo.put(None)

    def stage1() -> None:
        while (a := todo.get()) is not None:
            between.put(f(a))
        with lock:  # the last worker of the first stage ends the second
            left[0] -= 1
            if left[0] == 0:
                for _ in range(threads):
                    between.put(None)

    def stage2() -> None:
        while (a := between.get()) is not None:
            kept.append(g(a))

    workers = [Thread(target=stage1) for _ in range(threads)] + [
        Thread(target=stage2) for _ in range(threads)
    ]
    start = time.perf_counter()
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return time.perf_counter() - start


def pool_of_pipelines(first: str, second: str, n: int, items: int, threads: int) -> float:
    """Wall time of tpool_T(pipe(first, second)): T workers, each a pipeline over items/T arrays."""
    fresh_memory()  # a run starts as a new program would: nothing freed to reuse
    data = inputs(n, items)
    share = -(-items // threads)
    chunks = [data[i : i + share] for i in range(0, items, share)]

    def run(chunk: list[np.ndarray]) -> list[np.ndarray]:
        kept: list[np.ndarray] = []
        stages = _pipeline_threads(first, second, chunk, kept)
        for t in stages:
            t.start()
        for t in stages:
            t.join()
        return kept

    with ThreadPoolExecutor(max_workers=threads) as executor:
        start = time.perf_counter()
        results = list(executor.map(run, chunks))
        elapsed = time.perf_counter() - start
    del results
    return elapsed
