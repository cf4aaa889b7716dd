"""The UML 1.x dialect (ArgoUML, Poseidon, MagicDraw 9.5, Novosoft) on small, known models."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uml2perf.errors import Severity
from uml2perf.model import Activity, Model, NodeKind, StereotypeApplication
from uml2perf.reader.dialects import uml14
from uml2perf.reader.dialects.uml14 import DIALECT, canonical
from uml2perf.reader.xml import load_bytes, load_file

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data" / "uml14"
SAMPLE = ROOT / "samples" / "prophet-argouml.xmi"


def read(path: Path) -> Model:
    doc = load_file(path)
    assert DIALECT.detect(doc) >= 90
    return DIALECT.read(doc)


def read_text(text: str, name: str = "inline.xmi") -> Model:
    return DIALECT.read(load_bytes(text.encode("utf-8"), name))


def by_name(activity: Activity) -> dict[str, object]:
    return {node.name: node for node in activity.region.nodes if node.name}


def codes(model: Model) -> list[str | None]:
    return [d.code for d in model.diagnostics]


ARGO_HEAD = """<?xml version='1.0' encoding='UTF-8'?>
<XMI xmi.version='1.2' xmlns:UML='org.omg.xmi.namespace.UML'>
  <XMI.header><XMI.documentation>
    <XMI.exporter>ArgoUML (using Netbeans XMI Writer version 1.0)</XMI.exporter>
  </XMI.documentation></XMI.header>
  <XMI.content><UML:Model xmi.id='m' name='m'><UML:Namespace.ownedElement>
"""
ARGO_TAIL = "</UML:Namespace.ownedElement></UML:Model></XMI.content></XMI>"


def graph(vertices: str, transitions: str, name: str = "G", extra: str = "") -> str:
    return (
        ARGO_HEAD
        + extra
        + f"""<UML:ActivityGraph xmi.id='g' name='{name}'>
  <UML:StateMachine.top><UML:CompositeState xmi.id='top'><UML:CompositeState.subvertex>
  {vertices}
  </UML:CompositeState.subvertex></UML:CompositeState></UML:StateMachine.top>
  <UML:StateMachine.transitions>{transitions}</UML:StateMachine.transitions>
</UML:ActivityGraph>"""
        + ARGO_TAIL
    )


def flow(ident: str, source: str, target: str, inner: str = "") -> str:
    return f"""<UML:Transition xmi.id='{ident}'>{inner}
  <UML:Transition.source><UML:StateVertex xmi.idref='{source}'/></UML:Transition.source>
  <UML:Transition.target><UML:StateVertex xmi.idref='{target}'/></UML:Transition.target>
</UML:Transition>"""


def guard(body: str) -> str:
    return f"""<UML:Transition.guard><UML:Guard xmi.id='gd{abs(hash(body))}'><UML:Guard.expression>
  <UML:BooleanExpression xmi.id='ge{abs(hash(body))}' language='' body='{body}'/>
