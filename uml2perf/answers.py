"""Checks on a prediction before a user acts on it: what to speed up, why a what-if changed
nothing, a 0 s that is not meant, values that name nothing, a machine larger than its file.

Called by :func:`uml2perf.api.predict` and :func:`uml2perf.sweep.sweep` after (or just before)
the simulation; each takes the runtime's ``Results`` and plain values, and either returns what
to say or raises a :class:`~uml2perf.errors.ModelError` naming the file and what to do.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import Location, ModelError

__all__ = [
    "checked_overrides",
    "larger_machine_warning",
    "ranked_speedups",
    "refuse_zero_time",
    "what_if_notes",
]


def checked_overrides(spec: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    """Variable values checked against the model: a misspelt name or a bad value is a
    :class:`ModelError` naming the file (one error type for ``predict`` and ``sweep``)."""
    from uml2perf_runtime.errors import ParameterError
    from uml2perf_runtime.parameters import validate_overrides

    try:
        return validate_overrides(spec, values)
    except ParameterError as exc:
        raise ModelError(exc.message, Location(file=spec.source), hint=exc.hint) from None


def larger_machine_warning(machine: Any, nodes: int, given: str = "--nodes {}") -> str:
    """``--nodes`` beyond the machine's own: it runs, on a machine larger than the file describes."""
    return (
        f"warning: machine '{machine.name}' has {machine.nodes} node{'s' if machine.nodes != 1 else ''}; "
        f"{given.format(nodes)} predicts a larger machine of the same nodes, which it does not describe"
    )


def refuse_zero_time(path: Any, result: Any, allow_zero: bool, warnings: list[str] | None) -> None:
    """A prediction of 0 s from a model whose elements take time: nothing timed ran. Say what and why."""
    if result.time != 0.0:
        return
    never = [row["name"] for row in result.elements if not row["calls"]]
    if never:
        more = f" and {len(never) - 5} more" if len(never) > 5 else ""
        what = f"none of the elements that take time ran ({', '.join(map(repr, never[:5]))}{more} never ran)"
    else:
        what = "the elements that ran took no time (their costs are 0 with these values)"
    message = f"the predicted time is 0 s although the model has elements that take time: {what}"
    name = str(getattr(path, "filename", None) or path)
    if allow_zero:
        if warnings is not None:
            warnings.append(f"{Path(name).name}: warning: {message} (--allow-zero: reported as 0 s)")
        return
    raise ModelError(
        message,
        Location(file=name),
        hint="the warnings above say why (a join that never fires, nothing reachable from the initial "
        "node, a branch never taken); 'uml2perf check' lists them; --allow-zero accepts 0 s when it is "
        "what you mean",
    )


def ranked_speedups(
    result: Any, predict_with: Any, most: int = 10, top: int = 3, limit: int = 30
) -> list[dict[str, Any]]:
    """The elements that do work, each at 2x: the predicted times, best first.

    Candidates are the work elements (actions, communication, critical sections; containers
    only through their parts) in the order of their time on the critical path, which follows
    a container into the thread that ends it, then the other work elements by inclusive time.
    The first ``most`` are predicted again with that element twice as fast; after them, any
    element whose whole time halved (summed over processes and threads: more than it can
    save) still exceeds the ``top``-th saving so far is tried too (at most ``limit`` in all),
    so no element left untried could have entered the ``top``.
    """
    from uml2perf_runtime.operations.registry import WORK_KINDS

    on_path: dict[str, float] = {}
    for entry in result.critical_path or ():
        on_path[entry["element"]] = on_path.get(entry["element"], 0.0) + entry["time"]
    work = {row["name"]: row for row in result.elements if row["kind"] in WORK_KINDS and row["inclusive"] > 0}
    order = sorted(work, key=lambda name: (-on_path.get(name, 0.0), -work[name]["inclusive"], name))
    base = result.base_time if result.base_time is not None else result.time
    ranked: list[dict[str, Any]] = []

    def needed(name: str) -> bool:
        if len(ranked) < most:
            return True
        if len(ranked) >= limit:
            return False
        savings = sorted((row["saves"] for row in ranked), reverse=True)
        bar = savings[top - 1] if len(savings) >= top else 0.0
        return work[name]["inclusive"] / 2 > bar * (1 + 1e-9)

    for name in order:
        if not needed(name):
            continue
        times = predict_with(name)
        time = sum(times) / len(times)
        ranked.append(
            {
                "element": name,
                "kind": work[name]["kind"],
                "factor": 2.0,
                "time": time,
                "saves": base - time,
                "on_critical_path": on_path.get(name, 0.0),
            }
        )
    ranked.sort(key=lambda row: (row["time"], row["element"]))
    return ranked


def what_if_notes(result: Any, speedups: Mapping[str, float]) -> list[str]:
    """Why a what-if left the predicted time unchanged, one sentence per element named."""
    from uml2perf_runtime.operations.registry import WORK_KINDS

    if result.base_time is None or abs(result.time - result.base_time) > 1e-12 * max(1.0, result.base_time):
        return []
    rows = {row["name"]: row for row in result.elements}
    rows.update({row["id"]: row for row in result.elements if row.get("id")})
    on_path = {entry["element"] for entry in result.critical_path or ()}
    notes = []
    for name, factor in speedups.items():
        row = rows.get(name)
        if row is None or factor == 1.0:
            continue
        label = f"--speedup {name}: "
        if not row["calls"]:
            notes.append(label + f"'{row['name']}' never runs in this run: its speed cannot change the time")
        elif row["inclusive"] <= 0:
            notes.append(label + f"'{row['name']}' takes no time in this run (it has no cost)")
        elif row["kind"] not in WORK_KINDS:
            notes.append(
                label + f"'{row['name']}' is a {row['kind']}: the factor applies to the work inside it, "
                "and none of that work decides the predicted time"
            )
        elif row["kind"] not in ("action", "critical"):
            notes.append(
                label + f"'{row['name']}' is communication ({row['kind']}): a speed-up factor scales "
                "computation, and its time is the network's and its partners' (try another machine)"
            )
        elif result.critical_path is not None and row["name"] not in on_path:
            notes.append(
                label + f"'{row['name']}' is not on the critical path: the run waits for other work "
                "(--critical-path lists it), so making it faster changes nothing"
            )
        else:
            notes.append(
                label + f"'{row['name']}' overlaps with longer work: other processes or threads still "
                "finish at the same time"
            )
    return notes
