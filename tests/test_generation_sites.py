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


def _ring(dest: str, size: str, code: str | None = None) -> str:
    b = ModelBuilder("ring")
    b.global_var("SIZE", "1024", type_name="Integer")
    b.global_var("STEP", "1", type_name="Integer")
    main = b.activity("main", main=True)
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
