"""The Umbrello dialect: activity diagrams stored only as diagram widgets."""

from __future__ import annotations

from pathlib import Path

import pytest

from uml2perf.errors import ModelError, Severity
from uml2perf.model import Model, NodeKind
from uml2perf.reader.dialects.umbrello import DIALECT
from uml2perf.reader.xml import load_bytes, load_file

DATA = Path(__file__).resolve().parent / "data" / "uml14"
LOOP = DATA / "umbrello16-loop-forkjoin.xmi"


def read_text(text: str, name: str = "umbrello.xmi") -> Model:
    return DIALECT.read(load_bytes(text.encode("utf-8"), name))


def codes(model: Model) -> list[str | None]:
    return [d.code for d in model.diagnostics]


UMBRELLO2 = """<?xml version="1.0" encoding="UTF-8"?>
<xmi:XMI xmi:version="2.1" xmlns:xmi="http://schema.omg.org/spec/XMI/2.1"
    xmlns:uml="http://schema.omg.org/spec/UML/2.1">
  <xmi:Documentation exporter="umbrello uml modeller 2.38.3 http://umbrello.kde.org" exporterVersion="2.0.4"/>
  <uml:Model xmi:id="m1" name="UML Model">
    <packagedElement xmi:type="uml:Model" xmi:id="Logical_View" name="Logical View">
      <packagedElement xmi:type="uml:Class" xmi:id="c1" name="Account"/>
      <xmi:Extension extender="umbrello">
        <diagrams resolution="96">
          <diagram xmi.id="d6" name="pay" type="6">
            <widgets>
              {widgets}
            </widgets>
            <messages/>
            <associations>
              {associations}
            </associations>
          </diagram>
        </diagrams>
      </xmi:Extension>
    </packagedElement>
  </uml:Model>
</xmi:XMI>"""


def umbrello2(widgets: str, associations: str) -> str:
    return UMBRELLO2.replace("{widgets}", widgets).replace("{associations}", associations)


# ------------------------------------------------------------------ detection


def test_detection_beats_the_uml14_and_generic_uml2_readers() -> None:
    from uml2perf.reader import detect_dialect

    doc16 = load_file(LOOP)
    doc2 = load_bytes(umbrello2("", "").encode(), "u2.xmi")
    assert DIALECT.detect(doc16) == 95 and DIALECT.detect(doc2) == 95
    assert detect_dialect(doc16) is DIALECT
    assert detect_dialect(doc2) is DIALECT


def test_detection_by_extender_without_exporter() -> None:
    doc = load_bytes(b'<XMI xmi.version="1.2"><XMI.extensions xmi.extender="umbrello"/></XMI>', "x.xmi")
    assert DIALECT.detect(doc) == 90
    assert DIALECT.detect(load_bytes(b"<XMI xmi.version='1.2'/>", "y.xmi")) == 0


def test_registry_knows_the_dialect() -> None:
    from uml2perf.reader import DIALECTS, by_name

    assert DIALECT in DIALECTS and by_name("umbrello") is DIALECT


# ---------------------------------------------------------------- umbrello 1.6


def test_widgets_become_nodes_of_one_activity_per_diagram() -> None:
    model = DIALECT.read(load_file(LOOP))
    assert model.dialect == "umbrello" and model.name == "UML Model"
    (activity,) = model.activities
    assert (activity.id, activity.name) == ("d1", "solve")
    kinds = {n.id: n.kind for n in activity.region.nodes}
    assert kinds == {
        "i0": NodeKind.INITIAL,
        "a1": NodeKind.ACTION,
        "b1#merge": NodeKind.MERGE,
        "b1": NodeKind.DECISION,
        "a2": NodeKind.ACTION,
        "fjA": NodeKind.FORK,
        "a3": NodeKind.ACTION,
        "a4": NodeKind.ACTION,
        "fjB#join": NodeKind.JOIN,
        "fjB": NodeKind.FORK,
        "a5": NodeKind.ACTION,
        "o1": NodeKind.OBJECT,
        "e1": NodeKind.ACTIVITY_FINAL,
        "f1": NodeKind.FLOW_FINAL,
    }
    names = {n.id: n.name for n in activity.region.nodes}
    assert names["a1"] == "compute" and names["o1"] == "result"
    compute = activity.region.node("a1")
    lines = LOOP.read_text(encoding="utf-8").splitlines()
    expected_line = next(n for n, line in enumerate(lines, 1) if 'xmi.id="a1"' in line)
    assert compute is not None and compute.location.element_id == "a1"
    assert compute.location.line == expected_line
    assert compute.uml_type == "activitywidget/Normal"


