"""Identical stereotype applications share one interpretation, without losing per-node messages.

The profile interprets each distinct set of applications once (a large model
repeats a handful thousands of times); these tests pin down what must still
happen per node: warnings naming each node, and VSL variables recorded for
each activity that uses them.
"""

from __future__ import annotations

from uml2perf.errors import Location
from uml2perf.model import Activity, Model, Node, NodeKind, Region, StereotypeApplication
from uml2perf.profile import apply_profile

HERE = Location(file="t.uml")


def _node(ident: str, *stereotypes: StereotypeApplication) -> Node:
    return Node(
        id=ident,
        name=ident.upper(),
        kind=NodeKind.ACTION,
        uml_type="OpaqueAction",
        location=HERE,
        stereotypes=stereotypes,
    )


def _activity(ident: str, *nodes: Node) -> Activity:
    return Activity(id=ident, name=ident, location=HERE, region=Region(nodes=nodes))


def test_identical_applications_share_one_spec() -> None:
    cost = StereotypeApplication("action+", "uml2perf", (("cost", "2e-6 * W"),))
    nodes = [_node(f"a{i}", cost) for i in range(5)]
    model = apply_profile(Model(source="t.uml", dialect="test", activities=(_activity("act", *nodes),)))
    specs = [node.perf for node in model.activities[0].region.nodes]
    assert specs[0] is not None and specs[0].tags == (("cost", "2e-6 * W"),)
    assert all(spec is specs[0] for spec in specs)


def test_every_node_still_gets_its_own_warning() -> None:
    bad = StereotypeApplication("action+", "uml2perf", (("cost", "1"), ("colour", "red")))
    model = apply_profile(
        Model(
            source="t.uml", dialect="test", activities=(_activity("act", _node("a1", bad), _node("a2", bad)),)
        )
    )
    messages = [d.message for d in model.diagnostics if d.code == "unknown-tag"]
    assert len(messages) == 2
    assert "of 'A1'" in messages[0] and "of 'A2'" in messages[1]


def test_vsl_variables_are_recorded_for_every_activity_using_them() -> None:
    step = StereotypeApplication("PaStep", "PAM", (("hostDemand", "(expr=$t,unit=s)"),))
    first = _activity("first", _node("a1", step))
    second = _activity("second", _node("b1", step))
    model = apply_profile(Model(source="t.uml", dialect="test", activities=(first, second)))
    for activity in model.activities:
        assert activity.region.nodes[0].perf.get("cost") == "t"
    declared = [v.name for v in model.activities[0].attributes]
    assert declared == ["t"]  # declared once, where it is first used
    assert any(d.code == "vsl-variable" for d in model.diagnostics)
