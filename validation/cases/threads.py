"""Thread cases: task pools, pipelines, pipelines of pools and pools of pipelines over numpy kernels.

These are the experiments of the compositional-modelling paper on this
machine.  Every kernel's cost is fitted (``uml2perf fit``) once per *way of
running* it, the way the programs run it: results kept (a pool, a last
stage) or handed on (a first stage), and with as many threads computing at
once as the program keeps busy (at most one per core).  The thread costs of
the machine (start, serialised hand-off, parallel per-item overhead) are the
``[threads]`` keys of the file ``uml2perf calibrate`` wrote, which the models
use as they stand (no tags).
"""

from __future__ import annotations

import functools
import os
import random
import statistics
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from programs import kernels
from suite import Case, Setup

from uml2perf.fit import Measurements, fit_model, relative_interval


class Way(NamedTuple):
    """How a program runs a kernel: results kept or handed on, and how many threads compute at once."""

    kernel: str
    kept: bool
    busy: int

    @property
    def key(self) -> str:
        return f"{self.kernel} {'kept' if self.kept else 'handed on'}, {self.busy} at once"


def _busy(threads: int) -> int:
    return max(1, min(threads, os.cpu_count() or 1))


def _plan(setup: Setup) -> list[tuple[str, str, dict[str, float], Callable[[], float], dict[str, Way]]]:
    """Every case: name, model, variables, program, and the way each model element's kernel runs."""
    smoke = setup.smoke
    sizes = [16384] if smoke else [16384, 65536, 262144]
    items = 8 if smoke else 32
    counts = (1, 2) if smoke else (1, 2, 4)
    out: list[tuple[str, str, dict[str, float], Callable[[], float], dict[str, Way]]] = []
    for n in sizes:
        for kernel in ("sort", "increment"):
            for t in counts:
                out.append(
                    (
                        f"pool T={t} {kernel} n={n}",
                        "pool",
                        {"T": t, "ITEMS": items, "n": n},
                        functools.partial(kernels.pool, kernel, n, items, t),
                        {"work": Way(kernel, True, _busy(t))},
                    )
                )
        out.append(
            (
                f"pipeline sort|increment n={n}",
                "pipeline",
                {"ITEMS": items, "n": n},
                functools.partial(kernels.pipeline, "sort", "increment", n, items),
                {"stage1": Way("sort", False, _busy(2)), "stage2": Way("increment", True, _busy(2))},
            )
        )
        for t in (2,) if smoke else (1, 2):
            out.append(
                (
                    f"pipe(pool T={t} sort, pool T={t} increment) n={n}",
                    "pipe_of_pools",
                    {"T": t, "ITEMS": items, "n": n},
                    functools.partial(kernels.pipeline_of_pools, "sort", "increment", n, items, t),
                    {
                        "work1": Way("sort", False, _busy(2 * t)),
                        "work2": Way("increment", True, _busy(2 * t)),
                    },
                )
            )
            out.append(
                (
                    f"pool T={t} of pipe(sort, increment) n={n}",
                    "pool_of_pipes",
                    {"T": t, "ITEMS": items, "n": n},
                    functools.partial(kernels.pool_of_pipelines, "sort", "increment", n, items, t),
                    {
                        "stage1": Way("sort", False, _busy(2 * t)),
                        "stage2": Way("increment", True, _busy(2 * t)),
                    },
                )
            )
    n = sizes[0]
    for t in counts:
        out.append(
            (
                f"pool T={t} noop n={n}",
                "pool",
                {"T": t, "ITEMS": items, "n": n},
                functools.partial(kernels.pool, "noop", n, items, t),
                {"work": Way("noop", True, _busy(t))},
            )
        )
    out.append(
        (
            f"pipeline noop|noop n={n}",
            "pipeline",
            {"ITEMS": items, "n": n},
            functools.partial(kernels.pipeline, "noop", "noop", n, items),
            {"stage1": Way("noop", False, _busy(2)), "stage2": Way("noop", True, _busy(2))},
        )
    )
    return out


def _middle(values: list[float]) -> list[float]:
    """The repetitions between the quartiles: the fit sees neither the slow outliers nor lucky ones."""
    low, high = np.percentile(values, [25, 75])
    return [v for v in values if low <= v <= high] or [statistics.median(values)]


def prepare(setup: Setup) -> None:
    """One fitted cost per kernel and way of running (the ``[threads]`` keys come from calibrate)."""
    print("  micro-measurements and fitted kernel costs, per way of running a kernel")
    sizes = [4096, 8192, 16384, 32768] if setup.smoke else [16384, 32768, 65536, 131072, 262144]
    repeats = 3 if setup.smoke else 30
    ways = sorted({way for *_, elements in _plan(setup) for way in elements.values()})
    rounds = 1 if setup.smoke else 3
    for way in ways:
        # the sizes in turns, a third of the repetitions each turn: a slow phase of a shared
        # machine then hits every size alike instead of bending the curve
        times: dict[int, list[float]] = {n: [] for n in sizes}
        for round_ in range(rounds):
            for n in random.Random(round_).sample(sizes, len(sizes)):
                times[n] += kernels.micro(
                    way.kernel, n, repeats // rounds, kept=way.kept, concurrency=way.busy
                )
        points, values = [], []
        for n in sizes:
            for t in _middle(times[n]):
                points.append([n])
                values.append(t)
        model = fit_model(
            Measurements(["n"], np.array(points, float), np.array(values, float), f"<{way.key}>", way.kernel),
            negative=False,  # a kernel's time does not fall as its array grows
        )
        setup.costs[way.key] = model.expression()
        setup.spreads[way.key] = relative_interval(model)
        print(
            f"    {way.key:<32} cost(n) = {setup.costs[way.key]}   (SMAPE {model.fit.smape:.1f}%, "
            f"adjusted R² {model.fit.r2_adj:.3f})",
            flush=True,
        )


def cases(setup: Setup) -> list[Case]:
    return [
        Case(name, model, variables, program, costs={element: way.key for element, way in elements.items()})
        for name, model, variables, program, elements in _plan(setup)
    ]
