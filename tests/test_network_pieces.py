"""Links priced per message-size range (``ranges``, ``table``) and the rendezvous ``handshake``.

Expected times are computed by hand from the machine-file reference (docs/runtime-semantics.md):
a message of ``n`` bytes takes ``latency + n / bandwidth`` of the range ``n`` falls in, plus the
handshake when ``n`` is above the eager limit.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uml2perf_runtime import Element, Link, Machine, MachineError, ModelSpec, simulate
from uml2perf_runtime.analysis.analytic import evaluate
from uml2perf_runtime.platform.machine import DEFAULT_EAGER_LIMIT
from uml2perf_runtime.platform.network import DEFAULT_EAGER_LIMIT as NETWORK_DEFAULT_EAGER_LIMIT
from uml2perf_runtime.platform.network import CollectiveModel, link_time

REPO = Path(__file__).resolve().parent.parent

RANGES = """
name = "pieces"
nodes = 2
cores_per_node = 4
[network]
eager_limit = "4 KiB"
[network.intra_node]
handshake = "2 us"
ranges = [
  { up_to = 256, latency = "1 us", bandwidth = "1 GB/s" },
  { up_to = "4 KiB", latency = "1.5 us", bandwidth = "2 GB/s" },
  { latency = "3 us", bandwidth = "10 GB/s" },
]
[network.inter_node]
table = [[0, 2e-5], [1024, 3e-5], [1048576, 1.03e-3]]
"""


def load(text: str, source: str = "m.toml") -> Machine:
    return Machine.from_dict(tomllib.loads(text), source=source)


def test_defaults_agree() -> None:
    assert NETWORK_DEFAULT_EAGER_LIMIT == DEFAULT_EAGER_LIMIT


def test_ranges_price_each_size_with_its_line() -> None:
    link = load(RANGES).intra_node
    assert link.time(0) == pytest.approx(1e-6)
    assert link.time(256) == pytest.approx(1e-6 + 256 / 1e9)
    assert link.time(257) == pytest.approx(1.5e-6 + 257 / 2e9)
    assert link.time(4096) == pytest.approx(1.5e-6 + 4096 / 2e9)
    assert link.time(1 << 20) == pytest.approx(3e-6 + (1 << 20) / 1e10)
    # the handshake only above the eager limit
    assert link.message_time(4096, 4096) == link.time(4096)
    assert link.message_time(4097, 4096) == pytest.approx(link.time(4097) + 2e-6)
    assert link.latency == 1e-6 and link.bandwidth == pytest.approx(1e10)


def test_table_is_piecewise_linear_and_goes_on_past_its_last_point() -> None:
    link = load(RANGES).inter_node
    assert link.time(0) == pytest.approx(2e-5)
    assert link.time(512) == pytest.approx(2.5e-5)
    assert link.time(1024) == pytest.approx(3e-5)
    slope = (1.03e-3 - 3e-5) / (1048576 - 1024)
    assert link.time(2048) == pytest.approx(3e-5 + 1024 * slope)
    assert link.time(2 * 1048576) == pytest.approx(1.03e-3 + 1048576 * slope)


def test_table_below_its_first_size_takes_the_first_time() -> None:
    m = load('nodes = 1\ncores_per_node = 1\n[network.intra_node]\ntable = [[8, "1 us"], [1024, "2 us"]]\n')
    assert m.intra_node.time(0) == pytest.approx(1e-6)
    assert m.intra_node.time(8) == pytest.approx(1e-6)


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=0, max_value=1e8, allow_nan=False))
def test_piecewise_time_is_continuous_where_the_lines_meet_and_never_negative(size: float) -> None:
    link = load(RANGES).inter_node  # a table: its lines meet at the measured sizes
    assert link.time(size) >= 2e-5 * (1 - 1e-12)
    for point in (1024.0, 1048576.0):
        assert link.time(point) == pytest.approx(link.time(math.nextafter(point, math.inf)), rel=1e-9)


def test_plain_links_are_unchanged() -> None:
    line = Link(1e-6, 1e9)
    assert not line.sized and line.pieces is None and line.handshake == 0.0
    assert line.time(1000) == 1e-6 + 1000 / 1e9
    assert link_time(line, 1000, 0) == 1e-6 + 1000 * (1 / 1e9)
    bundled = Machine.load("gescher")
    assert bundled.intra_node.pieces is None and bundled.intra_node.handshake == 0.0


def test_round_trip_through_to_dict() -> None:
    m = load(RANGES)
    again = Machine.from_dict(m.to_dict(), source="again")
    for size in (0, 100, 256, 1000, 4096, 5000, 1 << 22):
        assert again.intra_node.time(size) == pytest.approx(m.intra_node.time(size), rel=1e-12)
        assert again.inter_node.time(size) == pytest.approx(m.inter_node.time(size), rel=1e-12)
    assert again.intra_node.handshake == m.intra_node.handshake


# -- simulation ------------------------------------------------------------------------------------

S = Element(0, "S", "send")
R = Element(1, "R", "recv")
COLL = Element(2, "COLL", "collective")


def ping_pong_time(machine: Machine, n: float) -> float:
    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.send(S, 1, n, 0, 0)
            yield from p.recv(R, 1, n, 0, 0)
        else:
            yield from p.recv(R, 0, n, 0, 0)
            yield from p.send(S, 0, n, 0, 0)

    spec = ModelSpec("pp", "test", (S, R, COLL), main=main)
    return float(simulate(spec, machine, procs=2).time)


@pytest.mark.parametrize("n", [0, 8, 256, 1000, 4096, 4097, 65536, 1 << 20])
def test_simulated_ping_pong_takes_two_messages_of_the_sizes_piece(n: int) -> None:
    m = load(RANGES)
    link = m.intra_node
    assert ping_pong_time(m, n) == pytest.approx(2 * link.message_time(n, 4096), rel=1e-12)


def test_the_handshake_starts_when_both_sides_are_there() -> None:
    """A rendezvous send waits for the receive; the handshake and the data follow."""
    m = load(RANGES)
    n = 10000
    late = 1e-3

    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.send(S, 1, n, 0, 0)
        else:
            yield from p.recv(R, 0, n, 0, late)  # a local cost before the receive is posted

    spec = ModelSpec("rv", "test", (S, R, COLL), main=main)
    assert simulate(spec, m, procs=2).time == pytest.approx(late + 2e-6 + 3e-6 + n / 1e10, rel=1e-12)


def test_eager_messages_never_pay_the_handshake() -> None:
    m = load(RANGES.replace('eager_limit = "4 KiB"', "eager_limit = 1048576"))
    assert ping_pong_time(m, 10000) == pytest.approx(2 * (3e-6 + 10000 / 1e10), rel=1e-12)


def test_machines_without_the_new_keys_simulate_as_before() -> None:
    """One line for every size (the golden files check the predictions bit for bit)."""
    plain = Machine(nodes=1, cores_per_node=2, intra_node=Link(1e-6, 1e9))
    for n in (8, 1000, 60000):
        assert ping_pong_time(plain, n) == pytest.approx(2 * (1e-6 + n / 1e9), rel=1e-12)


# -- collectives: the same pieces, and the analytic path agrees with the simulator -----------------


@pytest.mark.parametrize("n", [8.0, 2048.0, 8192.0, 1e6])
def test_collectives_use_the_pieces_and_the_handshake(n: float) -> None:
    m = load(RANGES)
    model = CollectiveModel.for_machine(m, [0, 0])
    link = m.intra_node
    # two ranks: recursive doubling is one exchange of n; Rabenseifner two of n/2
    if model.algorithm("allreduce", n) == "recursive_doubling":
        expected = link.message_time(n, 4096)
    else:
        expected = 2 * link.message_time(n / 2, 4096)
    assert model.duration("allreduce", 0, n) == pytest.approx(expected, rel=1e-12)


def test_large_schedules_price_pieces_like_small_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    from uml2perf_runtime.platform import network

    m = load(RANGES)
    node_of = [r // 4 for r in range(8)]
    small = CollectiveModel.for_machine(m, node_of).offsets("alltoall", 0, 3000.0)
    monkeypatch.setattr(network, "_PLAIN_LIMIT", 0)  # force the numpy evaluation
    large = CollectiveModel.for_machine(m, node_of).offsets("alltoall", 0, 3000.0)
    assert large == pytest.approx(small, rel=1e-12)


COLLECTIVE_MODEL = """
from uml2perf_runtime import model as rt
E = [rt.Element(i, f"E{i}", "collective", f"_e{i}", i + 1) for i in range(3)]