</UML:Guard.expression></UML:Guard></UML:Transition.guard>"""


# --------------------------------------------------------------------- sample


def test_sample_reads_into_the_paper_structure() -> None:
    model = read(SAMPLE)
    assert model.dialect == "uml14"
    assert model.name == "prophet"
    assert [a.name for a in model.activities] == ["MainActivity", "SA"]
    main, sub = model.activities
    assert main.is_main and not sub.is_main
    assert main.stereotypes[0].name == "main"

    kinds = [n.kind for n in main.region.nodes]
    assert kinds == [
        NodeKind.INITIAL,
        NodeKind.ACTION,
        NodeKind.DECISION,
        NodeKind.CALL,
        NodeKind.ACTION,
        NodeKind.MERGE,
        NodeKind.ACTION,
        NodeKind.ACTIVITY_FINAL,
    ]
    nodes = by_name(main)
    assert nodes["SA"].behavior == sub.id  # type: ignore[attr-defined]
    a1 = nodes["A1"].stereotypes  # type: ignore[attr-defined]
    expected_tags = (("cost", "FA1()"), ("code", "GV = 1; P = 3.14"))
    assert a1 == (StereotypeApplication("action+", "PerformanceProphet", expected_tags),)
    assert nodes["A4"].stereotypes[0].tag("cost") == "FA4(P)"  # type: ignore[attr-defined]
    assert nodes["SA"].stereotypes[0].key == "activity+"  # type: ignore[attr-defined]

    decision = next(n for n in main.region.nodes if n.kind is NodeKind.DECISION)
    guards = {e.guard for e in main.region.edges if e.source == decision.id}
    assert guards == {"GV==1", "GV==0"}
    assert len(main.region.edges) == 8

    sub_nodes = by_name(sub)
    sa2 = sub_nodes["SA2"].stereotypes[0]  # type: ignore[attr-defined]
    assert sa2.key == "allreduce+"
    assert dict(sa2.tags) == {"cost": "FSA2(pid)", "size": "8"}
    assert [n.kind for n in sub.region.nodes] == [
        NodeKind.INITIAL,
        NodeKind.ACTION,
        NodeKind.ACTION,
        NodeKind.ACTIVITY_FINAL,
    ]


def test_sample_globals_and_cost_functions() -> None:
    model = read(SAMPLE)
    globals_ = [(v.name, v.type_name, v.default) for v in model.globals]
    assert globals_ == [("GV", "Integer", "0"), ("P", "Real", "0.0")]
    functions = {f.name: (f.parameters, f.body) for f in model.functions}
    assert functions == {
        "FA1": ((), "return 121/P"),
        "FA2": ((), "return 212"),
        "FA4": (("P",), "return 3.14 + 2.71*P"),
        "FSA1": ((), "return 112"),
        "FSA2": (("pid",), "return 32/(pid+1)"),
    }
    assert all(f.language == "uml2perf" for f in model.functions)


def test_sample_locations_name_file_line_id_and_type() -> None:
    model = read(SAMPLE)
    for activity in model.activities:
        assert activity.location.file == "prophet-argouml.xmi"
        for node in activity.region.nodes:
            loc = node.location
            assert loc.file == "prophet-argouml.xmi" and loc.line and loc.line > 1
            assert loc.element_id == node.id and loc.uml_type == node.uml_type
        for edge in activity.region.edges:
            assert edge.location.element_id == edge.id and edge.location.uml_type == "Transition"
    a1 = by_name(model.activities[0])["A1"]
    text = SAMPLE.read_text(encoding="utf-8").splitlines()
    assert a1.id in text[a1.location.line - 1]  # type: ignore[attr-defined]


def test_sample_through_the_full_reader_applies_the_profile() -> None:
    pytest.importorskip("uml2perf.profile")
    from uml2perf.model import Role
    from uml2perf.reader import read_model

    model = read_model(SAMPLE)
    assert model.dialect == "uml14"
    roles = {n.name: n.perf.role for n in model.activities[0].walk() if n.perf is not None}
    assert roles.get("A1") is Role.ACTION
    sa2 = by_name(model.activity("SA"))["SA2"]  # type: ignore[arg-type]
    assert sa2.perf is not None and sa2.perf.role is Role.ALLREDUCE  # type: ignore[attr-defined]


# ------------------------------------------------------------------ detection


def test_detection_scores() -> None:
    assert DIALECT.detect(load_file(SAMPLE)) == 95
    plain = load_bytes(
        b"<XMI xmi.version='1.2' xmlns:UML='org.omg.xmi.namespace.UML'><XMI.content/></XMI>", "plain.xmi"
    )
    assert DIALECT.detect(plain) == 70
    umbrello = load_bytes(
        b"<XMI xmi.version='1.2'><XMI.header><XMI.documentation><XMI.exporter>umbrello uml modeller"
        b"</XMI.exporter></XMI.documentation></XMI.header></XMI>",
        "u.xmi",
    )
    assert DIALECT.detect(umbrello) == 30
    uml2 = load_bytes(
        b"<xmi:XMI xmi:version='2.1' xmlns:xmi='http://schema.omg.org/spec/XMI/2.1'"
        b" xmlns:uml='http://schema.omg.org/spec/UML/2.1'/>",
        "u2.xmi",
    )
    assert DIALECT.detect(uml2) == 0


def test_registry_knows_the_dialect() -> None:
    from uml2perf.reader import DIALECTS
    from uml2perf.reader import by_name as dialect_by_name

    assert DIALECT in DIALECTS and dialect_by_name("uml14") is DIALECT


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("{org.omg.xmi.namespace.UML}ActionState", "ActionState"),
        ("Behavioral_Elements.Activity_Graphs.ActionState", "ActionState"),
        ("Foundation.Core.ModelElement.name", "ModelElement.name"),
        ("{omg.org/UML/1.4}Transition.source", "Transition.source"),
        ("UML:Pseudostate", "Pseudostate"),
        ("XMI.header", "XMI.header"),
    ],
)
def test_canonical_tags(tag: str, expected: str) -> None:
    assert canonical(tag) == expected


# ------------------------------------------------------------- tool flavours


def test_novosoft_xmi10_loop_with_split_branch() -> None:
    model = read(DATA / "novosoft-xmi10-loop.xmi")
    assert model.name == "solver"
    (activity,) = model.activities
    assert activity.name == "Solver"  # unnamed graph: its context class
    nodes = {n.id: n for n in activity.region.nodes}
    assert nodes["xmi.15#merge"].kind is NodeKind.MERGE
    assert nodes["xmi.15"].kind is NodeKind.DECISION
    edges = {e.id: e for e in activity.region.edges}
    assert edges["xmi.31"].target == "xmi.15#merge"
    assert edges["xmi.39"].target == "xmi.15#merge"
    synthetic = edges["xmi.15#merge-flow"]
    assert (synthetic.source, synthetic.target) == ("xmi.15#merge", "xmi.15")
    assert edges["xmi.32"].guard == "i < iterations" and edges["xmi.32"].name == "more"
    assert edges["xmi.35"].guard == "else"
    assert edges["xmi.38"].kind == "object" and edges["xmi.30"].kind == "control"
    assert nodes["xmi.19"].kind is NodeKind.OBJECT
    assert nodes["xmi.13"].stereotypes == (StereotypeApplication("action+", None, (("cost", "0.5"),)),)
    assert nodes["xmi.16"].code == "i = i + 1" and nodes["xmi.16"].body_language == "python"
    assert nodes["xmi.13"].partition == "rank0" and nodes["xmi.16"].partition == "rank0"
    assert nodes["xmi.19"].partition is None
    assert [(v.name, v.default) for v in activity.attributes] == [("iterations", "10")]


def test_magicdraw_attribute_references_and_external_stereotypes() -> None:
    model = read(DATA / "magicdraw95-attribute-refs.xmi")
    main = model.activity("Run")
    assert main is not None
    nodes = by_name(main)
    read_node = nodes["Read"]
    assert read_node.stereotypes == (  # type: ignore[attr-defined]
        StereotypeApplication("action+", None, (("cost", "n * 1e-6"),)),
    )
    call = nodes["Filter"]
    assert call.kind is NodeKind.CALL and call.behavior == "md_filter_graph"  # type: ignore[attr-defined]
    unfinished = nodes["Unfinished"]
    assert unfinished.kind is NodeKind.ACTION  # type: ignore[attr-defined]
    assert "uml14.no-submachine" in codes(model)
    edges = {e.id: e for e in main.region.edges}
    assert edges["md_t2"].probability == "0.25"
    assert [(v.name, v.type_name, v.default) for v in main.attributes] == [("n", "int", "64")]
    assert "uml14.extension" in codes(model)


def test_poseidon_swimlane_tag_names_the_partition() -> None:
    text = (
        ARGO_HEAD.replace("ArgoUML (using Netbeans XMI Writer version 1.0)", "Netbeans XMI Writer").replace(
            "xmlns:UML='org.omg.xmi.namespace.UML'",
            "xmlns:UML='org.omg.xmi.namespace.UML' xmlns:UML2='org.omg.xmi.namespace.UML2'",
        )
        + """<UML:TagDefinition xmi.id='lane' name='swimlane'/>
