"""Messages sharing the links of a machine's topology: hand-computed cases.

Every link below has no latency and 1 GB/s, every message is 1 GB (``GB``), so a message alone
takes 1 s and two sharing one link direction take 2 s each (max-min fair halves).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from typing import Any

import pytest

from uml2perf_runtime import Element, Link, Machine, MachineError, ModelSpec, simulate
from uml2perf_runtime.platform.topology import Topology, TopologyLink, fabric

GB = 1e9
S = Element(0, "S", "send")
R = Element(1, "R", "recv")
COLL = Element(2, "COLL", "collective")
ELEMENTS = (S, R, COLL)


def machine(nodes: int, topology: Topology | None, **kw: Any) -> Machine:
    return Machine(
        nodes=nodes,
        cores_per_node=1,
        intra_node=Link(0.0, 10 * GB),
        inter_node=Link(0.0, GB),
        eager_limit=kw.pop("eager_limit", 2 * 10**9),
        topology=topology,
        **kw,
    )


def run(main: Callable[[Any, Any], Any], procs: int, mach: Machine) -> Any:
    return simulate(ModelSpec("links", "test", ELEMENTS, main=main), mach, procs=procs)


def pairs(plan: dict[int, int]) -> Callable[[Any, Any], Any]:
    """Each key sends 1 GB to its value; each value receives from its key."""
    receives = {dst: src for src, dst in plan.items()}

    def main(p: Any, v: Any) -> Any:
        if p.pid in plan:
            yield from p.send(S, plan[p.pid], GB, 0)
        if p.pid in receives:
            yield from p.recv(R, receives[p.pid], GB, 0)

    return main


def star(**kw: Any) -> Topology:
    return Topology("star", "", TopologyLink(0.0, GB), **kw)


def test_two_flows_into_one_node_of_a_star_take_2s() -> None:
    result = run(_two_into_one, 3, machine(3, star()))
    assert result.time == pytest.approx(2.0, rel=1e-12)


def _two_into_one(p: Any, v: Any) -> Any:
    if p.pid in (0, 1):
        yield from p.send(S, 2, GB, 0)
    else:
        yield from p.recv(R, 0, GB, 0)
        yield from p.recv(R, 1, GB, 0)


def test_without_a_topology_the_same_flows_take_1s_as_before() -> None:
    result = run(_two_into_one, 3, machine(3, None))
    assert result.time == pytest.approx(1.0, rel=1e-12)


def test_two_pairs_across_a_fat_tree_with_one_top_switch_take_2s() -> None:
    tree = Topology("fat_tree", "2;2,2;1,1;1,1", TopologyLink(0.0, GB))
    result = run(pairs({0: 2, 1: 3}), 4, machine(4, tree))
    assert result.time == pytest.approx(2.0, rel=1e-12)


def test_two_pairs_across_a_fat_tree_with_two_top_switches_take_1s() -> None:
    tree = Topology("fat_tree", "2;2,2;1,2;1,1", TopologyLink(0.0, GB))
    result = run(pairs({0: 2, 1: 3}), 4, machine(4, tree))
    assert result.time == pytest.approx(1.0, rel=1e-12)


def test_full_duplex_links_carry_both_directions_at_full_rate() -> None:
    result = run(pairs({0: 1, 1: 0}), 2, machine(2, star()))
    assert result.time == pytest.approx(1.0, rel=1e-12)


def test_a_shared_link_carries_both_directions_together() -> None:
    result = run(pairs({0: 1, 1: 0}), 2, machine(2, star(sharing="shared")))
    assert result.time == pytest.approx(2.0, rel=1e-12)


def test_a_limiter_is_shared_by_a_node_sending_and_receiving() -> None:
    # node 1 receives from 0 and sends to 2: its limiter of 1 GB/s carries both, 2 s
    result = run(pairs({0: 1, 1: 2}), 3, machine(3, star(limiter=GB)))
    assert result.time == pytest.approx(2.0, rel=1e-12)


def test_a_flow_that_ends_gives_its_share_to_the_one_still_running() -> None:
    # 0.5 GB and 1 GB into node 2: both at 0.5 GB/s until 1 s, then the rest of 1 GB alone: 1.5 s
    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.send(S, 2, GB / 2, 0)
        elif p.pid == 1:
            yield from p.send(S, 2, GB, 0)
        else:
            yield from p.recv(R, 1, GB, 0)
            yield from p.recv(R, 0, GB, 0)

    assert run(main, 3, machine(3, star())).time == pytest.approx(1.5, rel=1e-12)


def test_latency_is_summed_over_the_hops() -> None:
    tree = Topology("fat_tree", "2;2,2;1,1;1,1", TopologyLink(1e-3, GB))
    result = run(pairs({0: 2}), 4, machine(4, tree))  # 4 hops of 1 ms, then 1 s of data
    assert result.time == pytest.approx(1.004, rel=1e-12)


def test_rendezvous_starts_the_flow_when_both_sides_are_there() -> None:
    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.send(S, 1, GB, 0)
        else:
            yield from p.compute(R, 0.5)
            yield from p.recv(R, 0, GB, 0)

    result = run(main, 2, machine(2, star(), eager_limit=1024))
    assert result.time == pytest.approx(1.5, rel=1e-12)


def test_alltoall_on_a_star_equals_its_rounds_alone() -> None:
    # pairwise all-to-all on 4 nodes: 3 rounds, each a permutation (no two flows share a direction)
    def main(p: Any, v: Any) -> Any:
        yield from p.alltoall(COLL, GB)

    result = run(main, 4, machine(4, star()))
    assert result.time == pytest.approx(3.0, rel=1e-12)


def test_a_gather_to_the_root_over_a_star_is_bounded_by_its_link() -> None:
    # linear gather: one message per round, 3 rounds of 1 s
    def main(p: Any, v: Any) -> Any:
        yield from p.gather(COLL, 0, GB)

    result = run(main, 4, machine(4, star(), collectives={"gather": "linear"}))
    assert result.time == pytest.approx(3.0, rel=1e-12)


def test_routes_follow_d_mod_k_and_dimension_order() -> None:
    tree = fabric(Topology("fat_tree", "2;2,2;1,2;1,1", TopologyLink(0.0, GB)), 4)
    up_to_2 = tree.names[tree.route(0, 2)[1]]
    up_to_3 = tree.names[tree.route(1, 3)[1]]
    assert up_to_2 != up_to_3  # destination 2 goes by top switch 0, destination 3 by top switch 1
    torus = fabric(Topology("torus", "4,2", TopologyLink(0.0, GB)), 8)
    assert len(torus.route(1, 7)) == 3  # two hops in x, then one in y
    assert len(torus.route(0, 3)) == 1  # the short way round
    fly = fabric(Topology("dragonfly", "3,1;2,1;3,1;2", TopologyLink(0.0, GB)), 36)
    names = [fly.names[i] for i in fly.route(0, 35)]
    assert sum("blue" in n for n in names) == 1  # one global hop between groups
    # as SimGrid routes them: after a hop to the destination's blade the route goes on from
    # chassis 0 (node 4 -> 2: node, green, node; node 4 -> 6: node, green, black, node)
    small = fabric(Topology("dragonfly", "2,1;2,1;2,1;2", TopologyLink(0.0, GB)), 16)
    assert [small.names[i].split("=")[1] if "=" in small.names[i] else "node" for i in small.route(4, 2)] == [
        "node",
        "green",
        "node",
    ]
    assert len(small.route(4, 6)) == 4


TOML = """
nodes = 4
cores_per_node = 1
[network.inter_node]
latency = 0
bandwidth = "1 GB/s"
[network.topology]
kind = "fat_tree"
parameters = "2;2,2;1,1;1,1"
link = { latency = "0 us", bandwidth = "8 Gbit/s" }
"""


def load_machine_text(text: str) -> Machine:
    return Machine.from_dict(tomllib.loads(text), "test.toml")


def test_machine_file_reads_the_topology_with_units() -> None:
    mach = load_machine_text(TOML)
    assert mach.topology is not None
    assert mach.topology.link.bandwidth == pytest.approx(1e9)
    assert run(pairs({0: 2, 1: 3}), 4, mach.with_nodes(4)).time == pytest.approx(2.0, rel=1e-12)


def test_machine_file_errors_say_what_to_write() -> None:
    with pytest.raises(MachineError, match="did you mean 'fat_tree'"):
        load_machine_text(TOML.replace('"fat_tree"', '"fat-tree"'))
    with pytest.raises(MachineError, match="did you mean 'parameters'"):
        load_machine_text(TOML.replace("parameters =", "parameter ="))
    with pytest.raises(MachineError, match="connects 2 nodes"):
        load_machine_text(TOML.replace('"2;2,2;1,1;1,1"', '"1;2;1;1"'))


def test_results_report_links_and_the_contention_they_cost() -> None:
    result = run(_two_into_one, 3, machine(3, star()))
    links = {row["link"]: row for row in result.to_dict()["links"]}
    into = links["node2:down"]
    assert into["busy"] == pytest.approx(2.0) and into["max_flows"] == 2 and into["bytes"] == 2 * GB
    assert links["node0:up"]["max_flows"] == 1
    contention = [p for p in result.properties if p["property"] == "network_contention"]
    assert contention and contention[0]["seconds"] == pytest.approx(2.0)  # each of 2 flows lost 1 s
    assert "node2:down (2 at once)" in contention[0]["hint"]
    assert "Busiest links" in result.report() and "node2:down" in result.report()


def test_a_run_without_topology_reports_no_links() -> None:
    result = run(_two_into_one, 3, machine(3, None))
    assert result.links is None and "links" not in result.to_dict()


def test_the_analytic_path_declines_messages_between_nodes_on_a_topology() -> None:
    from uml2perf_runtime.analysis.analytic import evaluate_points

    def main(p: Any, v: Any) -> Any:
        yield from p.allreduce(Element(0, "A", "allreduce"), 1024)

    spec = ModelSpec("links", "test", (Element(0, "A", "allreduce"),), main=main)
    rows, reasons = evaluate_points(spec, machine(4, star()), [{"procs": 4}])
    assert rows == [None] and "topology" in reasons[0]


def test_the_readme_topology_example_prints_what_the_readme_shows(capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    after = readme.split("<!-- topology-example -->", 1)[1]
    code = after.split("```python\n", 1)[1].split("```", 1)[0]
    shown = after.split("```\n\n```\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - the README's own example
    assert capsys.readouterr().out == shown


def test_the_trace_has_a_load_counter_per_link() -> None:
    from uml2perf_runtime.engine.simulation import Simulation
    from uml2perf_runtime.output.trace import build_trace

    sim = Simulation(
        ModelSpec("links", "test", ELEMENTS, main=_two_into_one), machine(3, star()), 3, tracing=True
    )
    sim.run()
    counters = [e for e in build_trace(sim)["traceEvents"] if e["ph"] == "C" and e["name"] == "node2:down"]
    # both flows start at 0 (2 flows, full load), both end at 2 s (none left)
    assert [(c["ts"], c["args"]["flows"], c["args"]["load"]) for c in counters] == [
        (0.0, 2, 1.0),
        (2e6, 0, 0.0),
    ]


def test_flows_starting_and_ending_together_are_solved_once_per_instant() -> None:
    # pairwise all-to-all of 16 processes on a fat tree: 15 rounds of 16 flows that start
    # together and end together; one solve per round start and end, not one per flow
    tree = Topology("fat_tree", "2;4,4;1,2;1,1", TopologyLink(1e-6, GB))
    from uml2perf_runtime.engine.simulation import Simulation

    def main(p: Any, v: Any) -> Any:
        yield from p.alltoall(COLL, 1e6)

    sim = Simulation(ModelSpec("links", "test", ELEMENTS, main=main), machine(16, tree), 16)
    result = sim.run()
    assert sim.link_network.flows == 15 * 16
    assert sim.link_network.sharing.solves <= 4 * 15
    assert result.time > 15 * 1e-3  # every round moves 1 MB at 1 GB/s at best


def test_a_flow_alone_on_its_links_is_traced_from_start_to_end() -> None:
    from uml2perf_runtime.engine.simulation import Simulation
    from uml2perf_runtime.output.trace import build_trace

    sim = Simulation(
        ModelSpec("links", "test", ELEMENTS, main=pairs({0: 1})), machine(2, star()), 2, tracing=True
    )
    assert sim.run().time == pytest.approx(1.0, rel=1e-12)
    counters = [e for e in build_trace(sim)["traceEvents"] if e["ph"] == "C" and e["name"] == "node1:down"]
    assert [(c["ts"], c["args"]["flows"], c["args"]["load"]) for c in counters] == [
        (0.0, 1, 1.0),
        (1e6, 0, 0.0),
    ]


def test_size_ranges_of_the_inter_node_link_bound_a_message_on_the_links() -> None:
    # messages up to 1 MB reach only 0.25 GB/s alone (and wait 10 ms); larger ones the links' 1 GB/s
    ranged = Link(0.0, GB, pieces=((1e6, 0.01, 1 / (GB / 4)), (float("inf"), 0.0, 1 / GB)))

    def small_and_large(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.send(S, 2, 1e6, 0)
        elif p.pid == 1:
            yield from p.send(S, 2, GB, 0)
        else:
            yield from p.recv(R, 0, GB, 0)
            yield from p.recv(R, 1, GB, 0)

    mach = Machine(nodes=3, cores_per_node=1, inter_node=ranged, eager_limit=2 * 10**9, topology=star())
    sim_result = run(small_and_large, 3, mach)
    # the small flow starts at 10 ms capped at 0.25 GB/s: 1 MB in 4 ms -> 14 ms; the large one
    # has 0.75 GB/s meanwhile, then 1 GB/s: 1 GB - 0.75e9*0.004 - 1e9*0.01 taken at full rate
    large_end = 0.01 + 0.004 + (GB - GB * 0.01 - 0.75 * GB * 0.004) / GB
    assert sim_result.time == pytest.approx(large_end, rel=1e-12)


ALGORITHM_CASES = [
    (kind, algorithm)
    for kind, algorithms in __import__(
        "uml2perf_runtime.platform.network", fromlist=["ALGORITHMS"]
    ).ALGORITHMS.items()
    for algorithm in algorithms
]


@pytest.mark.parametrize(("kind", "algorithm"), ALGORITHM_CASES, ids=lambda x: str(x))
@pytest.mark.parametrize("procs", [5, 8])
def test_collectives_without_contention_cost_what_the_per_pair_network_says(
    kind: str, algorithm: str, procs: int
) -> None:
    """Every round of every algorithm is a matching of senders and receivers: on a star (one
    process per node) no two of its messages share a link direction, so each costs its route
    alone, what the per-pair network with the route's latency and bandwidth charges."""
    from uml2perf_runtime.operations.registry import OPERATIONS

    op = OPERATIONS[kind]
    args = {"root": 1 % procs, "size": 3e6} if op.rooted else ({"size": 3e6} if op.argument_names else {})

    def main(p: Any, v: Any) -> Any:
        yield from p.compute(S, 0.001 * p.pid)  # arrive at different times
        yield from getattr(p, kind)(COLL, **args)

    def machine_with(topology: Topology | None) -> Machine:
        return Machine(
            nodes=procs,
            cores_per_node=1,
            intra_node=Link(0.0, 10 * GB),
            inter_node=Link(2e-5, GB / 2),
            eager_limit=1 << 20,
            collectives={kind: algorithm},
            reduce_cost=1e-10,
            collective_overhead=1e-6,
            topology=topology,
        )

    link = TopologyLink(1e-5, GB / 2)  # two hops: 20 us, 0.5 GB/s
    shared = run(main, procs, machine_with(Topology("star", "", link))).time
    alone = run(main, procs, machine_with(None)).time
    assert shared == pytest.approx(alone, rel=1e-9)


