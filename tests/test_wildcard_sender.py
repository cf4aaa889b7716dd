"""``recv+ sender = "W"``: a master that receives from any worker replies to whoever it received from.

The model (tests/data/master_worker.uml): rank 0 serves ``TASKS * (nprocs - 1)`` results, each
taken with a receive from any source whose ``sender`` tag stores the matched rank in ``W``, and
replies with ``send+ dest = "W"``; each worker computes a task (rank 1: 30 ms, rank 2: 10 ms),
sends its result to 0 and waits for the reply, ``TASKS`` = 2 times.  On a machine whose messages
take a latency ``a`` and no transfer time, the replies follow completion order: rank 2 is served
twice before rank 1 first sends, so it ends at ``0.02 + 4a`` and rank 1 at ``0.06 + 4a``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from command_helpers import predicted, uml2perf

DATA = Path(__file__).resolve().parent / "data"
MODEL = DATA / "master_worker.uml"
LATENCY = 1e-4
_MACHINE = f"""name = "flat"
nodes = 1
cores_per_node = 8
speed = 1.0
[network.intra_node]
latency = {LATENCY}
bandwidth = 1e30
[network.inter_node]
latency = {LATENCY}
bandwidth = 1e30
"""


def _machine(tmp_path: Path) -> Path:
    path = tmp_path / "flat.toml"
    path.write_text(_MACHINE)
    return path


def _irecv_model(tmp_path: Path) -> Path:
    """The master posts an ``irecv`` from any source with the sender tag, then waits, then replies."""
    text = MODEL.read_text()
    take = '<node xmi:type="uml:OpaqueAction" xmi:id="_m_take" name="Take result" incoming="_m_s_e1" '
    text = text.replace(
        take + 'outgoing="_m_s_e2"/>',
        take + 'outgoing="_m_s_e9"/>\n'
        '<node xmi:type="uml:OpaqueAction" xmi:id="_m_wait" name="Wait result" incoming="_m_s_e9" '
        'outgoing="_m_s_e2"/>\n'
        '<edge xmi:type="uml:ControlFlow" xmi:id="_m_s_e9" source="_m_take" target="_m_wait"/>',
    )
    text = text.replace('source="_m_take" target="_m_reply"', 'source="_m_wait" target="_m_reply"')
    text = text.replace(
        '<uml2perf:RecvPlus xmi:id="_m_st_take" base_Action="_m_take" source="-1" size="8" sender="W"/>',
        '<uml2perf:IRecvPlus xmi:id="_m_st_take" base_Action="_m_take" source="-1" size="8" sender="W"/>\n'
        '  <uml2perf:WaitPlus xmi:id="_m_st_wait" base_Action="_m_wait"/>',
    )
    path = tmp_path / "master_worker_irecv.uml"
    path.write_text(text)
    return path


def _ends(model: Path, *arguments: str | Path) -> list[float]:
    procs = () if "--procs" in arguments else ("--procs", "3")
    result = predicted(model, *procs, *arguments)
    return [row["time"] for row in sorted(result["per_process"], key=lambda row: row["pid"])]


@pytest.mark.parametrize("nonblocking", [False, True])
def test_replies_follow_completion_order(tmp_path: Path, nonblocking: bool) -> None:
    model = _irecv_model(tmp_path) if nonblocking else MODEL
    ends = _ends(model, "--machine", _machine(tmp_path))
    assert ends[2] == pytest.approx(0.02 + 4 * LATENCY, abs=1e-12)
    assert ends[1] == pytest.approx(0.06 + 4 * LATENCY, abs=1e-12)
    assert ends[0] == pytest.approx(0.06 + 3 * LATENCY, abs=1e-12)  # its last reply leaves then


def test_a_receive_with_a_local_cost_records_the_source_too(tmp_path: Path) -> None:
    """A receive with a local cost goes the general route (point_to_point.recv).  The master's
    1 ms before each receive is hidden: it is spent while the workers compute, so the schedule
    is the same."""
    text = MODEL.read_text().replace('size="8" sender="W"', 'size="8" sender="W" cost="0.001"')
    model = tmp_path / "costly.uml"
    model.write_text(text)
    ends = _ends(model, "--machine", _machine(tmp_path))
    assert ends[2] == pytest.approx(0.02 + 4 * LATENCY, abs=1e-12)
    assert ends[1] == pytest.approx(0.06 + 4 * LATENCY, abs=1e-12)


@pytest.mark.parametrize("nonblocking", [False, True])
def test_shared_links_route_replies_in_completion_order(tmp_path: Path, nonblocking: bool) -> None:
    """On a machine with a topology (shared links) the worker that finishes first is served first."""
    model = _irecv_model(tmp_path) if nonblocking else MODEL
    narval = Path(__file__).resolve().parents[1] / "samples" / "machines" / "narval.toml"
    result = predicted(
        model, "--procs", "3", "--machine", narval, "--nodes", "2", "--placement", "round_robin"
    )
    assert result["links"]  # the messages crossed the topology's links
    ends = {row["pid"]: row["time"] for row in result["per_process"]}
    speed = result["machine"]["speed"] if isinstance(result["machine"], dict) else None
    fast = 0.02 / speed if speed else None
    # served in rank order rank 2 would wait for rank 1's 30 ms task before its first reply
    assert ends[2] < ends[1] / 2
    if fast is not None:
        assert ends[2] == pytest.approx(fast, rel=0.01)


def test_a_sender_that_is_no_variable_is_an_error(tmp_path: Path) -> None:
    model = tmp_path / "bad.uml"
    model.write_text(MODEL.read_text().replace('sender="W"', 'sender="Who"'))
    done = uml2perf("convert", model, "-o", tmp_path / "bad.py")
    assert done.returncode != 0 and not (tmp_path / "bad.py").exists()
    assert "sender 'Who' of recv+ 'Take result' is not a model variable" in done.stderr
    assert "_m_take" in done.stderr and 'sender="W"' in done.stderr
    assert "Traceback" not in done.stderr


def test_the_generated_code_stores_the_source(tmp_path: Path) -> None:
    out = tmp_path / "mw.py"
    assert uml2perf("convert", MODEL, "-o", out).returncode == 0
    assert "v.W = p.sender" in out.read_text()
    out = tmp_path / "mw_i.py"
    assert uml2perf("convert", _irecv_model(tmp_path), "-o", out).returncode == 0
    assert "p.sender_to(v, 'W')" in out.read_text()


def test_sendrecv_from_any_source_names_its_sender(tmp_path: Path) -> None:
    """Two ranks exchange with ``sendrecv+ source = -1 sender = "W"``; the next action costs
    ``W`` seconds: rank 0 took rank 1's message (1 s more), rank 1 rank 0's (nothing more)."""
    text = (DATA / "one_collective.uml").read_text()
    text = text.replace(
        '<node xmi:type="uml:InitialNode"',
        '<ownedAttribute xmi:id="_c_w" name="W"/>\n      <node xmi:type="uml:InitialNode"',
    )
    text = text.replace(
        'outgoing="_c_e2"/>',
        'outgoing="_c_e3"/>\n      '
        '<node xmi:type="uml:OpaqueAction" xmi:id="_c_after" name="After" incoming="_c_e3" '
        'outgoing="_c_e2"/>\n      '
        '<edge xmi:type="uml:ControlFlow" xmi:id="_c_e3" source="_c_x" target="_c_after"/>',
    )
    text = text.replace('source="_c_x" target="_c_final"', 'source="_c_after" target="_c_final"')
    text = text.replace("STEREOTYPE", "SendRecvPlus").replace(
        "TAGS",
        'dest="(pid + 1) % nprocs" source="-1" size="8" sender="W"/>\n  '
        '<uml2perf:ActionPlus xmi:id="_c_st_after" base_Action="_c_after" cost="W"',
    )
    model = tmp_path / "exchange.uml"
    model.write_text(text)
    ends = _ends(model, "--machine", _machine(tmp_path), "--procs", "2")
    assert ends == pytest.approx([1.0 + LATENCY, LATENCY], abs=1e-12)
