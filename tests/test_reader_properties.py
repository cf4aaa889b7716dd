"""Property-based tests of the reader.

Two properties: (1) any activity graph written as a Papyrus export reads back
with the same nodes, flows, names, guards and costs, whatever the names
contain (XML-special characters, unicode); (2) any damage to a file — cut
short, bytes flipped, garbage — ends in one of uml2perf's own errors with a
location, never in another exception.
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uml2perf.errors import Uml2PerfError
from uml2perf.model import NodeKind
from uml2perf.reader import read_bytes

NAMES = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\x00"),
    min_size=1,
    max_size=12,
).filter(lambda s: s.strip() == s and s.strip() != "")


@st.composite
def activity_graphs(draw: st.DrawFn) -> dict:
    """A chain of actions with optional decision/merge diamonds and their costs."""
    count = draw(st.integers(min_value=1, max_value=8))
    names = draw(st.lists(NAMES, min_size=count, max_size=count, unique=True))
    costs = draw(st.lists(st.integers(min_value=0, max_value=10_000), min_size=count, max_size=count))
    diamond_after = draw(st.sets(st.integers(min_value=0, max_value=count - 1), max_size=3))
    return {"names": names, "costs": costs, "diamonds": sorted(diamond_after)}


def write_papyrus(graph: dict) -> tuple[bytes, int, int]:
    """Serialise ``graph`` as a Papyrus export; returns the bytes and the node and edge counts."""
    nodes: list[str] = ['<node xmi:type="uml:InitialNode" xmi:id="n_init" name="start"/>']
    edges: list[str] = []
    stereotypes: list[str] = []
    previous = "n_init"
    edge_id = 0

    def edge(source: str, target: str, guard: str | None = None) -> None:
        nonlocal edge_id
        edge_id += 1
        if guard is None:
            edges.append(
                f'<edge xmi:type="uml:ControlFlow" xmi:id="e{edge_id}" source="{source}" target="{target}"/>'
            )
        else:
            edges.append(
                f'<edge xmi:type="uml:ControlFlow" xmi:id="e{edge_id}" source="{source}" target="{target}">'
                f'<guard xmi:type="uml:LiteralString" xmi:id="g{edge_id}" value={quoteattr(guard)}/></edge>'
            )

    for index, (name, cost) in enumerate(zip(graph["names"], graph["costs"], strict=True)):
        node_id = f"n{index}"
        nodes.append(f'<node xmi:type="uml:OpaqueAction" xmi:id="{node_id}" name={quoteattr(name)}/>')
        stereotypes.append(f'<uml2perf:ActionPlus xmi:id="s{index}" base_Action="{node_id}" cost="{cost}"/>')
        edge(previous, node_id)
        previous = node_id
        if index in graph["diamonds"]:
            nodes.append(f'<node xmi:type="uml:DecisionNode" xmi:id="d{index}"/>')
            nodes.append(f'<node xmi:type="uml:MergeNode" xmi:id="m{index}"/>')
            edge(previous, f"d{index}")
            edge(f"d{index}", f"m{index}", "pid == 0")
            edge(f"d{index}", f"m{index}", "else")
            previous = f"m{index}"
    nodes.append('<node xmi:type="uml:ActivityFinalNode" xmi:id="n_final"/>')
    edge(previous, "n_final")
    text = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<xmi:XMI xmi:version="20131001" xmlns:xmi="http://www.omg.org/spec/XMI/20131001" '
        'xmlns:uml="http://www.eclipse.org/uml2/5.0.0/UML" xmlns:uml2perf="http://uml2perf.org/profile/1.0">\n'
        '<uml:Model xmi:id="model" name="random">\n'
        '<packagedElement xmi:type="uml:Activity" xmi:id="act" name="main">\n'
        + "\n".join(nodes + edges)
        + "\n</packagedElement>\n</uml:Model>\n"
        + '<uml2perf:Main xmi:id="s_main" base_Activity="act"/>\n'
        + "\n".join(stereotypes)
        + "\n</xmi:XMI>\n"
    )
    return text.encode("utf-8"), len(nodes), len(edges)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(activity_graphs())
def test_written_graphs_read_back_the_same(graph: dict) -> None:
    data, node_count, edge_count = write_papyrus(graph)
    model = read_bytes(data, "random.uml")
    (activity,) = model.activities
    assert model.dialect == "papyrus"
    assert len(activity.region.nodes) == node_count
    assert len(activity.region.edges) == edge_count
    actions = [n for n in activity.region.nodes if n.kind is NodeKind.ACTION]
    assert [n.name for n in actions] == graph["names"]
    assert [n.perf.get("cost") for n in actions] == [str(c) for c in graph["costs"]]
    guards = sorted(e.guard for e in activity.region.edges if e.guard)
    assert guards == sorted(["pid == 0", "else"] * len(graph["diamonds"]))
    for node in activity.region.nodes:
        assert node.location.file == "random.uml"
        assert node.location.line is not None


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(activity_graphs(), st.data())
def test_damaged_files_give_our_errors_only(graph: dict, data: st.DataObject) -> None:
    original, _, _ = write_papyrus(graph)
    damage = data.draw(st.sampled_from(["cut", "flip", "splice"]))
    if damage == "cut":
        broken = original[: data.draw(st.integers(min_value=0, max_value=len(original) - 1))]
    elif damage == "flip":
        position = data.draw(st.integers(min_value=0, max_value=len(original) - 1))
        broken = original[:position] + bytes([original[position] ^ 0xFF]) + original[position + 1 :]
    else:
        junk = data.draw(st.binary(min_size=1, max_size=40))
        position = data.draw(st.integers(min_value=0, max_value=len(original)))
        broken = original[:position] + junk + original[position:]
    try:
        read_bytes(broken, "broken.uml")
    except Uml2PerfError as exc:
        assert "broken.uml" in str(exc)
