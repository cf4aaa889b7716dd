"""Performance properties of a simulated run: what is wrong, how badly, and where.

The properties and their severities follow the JavaPSL specification of
performance properties (Fahringer and Seragiotto): each property that holds
has a *severity* in [0, 1], the share of the run's resources it costs, and a
*confidence* in [0, 1] (1 for one deterministic run; the share of replications
in which it held otherwise).  With ``T`` the predicted time and ``P`` the number
of processes:

``load_imbalance``
    Over the per-process times ``X`` of an element (or the per-process compute
    time, for the whole run): the time the other processes would wait for the
    slowest, ``(max(X) |X| - sum(X)) / (T P)``.  Beside it, ``relative`` is
    JavaPSL's figure relative to the element, ``(1 - mean(X) / max(X)) / (1 - 1 / |X|)``:
    0 for perfectly balanced work, 1 when one process does all of it.
``synchronization``
    Time blocked in collectives and barriers, summed over processes, ``/ (T P)``.
``communication``
    Transfer time summed over processes ``/ (T P)``.
``late_sender``
    Time receives wait for a send that starts later, ``/ (T P)``.
``late_receiver``
    Time rendezvous sends wait for their receive, ``/ (T P)``.
``critical_section``
    Time waiting for ``critical+`` locks, ``/ (T P)``.
``network_contention``
    On a machine with a topology: the seconds messages took beyond what each would have taken
    with its links to itself, summed over messages, ``/ (T P)``; the hint names the busiest links.
``oversubscription``
    Time computations were runnable but had no core (more runnable processes
    and threads than cores on a node), ``/ (T P)``; threads count in
    thread-seconds, so the severity is capped at 1.

All severities are on this one scale (the share of ``T P``), so findings of
every kind are ordered against each other; ``relative`` (where an element is
named) is the figure relative to that element: its imbalance, or the share of
its own time spent waiting.

Everything is computed from flat per-process arrays the runtime keeps anyway
(per-element inclusive and blocked time, per-process totals): no per-event
record is needed, so the cost is one pass over processes × elements.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..operations.registry import WAIT_PROPERTIES
from .summation import argmax, table_sum, vector_mean, vector_sum

__all__ = ["DEFAULT_THRESHOLD", "WAIT_PROPERTY", "compute_properties", "load_imbalance", "network_contention"]

#: Properties with a smaller severity are not reported (``--min-severity`` changes it).
DEFAULT_THRESHOLD = 0.01

#: Which property the blocked time of an element of each kind is.
WAIT_PROPERTY: dict[str, str] = {**WAIT_PROPERTIES, "critical": "critical_section"}

_WORK_KINDS = frozenset({"action"})


def _values(data: Any) -> Any:
    """Plain lists from numpy arrays (callers may pass either)."""
    return data.tolist() if hasattr(data, "tolist") else data


def load_imbalance(times: Sequence[float]) -> float:
    """JavaPSL's load-imbalance severity of per-process times (0 when balanced or fewer than 2)."""
    times = _values(times)
    count = len(times)
    peak = max(times) if count else 0.0
    if count < 2 or peak <= 0.0:
        return 0.0
    value = (1.0 - vector_mean(times) / peak) / (1.0 - 1.0 / count)
    return min(1.0, max(0.0, value))


def _seconds(value: float) -> str:
    if value >= 100:
        return f"{value:.0f} s"
    if value >= 1:
        return f"{value:.3g} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3g} ms"
    return f"{value * 1e6:.3g} us"


