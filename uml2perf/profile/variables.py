"""Which model variables a run uses, and which of them still need a value."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..errors import ModelError
from ..model import (
    Activity,
    Model,
    Variable,
)


def effective_variables(model: Model, main: Activity | None = None) -> tuple[Variable, ...]:
    """The global variables of a run, one per name, as generated code declares them.

    Model globals (a ``globals`` class, the sidecar, file-wide analysis contexts)
    come first, then the main activity's attributes, then the other activities';
    the first declaration of a name wins.
    """
    ordered: list[Variable] = list(model.globals)
    if main is not None:
        ordered.extend(main.attributes)
    for activity in model.activities:
        if activity is not main:
            ordered.extend(activity.attributes)
    return unique_variables(ordered)


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
#: PerfSpec tags whose values are plain text, not expressions.
_TEXT_TAGS = frozenset({"name", "id", "type"})


def _reachable_activities(model: Model, main: Activity | None) -> list[Activity]:
    """``main`` and every activity it calls, directly or not; every activity when there is no main."""
    if main is None:
        return list(model.activities)
    by_id = {a.id: a for a in model.activities}
    found: dict[str, Activity] = {main.id: main}
    stack = [main]
    while stack:
        for node in stack.pop().walk():
            callee = by_id.get(node.behavior) if node.behavior else None
            if callee is not None and callee.id not in found:
                found[callee.id] = callee
                stack.append(callee)
    return list(found.values())


def used_names(model: Model, main: Activity | None = None) -> set[str]:
    """Every identifier the texts of a run may read: tags, code, guards, probabilities, defaults, functions.

    A cheap superset (identifiers found by a regular expression), used to ask
    only for the variables a run needs.
    """
    texts: list[str] = [f.body for f in model.functions]
    for activity in _reachable_activities(model, main):
        if activity.perf is not None:
            texts.extend(v for k, v in activity.perf.tags if k not in _TEXT_TAGS)
        for node in activity.walk():
            if node.perf is not None:
                texts.extend(v for k, v in node.perf.tags if k not in _TEXT_TAGS)
            if node.code:
                texts.append(node.code)
            for clause in node.clauses:
                if clause.guard:
                    texts.append(clause.guard)
            if node.loop is not None and node.loop.decider:
                texts.append(node.loop.decider)
        regions = [activity.region] + [n.region for n in activity.walk() if n.region is not None]
        for region in regions:
            for edge in region.edges:
                texts.extend(t for t in (edge.guard, edge.probability) if t)
    texts.extend(v.default for v in effective_variables(model, main) if v.default)
    names: set[str] = set()
    for text in texts:
        names.update(_IDENTIFIER.findall(text))
    return names


def unset_variables(model: Model, main: Activity | None = None, given: Iterable[str] = ()) -> list[Variable]:
    """Variables a run of ``main`` reads that have no value (:attr:`Variable.required`) and ``given`` lacks.

    Parameters of an analysis context that nothing in the run reads are not
    asked for: a value for them could not change the prediction.
    """
    supplied = set(given)
    missing = [v for v in effective_variables(model, main) if v.required and v.name not in supplied]
    if not missing:
        return []
    used = used_names(model, main)
    return [v for v in missing if v.name in used]


def unset_variables_error(model: Model, missing: list[Variable]) -> ModelError:
    """The error ``run`` gives before simulating when variables have no value."""
    names = [v.name for v in missing]
    shown = ", ".join(names)
    settings = " ".join(f"--set {n}=VALUE" for n in names[:6]) + (" ..." if len(names) > 6 else "")
    table = "\n".join(f'    {n} = "VALUE"' for n in names[:6]) + ("\n    ..." if len(names) > 6 else "")
    return ModelError(
        f"{len(names)} variable{'s' if len(names) > 1 else ''} without a value: {shown} "
        "(declared by a MARTE analysis context or used as $name in a MARTE value, with no value given)",
        missing[0].location,
        hint=f"give each a value on the command line: {settings}\n"
        f"  or in a sidecar file passed with --sidecar FILE.toml:\n    [variables]\n{table}",
    )


def unique_variables(variables: Iterable[Variable]) -> tuple[Variable, ...]:
    """Variables with the first of each name kept, in order."""
    seen: set[str] = set()
    result: list[Variable] = []
    for variable in variables:
        if variable.name not in seen:
            seen.add(variable.name)
            result.append(variable)
    return tuple(result)