<UML:ActivityGraph xmi.id='g'><UML:StateMachine.top><UML:CompositeState xmi.id='top'>
<UML:CompositeState.subvertex>
  <UML:ActionState xmi.id='a' name='work'><UML:ModelElement.taggedValue>
    <UML:TaggedValue xmi.id='tv'><UML:TaggedValue.dataValue>&lt;&lt;Design&gt;&gt;</UML:TaggedValue.dataValue>
    <UML:TaggedValue.type><UML:TagDefinition xmi.idref='lane'/></UML:TaggedValue.type></UML:TaggedValue>
  </UML:ModelElement.taggedValue></UML:ActionState>
</UML:CompositeState.subvertex></UML:CompositeState></UML:StateMachine.top></UML:ActivityGraph>"""
        + ARGO_TAIL
    )
    doc = load_bytes(text.encode(), "poseidon.xmi")
    assert isinstance(DIALECT.reader_for(doc), uml14.PoseidonReader)
    (node,) = DIALECT.read(doc).activities[0].region.nodes
    assert node.partition == "Design" and node.stereotypes == ()


def test_reader_choice_follows_the_exporter() -> None:
    assert isinstance(DIALECT.reader_for(load_file(SAMPLE)), uml14.ArgoUmlReader)
    magicdraw = load_file(DATA / "magicdraw95-attribute-refs.xmi")
    assert isinstance(DIALECT.reader_for(magicdraw), uml14.MagicDraw95Reader)
    assert isinstance(DIALECT.reader_for(load_file(DATA / "novosoft-xmi10-loop.xmi")), uml14.NovosoftReader)


def test_xmi_colon_id_style() -> None:
    text = """<?xml version='1.0'?>
