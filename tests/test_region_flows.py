"""A region's plain flows stay the reader's rows until someone asks for their records.

The records built from the rows must be exactly those the reader built before (ids, ends, names,
kinds, lines, files, metaclasses), the region must behave as the immutable value it always was
(equality, hashing, copies), and the stages of a conversion that need only the flows' ends (the
profile, guards written as flow names, the straight-chain test) must give the same result
whether the records were built or not.
"""

from __future__ import annotations

import pickle

import pytest
from synthetic import chain_model

from uml2perf.controlflow import graph
from uml2perf.generation import generate
from uml2perf.model import Edge, Flows, Node, NodeKind, Region
from uml2perf.reader import read_bytes

_DECISION_MODEL = b"""<?xml version="1.0" encoding="UTF-8"?>
<xmi:XMI xmi:version="20131001" xmlns:xmi="http://www.omg.org/spec/XMI/20131001"
  xmlns:uml="http://www.eclipse.org/uml2/5.0.0/UML">
  <uml:Model xmi:id="m" name="m">
    <packagedElement xmi:type="uml:Activity" xmi:id="act" name="main">
      <ownedAttribute xmi:id="act.n" name="n">
        <defaultValue xmi:type="uml:LiteralInteger" xmi:id="act.n.v" value="3"/>
      </ownedAttribute>
      <node xmi:type="uml:InitialNode" xmi:id="i" name="start"/>
      <node xmi:type="uml:DecisionNode" xmi:id="d" name="which"/>
      <node xmi:type="uml:OpaqueAction" xmi:id="a" name="big"/>
      <node xmi:type="uml:OpaqueAction" xmi:id="b" name="small"/>
      <node xmi:type="uml:MergeNode" xmi:id="mg" name="merge"/>
      <node xmi:type="uml:ActivityFinalNode" xmi:id="f" name="end"/>
      <edge xmi:type="uml:ControlFlow" xmi:id="e1" source="i" target="d"/>
      <edge xmi:type="uml:ControlFlow" xmi:id="e2" name="[n &gt; 2]" source="d" target="a"/>
      <edge xmi:type="uml:ControlFlow" xmi:id="e3" name="[else]" source="d" target="b"/>
      <edge xmi:type="uml:ControlFlow" xmi:id="e4" source="a" target="mg"/>
      <edge xmi:type="uml:ControlFlow" xmi:id="e5" source="b" target="mg"/>
      <edge xmi:type="uml:ObjectFlow" xmi:id="e6" name="out" source="mg" target="f"/>
    </packagedElement>
  </uml:Model>
</xmi:XMI>
"""


def _chain_region() -> Region:
    return read_bytes(chain_model(5).encode(), "chain.uml").activities[0].region


def test_the_reader_keeps_plain_flows_as_rows_and_builds_the_same_records() -> None:
    region = _chain_region()
    flows = region.flows
    assert flows is not None and flows.quiet and len(flows) == 6
    assert list(region.flow_ends()) == [(e[2], e[3]) for e in flows.rows]  # type: ignore[index]
    edges = region.edges
    assert region.flows is None  # built once, then the records are the region's
    assert region.edges is edges
    first = edges[0]
    assert (first.id, first.source, first.target, first.name, first.kind) == (
        "_main_e0",
        "_init",
        "_a0",
        "",
        "control",
    )
    assert first.uml_type == "ControlFlow" and first.file == "chain.uml" and first.line is not None
    assert first.location.line == first.line and first.location.element_id == "_main_e0"
    assert list(region.flow_ends()) == [(e.source, e.target) for e in edges]


def test_flow_names_kinds_and_lines_come_from_the_elements() -> None:
    region = read_bytes(_DECISION_MODEL, "d.uml").activities[0].region
    by_id = {edge.id: edge for edge in region.edges}
    assert by_id["e6"].kind == "object" and by_id["e6"].uml_type == "ObjectFlow" and by_id["e6"].name == "out"
    assert by_id["e1"].line == 15 and by_id["e6"].line == 20


def test_guards_written_as_flow_names_are_settled_from_the_rows() -> None:
    model = read_bytes(_DECISION_MODEL, "d.uml")
    guards = {edge.id: edge.guard for edge in model.activities[0].region.edges}
    assert guards["e2"] == "n > 2" and guards["e3"] == "else"
    text = generate(model, "python").text
    assert "if v.n > 2:" in text


