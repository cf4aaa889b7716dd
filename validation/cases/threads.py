"""Thread cases: task pools and pipelines over numpy kernels (the compositional paper's experiments)."""

from __future__ import annotations

import functools

import numpy as np
from programs import kernels
from suite import Case, Setup

from uml2perf.fit import Measurements, fit_model


def prepare(setup: Setup) -> None:
    """Fit every kernel's cost over ``n`` from micro-measurements taken the way the programs run it."""
    print("  micro-measurements and fitted kernel costs (in a worker thread, results kept)")
    sizes = [4096, 8192, 16384, 32768] if setup.smoke else [16384, 32768, 65536, 131072, 262144]
    repeats = 3 if setup.smoke else 15
    for name in kernels.KERNELS:
        points, values = [], []
        for n in sizes:
            for t in kernels.micro(name, n, repeats):
                points.append([n])
                values.append(t)
        model = fit_model(
            Measurements(["n"], np.array(points, float), np.array(values, float), f"<{name}>", name)
        )
        setup.costs[name] = model.expression()
        print(
            f"    {name:<10} cost(n) = {setup.costs[name]}   (SMAPE {model.fit.smape:.1f}%, "
            f"adjusted R² {model.fit.r2_adj:.3f})",
            flush=True,
        )


def cases(setup: Setup) -> list[Case]:
    sizes = [16384] if setup.smoke else [16384, 65536, 262144]
    items = 8 if setup.smoke else 32
    out = []
    for n in sizes:
        for kernel in ("sort", "increment"):
            for threads in (1, 2) if setup.smoke else (1, 2, 4):
                out.append(
                    Case(
                        f"pool T={threads} {kernel} n={n}",
                        "pool",
                        {"T": threads, "ITEMS": items, "n": n},
                        functools.partial(kernels.pool, kernel, n, items, threads),
                        costs={"work": kernel},
                    )
                )
        out.append(
            Case(
                f"pipeline sort|increment n={n}",
                "pipeline",
                {"ITEMS": items, "n": n},
                functools.partial(kernels.pipeline, "sort", "increment", n, items),
                costs={"stage1": "sort", "stage2": "increment"},
            )
        )
    return out
