"""What a generated model module declares: its elements and the model itself.

A generated module declares one :class:`Element` per performance-modelling element (action,
call, loop, communication, pattern...) and one :class:`ModelSpec` that ties the elements to the
generated functions:

* ``init(p, v)`` sets the model variables of one process on the namespace ``v`` (reading
  ``--set`` overrides through ``p.param``);
* ``main(p, v)`` is the generator function of the main activity.

``Element.index`` is the element's position in ``ModelSpec.elements``: the runtime keeps its
statistics in flat lists indexed by it, which is what makes recording an operation a handful
of float additions.  Generated modules reach both names through ``uml2perf_runtime.model``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .engine.records import FrozenRecord


class Element:
    """One performance-modelling element of the UML model.

    ``kind`` is a short word such as ``"action"``, ``"activity"``, ``"loop"``,
    ``"send"``, ``"parallel"``; ``xmi_id`` and ``line`` point back into the XMI
    file so every message and profile row can be traced to the diagram.
    """

    __slots__ = ("index", "name", "kind", "xmi_id", "line")

    def __init__(
        self, index: int, name: str, kind: str = "action", xmi_id: str | None = None, line: int | None = None
    ) -> None:
        self.index = index
        self.name = name
        self.kind = kind
        self.xmi_id = xmi_id
        self.line = line

    def describe(self) -> str:
        """``'A1' (xmi:id=_a1, line 12)``: how messages name this element."""
        where = []
        if self.xmi_id:
            where.append(f"xmi:id={self.xmi_id}")
        if self.line:
            where.append(f"line {self.line}")
        return f"'{self.name}' ({', '.join(where)})" if where else f"'{self.name}'"

    def as_dict(self) -> dict[str, Any]:
        """The element's identity as JSON-ready data."""
        return {"name": self.name, "id": self.xmi_id, "kind": self.kind, "line": self.line}

    def __repr__(self) -> str:
        return f"Element({self.index!r}, {self.name!r}, {self.kind!r}, {self.xmi_id!r}, {self.line!r})"


def _no_init(p: Any, v: Any) -> None:
    """Default ``init``: a model without variables."""


class ModelSpec(FrozenRecord):
    """A generated performance model, ready for :func:`uml2perf_runtime.simulate`.

    ``parameters`` is a sequence of ``(name, default)`` pairs: the model
    variables that ``--set NAME=VALUE`` may override; the type of the default
    decides how a textual override is converted.  ``activities`` describes the model's
    activities for tools, as ``(name, xmi_id, function)`` (older modules: ``(name, xmi_id)``);
    ``--activity NAME`` runs one of them.  ``required`` lists the variables the model declares
    without a value, as ``(name, where, activity xmi_id)`` (or ``(name, where)``): a run of that
    activity must be given each one.  ``operations`` names the array operations its actions
    name (their ``operations`` tags): the only ones of a machine's ``[operations]`` it can read.

    Immutable and compared by value, as a frozen dataclass would be; a plain class because
    generating a dataclass's methods costs more at import than the rest of this module.
    """

    _FIELDS = (
        "name",
        "source",
        "elements",
        "init",
        "main",
        "parameters",
        "activities",
        "required",
        "operations",
    )

    name: str
    source: str
    elements: Sequence[Element]
    init: Callable[[Any, Any], Any]
    main: Callable[[Any, Any], Any] | None
    parameters: Sequence[tuple[str, Any]]
    activities: Sequence[Any]
    required: Sequence[tuple[str, ...]]
    operations: Sequence[str]

    def __init__(
        self,
        name: str,
        source: str,
        elements: Sequence[Element],
        init: Callable[[Any, Any], Any] = _no_init,
        main: Callable[[Any, Any], Any] | None = None,
        parameters: Sequence[tuple[str, Any]] = (),
        activities: Sequence[Any] = (),
        required: Sequence[tuple[str, ...]] = (),
        operations: Sequence[str] = (),
    ) -> None:
        put = object.__setattr__
        put(self, "name", name)
        put(self, "source", source)
        put(self, "elements", elements)
        put(self, "init", init)
        put(self, "main", main)
        put(self, "parameters", parameters)
        put(self, "activities", activities)
        put(self, "required", required)
        put(self, "operations", tuple(operations))


__all__ = ["Element", "ModelSpec"]
