"""The communication operations a process can call: one table, read by every part that needs it.

Each operation is one entry: its signature (arguments and defaults), its profile stereotype and
the tags that stereotype takes, what it synchronises (scope), whom it waits for when it blocks
(its partner rule), and which performance property that blocked time is.  The profile
(``uml2perf/profile/roles.py``: stereotypes and tags), the generator (which arguments the tags
become, and their defaults), the neutral model's communication roles, the contexts (checked by
``tests/test_runtime_operations.py``), the machine file's ``[collectives]`` keys, the findings
(``analysis/properties.py``) and the critical path (``analysis/critical_path.py``) read it, so
adding an operation or an argument happens here, and they cannot drift apart.

An entry also names the operation's *routes*: the functions that simulate it on the per-pair
network and on shared links (:class:`Routes`, as ``module:function`` inside the runtime, bound
into the contexts' methods when their classes are made: :func:`bind_operations`), and its
*analytic form* (``"schedule"``: the closed form evaluates the collective's schedule; None: the
operation needs the simulator).  How a collective moves its bytes is its schedule: the built-in
collectives' schedules are ``ALGORITHMS`` in ``platform/network.py``; a collective added here
brings its own (``schedules``), which that table takes in.  The methods of the contexts, the
neutral model's roles (``uml2perf/model.py``) and the machine file's ``[collectives]`` keys are
derived from this table; ``docs/architecture.md`` ("Adding a collective") lists what an addition
touches, and ``tests/test_operation_unit.py`` adds one end to end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

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


#: How the closed form treats an operation: evaluates its schedule, or declines (None).
Analytic = Literal["schedule"] | None
#: A collective's schedule on ``p`` processes of ``n`` bytes (``platform.network.Step`` list).
Builder = Callable[[int, float], list[Any]]


class Routes(FrozenRecord):
    """The functions that simulate an operation: on the per-pair network and on shared links.

    Each is ``"module:function"`` inside the runtime (``operations.point_to_point:isend``),
    called as ``function(ctx, elem, *arguments, cost)``; named rather than imported, because
    those modules read this table.  A collective's routes are the generic ones
    (``Context._collective`` picks the per-pair direct or general route, ``over_links`` runs
    the schedule on links) and need no names.  A context class keeps a method it writes out
    itself (the direct routes of ``send`` and ``recv``).
    """

    __slots__ = _FIELDS = ("pair", "links")
    pair: str | None
    links: str | None

    def __init__(self, pair: str | None = None, links: str | None = None) -> None:
        object.__setattr__(self, "pair", pair)
        object.__setattr__(self, "links", links)


class Operation(FrozenRecord):
    """A communication operation: its runtime method name, its arguments, what it synchronises,
    whom it waits for and what that waiting is called, how it is simulated and its closed form."""

    __slots__ = _FIELDS = (
        "name",
        "parameters",
        "scope",
        "partner",
        "wait_property",
        "blocking",
        "routes",
        "analytic",
        "reducing",
        "schedules",
    )
    name: str
    parameters: tuple[Parameter, ...]
    scope: Scope
    partner: Partner
    wait_property: WaitProperty
    blocking: bool
    routes: Routes
    analytic: Analytic
    reducing: bool
    #: a collective's own schedules ``(algorithm, builder)``, the first the default (the
    #: built-in collectives have theirs in ``platform/network.py``)
    schedules: tuple[tuple[str, Builder], ...]

    def __init__(
        self,
        name: str,
        parameters: tuple[Parameter, ...],
        scope: Scope,
        partner: Partner,
        wait_property: WaitProperty,
        blocking: bool = True,
        routes: Routes | None = None,
        analytic: Analytic = None,
        reducing: bool = False,
        schedules: tuple[tuple[str, Builder], ...] = (),
    ) -> None:
        put = object.__setattr__
        put(self, "name", name)
        put(self, "parameters", parameters)
        put(self, "scope", scope)
        put(self, "partner", partner)
        put(self, "wait_property", wait_property)
        put(self, "blocking", blocking)
        put(self, "routes", routes if routes is not None else Routes())
        put(self, "analytic", analytic)
        put(self, "reducing", reducing)
        put(self, "schedules", schedules)

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


def _p2p(name: str) -> Routes:
    return Routes(f"operations.point_to_point:{name}", f"operations.over_links:{name}")


def _send(name: str, blocking: bool = True) -> Operation:
    return Operation(
        name,
        (_p("dest", None), _p("size", "0"), _p("tag", "0")),
        "point-to-point",
        "receiver",
        "late_receiver",
        blocking,
        _p2p(name),
    )


def _recv(name: str, blocking: bool = True) -> Operation:
    return Operation(
        name,
        (_p("source", "-1"), _p("size", "0"), _p("tag", "0")),
        "point-to-point",
        "sender",
        "late_sender",
        blocking,
        _p2p(name),
    )


def collective(
    name: str,
    *parameters: Parameter,
    reducing: bool = False,
    schedules: tuple[tuple[str, Builder], ...] = (),
) -> Operation:
    """The entry of a collective: its arguments after the element (``root``, ``size``), whether
    it combines what it receives (a machine's ``reduce_cost``), and its own schedules if it is
    not one of the built-in collectives."""
    return Operation(
        name,
        parameters,
        "collective",
        "last_arrival",
        "synchronization",
        analytic="schedule",
        reducing=reducing,
        schedules=schedules,
    )


def parameter(name: str, default: str | None) -> Parameter:
    """An argument with a stereotype tag of the same name, default as Python source."""
    return Parameter(name, default)


_WAIT_ROUTE = "operations.point_to_point:wait"

#: Every operation, by the name of the runtime method that performs it.
OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        _send("send"),
        _recv("recv"),
        _send("isend", blocking=False),
        _recv("irecv", blocking=False),
        Operation(
            "wait",
            (Parameter("requests", "None", tag=False),),
            "local",
            "sender",
            "late_sender",
            routes=Routes(_WAIT_ROUTE, _WAIT_ROUTE),
        ),
        Operation(
            "sendrecv",
            (_p("dest", None), _p("source", None), _p("size", "0"), _p("recvsize", "None"), _p("tag", "0")),
            "point-to-point",
            "sender",
            "late_sender",
            routes=Routes("operations.composite:sendrecv", "operations.composite:sendrecv"),
        ),
        collective("barrier"),
        collective("bcast", _p("root", "0"), _p("size", "0")),
        collective("reduce", _p("root", "0"), _p("size", "0"), reducing=True),
        collective("allreduce", _p("size", "0"), reducing=True),
        collective("gather", _p("root", "0"), _p("size", "0")),
        collective("scatter", _p("root", "0"), _p("size", "0")),
        collective("allgather", _p("size", "0")),
        collective("alltoall", _p("size", "0")),
        collective("reduce_scatter", _p("size", "0"), reducing=True),
        collective("scan", _p("size", "0"), reducing=True),
        collective("exscan", _p("size", "0"), reducing=True),
    )
}

#: Wildcard source of a receive (MPI_ANY_SOURCE).
ANY_SOURCE = -1


def _derive() -> None:
    """(Re)compute the tables every reader imports from :data:`OPERATIONS`."""
    global COLLECTIVES, WORK_KINDS, REDUCING, WAIT_PROPERTIES, WAITS_FOR
    #: The collective operations, in table order.
    COLLECTIVES = tuple(name for name, op in OPERATIONS.items() if op.scope == "collective")
    #: Kinds of elements that do work of their own: actions, critical sections and every
    #: operation.  Any other kind (loops, calls, thread regions, pipelines, task pools) is a
    #: container whose time is the time of its parts.
    WORK_KINDS = frozenset({"action", "critical", *OPERATIONS})
    #: Collectives that combine what they receive: a machine's ``reduce_cost`` is work on each
    #: rank's core for them (simulated and analytic contexts alike).
    REDUCING = frozenset(name for name, op in OPERATIONS.items() if op.reducing)
    #: Per operation, the property its blocked time is (read by ``analysis/properties.py``).
    WAIT_PROPERTIES = {name: op.wait_property for name, op in OPERATIONS.items()}
    #: Operations whose blocked call waits for the given partner (read by the critical path).
    WAITS_FOR = {
        partner: frozenset(name for name, op in OPERATIONS.items() if op.partner == partner)
        for partner in ("sender", "receiver", "last_arrival")
    }


COLLECTIVES: tuple[str, ...]
WORK_KINDS: frozenset[str]
REDUCING: frozenset[str]
WAIT_PROPERTIES: dict[str, str]
WAITS_FOR: dict[str, frozenset[str]]
_derive()


#: Modules that derive something from the table when they are imported.
_READERS = (
    "uml2perf_runtime.engine.context",
    "uml2perf_runtime.engine.link_context",
    "uml2perf_runtime.analysis.analytic",
    "uml2perf_runtime.analysis.properties",
    "uml2perf_runtime.analysis.critical_path",
    "uml2perf_runtime.platform.network",
    "uml2perf_runtime.platform.machine",
    "uml2perf.model",
    "uml2perf.profile.roles",
    "uml2perf.handlers.python.handler",
)


def register(op: Operation) -> None:
    """Add an operation to the table (an extension's collective, a test's toy one).

    Every other part of the runtime and the generator reads the table when it is imported
    (methods, roles, schedules, machine keys), so registering happens first, right after
    importing this module and before anything else of ``uml2perf`` or its runtime.
    """
    import sys

    readers = [name for name in _READERS if name in sys.modules]
    if readers:
        raise RuntimeError(
            f"operation {op.name!r} is registered after {', '.join(readers)} read the table: "
            "register operations right after importing uml2perf_runtime.operations.registry, "
            "before anything else of uml2perf"
        )
    if op.name in OPERATIONS:
        raise ValueError(f"operation {op.name!r} is already in the table")
    if op.scope == "collective" and not op.schedules:
        raise ValueError(f"collective {op.name!r} needs its schedules (no built-in one has its name)")
    OPERATIONS[op.name] = op
    _derive()


# ---------------------------------------------------------------------------------------------
# Methods bound from the table
# ---------------------------------------------------------------------------------------------


def signature_source(op: Operation) -> str:
    """``self, elem, dest, size=0, tag=0, cost=0.0``: the method's parameters, from the table."""
    arguments = [name if default is None else f"{name}={default}" for name, default in _pairs(op)]
    return ", ".join(["self", "elem", *arguments, "cost=0.0"])


def _pairs(op: Operation) -> list[tuple[str, str | None]]:
    return [(parameter.name, parameter.default) for parameter in op.parameters]


def route_function(dotted: str) -> Callable[..., Any]:
    """The function a :class:`Routes` entry names (``operations.over_links:send``)."""
    from importlib import import_module

    module, _, function = dotted.partition(":")
    found: Callable[..., Any] = getattr(import_module(f"{__package__.rpartition('.')[0]}.{module}"), function)
    return found


def bind_operations(cls: type, body: Callable[[Operation], str | None], names: dict[str, Any]) -> type:
    """Give ``cls`` one method per operation of the table that it does not write out itself.

    ``body(op)`` is the method's body as Python source (one statement per line, indented by
    nothing), or None for no method; ``names`` are the globals the bodies use.  The method's
    parameters are the table's (:func:`signature_source`), so generated code's keyword calls
    and defaults hold; the methods are ordinary functions, as fast as written-out ones.
    """
    sources = []
    for name, op in OPERATIONS.items():
        if name in cls.__dict__ and not getattr(cls.__dict__[name], "_from_table", False):
            continue
        text = body(op)
        if text is not None:
            lines = "\n".join(f"    {line}" for line in text.splitlines())
            sources.append(f"def {name}({signature_source(op)}):\n{lines}\n")
    # one compilation for all of them: a class is made once per process, at import
    scope: dict[str, Any] = dict(names)
    exec(compile("\n".join(sources), f"<operations of {cls.__name__}>", "exec"), scope)  # noqa: S102
    for name, op in OPERATIONS.items():
        method = scope.get(name)
        if method is None:
            continue
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        method.__module__ = cls.__module__
        method.__doc__ = f"``{op.stereotype}``: bound from the table of operations (operations/registry.py)."
        method._from_table = True
        setattr(cls, name, method)
    return cls
