"""The communication operations a process can call: one table, read by every part that needs it.

The generator (which arguments a stereotype's tags become, and their defaults), the simulating
context, and the analytic context all read their signatures from :data:`OPERATIONS`, so adding
an operation or an argument happens in one place and the three cannot drift apart.
"""

from __future__ import annotations

from typing import Literal

from ..engine.records import FrozenRecord

#: What an operation synchronises: one partner, every process, or the process's own requests.
Scope = Literal["point-to-point", "collective", "local"]


class Parameter(FrozenRecord):
    """One argument of an operation, after the element: its name and default as Python source.

    ``default`` is None for a required argument (a send without a destination means nothing).
    """

    __slots__ = _FIELDS = ("name", "default")
    name: str
    default: str | None

    def __init__(self, name: str, default: str | None) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "default", default)


class Operation(FrozenRecord):
    """A communication operation: its runtime method name, its arguments, what it synchronises."""

    __slots__ = _FIELDS = ("name", "parameters", "scope", "blocking")
    name: str
    parameters: tuple[Parameter, ...]
    scope: Scope
    blocking: bool

    def __init__(
        self, name: str, parameters: tuple[Parameter, ...], scope: Scope, blocking: bool = True
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "parameters", parameters)
        object.__setattr__(self, "scope", scope)
        object.__setattr__(self, "blocking", blocking)

    @property
    def rooted(self) -> bool:
        """True for collectives with a root process (bcast, reduce, gather, scatter)."""
        return any(parameter.name == "root" for parameter in self.parameters)

    @property
    def argument_names(self) -> tuple[str, ...]:
        """The argument names in call order (every call also takes a final ``cost``)."""
        return tuple(parameter.name for parameter in self.parameters)


def _p(name: str, default: str | None) -> Parameter:
    return Parameter(name, default)


#: Every operation, by the name of the runtime method that performs it.
OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        Operation("send", (_p("dest", None), _p("size", "0"), _p("tag", "0")), "point-to-point"),
        Operation("recv", (_p("source", "-1"), _p("size", "0"), _p("tag", "0")), "point-to-point"),
        Operation(
            "isend", (_p("dest", None), _p("size", "0"), _p("tag", "0")), "point-to-point", blocking=False
        ),
        Operation(
            "irecv", (_p("source", "-1"), _p("size", "0"), _p("tag", "0")), "point-to-point", blocking=False
        ),
        Operation("wait", (_p("requests", "None"),), "local"),
        Operation("barrier", (), "collective"),
        Operation("bcast", (_p("root", "0"), _p("size", "0")), "collective"),
        Operation("reduce", (_p("root", "0"), _p("size", "0")), "collective"),
        Operation("allreduce", (_p("size", "0"),), "collective"),
        Operation("gather", (_p("root", "0"), _p("size", "0")), "collective"),
        Operation("scatter", (_p("root", "0"), _p("size", "0")), "collective"),
        Operation("allgather", (_p("size", "0"),), "collective"),
        Operation("alltoall", (_p("size", "0"),), "collective"),
    )
}

#: The collective operations, in table order.
COLLECTIVES: tuple[str, ...] = tuple(name for name, op in OPERATIONS.items() if op.scope == "collective")

#: Kinds of elements that do work of their own: actions, critical sections and every operation.
#: Any other kind (loops, calls, thread regions, pipelines, task pools) is a container whose time is
#: the time of its parts.
WORK_KINDS: frozenset[str] = frozenset({"action", "critical", *OPERATIONS})

#: Wildcard source of a receive (MPI_ANY_SOURCE).
ANY_SOURCE = -1

#: Collectives that combine what they receive: a machine's ``reduce_cost`` is work on each
#: rank's core for them (simulated and analytic contexts alike).
REDUCING = frozenset({"reduce", "allreduce"})
