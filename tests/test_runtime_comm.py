"""Message passing and collectives through ``uml2perf_runtime.simulate`` on hand-written models.

Every expected time is computed by hand from the documented semantics
(docs/runtime-semantics.md): alpha = latency, beta = 1/bandwidth.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from uml2perf_runtime import (
    DeadlockError,
    Element,
    Link,
    Machine,
    MachineError,
    ModelSpec,
    SimulationError,
    simulate,
)

A_IN, BW_IN = 1e-6, 1e9  # intra-node: 1 us, 1 GB/s
A_EX, BW_EX = 5e-5, 1.25e7  # inter-node: 50 us, 12.5 MB/s
MS = 1e-3

C = Element(0, "C", "action")
S = Element(1, "S", "send")
R = Element(2, "R", "recv")
S2 = Element(3, "S2", "send")
R2 = Element(4, "R2", "recv")
W = Element(5, "W", "wait")
COLL = Element(6, "COLL", "collective")
COLL2 = Element(7, "COLL2", "collective")
ELEMENTS = (C, S, R, S2, R2, W, COLL, COLL2)


def machine(
    nodes: int = 1, cores: int = 8, eager_limit: int | None = None, collectives: dict[str, str] | None = None
) -> Machine:
    return Machine(
        nodes=nodes,
        cores_per_node=cores,
        intra_node=Link(A_IN, BW_IN),
        inter_node=Link(A_EX, BW_EX),
        eager_limit=eager_limit,
        collectives=collectives or {},
    )


def run(main: Callable[[Any, Any], Any], procs: int, mach: Machine | None = None, **kw: Any) -> Any:
    spec = ModelSpec("comm-test", "test", ELEMENTS, main=main)
    return simulate(spec, mach or machine(), procs=procs, **kw)


def u_in(n: float) -> float:
    return A_IN + n / BW_IN


def u_ex(n: float) -> float:
    return A_EX + n / BW_EX


def proc(results: Any, pid: int) -> dict[str, Any]:
    return results.per_process[pid]


# -- point to point: eager -----------------------------------------------------------------------


def test_ping_pong_eager_on_one_node() -> None:
    n, rounds = 1000, 5

    def main(p: Any, v: Any) -> Any:
        for _ in range(rounds):
            if p.pid == 0:
                yield from p.send(S, 1, n, 7, 0)
                yield from p.recv(R, 1, n, 7, 0)
            else:
                yield from p.recv(R, 0, n, 7, 0)
                yield from p.send(S, 0, n, 7, 0)

    r = run(main, 2)
    assert r.time == pytest.approx(2 * rounds * u_in(n))
    # process 1 sends its last reply and is done one message earlier
    assert proc(r, 1)["time"] == pytest.approx((2 * rounds - 1) * u_in(n))
    # process 0 waits for the partner to send (one message) and then for the transfer
    assert proc(r, 0)["wait"] == pytest.approx(rounds * u_in(n))
    assert proc(r, 0)["communication"] == pytest.approx(rounds * u_in(n))
    assert r.element("S")["calls"] == 2 * rounds
    assert r.element("R")["calls"] == 2 * rounds


def test_ping_pong_across_nodes_uses_the_inter_node_link() -> None:
    n = 4096

    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.send(S, 1, n, 0, 0)
            yield from p.recv(R, 1, n, 0, 0)
        else:
            yield from p.recv(R, 0, n, 0, 0)
            yield from p.send(S, 0, n, 0, 0)

    r = run(main, 2, machine(nodes=2, cores=1))
    assert r.time == pytest.approx(2 * u_ex(n))


def test_eager_send_returns_after_its_local_cost_only() -> None:
    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.send(S, 1, 1000, 0, 2 * MS)
        else:
            yield from p.compute(C, 5 * MS)
            yield from p.recv(R, 0, 1000, 0, MS)

    r = run(main, 2)
    assert proc(r, 0)["time"] == pytest.approx(2 * MS)
    assert proc(r, 0)["compute"] == pytest.approx(2 * MS)
    # the message arrived long before the receive was posted: no wait, no transfer time
    assert proc(r, 1)["time"] == pytest.approx(6 * MS)
    assert proc(r, 1)["wait"] == 0.0
    assert proc(r, 1)["communication"] == 0.0
    assert r.element("R")["calls"] == 1


def test_receive_posted_early_waits_for_sender_then_transfer() -> None:
    n = 2000

    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.compute(C, 3 * MS)
            yield from p.send(S, 1, n, 0, 0)
        else:
            yield from p.recv(R, 0, n, 0, MS)  # local cost 1 ms, then blocks

    r = run(main, 2)
    p1 = proc(r, 1)
    assert p1["time"] == pytest.approx(3 * MS + u_in(n))
    assert p1["compute"] == pytest.approx(MS)
    assert p1["wait"] == pytest.approx(2 * MS)
    assert p1["communication"] == pytest.approx(u_in(n))
    row = r.element("R")
    assert row["calls"] == 1
    assert row["inclusive"] == pytest.approx(3 * MS + u_in(n))


# -- point to point: rendezvous --------------------------------------------------------------------


def test_rendezvous_sender_waits_for_late_receiver() -> None:
    n = 100_000  # above the 64 KiB default eager limit

    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.send(S, 1, n, 0, 0)
        else:
            yield from p.compute(C, MS)
            yield from p.recv(R, 0, n, 0, 0)

    r = run(main, 2)
    for pid in (0, 1):
        assert proc(r, pid)["time"] == pytest.approx(MS + u_in(n))
        assert proc(r, pid)["communication"] == pytest.approx(u_in(n))
    assert proc(r, 0)["wait"] == pytest.approx(MS)
    assert proc(r, 1)["wait"] == 0.0


def test_rendezvous_receiver_first_and_configurable_eager_limit() -> None:
    n = 500

    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.compute(C, 2 * MS)
            yield from p.send(S, 1, n, 0, 0)
        else:
            yield from p.recv(R, 0, n, 0, 0)
            yield from p.compute(C, MS)

    eager = run(main, 2, machine(eager_limit=1000))
    assert proc(eager, 0)["time"] == pytest.approx(2 * MS)
    rendezvous = run(main, 2, machine(eager_limit=100))
    assert proc(rendezvous, 0)["time"] == pytest.approx(2 * MS + u_in(n))
    assert proc(rendezvous, 1)["time"] == pytest.approx(3 * MS + u_in(n))
    assert proc(rendezvous, 1)["wait"] == pytest.approx(2 * MS)


# -- matching ---------------------------------------------------------------------------------------


def test_messages_do_not_overtake_on_the_same_source_and_tag() -> None:
    big, small = 60_000, 0

    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.send(S, 1, big, 3, 0)
            yield from p.send(S2, 1, small, 3, 0)
        else:
            yield from p.recv(R, 0, big, 3, 0)
            yield from p.recv(R2, 0, small, 3, 0)

    r = run(main, 2)
    # the first receive gets the big message although the small one arrives earlier
    assert r.element("R")["inclusive"] == pytest.approx(u_in(big))
    assert r.element("R2")["inclusive"] == 0.0


def test_tags_select_messages_out_of_send_order() -> None:
    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.send(S, 1, 1000, 1, 0)
            yield from p.compute(C, MS)
            yield from p.send(S2, 1, 1000, 2, 0)
        else:
            yield from p.recv(R2, 0, 1000, 2, 0)
            yield from p.recv(R, 0, 1000, 1, 0)

    r = run(main, 2)
    assert proc(r, 1)["time"] == pytest.approx(MS + u_in(1000))
    assert r.element("R")["inclusive"] == 0.0


def test_any_source_takes_the_message_sent_first() -> None:
    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.compute(C, 3 * MS)
            yield from p.recv(R, -1, 0, -1, 0)  # gets process 2's message (sent at 1 ms)
            yield from p.recv(R2, 1, 0, 0, 0)  # then process 1's (sent at 2 ms)
        elif p.pid == 1:
            yield from p.compute(C, 2 * MS)
            yield from p.send(S, 0, 0, 0, 0)
        else:
            yield from p.compute(C, MS)
            yield from p.send(S2, 0, 0, 9, 0)

    r = run(main, 3)
    assert proc(r, 0)["time"] == pytest.approx(3 * MS)


def test_posted_any_source_receive_gets_the_next_message() -> None:
    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.recv(R, -1, 0, 4, 0)
            yield from p.recv(R2, -1, 0, 4, 0)
        else:
            yield from p.compute(C, p.pid * MS)
            yield from p.send(S, 0, 0, 4, 0)

    r = run(main, 3)
    assert proc(r, 0)["time"] == pytest.approx(2 * MS + A_IN)
    assert r.element("R")["inclusive"] == pytest.approx(MS + A_IN)


def test_earlier_posted_wildcard_receive_is_matched_before_a_later_specific_one() -> None:
    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            first = yield from p.irecv(R, -1, 0, -1, 0)
            second = yield from p.irecv(R2, 1, 0, 5, 0)
            yield from p.wait(W, first, 0)
            assert first.complete and first.source == 1 and first.matched_tag == 5
            yield from p.wait(W, [second], 0)
            assert second.source == 1
        else:
            yield from p.send(S, 0, 0, 5, 0)
            yield from p.compute(C, MS)
            yield from p.send(S, 0, 0, 5, 0)

    r = run(main, 2)
    assert proc(r, 0)["time"] == pytest.approx(MS + A_IN)


# -- non-blocking -------------------------------------------------------------------------------------


def test_irecv_overlaps_communication_with_computation() -> None:
    n = 10_000

    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            req = yield from p.irecv(R, 1, n, 0, 0)
            yield from p.compute(C, MS)
            yield from p.wait(W, req, 0)
        else:
            yield from p.send(S, 0, n, 0, 0)

    r = run(main, 2)
    assert r.time == pytest.approx(MS)
    assert proc(r, 0)["wait"] == 0.0 and proc(r, 0)["communication"] == 0.0


def test_waitall_ends_with_the_last_request() -> None:
    n = 1000

    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            a = yield from p.irecv(R, 1, n, 0, 0)
            b = yield from p.irecv(R2, 2, n, 0, 0)
            yield from p.wait(W, [a, b], 0)
        else:
            yield from p.compute(C, p.pid * MS)
            yield from p.send(S, 0, n, 0, 0)

    r = run(main, 3)
    assert proc(r, 0)["time"] == pytest.approx(2 * MS + u_in(n))
    assert proc(r, 0)["wait"] == pytest.approx(2 * MS)
    assert proc(r, 0)["communication"] == pytest.approx(u_in(n))
    assert r.element("W")["calls"] == 1


def test_isend_rendezvous_completes_when_the_transfer_does() -> None:
    n = 1 << 20

    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            req = yield from p.isend(S, 1, n, 0, 0)
            assert not req.complete
            yield from p.compute(C, 10 * MS)
            yield from p.wait(W, req, 0)
        else:
            yield from p.compute(C, MS)
            yield from p.recv(R, 0, n, 0, 0)

    r = run(main, 2)
    assert proc(r, 1)["time"] == pytest.approx(MS + u_in(n))
    assert proc(r, 0)["time"] == pytest.approx(10 * MS)


# -- errors and deadlocks -------------------------------------------------------------------------------


def test_unmatched_receive_is_reported_as_deadlock_with_who_waits_for_whom() -> None:
    def main(p: Any, v: Any) -> Any:
        if p.pid == 1:
            yield from p.recv(R, 0, 8, 5, 0)

    with pytest.raises(DeadlockError) as info:
        run(main, 2)
    report = info.value.report
    assert len(report) == 1 and report[0]["pid"] == 1
    assert report[0]["element"]["name"] == "R"
    assert "recv from process 0 tag 5" in report[0]["waiting_for"]


def test_rendezvous_send_without_receiver_deadlocks_clearly() -> None:
    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.send(S, 1, 1 << 20, 2, 0)

    with pytest.raises(DeadlockError, match="send of 1048576 bytes to process 1 tag 2"):
        run(main, 2)


def test_collective_missing_a_process_names_the_missing_ones() -> None:
    def main(p: Any, v: Any) -> Any:
        if p.pid != 2:
            yield from p.allreduce(COLL, 8, 0)

    with pytest.raises(DeadlockError) as info:
        run(main, 4)
    text = str(info.value)
    assert "allreduce" in text
    assert "waiting for process 2 (3 of 4 arrived; process 2 finished without calling it)" in text


def test_collective_mismatch_names_elements_and_processes() -> None:
    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.bcast(COLL, 0, 8, 0)
        else:
            yield from p.reduce(COLL2, 0, 8, 0)

    with pytest.raises(
        SimulationError,
        match=r"process 1 calls reduce\(root=0\) at 'COLL2'.*"
        r"process 0 calls bcast\(root=0\) at 'COLL'",
    ):
        run(main, 2)


def test_different_roots_are_a_mismatch() -> None:
    def main(p: Any, v: Any) -> Any:
        yield from p.bcast(COLL, p.pid % 2, 8, 0)

    with pytest.raises(SimulationError, match="do not match"):
        run(main, 2)


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda p: p.send(S, 5, 8, 0, 0), "destination is 5, but there are 2 processes"),
        (lambda p: p.recv(R, 0, 8, -3, 0), "message tag is -3"),
        (lambda p: p.send(S, 1, -8, 0, 0), "message size is -8"),
        (lambda p: p.bcast(COLL, 2.5, 8, 0), "root is 2.5"),
        (lambda p: p.wait(W, "req", 0), "wait needs the requests"),
    ],
)
def test_bad_arguments_name_the_element(call: Callable[[Any], Any], fragment: str) -> None:
    def main(p: Any, v: Any) -> Any:
        yield from call(p)

    with pytest.raises(SimulationError, match=fragment) as info:
        run(main, 2)
    assert "on process" in str(info.value)


def test_unknown_collective_algorithm_is_a_machine_error() -> None:
    def main(p: Any, v: Any) -> Any:
        yield from p.barrier(COLL, 0)

    with pytest.raises(MachineError, match="unknown barrier algorithm 'magic'"):
        run(main, 2, machine(collectives={"barrier": "magic"}))


# -- collectives against closed forms --------------------------------------------------------------------

N = 1000.0
DELTA = 1e-4
KINDS = ("barrier", "bcast", "reduce", "allreduce", "gather", "scatter", "allgather", "alltoall")


def ceil_log2(p: int) -> int:
    return (p - 1).bit_length()


def single_node_formula(kind: str, p: int) -> float:
    """Default algorithms on one node, n = 1000 bytes (small: the latency-bound choices)."""
    L = ceil_log2(p)
    p2 = 1 << (p.bit_length() - 1)
    u = u_in(N)
    if p == 1:
        return 0.0
    return {
        "barrier": L * A_IN,
        "bcast": L * u,
        "reduce": L * u,
        "allreduce": ((p2.bit_length() - 1) + (2 if p != p2 else 0)) * u,
        "gather": L * A_IN + (p - 1) * N / BW_IN,
        "scatter": L * A_IN + (p - 1) * N / BW_IN,
        "allgather": L * A_IN + (p - 1) * N / BW_IN,
        "alltoall": (p - 1) * u,
    }[kind]


def collective_call(p: Any, kind: str) -> Any:
    if kind == "barrier":
        return p.barrier(COLL, 0)
    if kind in ("bcast", "reduce", "gather", "scatter"):
        return getattr(p, kind)(COLL, 0, N, 0)
    return getattr(p, kind)(COLL, N, 0)


def staggered(kind: str) -> Callable[[Any, Any], Any]:
    def main(p: Any, v: Any) -> Any:
        yield from p.compute(C, p.pid * DELTA)
        yield from collective_call(p, kind)

    return main


@pytest.mark.parametrize("p", [1, 2, 3, 8, 64])
@pytest.mark.parametrize("kind", KINDS)
def test_collective_on_one_node_matches_formula(kind: str, p: int) -> None:
    r = run(staggered(kind), p, machine(cores=p))
    last_arrival = (p - 1) * DELTA
    assert r.time == pytest.approx(last_arrival + single_node_formula(kind, p), rel=1e-9)
    for q in (0, p - 1):
        # everybody waits for the last process, then spends its part of the algorithm
        assert proc(r, q)["wait"] == pytest.approx(last_arrival - q * DELTA, abs=1e-15)
        assert proc(r, q)["time"] == pytest.approx(last_arrival + proc(r, q)["communication"])
    assert r.element("COLL")["calls"] == p


def multi_node_formula(kind: str, p: int, ppn: int) -> float:
    """Default algorithms, block placement with ppn a power of two: rounds at distance >= ppn
    leave the node; every ring/shift round has a pair crossing a node boundary."""
    L, local = ceil_log2(p), ceil_log2(ppn)
    binomial = local * u_in(N) + (L - local) * u_ex(N)
    doubling_bytes = sum(A_IN + (1 << k) * N / BW_IN for k in range(local)) + sum(
        A_EX + (1 << k) * N / BW_EX for k in range(local, L)
    )
    return {
        "barrier": L * A_EX,
        "bcast": binomial,
        "reduce": binomial,
        "allreduce": binomial,
        "gather": doubling_bytes,
        "scatter": doubling_bytes,
        "allgather": doubling_bytes,
        "alltoall": (p - 1) * u_ex(N),
    }[kind]


@pytest.mark.parametrize("p, nodes", [(8, 2), (64, 4)])
@pytest.mark.parametrize("kind", KINDS)
def test_collective_on_several_nodes_matches_formula(kind: str, p: int, nodes: int) -> None:
    ppn = p // nodes
    r = run(staggered(kind), p, machine(nodes=nodes, cores=ppn))
    assert r.time == pytest.approx((p - 1) * DELTA + multi_node_formula(kind, p, ppn), rel=1e-9)


@pytest.mark.parametrize(
    "kind, expected",
    [
        ("barrier", 2 * A_EX),  # both dissemination rounds cross
        ("bcast", u_in(N) + u_ex(N)),  # 0->1 on node 0, then 0->2 across
        ("reduce", u_in(N) + u_ex(N)),
        ("allreduce", u_in(N) + 2 * u_ex(N)),  # fold 2 into 0, exchange 0<->1, serve 2
        ("gather", u_in(N) + u_ex(N)),
        ("scatter", u_in(N) + u_ex(N)),
        ("allgather", 2 * u_ex(N)),  # Bruck, one block per round, rounds cross
        ("alltoall", 2 * u_ex(N)),
    ],
)
def test_three_processes_on_two_nodes(kind: str, expected: float) -> None:
    r = run(staggered(kind), 3, machine(nodes=2, cores=2))
    assert r.time == pytest.approx(2 * DELTA + expected, rel=1e-9)


def test_rooted_collective_finish_times_depend_on_position() -> None:
    def main(p: Any, v: Any) -> Any:
        yield from p.bcast(COLL, 0, N, 0)

    r = run(main, 5, machine(cores=5, collectives={"bcast": "binomial"}))
    # rounds: 0->1 | 0->2, 1->3 | 0->4
    assert [proc(r, q)["time"] for q in range(5)] == pytest.approx(
        [3 * u_in(N), 2 * u_in(N), 2 * u_in(N), 2 * u_in(N), 3 * u_in(N)]
    )


def test_configured_algorithm_is_used() -> None:
    r = run(staggered("allreduce"), 8, machine(cores=8, collectives={"allreduce": "ring"}))
    assert r.time == pytest.approx(7 * DELTA + 2 * 7 * (A_IN + N / 8 / BW_IN))


def test_collectives_in_a_loop_match_by_call_order() -> None:
    def main(p: Any, v: Any) -> Any:
        for _ in range(10):
            yield from p.barrier(COLL, 0)
        yield from p.compute(C, MS)
        yield from p.allreduce(COLL2, N, 0)

    r = run(main, 4, machine(cores=4))
    assert r.time == pytest.approx(10 * 2 * A_IN + MS + 2 * u_in(N))
    assert r.element("COLL")["calls"] == 40


def test_collective_local_cost_is_compute_time() -> None:
    def main(p: Any, v: Any) -> Any:
        yield from p.barrier(COLL, MS)

    r = run(main, 2)
    assert r.time == pytest.approx(MS + A_IN)
    assert proc(r, 0)["compute"] == pytest.approx(MS)
    assert r.element("COLL")["calls"] == 2


# -- trace ---------------------------------------------------------------------------------------------------


def test_trace_gets_message_arrows_and_phase_slices() -> None:
    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.compute(C, MS)
            yield from p.send(S, 1, 1000, 0, 0)
        else:
            yield from p.recv(R, 0, 1000, 0, 0)

    r = run(main, 2, trace=True)
    slices = {(pid, name, cat) for pid, _, name, cat, _, _ in r.timeline}
    assert (1, "R", "wait") in slices and (1, "R", "comm") in slices


def test_threads_of_a_process_communicate_as_that_process() -> None:
    par = Element(8, "PAR", "parallel")

    def body(t: Any, v: Any) -> Any:
        yield from t.compute(C, (t.tid + 1) * MS)
        yield from t.send(S, 1, 0, t.tid, 0)

    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.parallel(par, 3, body)
        else:
            for tag in (2, 0, 1):
                yield from p.recv(R, 0, 0, tag, 0)

    r = simulate(ModelSpec("threads", "test", (*ELEMENTS, par), main=main), machine(cores=4), procs=2)
    assert proc(r, 1)["time"] == pytest.approx(3 * MS + A_IN)
    assert r.element("R")["calls"] == 3
