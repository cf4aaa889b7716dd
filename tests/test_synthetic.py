"""The synthetic model generators write well-formed, deterministic Papyrus-style XMI."""

from __future__ import annotations

from pathlib import Path

import pytest
import synthetic
from lxml import etree

NS = {"xmi": synthetic.XMI_NS, "uml": synthetic.UML_NS, "p": synthetic.PROFILE_NS}
XMI_TYPE = f"{{{synthetic.XMI_NS}}}type"
XMI_ID = f"{{{synthetic.XMI_NS}}}id"


def parse(text: str) -> etree._Element:
    return etree.fromstring(text.encode("utf-8"), etree.XMLParser(resolve_entities=False))


def nodes_of(root: etree._Element, uml_type: str) -> list[etree._Element]:
    return [n for n in root.iter("node") if n.get(XMI_TYPE) == f"uml:{uml_type}"]


def check_edges_consistent(root: etree._Element) -> None:
    """Every edge joins two nodes of its own region, and every node lists its edges."""
    ids = {n.get(XMI_ID): n for n in root.iter("node")}
    for edge in root.iter("edge"):
        region = edge.getparent()
        source, target = ids[edge.get("source")], ids[edge.get("target")]
        assert source.getparent() is region and target.getparent() is region
        assert edge.get(XMI_ID) in source.get("outgoing", "").split()
        assert edge.get(XMI_ID) in target.get("incoming", "").split()


def stereotypes(root: etree._Element) -> dict[str, list[etree._Element]]:
    found: dict[str, list[etree._Element]] = {}
    for child in root:
        if isinstance(child.tag, str) and child.tag.startswith(f"{{{synthetic.PROFILE_NS}}}"):
            found.setdefault(etree.QName(child).localname, []).append(child)
    return found


@pytest.mark.parametrize("actions", [1, 7, 250])
def test_chain_has_n_actions_in_a_row(actions: int) -> None:
    root = parse(synthetic.chain_model(actions))
    opaque = nodes_of(root, "OpaqueAction")
    assert [n.get("name") for n in opaque] == [f"A{i}" for i in range(actions)]
    assert len(nodes_of(root, "InitialNode")) == 1 and len(nodes_of(root, "ActivityFinalNode")) == 1
    assert len(list(root.iter("edge"))) == actions + 1
    check_edges_consistent(root)
    applied = stereotypes(root)
    assert len(applied["ActionPlus"]) == actions
    assert {a.get("base_Action") for a in applied["ActionPlus"]} == {n.get(XMI_ID) for n in opaque}
    assert applied["ModelPlus"][0].get("base_Activity") == "_main"


def test_chain_rejects_empty() -> None:
    with pytest.raises(ValueError):
        synthetic.chain_model(0)


def test_ring_loop_holds_compute_send_recv() -> None:
    root = parse(synthetic.ring_model(rounds=17, work=2e-3, size=64))
    (loop,) = nodes_of(root, "StructuredActivityNode")
    inner = [n.get("name") for n in loop.findall("node")]
    assert inner == ["start", "compute", "send_right", "recv_left"]
    check_edges_consistent(root)
    applied = stereotypes(root)
    assert applied["LoopPlus"][0].get("iterations") == "R"
    assert applied["SendPlus"][0].get("dest") == "(pid + 1) % nprocs"
    assert applied["RecvPlus"][0].get("source") == "(pid - 1 + nprocs) % nprocs"
    defaults = {a.get("name"): a.find("defaultValue").get("value") for a in root.iter("ownedAttribute")}
    assert defaults == {"R": "17", "WORK": "0.002", "SIZE": "64"}


def test_allreduce_loop_holds_compute_and_allreduce(tmp_path: Path) -> None:
    root = parse(synthetic.allreduce_model(rounds=5, work=1e-3, size=16))
    (loop,) = nodes_of(root, "StructuredActivityNode")
    assert [n.get("name") for n in loop.findall("node")] == ["start", "compute", "reduce"]
    check_edges_consistent(root)
    applied = stereotypes(root)
    assert applied["AllreducePlus"][0].get("size") == "SIZE"
    defaults = {a.get("name"): a.find("defaultValue").get("value") for a in root.iter("ownedAttribute")}
    assert defaults == {"R": "5", "WORK": "0.001", "SIZE": "16"}
    out = tmp_path / "ar.uml"
    assert synthetic.main(["allreduce", str(out), "--rounds", "3"]) == 0
    assert out.read_text() == synthetic.allreduce_model(3)


def test_bsp_has_decisions_guards_and_collectives() -> None:
    root = parse(synthetic.bsp_model(steps=2, collectives=("bcast", "allreduce", "barrier")))
    check_edges_consistent(root)
    guards = sorted(b.text for b in root.iter("body") if b.getparent().tag == "guard")
    assert guards == ["NAT > 40", "else", "else", "pid = 0"]
    applied = stereotypes(root)
    assert {"BcastPlus", "AllreducePlus", "BarrierPlus", "LoopPlus"} <= set(applied)
    assert "SendPlus" not in applied and "RecvPlus" not in applied


def test_bsp_rejects_unknown_collective() -> None:
    with pytest.raises(ValueError, match="unknown collective"):
        synthetic.bsp_model(collectives=("shuffle",))


def test_output_is_deterministic_and_written_atomically(tmp_path: Path) -> None:
    text = synthetic.ring_model(5)
    assert text == synthetic.ring_model(5)
    target = synthetic.write_model(tmp_path / "sub" / "ring.uml", text)
    assert target.read_text(encoding="utf-8") == text
    assert [p.name for p in target.parent.iterdir()] == ["ring.uml"]


def test_names_are_escaped() -> None:
    root = parse(synthetic.chain_model(2, name='a "quoted" <model> & co'))
    assert root.find("uml:Model", NS).get("name") == 'a "quoted" <model> & co'


def test_command_line_writes_a_model(tmp_path: Path) -> None:
    out = tmp_path / "chain.uml"
    assert synthetic.main(["chain", str(out), "--actions", "3"]) == 0
    assert len(nodes_of(parse(out.read_text()), "OpaqueAction")) == 3


def test_reader_sees_the_profile(tmp_path: Path) -> None:
    """The generated files are read by uml2perf's own reader with their annotations."""
    from uml2perf.model import Role
    from uml2perf.reader import read_model

    path = synthetic.write_model(tmp_path / "ring.uml", synthetic.ring_model(3))
    model = read_model(path)
    (main,) = model.activities
    roles = {node.name: node.perf.role for node in main.walk() if node.perf is not None}
    assert roles["compute"] == Role.ACTION
    assert roles["send_right"] == Role.SEND
    assert roles["recv_left"] == Role.RECV
    assert roles["rounds"] == Role.LOOP