def compute_properties(
    *,
    time: float,
    names: Sequence[str],
    kinds: Sequence[str],
    incl: Sequence[Sequence[float]],
    waits: Sequence[Sequence[float]],
    compute: Sequence[float],
    communication: Sequence[float],
    oversubscribed: Sequence[float],
    threshold: float = DEFAULT_THRESHOLD,
) -> list[dict[str, Any]]:
    """The properties that hold (severity at least ``threshold``), most severe first.

    ``incl`` and ``waits`` are processes × elements; the other arrays have one
    value per process.  Each entry: ``property``, ``element`` (a name or None
    for the whole run), ``severity``, ``confidence``, ``seconds`` (the time it
    costs, summed over processes, where that applies), ``process`` (the worst
    one), ``relative`` (the figure relative to the element, or None) and
    ``hint`` (one sentence).
    """
    incl, waits = _values(incl), _values(waits)
    compute, communication, oversubscribed = _values(compute), _values(communication), _values(oversubscribed)
    processes = len(compute)
    width = len(incl[0]) if incl else 0
    found: list[dict[str, Any]] = []
    budget = time * processes
    if processes == 0 or time <= 0.0:
        return found

    def add(
        prop: str,
        element: str | None,
        severity: float,
        hint: str,
        relative: float | None = None,
        **extra: Any,
    ) -> None:
        severity = min(1.0, float(severity))  # thread-seconds can exceed process-seconds
        if severity >= threshold:
            found.append(
                {
                    "property": prop,
                    "element": element,
                    "severity": round(severity, 6),
                    "relative": None if relative is None else round(min(1.0, float(relative)), 6),
                    "confidence": 1.0,
                    "hint": hint,
                    **extra,
                }
            )

    # load imbalance: whole run (compute time) and each work element
    whole = load_imbalance(compute)
    if whole > 0.0:
        worst = argmax(compute)
        idle = max(compute) * processes - vector_sum(compute)
        add(
            "load_imbalance",
            None,
            idle / budget,
            f"Compute is imbalanced: process {worst} computes {_seconds(float(compute[worst]))}, "
            f"the average {_seconds(vector_mean(compute))}",
            relative=whole,
            process=worst,
            seconds=idle,
        )
    total_incl = table_sum(incl) if width else 0.0
    incl_columns = list(zip(*incl, strict=True)) if width else []
    for index, (name, kind) in enumerate(zip(names, kinds, strict=False)):
        if kind not in _WORK_KINDS or width == 0:
            continue
        column = incl_columns[index]
        if total_incl <= 0 or vector_sum(column) < 0.01 * total_incl:
            continue  # a negligible element cannot be worth balancing
        imbalance = load_imbalance(column)
        if imbalance > 0.0:
            worst = argmax(column)
            idle = max(column) * processes - vector_sum(column)
            add(
                "load_imbalance",
                name,
                idle / budget,
                f"{name} is imbalanced: process {worst} takes {_seconds(float(column[worst]))}, "
                f"the average {_seconds(vector_mean(column))}",
                relative=imbalance,
                process=worst,
                seconds=idle,
            )

    # blocked time by kind, per element and for the whole run
    by_property: dict[str, float] = {}
    if waits and len(waits[0]):
        wait_columns = list(zip(*waits, strict=True))
        for index, (name, kind) in enumerate(zip(names, kinds, strict=False)):
            prop = WAIT_PROPERTY.get(kind)
            if prop is None:
                continue
            column = wait_columns[index]
            blocked = vector_sum(column)
            if blocked <= 0.0:
                continue
            by_property[prop] = by_property.get(prop, 0.0) + blocked
            worst = argmax(column)
            own = vector_sum(incl_columns[index]) if width else 0.0
            add(
                prop,
                name,
                blocked / budget,
                _wait_hint(prop, name, blocked, worst, float(column[worst])),
                relative=blocked / own if own > 0 else None,
                seconds=blocked,
                process=worst,
            )
    for prop, blocked in by_property.items():
        add(
            prop,
            None,
            blocked / budget,
            f"{_WHAT[prop]} costs {_seconds(blocked)} summed over processes "
            f"({100 * blocked / budget:.1f}% of the run)",
            seconds=blocked,
        )
    transfer = vector_sum(communication)
    if transfer > 0.0:
        worst = argmax(communication)
        add(
            "communication",
            None,
            transfer / budget,
            f"Messages take {_seconds(transfer)} to transfer summed over processes "
            f"({100 * transfer / budget:.1f}% of the run); process {worst} spends the most",
            seconds=transfer,
            process=worst,
        )
    lost = vector_sum(oversubscribed)
    if lost > 0.0:
        worst = argmax(oversubscribed)
        add(
            "oversubscription",
            None,
            lost / budget,
            f"More work is runnable than there are cores: computations wait {_seconds(lost)} for a core "
            f"(most on process {worst}); the machine is too small for this run, not the program too slow",
            seconds=lost,
            process=worst,
        )
    found.sort(key=lambda p: (-p["severity"], p["property"], p["element"] or ""))
    return found


def network_contention(
    lost: float, flows: int, links: Sequence[dict[str, Any]], time: float, processes: int, threshold: float
) -> list[dict[str, Any]]:
    """``network_contention`` when it holds: time lost to links shared with other messages.

    ``lost`` is summed over the ``flows`` messages between nodes (each one's time on its links
    minus its time alone there); ``links`` the busiest first, as ``Results.links``.
    """
    budget = time * processes
    if lost <= 0.0 or budget <= 0.0:
        return []
    severity = min(1.0, lost / budget)
    if severity < threshold:
        return []
    busiest = ", ".join(f"{row['link']} ({row['max_flows']} at once)" for row in links[:3])
    return [
        {
            "property": "network_contention",
            "element": None,
            "severity": round(severity, 6),
            "confidence": 1.0,
            "hint": f"Messages share links: {flows} messages between nodes take {_seconds(lost)} longer "
            f"than each would alone; busiest links: {busiest}",
            "seconds": lost,
        }
    ]


_WHAT = {
    "late_sender": "Waiting in receives for late senders",
    "late_receiver": "Waiting in sends for late receivers",
    "synchronization": "Waiting in collectives and barriers",
    "critical_section": "Waiting for critical sections",
}


def _wait_hint(prop: str, name: str, blocked: float, worst: int, worst_time: float) -> str:
    if prop == "late_sender":
        return (
            f"{name} waits for late senders: {_seconds(blocked)} in all, "
            f"most on process {worst} ({_seconds(worst_time)})"
        )
    if prop == "late_receiver":
        return (
            f"{name} waits for late receivers (rendezvous): {_seconds(blocked)} in all, "
            f"most on process {worst} ({_seconds(worst_time)})"
        )
    if prop == "critical_section":
        return (
            f"{name} waits for its lock: {_seconds(blocked)} in all, "
            f"most on process {worst} ({_seconds(worst_time)})"
        )
    return (
        f"{name} waits for the last process to arrive: {_seconds(blocked)} in all, "
        f"most on process {worst} ({_seconds(worst_time)})"
    )
