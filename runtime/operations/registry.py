"""The communication operations a process can call: one table, read by every part that needs it.

Each operation is one entry: its signature (arguments and defaults), its profile stereotype and
the tags that stereotype takes, what it synchronises (scope), whom it waits for when it blocks
(its partner rule), and which performance property that blocked time is.  The profile
(``uml2perf/profile/roles.py``: stereotypes and tags), the generator (which arguments the tags
become, and their defaults), the neutral model's communication roles, the contexts (checked by
``tests/test_runtime_operations.py``), the machine file's ``[collectives]`` keys, the findings
(``analysis/properties.py``) and the critical path (``analysis/critical_path.py``) read it, so
adding an operation or an argument happens here, and they cannot drift apart.  How a collective
moves its bytes is its schedule in ``platform/network.py`` (``ALGORITHMS``, one per collective of
this table, checked by the tests).
"""

from __future__ import annotations

from typing import Literal

from ..engine.records import FrozenRecord

#: What an operation synchronises: one partner, every process, or the process's own requests.
Scope = Literal["point-to-point", "collective", "local"]
#: Whom a blocked call waits for: the sender of the message it takes, the receiver of the message
#: it sends (rendezvous), or the last process to arrive at the collective.
Partner = Literal["sender", "receiver", "last_arrival"]
#: The performance property that time blocked in the operation is.
WaitProperty = Literal["late_sender", "late_receiver", "synchronization"]


class Parameter(FrozenRecord):
    """One argument of an operation, after the element: its name and default as Python source.

    ``default`` is None for a required argument (a send without a destination means nothing).
    ``tag`` says whether the stereotype has a tag of that name (a wait's requests have none: the
    generated code passes every pending request).
    """

    __slots__ = _FIELDS = ("name", "default", "tag")
    name: str
    default: str | None
    tag: bool

    def __init__(self, name: str, default: str | None, tag: bool = True) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "default", default)
        object.__setattr__(self, "tag", tag)


class Operation(FrozenRecord):
    """A communication operation: its runtime method name, its arguments, what it synchronises,
    whom it waits for and what that waiting is called."""

    __slots__ = _FIELDS = ("name", "parameters", "scope", "partner", "wait_property", "blocking")
    name: str
    parameters: tuple[Parameter, ...]
    scope: Scope
    partner: Partner
    wait_property: WaitProperty
    blocking: bool

    def __init__(
        self,
        name: str,
        parameters: tuple[Parameter, ...],
        scope: Scope,
        partner: Partner,
        wait_property: WaitProperty,
        blocking: bool = True,
    ) -> None:
        put = object.__setattr__
        put(self, "name", name)
        put(self, "parameters", parameters)
        put(self, "scope", scope)
        put(self, "partner", partner)
        put(self, "wait_property", wait_property)
        put(self, "blocking", blocking)

    @property
    def stereotype(self) -> str:
        """The profile's stereotype of the operation (``send+``, ``allreduce+``...)."""
        return f"{self.name}+"

    @property
    def tags(self) -> tuple[str, ...]:
        """The stereotype's tags, in argument order, ending with ``cost`` (the local cost)."""
        return tuple(parameter.name for parameter in self.parameters if parameter.tag) + ("cost",)

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


def _send(name: str, blocking: bool = True) -> Operation:
    return Operation(
        name,
        (_p("dest", None), _p("size", "0"), _p("tag", "0")),
        "point-to-point",
        "receiver",
        "late_receiver",
        blocking,
    )


def _recv(name: str, blocking: bool = True) -> Operation:
    return Operation(
        name,
        (_p("source", "-1"), _p("size", "0"), _p("tag", "0")),
        "point-to-point",
        "sender",
        "late_sender",
        blocking,
    )


def _collective(name: str, *parameters: Parameter) -> Operation:
    return Operation(name, parameters, "collective", "last_arrival", "synchronization")


#: Every operation, by the name of the runtime method that performs it.
OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        _send("send"),
        _recv("recv"),
        _send("isend", blocking=False),
        _recv("irecv", blocking=False),
        Operation("wait", (Parameter("requests", "None", tag=False),), "local", "sender", "late_sender"),
        _collective("barrier"),
        _collective("bcast", _p("root", "0"), _p("size", "0")),
        _collective("reduce", _p("root", "0"), _p("size", "0")),
        _collective("allreduce", _p("size", "0")),
        _collective("gather", _p("root", "0"), _p("size", "0")),
        _collective("scatter", _p("root", "0"), _p("size", "0")),
        _collective("allgather", _p("size", "0")),
        _collective("alltoall", _p("size", "0")),
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

#: Per operation, the property its blocked time is (read by ``analysis/properties.py``).
WAIT_PROPERTIES: dict[str, str] = {name: op.wait_property for name, op in OPERATIONS.items()}

#: Operations whose blocked call waits for the given partner (read by the critical path).
WAITS_FOR: dict[str, frozenset[str]] = {
    partner: frozenset(name for name, op in OPERATIONS.items() if op.partner == partner)
    for partner in ("sender", "receiver", "last_arrival")
}