def test_flows_labels_pins_and_splits() -> None:
    model = DIALECT.read(load_file(LOOP))
    edges = model.activities[0].region.edges
    pairs = [(e.source, e.target) for e in edges]
    assert ("a1", "b1#merge") in pairs and ("a2", "b1#merge") in pairs
    assert ("b1#merge", "b1") in pairs and ("fjB#join", "fjB") in pairs
    assert ("a4", "fjB#join") in pairs  # the flow drawn from a4's pin
    guards = {(e.source, e.target): e.guard for e in edges}
    assert guards[("b1", "a2")] == "i < n"
    assert guards[("b1", "fjA")] == "else"  # unbracketed label on a decision's flow
    named = {(e.source, e.target): e.name for e in edges}
    assert named[("a2", "b1#merge")] == "next"  # an ordinary label stays a name
    kinds = {(e.source, e.target): e.kind for e in edges}
    assert kinds[("fjB", "o1")] == "object" and kinds[("o1", "f1")] == "object"
    assert kinds[("a5", "e1")] == "control"
    # 15 association widgets: one anchor skipped, one flow into the note dropped,
    # two synthetic flows for the split branch and bar.
    assert len(edges) == 15 - 2 + 2
    assert all(e.id.startswith("d1#flow") or e.id.endswith("-flow") for e in edges)


def test_dropped_and_skipped_things_are_reported() -> None:
    model = DIALECT.read(load_file(LOOP))
    (dropped,) = [d for d in model.diagnostics if d.code == "umbrello.flow-to-non-node"]
    assert dropped.severity is Severity.WARNING and "notewidget" in dropped.message and dropped.location.line
    (skipped,) = [d for d in model.diagnostics if d.code == "umbrello.diagram"]
    assert skipped.severity is Severity.INFO and "class diagram 'classes'" in skipped.message
    assert model.contents == (("classes", 1), ("class diagrams", 1))


def test_every_edge_connects_nodes_of_the_activity() -> None:
    activity = DIALECT.read(load_file(LOOP)).activities[0]
    ids = {n.id for n in activity.region.nodes}
    for edge in activity.region.edges:
        assert edge.source in ids and edge.target in ids


# ------------------------------------------------------------------ umbrello 2


def test_umbrello2_xmi21_header() -> None:
    widgets = """
<activitywidget xmi.id="s" localid="l1" activitytype="0" activityname=""/>
<signalwidget xmi.id="w" localid="l2" signaltype="1" signalname="order received"/>
<activitywidget xmi.id="p" localid="l3" activitytype="5" activityname="charge card"/>
<activitywidget xmi.id="e" localid="l4" activitytype="2" activityname=""/>"""
    associations = """
<assocwidget xmi.id="f1" type="515" widgetaid="s" widgetbid="w"/>
<assocwidget xmi.id="f2" type="515" widgetaid="w" widgetbid="p"/>
<assocwidget xmi.id="f3" type="516" widgetaid="p" widgetbid="e"/>"""
    model = read_text(umbrello2(widgets, associations))
    (activity,) = model.activities
    assert [(n.id, n.kind, n.uml_type) for n in activity.region.nodes] == [
        ("s", NodeKind.INITIAL, "activitywidget/Initial"),
        ("w", NodeKind.ACTION, "signalwidget/Accept"),
        ("p", NodeKind.ACTION, "activitywidget/Invoke"),
        ("e", NodeKind.ACTIVITY_FINAL, "activitywidget/End"),
    ]
    assert [e.id for e in activity.region.edges] == ["f1", "f2", "f3"]
    assert "umbrello.exception-edge" in codes(model)
    assert model.contents == (("classes", 1),)


def test_dangling_flow_is_an_error_naming_the_flow_and_widget() -> None:
    text = umbrello2(
        '<activitywidget xmi.id="s" activitytype="0" activityname=""/>',
        '<assocwidget xmi.id="f1" type="515" widgetaid="s" widgetbid="gone"/>',
    )
    with pytest.raises(ModelError) as caught:
        read_text(text, "dangling.xmi")
    error = caught.value
    assert "'f1'" in error.message and "'gone'" in error.message
    assert error.location.file == "dangling.xmi" and error.location.element_id == "f1" and error.location.line


def test_file_without_activity_diagram_names_its_contents() -> None:
    text = umbrello2("", "").replace('type="6"', 'type="5"')
    model = read_text(text)
    assert model.activities == ()
    assert model.contents == (("classes", 1), ("state diagrams", 1))
    assert "umbrello.diagram" in codes(model)


def test_unknown_activity_type_reads_as_action_with_warning() -> None:
    model = read_text(umbrello2('<activitywidget xmi.id="x" activitytype="9" activityname="odd"/>', ""))
    (node,) = model.activities[0].region.nodes
    assert node.kind is NodeKind.ACTION and "umbrello.activitytype" in codes(model)