@pytest.mark.parametrize("size", [1e3, 5e6])  # eager and rendezvous
@pytest.mark.parametrize("style", ["blocking", "nonblocking", "wildcard"])
def test_point_to_point_without_contention_costs_what_the_per_pair_network_says(
    size: float, style: str
) -> None:
    """A ring (each node sends one message and receives one per round) shares no link direction."""
    wait = Element(3, "W", "wait")

    def main(p: Any, v: Any) -> Any:
        right, left = (p.pid + 1) % p.nprocs, (p.pid - 1) % p.nprocs
        for step in range(3):
            yield from p.compute(S, 0.0005 * (1 + (p.pid + step) % 3))  # messages never overlap
            if style == "nonblocking":
                out = yield from p.isend(S, right, size, step)
                into = yield from p.irecv(R, left, size, step)
                yield from p.wait(wait, [out, into])
            elif p.pid % 2:
                yield from p.recv(
                    R, -1 if style == "wildcard" else left, size, -1 if style == "wildcard" else step
                )
                yield from p.send(S, right, size, step)
            else:
                yield from p.send(S, right, size, step)
                yield from p.recv(
                    R, -1 if style == "wildcard" else left, size, -1 if style == "wildcard" else step
                )

    def machine_with(topology: Topology | None) -> Machine:
        return Machine(
            nodes=6,
            cores_per_node=1,
            inter_node=Link(2e-5, GB / 2, 1e-5),  # a rendezvous handshake of 10 us
            eager_limit=1 << 20,
            topology=topology,
        )

    spec = ModelSpec("links", "test", (*ELEMENTS, wait), main=main)
    shared = simulate(spec, machine_with(Topology("star", "", TopologyLink(1e-5, GB / 2))), procs=6)
    alone = simulate(spec, machine_with(None), procs=6)
    assert shared.time == pytest.approx(alone.time, rel=1e-9)
    for a, b in zip(shared.per_process, alone.per_process, strict=True):
        for key in ("time", "compute", "communication", "wait"):
            assert a[key] == pytest.approx(b[key], rel=1e-9, abs=1e-15), (a["pid"], key)


