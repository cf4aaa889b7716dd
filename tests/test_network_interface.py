"""The network behind one interface: both implementations answer it, and a run picks one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from runtime_helpers import elements, spec

from uml2perf_runtime import Machine
from uml2perf_runtime.engine.context import Context, TracingContext
from uml2perf_runtime.engine.link_context import LinkContext, LinkTracingContext
from uml2perf_runtime.engine.simulation import Simulation
from uml2perf_runtime.platform.interface import Network, PairNetwork, SharedLinkNetwork, network_of

NARVAL = Path(__file__).resolve().parent.parent / "samples" / "machines" / "narval.toml"


def test_a_machine_without_a_topology_has_the_per_pair_network() -> None:
    net = network_of(Machine.load("laptop"))
    assert isinstance(net, PairNetwork) and isinstance(net, Network)
    assert net.routes == "direct" and not net.shares_links
    # laptop: 0.5 us and 10 GB/s inside a node, 50 us and 1.25 GB/s between nodes
    assert net.message_time(0, 0, 1e6) == 0.5e-6 + 1e6 / 10e9
    assert net.message_time(0, 1, 1e6) == 50e-6 + 1e6 / 1.25e9
    assert net.message_line(0, 1, 1.0) == net.pair_line(0, 1, 1.0)


def test_a_topology_has_the_shared_link_network_and_its_routes_price_a_message_alone() -> None:
    net = network_of(Machine.load(str(NARVAL)))
    assert isinstance(net, SharedLinkNetwork) and net.routes == "links" and net.shares_links
    # two nodes under one leaf switch: two hops of 0.5 us, HDR100 (12.5 GB/s) on both
    route, latency, slowest = net.path(0, 1)
    assert len(route) == 2 and latency == pytest.approx(1e-6) and slowest == 12.5e9
    assert net.message_time(0, 1, 1e6) == pytest.approx(1e-6 + 1e6 / 12.5e9, rel=1e-12)
    # inside a node a message costs the per-pair line on either network
    assert net.message_line(3, 3, 1e6) == PairNetwork(net.machine).message_line(3, 3, 1e6)


def test_both_networks_give_the_same_collective_schedules() -> None:
    machine = Machine.load(str(NARVAL))
    node_of = [pid % 2 for pid in range(8)]
    pair = PairNetwork(machine).collective_model(node_of)
    shared = network_of(machine).collective_model(node_of)
    assert pair.offsets("allreduce", 0, 1024.0) == shared.offsets("allreduce", 0, 1024.0)


class _Elem:
    def __init__(self, kind: str) -> None:
        self.kind = kind

    def describe(self) -> str:
        return f"'{self.kind}'"


def test_only_shared_links_decline_the_closed_form_and_only_for_messages_between_nodes() -> None:
    machine = Machine.load(str(NARVAL))
    sending: list[Any] = [_Elem("action"), _Elem("allreduce")]
    assert PairNetwork(machine).analytic_refusal(sending, [0, 1]) is None
    shared = network_of(machine)
    assert shared.analytic_refusal(sending, [0, 0]) is None
    assert shared.analytic_refusal([_Elem("action")], [0, 1]) is None
    reason = shared.analytic_refusal(sending, [0, 1])
    assert reason is not None and "'allreduce'" in reason and "[network.topology]" in reason


@pytest.mark.parametrize(
    ("machine", "tracing", "expected"),
    [
        ("laptop", False, Context),
        ("laptop", True, TracingContext),
        (str(NARVAL), False, LinkContext),
        (str(NARVAL), True, LinkTracingContext),
    ],
)
def test_a_run_picks_its_contexts_from_its_network_once(machine: str, tracing: bool, expected: type) -> None:
    (a,) = elements("A")

    def main(p: Any, v: Any) -> Any:
        yield from p.compute(a, 1.0)

    sim = Simulation(spec(main, [a]), Machine.load(machine), 2, tracing=tracing)
    assert isinstance(sim.network, Network)
    assert {type(ctx) for ctx in sim.contexts} == {expected}
    assert sim.run().time == 1.0
