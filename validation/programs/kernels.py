"""The numpy kernels of the thread cases and the real programs that run them.

Every kernel keeps its result (a fresh array per item), as real programs do;
the micro-measurements that the cost models are fitted to time them the same
way, inside a worker thread.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from queue import SimpleQueue
from threading import Thread

import numpy as np

KERNELS = {
    "sort": lambda a: np.sort(a),
    "increment": lambda a: a + 1.0,
    "noop": lambda a: a,
}


def inputs(n: int, items: int) -> list[np.ndarray]:
    rng = np.random.default_rng(n)
    base = rng.random(n)
    return [base.copy() for _ in range(items)]


def micro(kernel: str, n: int, repeats: int) -> list[float]:
    """Seconds per call of one kernel on n elements, timed in a worker thread with results kept."""
    fn = KERNELS[kernel]
    data = inputs(n, repeats)
    times: list[float] = []

    def work() -> None:
        kept = []
        for a in data:
            start = time.perf_counter()
            kept.append(fn(a))
            times.append(time.perf_counter() - start)

    t = Thread(target=work)
    t.start()
    t.join()
    return times


def pool(kernel: str, n: int, items: int, threads: int) -> float:
    """Wall time of a task pool of ``threads`` workers over ``items`` arrays."""
    fn = KERNELS[kernel]
    data = inputs(n, items)
    with ThreadPoolExecutor(max_workers=threads) as executor:
        start = time.perf_counter()
        kept = list(executor.map(fn, data))
        elapsed = time.perf_counter() - start
    del kept
    return elapsed


def pipeline(first: str, second: str, n: int, items: int) -> float:
    """Wall time of a two-stage pipeline (one thread per stage, a queue between them)."""
    f, g = KERNELS[first], KERNELS[second]
    data = inputs(n, items)
    queue: SimpleQueue = SimpleQueue()
    kept: list[np.ndarray] = []

    def stage1() -> None:
        for a in data:
            queue.put(f(a))
        queue.put(None)

    def stage2() -> None:
        while (a := queue.get()) is not None:
            kept.append(g(a))

    threads = [Thread(target=stage1), Thread(target=stage2)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start