def _simgrid_python() -> str | None:
    import shutil
    import subprocess

    for candidate in ("/usr/bin/python3", shutil.which("python3")):
        if (
            candidate
            and subprocess.run(
                [candidate, "-c", "import simgrid"], capture_output=True, check=False
            ).returncode
            == 0
        ):
            return candidate
    return None


@pytest.mark.parametrize(
    ("topology", "hosts"),
    [
        ("fat_tree:2;4,4;1,2;1,1", 16),
        ("fat_tree:3;2,3,2;2,2,3;1,1,1", 12),
        ("fat_tree:2;4,4;1,2;2,3", 16),  # parallel links
        ("fat_tree:3;2,3,2;2,2,3;2,1,2", 12),
        ("torus:3,5", 15),
        ("torus:2,3,2", 12),
        ("dragonfly:3,1;2,1;3,1;2", 36),
    ],
)
def test_routes_match_simgrids_where_it_is_installed(topology: str, hosts: int) -> None:
    """SimGrid (optional, never a dependency) routes every pair over the same links: one name of
    ours for each of its link names and back, the same latency."""
    import json
    import re
    import subprocess
    from pathlib import Path

    python = _simgrid_python()
    if python is None:
        pytest.skip("SimGrid's Python bindings are not installed (Debian: python3-simgrid)")
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "simgrid_peer.py"
    done = subprocess.run(
        [
            python,
            str(script),
            "routes",
            "--procs",
            str(hosts),
            "--topology",
            topology,
            "--link",
            "1e-6",
            "1e9",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = json.loads(done.stdout[done.stdout.index("{") :])
    kind, _, parameters = topology.partition(":")
    ours = fabric(Topology(kind, parameters, TopologyLink(1e-6, 1e9)), hosts)

    def hop_kind(name: str) -> str:  # SimGrid's names and ours say which kind of link a hop is
        if name.startswith(("local", "node")) and "=" not in name and "_d" not in name:
            return "node"
        found = re.search(r"(green|black|blue)", name)
        return found.group(1) if found else "link"

    same: dict[str, str] = {}
    back: dict[str, str] = {}
    for key, (latency, names) in theirs.items():
        a, b = map(int, key.split(","))
        route = ours.route(a, b)
        assert len(route) == len(names), (key, names, [ours.names[i] for i in route])
        assert ours.route_latency(route) == pytest.approx(latency, rel=1e-12)
        for their, mine in zip(names, (ours.names[i] for i in route), strict=True):
            assert same.setdefault(their, mine) == mine and back.setdefault(mine, their) == their, key
        if kind == "dragonfly":
            assert [hop_kind(ours.names[i]) for i in route] == [hop_kind(n) for n in names], key


def test_more_nodes_than_the_topology_connects_is_refused_with_what_to_do() -> None:
    mach = load_machine_text(TOML)
    assert mach.with_nodes(3).nodes == 3
    with pytest.raises(MachineError, match="connects only 4 nodes"):
        mach.with_nodes(5)
    assert mach.with_topology(None).with_nodes(5).nodes == 5


def test_json_lists_the_busiest_links_and_says_when_there_are_more() -> None:
    result = run(
        pairs({0: 2, 1: 3}), 4, machine(4, Topology("fat_tree", "2;2,2;1,1;1,1", TopologyLink(0.0, GB)))
    )
    assert len(result.links) == 6 and "links_note" not in result.to_dict()  # 4 node links, 2 switch links
    result.LINKS_IN_JSON = 3  # as a run with many links
    shown = result.to_dict()
    assert [row["link"] for row in shown["links"]] == [row["link"] for row in result.links[:3]]
    assert shown["links_note"] == "the 3 busiest of 6 links (Results.links has them all)"
