"""A machine file with intervals: the plain machine of each sample, built from the file's own text.

Every sample is an ordinary :class:`~.machine.Machine` (the simulator and the analytic path
do not know that inputs were uncertain): the file's tables with the drawn numbers put in,
read and checked by :meth:`Machine.from_dict` like any machine file.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from .uncertain import Path, Uncertain, path_text, set_path

#: Keys whose values are whole numbers: a drawn value is rounded.
_WHOLE = ("eager_limit",)


class UncertainMachine:
    """The machine file's tables at the values, and the intervals by key path."""

    def __init__(self, data: dict[str, Any], inputs: tuple[tuple[Path, Uncertain], ...], source: str) -> None:
        self.data = data
        self.inputs = inputs
        self.source = source

    @property
    def names(self) -> list[str]:
        """The inputs as people read them (``network.intra_node.latency``)."""
        return [path_text(path) for path, _ in self.inputs]

    @property
    def intervals(self) -> list[Uncertain]:
        return [interval for _, interval in self.inputs]

    def draw(self, values: Sequence[float]) -> Any:
        """The plain machine whose uncertain inputs take ``values`` (in the order of :attr:`inputs`)."""
        from .machine import Machine

        data = copy.deepcopy(self.data)
        for (path, _), value in zip(self.inputs, values, strict=True):
            key = next((p for p in reversed(path) if isinstance(p, str)), "")
            set_path(data, path, int(round(value)) if key in _WHOLE else float(value))
        return Machine.from_dict(data, source=self.source)
