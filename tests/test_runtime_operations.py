"""Both process contexts take the arguments of the table of operations (runtime/operations/registry.py)."""

from __future__ import annotations

import inspect
from ast import literal_eval
from typing import Any

import pytest

from uml2perf_runtime.analysis.analytic import AnalyticContext
from uml2perf_runtime.engine.context import Context, GeneralContext, TracingContext
from uml2perf_runtime.engine.link_context import LinkContext, LinkTracingContext
from uml2perf_runtime.engine.process import GeneratedContext, ProcessContext
from uml2perf_runtime.operations.registry import OPERATIONS, route_function

CLASSES = (Context, GeneralContext, TracingContext, LinkContext, LinkTracingContext, AnalyticContext)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_signature_follows_the_table(cls: type, name: str) -> None:
    op = OPERATIONS[name]
    parameters = list(inspect.signature(getattr(cls, name)).parameters.values())
    assert [p.name for p in parameters] == ["self", "elem", *op.argument_names, "cost"]
    for parameter, declared in zip(parameters[2:-1], op.parameters, strict=True):
        default = declared.default
        expected: Any = inspect.Parameter.empty if default is None else literal_eval(default)
        assert parameter.default == expected, (cls.__name__, name, parameter.name)
    assert parameters[-1].default == 0.0


def test_the_contract_leaves_the_operations_to_the_table() -> None:
    """Generated code's ``p`` adds the table's operations; the written contract lists none of them."""
    assert not set(OPERATIONS) & set(vars(ProcessContext))
    assert "__getattr__" in vars(GeneratedContext)


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_every_route_named_in_the_table_exists(name: str) -> None:
    routes = OPERATIONS[name].routes
    for dotted in (routes.pair, routes.links):
        if dotted is not None:
            assert callable(route_function(dotted))


def test_the_link_contexts_take_the_link_routes() -> None:
    """On shared links the point-to-point methods call over_links; the collectives its schedule runner."""
    from uml2perf_runtime.operations import over_links

    for name in ("send", "recv", "isend", "irecv"):
        assert over_links.__dict__[name] is LinkContext.__dict__[name].__globals__[f"_route_{name}"]
    assert "_collective" in vars(LinkContext)


def test_registering_after_the_table_was_read_is_refused() -> None:
    from uml2perf_runtime.operations import registry

    late = registry.collective("late", registry.parameter("size", "0"), schedules=(("one", lambda p, n: []),))
    with pytest.raises(RuntimeError, match="before anything else"):
        registry.register(late)
    assert "late" not in OPERATIONS


def test_keyword_calls_reach_the_direct_route() -> None:
    """Generated code may call ``p.send(E, dest=..., size=..., tag=..., cost=...)``: same result."""
    from runtime_helpers import elements, machine, spec

    from uml2perf_runtime.engine.simulation import Simulation

    s, r = elements("S", "R")

    def positional(p: Any, v: Any) -> Any:
        yield from p.send(s, (p.pid + 1) % p.nprocs, 64, 1, 0.0)
        yield from p.recv(r, (p.pid - 1) % p.nprocs, 64, 1, 0.0)

    def keywords(p: Any, v: Any) -> Any:
        yield from p.send(s, dest=(p.pid + 1) % p.nprocs, size=64, tag=1, cost=0.0)
        yield from p.recv(r, source=(p.pid - 1) % p.nprocs, size=64, tag=1, cost=0.0)

    times = [
        Simulation(spec(main, [s, r]), machine(nodes=2, cores=2), 4).run().time
        for main in (positional, keywords)
    ]
    assert times[0] == times[1] > 0.0


def test_every_part_reads_its_operations_from_the_table() -> None:
    """The profile, the neutral model, machine files, findings, critical path and schedules."""
    from uml2perf.model import COMMUNICATION_ROLES, Role, normalise_name
    from uml2perf.profile.roles import ROLES
    from uml2perf_runtime.analysis.properties import WAIT_PROPERTY
    from uml2perf_runtime.operations.registry import COLLECTIVES, WAITS_FOR
    from uml2perf_runtime.platform.machine import COLLECTIVE_OPERATIONS
    from uml2perf_runtime.platform.network import ALGORITHMS

    assert {role.value for role in COMMUNICATION_ROLES} == set(OPERATIONS)
    for name, op in OPERATIONS.items():
        role, tags = ROLES[normalise_name(op.stereotype)]
        assert role is Role(name) and tags[: len(op.tags)] == op.tags
        assert WAIT_PROPERTY[name] == op.wait_property
        assert name in WAITS_FOR[op.partner]
    assert ROLES["send+"][1][:4] == ("dest", "size", "tag", "cost")
    assert ROLES["wait+"][1][:1] == ("cost",)
    assert tuple(COLLECTIVE_OPERATIONS) == COLLECTIVES == tuple(ALGORITHMS)