<XMI xmi.version='1.2' xmlns:xmi='http://www.omg.org/XMI' xmlns:UML='omg.org/UML/1.4'>
 <XMI.content><UML:Model xmi:id='m' name='m'><UML:Namespace.ownedElement>
  <UML:ActivityGraph xmi:id='g' name='G'><UML:StateMachine.top><UML:CompositeState xmi:id='top'>
   <UML:CompositeState.subvertex>
    <UML:Pseudostate xmi:id='i' kind='initial'/><UML:ActionState xmi:id='a' name='A'/>
   </UML:CompositeState.subvertex></UML:CompositeState></UML:StateMachine.top>
   <UML:StateMachine.transitions><UML:Transition xmi:id='t'>
    <UML:Transition.source><UML:Pseudostate xmi:idref='i'/></UML:Transition.source>
    <UML:Transition.target><UML:ActionState xmi:idref='a'/></UML:Transition.target>
   </UML:Transition></UML:StateMachine.transitions>
  </UML:ActivityGraph></UML:Namespace.ownedElement></UML:Model></XMI.content></XMI>"""
    (activity,) = read_text(text).activities
    assert [n.id for n in activity.region.nodes] == ["i", "a"]
    (edge,) = activity.region.edges
    assert (edge.id, edge.source, edge.target) == ("t", "i", "a")
    assert edge.location.element_id == "t"


# ----------------------------------------------------------- node semantics


def test_unnamed_action_state_is_labelled_by_its_entry_script() -> None:
    vertices = """
<UML:ActionState xmi.id='a'><UML:State.entry><UML:UninterpretedAction xmi.id='ua'>
  <UML:Action.script><UML:ActionExpression xmi.id='ae' language='' body='compute forces&#10;(all pairs)'/>
  </UML:Action.script></UML:UninterpretedAction></UML:State.entry></UML:ActionState>
<UML:ActionState xmi.id='b'><UML:State.entry><UML:UninterpretedAction xmi.id='ub'>
  <UML:Action.script><UML:ActionExpression xmi.id='be' language='uml2perf' body='n = n * 2'/>
  </UML:Action.script></UML:UninterpretedAction></UML:State.entry></UML:ActionState>"""
    a, b = read_text(graph(vertices, "")).activities[0].region.nodes
    assert a.name == "compute forces" and a.body_text == "compute forces\n(all pairs)" and a.code is None
    assert b.name == "" and b.code == "n = n * 2" and b.body_text is None


def test_junction_kinds_follow_the_flows() -> None:
    vertices = """<UML:Pseudostate xmi.id='i' kind='initial'/>