def init_globals(p, v):
    v.SIZE = p.param("SIZE", 1000.0)

def activity_main(p, v):
    for _ in range(3):
        yield from p.compute(E[0], 1e-5 * (p.pid + 1))
        yield from p.allreduce(E[1], v.SIZE)
        yield from p.bcast(E[2], 0, v.SIZE * 3)

MODEL = rt.ModelSpec(name="m", source="m.uml", elements=E, init=init_globals, main=activity_main,
                     parameters=(("SIZE", 1000.0),))
"""


def test_analytic_and_simulated_collectives_agree_on_piecewise_links() -> None:
    import types

    mod = types.ModuleType("pieces_model")
    exec(compile(COLLECTIVE_MODEL, mod.__name__, "exec"), mod.__dict__)  # noqa: S102 - test code
    spec = mod.MODEL
    m = load(RANGES + "[collectives]\noverhead = 1e-6\nreduce_cost = 1e-10\n")
    table = evaluate(spec, m, {"procs": [2, 4, 8], "SIZE": [8.0, 3000.0, 5000.0, 1e6]})
    for row in table.rows:
        res = simulate(spec, m, procs=row["procs"], overrides={"SIZE": row["SIZE"]})
        assert row["time"] == pytest.approx(res.time, rel=1e-9), row
        assert row["method"] == "analytic"


# -- validation of the machine file ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("link", "message"),
    [
        ("ranges = []", "non-empty list"),
        ("ranges = [{ up_to = 10, latency = 1e-6, bandwidth = 1e9 }]", "says nothing of larger"),
        (
            "ranges = [{ latency = 1e-6, bandwidth = 1e9 }, { latency = 1e-6, bandwidth = 1e9 }]",
            "has no up_to, but ranges follow",
        ),
        (
            "ranges = [{ up_to = 10, latency = 1e-6, bandwidth = 1e9 }, "
            "{ up_to = 5, latency = 1e-6, bandwidth = 1e9 }, { latency = 1e-6, bandwidth = 1e9 }]",
            "does not exceed",
        ),
        (
            "ranges = [{ up_to = 10, latency = 1e-6 }, { latency = 1e-6, bandwidth = 1e9 }]",
            "needs 'bandwidth'",
        ),
        ("ranges = [{ upto = 10, latency = 1e-6, bandwidth = 1e9 }]", "did you mean 'up_to'"),
        ("table = [[8, 1e-6]]", "at least two"),
        ("table = [[8, 1e-6], [4, 2e-6]]", "does not exceed"),
        ("table = [[8, 1e-6], [16, 5e-7]]", "larger messages would get faster"),
        ('table = [[8, "1 parsec"], [16, 2e-6]]', "table[1]"),
        ("table = [[8, 1e-6], [16, 2e-6]]\nlatency = 1e-6", "remove latency"),
        ("table = [[8, 1e-6], [16, 2e-6]]\nranges = [{ latency = 1e-6, bandwidth = 1e9 }]", "both"),
        ("handshake = -1", "handshake must be"),
        ("latncy = 1e-6", "did you mean 'latency'"),
    ],
)
def test_bad_links_are_errors_that_say_what_to_do(link: str, message: str) -> None:
    with pytest.raises(MachineError, match=None) as info:
        load(f"nodes = 1\ncores_per_node = 1\n[network.intra_node]\n{link}\n")
    assert message in str(info.value)


def test_every_problem_is_reported_at_once() -> None:
    text = """
