"""Call sites made once (``p.send_site``, ``p.recv_site``): the same predictions as ordinary calls.

Every program runs three ways: with ordinary ``p.send``/``p.recv`` calls on the direct-route
context, with call sites on it, and with call sites on the general context; all three must
predict the same to the last bit (statistics of every context and the number of events too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from runtime_helpers import elements
from test_runtime_direct_routes import _machine, outcome

from uml2perf_runtime import Link
from uml2perf_runtime.engine.context import Context
from uml2perf_runtime.engine.sites import RecvSite, SendSite

C, S, R, PAR, T = elements("C", "S", "R", "PAR", "T")

Program = Callable[[bool], Any]


def same(program: Program, mach: Any, procs: int) -> Any:
    """``program(sites)`` run ordinary and with sites (direct and general): all agree."""
    plain = outcome(program(False), mach, procs, general=False)
    assert outcome(program(True), mach, procs, general=False) == plain
    assert outcome(program(True), mach, procs, general=True) == plain
    return plain


def _calls(p: Any, sites: bool, send: tuple[Any, ...], recv: tuple[Any, ...]) -> tuple[Any, Any]:
    """A send and a receive with fixed arguments: sites, or ordinary calls."""
    if sites:
        return p.send_site(S, *send), p.recv_site(R, *recv)
    return (lambda: p.send(S, *send)), (lambda: p.recv(R, *recv))


def ring(rounds: int, size: Any, cost: float = 0.0, odd_first: bool = True, step: float = 0.001) -> Program:
    """A ring whose computations differ by process and round by ``step`` (receives wait for a
    message on its way, park or find it there); with ``odd_first`` odd ranks receive first
    (rendezvous needs it)."""

    def program(sites: bool) -> Any:
        def main(p: Any, v: Any) -> Any:
            n = p.nprocs
            send, recv = _calls(p, sites, ((p.pid + 1) % n, size, 0, cost), ((p.pid - 1) % n, size, 0, cost))
            for r in range(rounds):
                yield from p.compute(C, 0.001 + step * ((p.pid + r) % 3))
                if odd_first and p.pid % 2:
                    yield from recv()
                    yield from send()
                else:
                    yield from send()
                    yield from recv()

        return main

    return program


@pytest.mark.parametrize("size", [64, 64.0, 4096, 100_000, 100_000.0])
@pytest.mark.parametrize("procs", [2, 5])
def test_a_ring_through_sites_predicts_what_ordinary_calls_predict(size: Any, procs: int) -> None:
    same(ring(6, size), _machine(nodes=2, cores=2), procs)


@pytest.mark.parametrize("procs", [2, 4])
def test_rendezvous_with_a_handshake_through_sites(procs: int) -> None:
    """Links with a handshake: the receiving side's line of the last sender includes it."""
    mach = _machine(
        nodes=2,
        cores=2,
        intra_node=Link(1e-6, 1e10, handshake=3e-6),
        inter_node=Link(5e-5, 1.25e7, handshake=2e-4),
    )
    same(ring(5, 100_000, step=1e-4), mach, procs)


def test_a_rendezvous_send_that_is_never_received_deadlocks_as_the_ordinary_call_does() -> None:
    def program(sites: bool) -> Any:
        def main(p: Any, v: Any) -> Any:
            send, recv = _calls(p, sites, (1, 100_000, 7), (0, 100_000, 7))
            yield from p.compute(C, 0.001 * (1 + p.pid))
            if p.pid == 0:
                for _ in range(3):  # the third send parks for good, on the site's own route
                    yield from send()
            else:
                for _ in range(2):
                    yield from recv()

        return main

    result = same(program, _machine(nodes=1, cores=2), 2)
    assert result[0] == "error" and "DeadlockError" in result[1] and "'S'" in result[2]


@pytest.mark.parametrize("size", [64, 100_000])
def test_sites_with_a_local_cost_predict_what_ordinary_calls_predict(size: int) -> None:
    same(ring(4, size, cost=0.0005), _machine(nodes=2, cores=2), 4)