<UML:Pseudostate xmi.id='j' kind='junction'/><UML:ActionState xmi.id='a' name='A'/>
<UML:Pseudostate xmi.id='c' kind='choice'/><UML:ActionState xmi.id='b' name='B'/>
<UML:Pseudostate xmi.id='h' kind='deepHistory'/>"""
    transitions = (
        flow("t1", "i", "j")
        + flow("t2", "j", "a")
        + flow("t3", "a", "c")
        + flow("t4", "c", "b", guard("[x &gt; 1]"))
        + flow("t5", "c", "h", guard("true"))
    )
    model = read_text(graph(vertices, transitions))
    nodes = {n.id: n for n in model.activities[0].region.nodes}
    assert nodes["j"].kind is NodeKind.MERGE  # one way in, one way out: a pass-through
    assert nodes["c"].kind is NodeKind.DECISION
    assert nodes["h"].kind is NodeKind.MERGE and "uml14.history" in codes(model)
    edges = {e.id: e for e in model.activities[0].region.edges}
    assert edges["t4"].guard == "x > 1" and edges["t5"].guard is None


def test_fork_join_final_and_object_flow_state() -> None:
    vertices = """<UML:Pseudostate xmi.id='f' kind='fork'/><UML:Pseudostate xmi.id='j' kind='join'/>
<UML:ObjectFlowState xmi.id='o' name='buffer'/><UML:FinalState xmi.id='z'/><UML:Pseudostate xmi.id='d'/>"""
    nodes = read_text(graph(vertices, "")).activities[0].region.nodes
    assert [n.kind for n in nodes] == [
        NodeKind.FORK,
        NodeKind.JOIN,
        NodeKind.OBJECT,
        NodeKind.ACTIVITY_FINAL,
        NodeKind.INITIAL,  # UML 1.x's default pseudostate kind
    ]


def test_nested_composite_states_are_flattened_with_a_warning() -> None:
    vertices = """<UML:ActionState xmi.id='a' name='A'/>
<UML:CompositeState xmi.id='inner'><UML:CompositeState.subvertex>
  <UML:ActionState xmi.id='b' name='B'/></UML:CompositeState.subvertex></UML:CompositeState>"""
    model = read_text(graph(vertices, flow("t", "a", "b")))
    assert [n.id for n in model.activities[0].region.nodes] == ["a", "b"]
    assert "uml14.nested-composite" in codes(model)


def test_transition_named_after_its_trigger_and_effect_noted() -> None:
    extra = "<UML:SignalEvent xmi.id='ev' name='ready'/>"
    inner = """<UML:Transition.trigger><UML:SignalEvent xmi.idref='ev'/></UML:Transition.trigger>
<UML:Transition.effect><UML:UninterpretedAction xmi.id='fx'/></UML:Transition.effect>"""
    vertices = "<UML:ActionState xmi.id='a' name='A'/><UML:ActionState xmi.id='b' name='B'/>"
    model = read_text(graph(vertices, flow("t", "a", "b", inner), extra=extra))
    (edge,) = model.activities[0].region.edges
    assert edge.name == "ready"
    assert "uml14.effect" in codes(model)


# ------------------------------------------------------- stereotypes and tags


def test_tagged_values_go_to_the_stereotype_that_defines_them() -> None:
    extra = """<UML:Stereotype xmi.id='s1' name='send+'><UML:Stereotype.definedTag>
  <UML:TagDefinition xmi.id='d1' name='dest'/></UML:Stereotype.definedTag></UML:Stereotype>
<UML:Stereotype xmi.id='s2' name='PaStep'><UML:Stereotype.definedTag>
  <UML:TagDefinition xmi.id='d2' name='hostDemand'/></UML:Stereotype.definedTag></UML:Stereotype>
<UML:TagDefinition xmi.id='d3' name='note'/>"""
    vertices = """<UML:ActionState xmi.id='a' name='A' stereotype='s1 s2'><UML:ModelElement.taggedValue>
  <UML:TaggedValue xmi.id='v2'><UML:TaggedValue.dataValue>(5,ms)</UML:TaggedValue.dataValue>
    <UML:TaggedValue.type><UML:TagDefinition xmi.idref='d2'/></UML:TaggedValue.type></UML:TaggedValue>
  <UML:TaggedValue xmi.id='v1'><UML:TaggedValue.dataValue>pid+1</UML:TaggedValue.dataValue>
    <UML:TaggedValue.type><UML:TagDefinition xmi.idref='d1'/></UML:TaggedValue.type></UML:TaggedValue>
  <UML:TaggedValue xmi.id='v3'><UML:TaggedValue.dataValue>free</UML:TaggedValue.dataValue>
    <UML:TaggedValue.type><UML:TagDefinition xmi.idref='d3'/></UML:TaggedValue.type></UML:TaggedValue>