nodes = 0
cores_per_nod = 2
speed = -1
[network]
eager_limt = 4
[network.intra_node]
latency = -1
[collectives]
allreduce = "fastest"
overhead = -2
"""
    with pytest.raises(MachineError) as info:
        load(text, "bad.toml")
    message = info.value.message
    assert message.startswith("bad.toml: ")
    for part in (
        "unknown key 'cores_per_nod' in the top level (did you mean 'cores_per_node'?)",
        "missing key 'cores_per_node'",
        "nodes must be",
        "speed must be",
        "unknown key 'eager_limt' in [network] (did you mean 'eager_limit'?)",
        "[network.intra_node] latency must be",
        "'fastest' is not an algorithm",
        "overhead must be",
    ):
        assert part in message, part
    assert "problems:" in message


def test_one_problem_keeps_its_own_message_and_hint() -> None:
    with pytest.raises(MachineError) as info:
        load("nodes = 1\ncores_per_node = 1\n[network.intra_node]\nbandwith = 1e9\n")
    assert info.value.message.endswith("(did you mean 'bandwidth'?)")
    assert info.value.hint and "handshake, ranges, table" in info.value.hint


def test_device_links_keep_one_line() -> None:
    text = (
        "nodes = 1\ncores_per_node = 1\n[devices.gpu]\ncount = 1\npeak_flops = 1e12\n"
        "memory_bandwidth = 1e11\nlink = { latency = 1e-6, bandwidth = 1e10, handshake = 1e-6 }\n"
    )
    with pytest.raises(MachineError, match="unknown key 'handshake'"):
        load(text)


# -- wake-up of a receiver that shares its core ------------------------------------------------------

CROWDED = (
    'nodes = 1\ncores_per_node = 2\n[network]\nwakeup = "3 us"\n'
    "[network.intra_node]\nlatency = 1e-6\nbandwidth = 1e9\n"
)


def pairs_ping_pong_time(machine: Machine, n: float, procs: int) -> float:
    def main(p: Any, v: Any) -> Any:
        peer = p.pid ^ 1
        if p.pid % 2 == 0:
            yield from p.send(S, peer, n, 0, 0)
            yield from p.recv(R, peer, n, 0, 0)
        else:
            yield from p.recv(R, peer, n, 0, 0)
            yield from p.send(S, peer, n, 0, 0)

    spec = ModelSpec("pairs", "test", (S, R, COLL), main=main)
    return float(simulate(spec, machine, procs=procs).time)


def test_wakeup_is_paid_only_on_a_node_with_more_processes_than_cores() -> None:
    m = load(CROWDED)
    assert m.wakeup == pytest.approx(3e-6)
    assert pairs_ping_pong_time(m, 100, 2) == pytest.approx(2 * (1e-6 + 100 / 1e9), rel=1e-12)
    assert pairs_ping_pong_time(m, 100, 4) == pytest.approx(2 * (1e-6 + 100 / 1e9 + 3e-6), rel=1e-12)
    assert m.crowded_wakeup([0, 0]) == [] and m.crowded_wakeup([0, 0, 0]) == [3e-6]
    assert Machine.from_dict(m.to_dict()).wakeup == m.wakeup


def test_collectives_on_a_crowded_node_pay_the_wakeup_per_transfer() -> None:
    m = load(CROWDED)
    plain = load(CROWDED.replace('wakeup = "3 us"', ""))
    crowded = CollectiveModel.for_machine(m, [0, 0, 0, 0])
    # 4 ranks, 8 bytes: recursive doubling, two exchanges, each transfer to a crowded node
    assert crowded.duration("allreduce", 0, 8) == pytest.approx(
        CollectiveModel.for_machine(plain, [0, 0, 0, 0]).duration("allreduce", 0, 8) + 2 * 3e-6, rel=1e-12
    )
    # two ranks on two cores: nobody waits for a core
    assert CollectiveModel.for_machine(m, [0, 0]).duration("allreduce", 0, 8) == pytest.approx(
        CollectiveModel.for_machine(plain, [0, 0]).duration("allreduce", 0, 8), rel=1e-12
    )


def test_bad_wakeup_is_an_error() -> None:
    with pytest.raises(MachineError, match=r"\[network\] wakeup must be"):
        load("nodes = 1\ncores_per_node = 1\n[network]\nwakeup = -1\n")


def test_infinite_bandwidths_survive_json_and_load_again() -> None:
    import json

    m = load(
        "nodes = 1\ncores_per_node = 1\n[network.intra_node]\n"
        "ranges = [{ up_to = 8, latency = 1e-6, bandwidth = inf }, { latency = 2e-6, bandwidth = 1e9 }]\n"
        "[network.inter_node]\nlatency = 1e-5\nbandwidth = inf\n"
    )
    data = json.loads(json.dumps(m.to_dict(), allow_nan=False))
    again = Machine.from_dict(data)
    assert again.intra_node.time(8) == pytest.approx(1e-6) and again.inter_node.bandwidth == math.inf
