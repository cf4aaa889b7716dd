"""The python handler's call sites: which sends and receives it makes once per function run."""

from __future__ import annotations

import pytest
from builders import ModelBuilder

from uml2perf.generation import generate
from uml2perf.handlers.python.invariants import invariant
from uml2perf.model import NodeKind, Role


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("(p.pid + 1) % p.nprocs", True),
        ("(p.pid - 1 + p.nprocs) % p.nprocs", True),
        ("p.pid * 2 - -3", True),
        ("p.uid // 4", True),
        ("1024", True),
        ("v.SIZE", True),
        ("v.STEP", False),  # assigned after init_globals
        ("v.SIZE * 2", False),  # arithmetic on a variable could raise where the call would
        ("p.pid % v.SIZE", False),
        ("p.pid % 0", False),
        ("p.pid // p.pid", False),  # not a positive parameter: 0 on process 0
        ("1.5", False),
        ("p.pid / 2", False),
        ("p.random()", False),
        ("min(p.pid, 3)", False),
        ("p.item", False),
        ("_u", False),
    ],
)
def test_which_arguments_are_the_same_at_every_call(text: str, expected: bool) -> None:
    assert invariant(text, {"SIZE"}) is expected


def _ring(dest: str, size: str, code: str | None = None, repeat: int | None = 10) -> str:
    """A send and a receive, repeated ``repeat`` times (the activity's ``repeat`` tag: a loop)."""
    b = ModelBuilder("ring")
    b.global_var("SIZE", "1024", type_name="Integer")
    b.global_var("STEP", "1", type_name="Integer")
    main = b.activity("main", main=True, repeat=repeat)
    s = main.node(NodeKind.ACTION, "Send", role=Role.SEND, code=code, dest=dest, size=size)
    r = main.comm("Recv", Role.RECV, source="(pid - 1 + nprocs) % nprocs", size=size)
    main.chain(main.initial(), s, r, main.final())
    return generate(b.build()).text


def test_a_send_and_receive_with_unchanging_arguments_become_sites() -> None:
    text = _ring("(pid + 1) % nprocs", "SIZE")
    assert "_send_1 = p.send_site(E_Send, dest=(p.pid + 1) % p.nprocs, size=v.SIZE)" in text
    assert "_recv_1 = p.recv_site(E_Recv, source=(p.pid - 1 + p.nprocs) % p.nprocs, size=v.SIZE)" in text
    assert "yield from _send_1()  # xmi:id=" in text and "yield from _recv_1()  # xmi:id=" in text


def test_arguments_that_may_change_keep_the_ordinary_call() -> None:
    text = _ring("(pid + STEP) % nprocs", "SIZE", code="STEP = STEP + 1")
    assert "p.send_site" not in text and "yield from p.send(E_Send, dest=" in text
    assert "p.recv_site(E_Recv" in text  # its own arguments still never change


def test_calls_outside_any_loop_of_their_function_stay_ordinary_calls() -> None:
    """Made once per run of the function and called once, a site would only cost."""
    text = _ring("(pid + 1) % nprocs", "SIZE", repeat=None)
    assert "_site(" not in text
    assert "yield from p.send(E_Send, dest=(p.pid + 1) % p.nprocs, size=v.SIZE)" in text


@pytest.mark.parametrize("size", ["SIZE", "2048"])
def test_a_generated_ring_of_sites_predicts_what_the_general_path_predicts(size: str) -> None:
    """The module as generated, run with sites on the direct route and with the general context."""
    from stubs import load_module

    from uml2perf_runtime import Link, Machine
    from uml2perf_runtime.engine.simulation import Simulation

    module = load_module(_ring("(pid + 1) % nprocs", size))
    links = {"intra_node": Link(1e-6, 1e10), "inter_node": Link(5e-5, 1.25e7), "eager_limit": 4096}
    machine = Machine(name="test", nodes=2, cores_per_node=2, speed=1.0, **links)
    outcomes = []
    for general in (False, True):
        sim = Simulation(module.MODEL, machine, 4, general=general)
        data = sim.run().to_dict()
        data.pop("wall_time", None)
        outcomes.append((data, [(c.calls, c.incl, c.totals) for c in sim.contexts], sim.events))
    assert outcomes[0] == outcomes[1]


def test_a_while_loop_makes_sites_and_the_count_of_loops_ends_with_it() -> None:
    """A send in a loop node's body is a site; a receive after the loop, in no loop, is not."""
    b = ModelBuilder("loop")
    b.global_var("i", "0", type_name="Integer")
    main = b.activity("main", main=True)
    loop = main.loop_node("L", decider="i < 3")
    step = loop.action("Step", 1, code="i = i + 1")
    send = loop.comm("Send", Role.SEND, dest="(pid + 1) % nprocs", size="8")
    loop.chain(step, send)
    loop.body.extend([step, send])
    recv = main.comm("Recv", Role.RECV, source="(pid - 1 + nprocs) % nprocs", size="8")
    main.chain(main.initial(), loop.id, recv, main.final())
    text = generate(b.build()).text
    assert "while v.i < 3:" in text
    assert "_send_1 = p.send_site(E_Send, dest=(p.pid + 1) % p.nprocs, size=8)" in text
    assert "yield from _send_1()" in text and "p.recv_site" not in text
    assert "yield from p.recv(E_Recv, source=(p.pid - 1 + p.nprocs) % p.nprocs, size=8)" in text