</UML:ModelElement.taggedValue></UML:ActionState>"""
    (node,) = read_text(graph(vertices, "", extra=extra)).activities[0].region.nodes
    assert node.stereotypes == (
        StereotypeApplication("send+", None, (("dest", "pid+1"), ("note", "free"))),
        StereotypeApplication("PaStep", None, (("hostDemand", "(5,ms)"),)),
    )


def test_plain_tagged_values_without_a_stereotype_are_kept() -> None:
    vertices = """<UML:ActionState xmi.id='a' name='A'><UML:ModelElement.taggedValue>
  <UML:TaggedValue xmi.id='v' tag='cost' value='2*n'/></UML:ModelElement.taggedValue></UML:ActionState>"""
    (node,) = read_text(graph(vertices, "")).activities[0].region.nodes
    assert node.stereotypes == (StereotypeApplication("", None, (("cost", "2*n"),)),)
    assert node.stereotypes[0].tag("COST") == "2*n"


def test_model_plus_stereotype_marks_the_main_activity() -> None:
    extra = "<UML:Stereotype xmi.id='s' name='ModelPlus'/>"
    text = graph("", "", extra=extra).replace(
        "<UML:ActivityGraph xmi.id='g' name='G'>", "<UML:ActivityGraph xmi.id='g' name='G' stereotype='s'>"
    )
    assert read_text(text).activities[0].is_main


# ------------------------------------------------------------------- errors


def test_dangling_transition_is_a_warning_naming_transition_and_missing_id() -> None:
    model = read(DATA / "argouml-dangling-transition.xmi")
    (warning,) = [d for d in model.diagnostics if d.code == "broken-flow"]
    assert warning.severity is Severity.WARNING
    assert "argo-t2" in warning.message and "argo-deleted-final" in warning.message
    assert warning.location.file == "argouml-dangling-transition.xmi"
    assert warning.location.element_id == "argo-t2" and warning.location.name == "toNowhere"
    lines = (DATA / "argouml-dangling-transition.xmi").read_text(encoding="utf-8").splitlines()
    assert warning.location.line == next(n for n, line in enumerate(lines, 1) if "'argo-t2'" in line)
    assert warning.hint
    assert model.activities and all(e.id != "argo-t2" for a in model.activities for e in a.region.edges)


def test_transition_without_target_is_skipped_with_a_warning() -> None:
    no_target = (
        "<UML:Transition xmi.id='t'><UML:Transition.source>"
        "<UML:StateVertex xmi.idref='a'/></UML:Transition.source></UML:Transition>"
    )
    model = read_text(graph("<UML:ActionState xmi.id='a' name='A'/>", no_target))
    (warning,) = [d for d in model.diagnostics if d.code == "broken-flow"]
    assert "has no target" in warning.message and warning.location.element_id == "t"
    assert model.activity("G").region.edges == ()  # type: ignore[union-attr]


def test_transition_leaving_its_graph_is_skipped_with_a_warning() -> None:
    other = """<UML:ActivityGraph xmi.id='g2' name='Other'><UML:StateMachine.top>
<UML:CompositeState xmi.id='top2'><UML:CompositeState.subvertex><UML:ActionState xmi.id='x' name='X'/>
</UML:CompositeState.subvertex></UML:CompositeState></UML:StateMachine.top></UML:ActivityGraph>"""
    model = read_text(graph("<UML:ActionState xmi.id='a' name='A'/>", flow("t", "a", "x"), extra=other))
    assert model.activity("G").region.edges == ()  # type: ignore[union-attr]
    (warning,) = [d for d in model.diagnostics if d.code == "uml14.foreign-transition"]
    assert warning.severity is Severity.WARNING and "'Other'" in warning.message
    assert warning.location.element_id == "t"


def test_cost_function_without_body_warns() -> None:
    extra = """<UML:Class xmi.id='cf' name='CostFunctions'><UML:Classifier.feature>
<UML:Operation xmi.id='op' name='F'/></UML:Classifier.feature></UML:Class>
<UML:Class xmi.id='other' name='Util'><UML:Classifier.feature>
<UML:Operation xmi.id='op2' name='G'><UML:BehavioralFeature.parameter>
  <UML:Parameter xmi.id='p' name='n' kind='in'/></UML:BehavioralFeature.parameter></UML:Operation>