def test_a_region_is_an_immutable_value_whether_its_records_are_built_or_not() -> None:
    lazy, built = _chain_region(), _chain_region()
    built.edges  # noqa: B018 - builds the records
    assert lazy == built and hash(lazy) == hash(built)
    assert lazy != Region(lazy.nodes, lazy.edges[:-1])
    with pytest.raises(AttributeError, match="immutable"):
        lazy.nodes = ()  # type: ignore[misc]
    copy = pickle.loads(pickle.dumps(_chain_region()))
    assert copy == lazy and copy.flows is None
    assert repr(Region()) == "Region(nodes=(), edges=())"
    match lazy:
        case Region(nodes, edges):
            assert len(nodes) == 7 and len(edges) == 6


def test_the_chain_test_reads_the_rows_and_the_records_alike() -> None:
    region = _chain_region()
    chain = graph.straight_chain(region)
    assert region.flows is not None  # the file-order test needed no record
    assert chain is not None and [n.id for n in chain] == [n.id for n in region.nodes]
    built = Region(region.nodes, region.edges)
    assert graph.straight_chain(built) == chain


def test_rows_and_records_mix_in_file_order() -> None:
    nodes = tuple(Node(f"n{i}", f"N{i}", NodeKind.ACTION, "OpaqueAction") for i in range(3))
    record = Edge("e1", "n1", "n2", name="named")
    flows = Flows([(7, "e0", "n0", "n1", "ControlFlow", "control", "first"), record], "f.uml", quiet=False)
    region = Region(nodes, flows=flows)
    assert list(region.flow_ends()) == [("n0", "n1"), ("n1", "n2")]
    assert list(flows.names()) == [("n0", "first"), ("n1", "named")]
    assert [e.id for e in region.edges] == ["e0", "e1"] and region.edges[1] is record
    assert region.edges[0].name == "first" and region.edges[0].file == "f.uml" and region.edges[0].line == 7


def test_nodes_and_flows_past_line_65535_keep_their_lines() -> None:
    """libxml2 keeps a line above 65,535 beside the element, not in it: read lazily, it is still right."""
    text = chain_model(3)
    head, activity, tail = text.partition('<packagedElement xmi:type="uml:Activity"')
    region = read_bytes((head + "\n" * 70000 + activity + tail).encode(), "far.uml").activities[0].region
    assert [node.line for node in region.nodes[:2]] == [70014, 70015]
    assert region.edges[0].line == 70010 and region.edges[0].location.line == 70010


def test_plain_node_builds_what_the_constructor_builds() -> None:
    """Every slot of a node is set, to the values the constructor gives them."""
    from uml2perf.model import StereotypeApplication, _Record, plain_node

    applied = (StereotypeApplication("ActionPlus", "uml2perf", (("cost", "1"),)),)
    fast = plain_node("a1", "A1", NodeKind.ACTION, "OpaqueAction", applied, "lane", 12, "m.uml")
    slow = Node(
        "a1", "A1", NodeKind.ACTION, "OpaqueAction", None, applied, partition="lane", line=12, file="m.uml"
    )
    slots = [name for cls in Node.__mro__ if cls is not object for name in getattr(cls, "__slots__", ())]
    assert set(slots) >= set(Node.FIELDS) - {"location"} and "_location" in slots
    for name in slots:
        assert getattr(fast, name) == getattr(slow, name), name
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    assert fast.location == slow.location and fast.replace(name="B").name == "B"
    assert isinstance(fast, _Record)


def test_walk_gives_every_node_in_file_order_nested_regions_included() -> None:
    from uml2perf.model import walk_region

    def node(name: str, region: Region | None = None) -> Node:
        return Node(name, name, NodeKind.STRUCTURED if region else NodeKind.ACTION, "Action", region=region)

    inner = Region((node("b1"), node("b2", Region((node("c1"),)))))
    outer = Region((node("a1"), node("a2", inner), node("a3")))
    assert [n.id for n in walk_region(outer)] == ["a1", "a2", "b1", "b2", "c1", "a3"]
    flat = Region((node("x"), node("y")))
    assert list(walk_region(flat)) == list(flat.nodes)
    assert list(walk_region(Region())) == []
