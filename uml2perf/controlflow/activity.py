"""Recovery of whole activities and models: the entry points of control-flow recovery."""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import Diagnostic, Location
from ..model import Activity, Model, Region
from .graph import Shared, repeat_text
from .ir import ActivityBody, RecoveredModel, Sequence
from .nodes import node_statement
from .recovery import RegionRecovery


def recover_activity(activity: Activity, shared: Shared) -> ActivityBody:
    body = RegionRecovery(activity.region, activity.location, shared).recover()
    return ActivityBody(activity, body, repeat_text(activity.perf))


def recover_model(
    model: Model, *, main: Activity | None = None, flat: bool = False, tokens: bool = False
) -> RecoveredModel:
    """Recover every activity of ``model``; diagnostics come back as data.

    ``flat`` recovers each region as one state machine (one loop over numbered
    states) instead of nested if/while blocks: the same behaviour, at constant
    nesting depth, for diagrams nested deeper than Python accepts.  ``tokens``
    writes every region that is not a straight chain in token-flow form (the
    form of any graph; tests compare it with the structured one).
    """
    shared = Shared(
        model,
        {a.id: a for a in model.activities},
        {f.id: f for f in model.functions if f.id is not None},
        statement=node_statement,
        flat=flat,
        tokens=tokens,
    )
    _activity_notes(model, shared)
    bodies = tuple(recover_activity(activity, shared) for activity in model.activities)
    return RecoveredModel(model, bodies, main, _unique(shared.diagnostics))


def _activity_notes(model: Model, shared: Shared) -> None:
    """Warn about activities an export left empty and about names several activities share."""
    seen: dict[str, Activity] = {}
    for activity in model.activities:
        if not activity.region.nodes:
            shared.warn(
                "activity has no nodes: it takes no time when run or called",
                activity.location,
                "empty-activity",
                hint="draw its flow, or delete it from the model",
            )
        first = seen.setdefault(activity.name, activity)
        if first is not activity and activity.name:
            shared.warn(
                f"a second activity is named {activity.name!r} (the first is xmi:id={first.id});"
                " both are generated, choose one with --activity and its id",
                activity.location,
                "duplicate-activity",
                hint="rename one of them in the UML tool",
            )


def _unique(diagnostics: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    """Drop repeats (recovery may visit a node more than once) keeping first-seen order."""
    return tuple(dict.fromkeys(diagnostics))


def recover_region(region: Region, model: Model | None = None) -> tuple[Sequence, list[Diagnostic]]:
    """Recover a single region (handy for tests and third-party tools)."""
    shared = Shared(model or Model(source="", dialect=""), {}, {}, statement=node_statement)
    if model is not None:
        shared.activities = {a.id: a for a in model.activities}
        shared.functions = {f.id: f for f in model.functions if f.id is not None}
    return RegionRecovery(region, Location(), shared).recover(), list(_unique(shared.diagnostics))
