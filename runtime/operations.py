"""The communication operations a process can call: one table, read by every part that needs it.

The generator (which arguments a stereotype's tags become, and their defaults), the simulating
context, and the analytic context all read their signatures from :data:`OPERATIONS`, so adding
an operation or an argument happens in one place and the three cannot drift apart.
"""

from __future__ import annotations

from typing import Any, Literal

#: What an operation synchronises: one partner, every process, or the process's own requests.
Scope = Literal["point-to-point", "collective", "local"]


class _Frozen:
    """Immutable slotted records compared by value (what a frozen dataclass gives, built at once).

    Plain classes rather than dataclasses: generating a dataclass's methods costs more at import
    than everything else in this module, and every simulation imports it.
    """

    __slots__: tuple[str, ...] = ()

    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{self.__class__.__qualname__}({fields})"


class Parameter(_Frozen):
    """One argument of an operation, after the element: its name and default as Python source.

    ``default`` is None for a required argument (a send without a destination means nothing).
    """

    __slots__ = ("name", "default")
    name: str
    default: str | None

    def __init__(self, name: str, default: str | None) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "default", default)


class Operation(_Frozen):
    """A communication operation: its runtime method name, its arguments, what it synchronises."""

    __slots__ = ("name", "parameters", "scope", "blocking")
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

#: Wildcard source of a receive (MPI_ANY_SOURCE).
ANY_SOURCE = -1
