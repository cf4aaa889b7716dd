"""Several independent runs of a model with random choices, summed up with confidence intervals.

A model with probabilistic branches gives one seeded draw per run.  Running
it with N seeds and reporting the mean, the standard deviation and a 95%
confidence interval (Student's t with N - 1 degrees of freedom) says how sure
the prediction is.  A performance property's confidence is the share of
replications in which it held, its severity the mean over those.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["summarise", "interval"]


def interval(values: Sequence[float]) -> dict[str, Any]:
    """``{"mean", "std", "ci95": [lo, hi]}`` of a sample (sample std; no spread for one value).

    Times near the largest float overflow in the sums: then the statistics are computed on the
    values divided by the largest magnitude, and a statistic that still is not finite (an interval
    wider than a float holds) is refused rather than reported as ``inf`` or ``nan``.
    """
    data = np.asarray(values, dtype=np.float64)
    n = int(data.size)
    if n and not np.all(np.isfinite(data)):
        raise _not_finite("a replication's time")
    with np.errstate(over="ignore", invalid="ignore"):
        mean = float(data.mean()) if n else 0.0
        if n < 2:
            return {"mean": mean, "std": 0.0, "ci95": [mean, mean]}
        std = float(data.std(ddof=1))
        if not (math.isfinite(mean) and math.isfinite(std)):
            scale = float(np.max(np.abs(data)))
            mean = float((data / scale).mean()) * scale
            std = float((data / scale).std(ddof=1)) * scale
    from scipy.stats import t

    half = float(t.ppf(0.975, n - 1)) * std / math.sqrt(n)
    low, high = mean - half, mean + half
    if not all(math.isfinite(v) for v in (mean, std, low, high)):
        raise _not_finite("the confidence interval of the replications")
    return {"mean": mean, "std": std, "ci95": [low, high]}


def _not_finite(what: str) -> Exception:
    from ..errors import SimulationError

    return SimulationError(
        f"{what} is not a finite number of seconds: the times pass the largest number a float can hold",
        hint="check the cost functions for huge values",
    )


def summarise(runs: Sequence[Any]) -> Any:
    """One ``Results`` standing for all ``runs``: the first run's details, ``time`` the mean.

    ``replications`` holds ``n``, the seeds, the time's mean, std and ci95,
    and the same three numbers for each per-process figure.
    """
    first = runs[0]
    times = [r.time for r in runs]
    summary = {"n": len(runs), "seeds": [r.seed for r in runs], **interval(times)}
    per_process = []
    for index, row in enumerate(first.per_process):
        entry: dict[str, Any] = {"pid": row["pid"]}
        for key in ("time", "compute", "communication", "wait"):
            entry[key] = interval([r.per_process[index][key] for r in runs])
        per_process.append(entry)
    summary["per_process"] = per_process
    first.replications = summary
    first.time = summary["mean"]
    first.properties = _properties(runs)
    return first


def _properties(runs: Sequence[Any]) -> list[dict[str, Any]]:
    """Properties over replications: confidence = share of runs they held in, severity their mean there."""
    held: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for run in runs:
        for prop in run.properties:
            held.setdefault((prop["property"], prop["element"]), []).append(prop)
    merged = []
    for found in held.values():
        entry = dict(found[0])
        entry["severity"] = round(sum(p["severity"] for p in found) / len(found), 6)
        entry["confidence"] = round(len(found) / len(runs), 6)
        merged.append(entry)
    merged.sort(key=lambda p: (-p["severity"] * p["confidence"], p["property"], p["element"] or ""))
    return merged
