"""Choosing where ``device = "auto"`` actions run: the mapping that minimises the predicted time.

After the approach of the pattern-mapping paper: the candidate processors of
each action are the CPU and every device kind of the machine, and a mapping is
judged by the predicted time of the *whole* model (so transfers, queueing for
a shared device and overlap with other work all count, not the action's local
time).  Where the space is small (at most :data:`EXHAUSTIVE_LIMIT` mappings)
every mapping is simulated; otherwise the actions are decided one after another
in flow order, each trying every processor together with every combination for
the next :data:`LOOK_AHEAD` actions (later ones stay where they are), and
keeping the best choice for the first.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

__all__ = ["EXHAUSTIVE_LIMIT", "LOOK_AHEAD", "choose_mapping"]

#: Mappings simulated exhaustively at most (processors ** actions).
EXHAUSTIVE_LIMIT = 256
#: Actions looked ahead when the space is searched step by step.
LOOK_AHEAD = 2

Mapping = dict[int, str | None]


def choose_mapping(
    actions: Sequence[int], processors: Sequence[str | None], evaluate: Callable[[Mapping], float]
) -> tuple[Mapping, dict[str, float]]:
    """The best mapping of ``actions`` (element indices, flow order) and the all-CPU / all-device times.

    ``processors`` lists None (a CPU core) and the device kinds; ``evaluate``
    predicts the model's time under a mapping.  Ties go to the earlier
    processor in ``processors`` (the CPU first), so a device is chosen only
    when it makes the whole model faster.
    """
    cache: dict[tuple[str | None, ...], float] = {}

    def cost(mapping: Mapping) -> float:
        key = tuple(mapping.get(a) for a in actions)
        if key not in cache:
            cache[key] = evaluate(mapping)
        return cache[key]

    alternatives = {(p or "cpu"): cost(dict.fromkeys(actions, p)) for p in processors}
    if len(processors) ** len(actions) <= EXHAUSTIVE_LIMIT:
        best = min(
            (
                dict(zip(actions, combo, strict=True))
                for combo in itertools.product(processors, repeat=len(actions))
            ),
            key=cost,
        )
        return best, alternatives
    current: Mapping = dict.fromkeys(actions, processors[0])
    for position, action in enumerate(actions):
        ahead = actions[position + 1 : position + 1 + LOOK_AHEAD]
        best_choice, best_time = current[action], float("inf")
        for choice in processors:
            for combo in itertools.product(processors, repeat=len(ahead)):
                trial = {**current, action: choice, **dict(zip(ahead, combo, strict=True))}
                value = cost(trial)
                if value < best_time:
                    best_choice, best_time = choice, value
        current[action] = best_choice
    return current, alternatives
