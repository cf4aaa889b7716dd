"""Scaling of a sweep over process counts: speedup, efficiency and the JavaPSL scaling properties.

For every group of sweep rows that differ only in the process count (and the
node count moved with it), against the row with the fewest processes ``p0``:

* ``speedup = T(p0) / T(p)`` and ``efficiency = speedup * p0 / p``;
* ``inefficiency = 1 - efficiency`` (JavaPSL: ``1 - ideal / actual`` with the
  ideal time ``T(p0) * p0 / p``), a property of each point;
* ``non_scalability = mean(efficiency) - min(efficiency)`` over the group, a
  property of the whole sweep (0 when efficiency never drops).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["SCALING_AXES", "add_scaling"]

#: Axes that make the scaling dimension; rows that differ in anything else are compared separately.
SCALING_AXES = ("procs", "nodes")


def add_scaling(parameters: Sequence[str], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Add ``speedup``, ``efficiency`` and ``inefficiency`` to ``rows``; return the sweep's properties.

    Does nothing (and returns no property) unless ``procs`` is swept with at
    least two values.
    """
    if "procs" not in parameters or len({row["procs"] for row in rows}) < 2:
        return []
    others = [name for name in parameters if name not in SCALING_AXES]
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row[name] for name in others), []).append(row)
    properties = []
    for key, members in groups.items():
        base = min(members, key=lambda row: row["procs"])
        p0, t0 = base["procs"], base["time"]
        efficiencies = []
        for row in members:
            if row["time"] > 0 and t0 > 0:
                speedup = t0 / row["time"]
                efficiency = speedup * p0 / row["procs"]
            else:
                speedup = efficiency = 1.0
            row["speedup"] = speedup
            row["efficiency"] = efficiency
            row["inefficiency"] = max(0.0, 1.0 - efficiency)
            efficiencies.append(efficiency)
        severity = sum(efficiencies) / len(efficiencies) - min(efficiencies)
        group = dict(zip(others, key, strict=False))
        worst = min(members, key=lambda row: row["efficiency"])
        properties.append(
            {
                "property": "non_scalability",
                "element": None,
                "severity": round(max(0.0, severity), 6),
                "confidence": 1.0,
                "group": group,
                "hint": f"efficiency falls to {worst['efficiency']:.2f} at {worst['procs']} processes"
                + (f" ({', '.join(f'{k}={v}' for k, v in group.items())})" if group else ""),
            }
        )
    properties.sort(key=lambda p: -p["severity"])
    return properties