<UML:Method xmi.id='m2'><UML:Method.body><UML:ProcedureExpression xmi.id='b2' language='uml2perf' body='2*n'/>
</UML:Method.body><UML:Method.specification><UML:Operation xmi.idref='op2'/></UML:Method.specification>
</UML:Method>
</UML:Classifier.feature></UML:Class>"""
    model = read_text(graph("", "", extra=extra))
    assert [(f.name, f.parameters, f.body) for f in model.functions] == [("G", ("n",), "2*n")]
    assert "uml14.cost-function-body" in codes(model)


# ---------------------------------------------------------- other contents


def test_file_without_activity_graph_names_its_contents() -> None:
    text = (
        ARGO_HEAD
        + """<UML:Class xmi.id='c1' name='A'/><UML:Class xmi.id='c2' name='B'/>
<UML:UseCase xmi.id='u' name='U'/>
<UML:StateMachine xmi.id='sm' name='Life'><UML:StateMachine.top><UML:CompositeState xmi.id='t'/>
</UML:StateMachine.top></UML:StateMachine>"""
        + ARGO_TAIL
    )
    model = read_text(text)
    assert model.activities == ()
    assert model.contents == (("state machines", 1), ("classes", 2), ("use cases", 1))
    (skipped,) = [d for d in model.diagnostics if d.code == "uml14.state-machine"]
    assert skipped.severity is Severity.INFO and "'Life'" in skipped.message


# ------------------------------------------------------------------ property


@st.composite
def random_graphs(draw: st.DrawFn) -> tuple[str, int, list[tuple[int, int]]]:
    """An ArgoUML-style graph of junctions and actions with random transitions."""
    count = draw(st.integers(min_value=1, max_value=12))
    kind = st.sampled_from(["ActionState", "junction", "fork"])
    kinds = draw(st.lists(kind, min_size=count, max_size=count))
    pairs = draw(
        st.lists(st.tuples(st.integers(0, count - 1), st.integers(0, count - 1)), max_size=3 * count)
    )
    vertices = "".join(
        f"<UML:ActionState xmi.id='v{k}' name='N{k}'/>"
        if kind == "ActionState"
        else f"<UML:Pseudostate xmi.id='v{k}' kind='{kind}'/>"
        for k, kind in enumerate(kinds)
    )
    transitions = "".join(flow(f"t{n}", f"v{s}", f"v{t}") for n, (s, t) in enumerate(pairs))
    return graph(vertices, transitions), count, pairs


@settings(max_examples=60, deadline=None)
@given(random_graphs())
def test_every_edge_connects_nodes_of_its_activity(case: tuple[str, int, list[tuple[int, int]]]) -> None:
    text, count, pairs = case
    (activity,) = read_text(text).activities
    ids = {n.id for n in activity.region.nodes}
    splits = sum(1 for n in activity.region.nodes if n.id.endswith("#merge"))
    assert len(ids) == len(activity.region.nodes) == count + splits
    assert len(activity.region.edges) == len(pairs) + splits
    for edge in activity.region.edges:
        assert edge.source in ids and edge.target in ids
    for node in activity.region.nodes:
        incoming = sum(1 for e in activity.region.edges if e.target == node.id)
        outgoing = sum(1 for e in activity.region.edges if e.source == node.id)
        if node.kind is NodeKind.DECISION:
            assert outgoing > 1 and incoming <= 1
        if node.kind is NodeKind.MERGE:
            assert outgoing <= 1


def test_stereotype_from_another_file_is_reported_not_guessed() -> None:
    vertices = """<UML:ActionState xmi.id='a' name='A'><UML:ModelElement.stereotype>
  <UML:Stereotype href='file:/home/me/uml2perf-profile.xmi#127-0-0-1-77:-8000:0000000000000A01'/>
</UML:ModelElement.stereotype></UML:ActionState>"""
    model = read_text(graph(vertices, ""))
    (node,) = model.activities[0].region.nodes
    assert node.stereotypes == ()
    (warning,) = [d for d in model.diagnostics if d.code == "uml14.external-stereotype"]
    assert "uml2perf-profile.xmi" in warning.message and warning.location.element_id == "a"