@pytest.mark.parametrize("step", [0.001, 1e-4, 0.0])
def test_an_eager_ring_where_every_process_sends_first(step: float) -> None:
    """Small steps: messages between nodes are still on their way when their receive comes."""
    same(ring(8, 4096, odd_first=False, step=step), _machine(nodes=3, cores=2), 6)


def test_two_sites_of_one_element_alternating_keep_their_own_queues() -> None:
    """Two destinations from one element: the context's checked arguments change at every call,
    each site keeps its own; tags that differ and a receive from any source on the other side."""

    def program(sites: bool) -> Any:
        def main(p: Any, v: Any) -> Any:
            if p.pid == 0:
                a, _ = _calls(p, sites, (1, 8, 3), (1,))
                b, _ = _calls(p, sites, (2, 8, 4), (2,))
                for _ in range(5):
                    yield from a()
                    yield from b()
                    yield from p.compute(C, 0.001)
            else:
                _, get = _calls(p, sites, (0,), (0, 8, p.pid + 2))
                _, any_source = _calls(p, sites, (0,), (-1, 8, -1))
                for r in range(5):
                    yield from (get() if r % 2 else any_source())

        return main

    same(program, _machine(nodes=2, cores=2), 3)


def test_threads_send_through_sites_eager_and_rendezvous() -> None:
    """Threads' eager sends take the direct route, their rendezvous sends the general path."""

    def program(sites: bool) -> Any:
        def body(t: Any, v: Any) -> Any:
            size = 100_000 if t.tid else 64
            if t.pid == 0:
                send, _ = _calls(t, sites, (1, size, t.tid), (1,))
                for _ in range(3):
                    yield from send()
                    yield from t.compute(T, 0.0002)
            else:
                _, recv = _calls(t, sites, (0,), (0, size, t.tid))
                for _ in range(3):
                    yield from recv()

        def main(p: Any, v: Any) -> Any:
            yield from p.parallel(PAR, 2, body)

        return main

    same(program, _machine(nodes=2, cores=2), 2)


@pytest.mark.parametrize(
    ("send", "recv", "words"),
    [
        ((5, 8), (0, 8), "destination"),
        ((1, -8), (0, 8), "size"),
        ((1, 8, 0, -1.0), (0, 8), "-1.0"),
    ],
)
def test_a_site_with_bad_arguments_fails_as_the_ordinary_call_does(
    send: tuple[Any, ...], recv: tuple[Any, ...], words: str
) -> None:
    def program(sites: bool) -> Any:
        def main(p: Any, v: Any) -> Any:
            out, into = _calls(p, sites, send, recv)
            yield from p.compute(C, 0.001)
            if p.pid == 0:
                yield from out()
            else:
                yield from into()

        return main

    result = same(program, _machine(nodes=1, cores=2), 2)
    assert result[0] == "error" and words in result[2]


def test_making_a_site_does_nothing_until_it_is_called() -> None:
    """A site made and never called (a branch not taken): no check, no state, no event."""

    def program(sites: bool) -> Any:
        def main(p: Any, v: Any) -> Any:
            if sites:
                p.send_site(S, 99, -5)  # invalid: only its call would fail
                p.recv_site(R, (p.pid + 1) % p.nprocs, 8)
            yield from p.compute(C, 0.001)

        return main

    same(program, _machine(nodes=1, cores=2), 2)


def test_a_site_keeps_the_checked_arguments_and_posts_directly() -> None:
    """After its first call, a site of the direct-route context needs none of the context's checks."""
    kept: dict[str, Any] = {}

    def main(p: Any, v: Any) -> Any:
        send = p.send_site(S, (p.pid + 1) % p.nprocs, 64)
        recv = p.recv_site(R, (p.pid - 1) % p.nprocs, 64)
        for _ in range(3):
            yield from send()
            yield from recv()
        kept[p.pid] = (send.__self__, recv.__self__)

    outcome(main, _machine(nodes=1, cores=2), 2, general=False)
    for send_site, recv_site in kept.values():
        assert isinstance(send_site, SendSite) and isinstance(recv_site, RecvSite)
        assert send_site.st is not None and recv_site.st is not None
        assert isinstance(send_site.ctx, Context) and send_site.lat > 0.0
