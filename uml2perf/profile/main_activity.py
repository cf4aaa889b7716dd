"""The choice of the activity ``run`` executes."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..errors import Location, ModelError, option_text
from ..model import (
    Activity,
    Model,
    describe_contents,
)

# --------------------------------------------------------------------------- main activity


def no_activity_error(model: Model) -> ModelError:
    """The error for a file without activities, naming what it holds instead."""
    return ModelError(
        f"no activity found; the file holds {describe_contents(model.contents)}",
        Location(file=Path(model.source).name if model.source else None),
        hint="uml2perf reads activity diagrams: add an activity to the model, "
        "or export the package that holds it",
    )


def _called_ids(model: Model) -> set[str]:
    called: set[str] = set()
    for activity in model.activities:
        for node in activity.walk():
            if node.behavior:
                called.add(node.behavior)
    return called


def _describe(activities: Iterable[Activity]) -> str:
    return ", ".join(f"{a.name or '<unnamed>'!r} [xmi:id={a.id}]" for a in activities)


def main_activity(model: Model, name: str | None = None) -> Activity:
    """The activity ``run`` executes.

    In order: the one ``name`` gives (by xmi id, or by a name only one activity
    has: several activities of that name are listed with their ids); the one stereotyped
    ``main``/``model+``; the one named ``main``/``MainActivity``; the only
    non-empty activity no other activity calls.  Otherwise a
    :class:`ModelError` lists the candidates with their ids.
    """
    where = Location(file=Path(model.source).name if model.source else None)
    if not model.activities:
        raise no_activity_error(model)
    if name is not None:
        same = [a for a in model.activities if a.name == name]
        if len(same) > 1 and not any(a.id == name for a in model.activities):
            raise ModelError(
                f"{len(same)} activities are named {name!r}: {_describe(same)}",
                where,
                hint="choose one by its id: " + option_text("--activity", same[0].id),
            )
        found = model.activity(name)
        if found is None:
            raise ModelError(
                f"no activity named {name!r}",
                where,
                hint=f"activities in the file: {_describe(model.activities)}",
            )
        return found
    marked = [a for a in model.activities if a.is_main]
    if len(marked) == 1:
        return marked[0]
    if len(marked) > 1:
        raise ModelError(
            f"{len(marked)} activities are stereotyped main/model+: {_describe(marked)}",
            where,
            hint="keep the stereotype on one activity, or choose with --activity NAME",
        )
    named = [a for a in model.activities if a.name.strip().lower() in ("main", "mainactivity")]
    if len(named) == 1:
        return named[0]
    called = _called_ids(model)
    roots = [a for a in model.activities if a.id not in called and a.region.nodes]
    if len(roots) == 1:
        return roots[0]
    candidates = named or roots or list(model.activities)
    raise ModelError(
        f"cannot tell which activity is the main one; candidates: {_describe(candidates)}",
        where,
        hint="stereotype one activity «main», name it MainActivity, or choose with --activity NAME",
    )
