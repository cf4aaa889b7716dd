"""The UML 2 reader: samples of three tools, UML features, quirks and hostile input."""

from __future__ import annotations

from pathlib import Path

import pytest

from uml2perf.errors import InputError, ModelError, Severity
from uml2perf.model import CONTROL_KINDS, Model, NodeKind, Role, walk_region
from uml2perf.reader import DIALECTS, by_name, detect_dialect, read_bytes, read_model
from uml2perf.reader.xml import load_bytes

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
DATA = Path(__file__).resolve().parent / "data" / "reader"
PROPHET_SAMPLES = {
    "prophet.uml": "papyrus",
    "prophet-magicdraw.xmi": "magicdraw",
    "prophet-ea.xmi": "ea",
}


def _signature(model: Model) -> dict[str, object]:
    """A tool-independent summary: names, kinds, flows by node names, perf specs, functions, globals."""
    result: dict[str, object] = {}
    for activity in model.activities:
        # control nodes carry each tool's default name ("Initial", "ActivityInitial"): compare their kind
        names = {n.id: n.kind.value if n.kind in CONTROL_KINDS else n.name for n in activity.walk()}
        nodes = sorted(
            (
                names[n.id],
                n.kind.value,
                n.perf.role.value if n.perf else None,
                n.perf.tags if n.perf else (),
                n.code,
            )
            for n in activity.walk()
        )
        flows = sorted(
            (names[e.source], names[e.target], e.guard, e.probability) for e in activity.region.edges
        )
        called = sorted(
            model.activity(n.behavior).name
            for n in activity.walk()
            if n.behavior and model.activity(n.behavior)
        )
        result[activity.name] = (activity.is_main, nodes, flows, called)
    result["functions"] = sorted((f.name, f.parameters, f.body) for f in model.functions)
    main = next(a for a in model.activities if a.is_main)
    result["globals"] = sorted((v.name, v.default) for v in main.attributes + model.globals)
    return result


@pytest.mark.parametrize("sample, dialect", sorted(PROPHET_SAMPLES.items()))
def test_prophet_sample_reads_with_its_dialect(sample: str, dialect: str) -> None:
    model = read_model(SAMPLES / sample)
    assert model.dialect == dialect
    assert [a.name for a in model.activities] == ["MainActivity", "SA"]
    assert not [d for d in model.diagnostics if d.severity is not Severity.INFO]


def test_prophet_samples_read_into_equivalent_models() -> None:
    signatures = [_signature(read_model(SAMPLES / name)) for name in PROPHET_SAMPLES]
    assert signatures[0] == signatures[1] == signatures[2]


def test_prophet_sample_content_matches_the_paper() -> None:
    model = read_model(SAMPLES / "prophet.uml")
    main = model.activity("MainActivity")
    assert main is not None and main.is_main
    assert [(v.name, v.type_name, v.default) for v in main.attributes] == [
        ("GV", "Integer", "0"),
        ("P", "Real", "0.0"),
    ]
    nodes = {n.name: n for n in main.walk()}
    assert nodes["A1"].code == "GV = 1\nP = 3.14"
    assert nodes["A1"].perf is not None and nodes["A1"].perf.get("cost") == "FA1()"
    assert nodes["SA"].kind is NodeKind.CALL and nodes["SA"].behavior == "_act_sa"
    assert nodes["SA"].perf is not None and nodes["SA"].perf.role is Role.ACTIVITY
    guards = {(e.source, e.target): e.guard for e in main.region.edges}
    assert guards[("_decision", "_sa")] == "GV==1"
    assert guards[("_decision", "_a2")] == "GV==0"
    assert guards[("_init", "_a1")] is None  # Papyrus default LiteralBoolean true
    sa2 = next(n for n in model.activity("SA").walk() if n.name == "SA2")
    assert sa2.perf is not None and sa2.perf.role is Role.ALLREDUCE
    assert dict(sa2.perf.tags) == {"cost": "FSA2(pid)", "size": "8"}
    functions = {f.name: (f.parameters, f.body) for f in model.functions}
    assert functions == {
        "FA1": ((), "return 121/P"),
        "FA2": ((), "return 212"),
        "FA4": (("P",), "return 3.14 + 2.71*P"),
        "FSA1": ((), "return 112"),
        "FSA2": (("pid",), "return 32/(pid+1)"),
    }


# --------------------------------------------------------------------------- UML features


@pytest.fixture(scope="module")
def features() -> Model:
    return read_model(DATA / "features.uml")


def _nodes(model: Model) -> dict[str, object]:
    return {n.id: n for a in model.activities for n in a.walk()}


def _edges(model: Model) -> dict[str, object]:
    found = {}

    def visit(region) -> None:  # type: ignore[no-untyped-def]
        for edge in region.edges:
            found[edge.id] = edge
        for node in region.nodes:
            if node.region is not None:
                visit(node.region)

    for activity in model.activities:
        visit(activity.region)
    return found


def test_structured_nodes_keep_their_nested_region(features: Model) -> None:
    nodes = _nodes(features)
    block = nodes["_struct"]
    assert block.kind is NodeKind.STRUCTURED and block.uml_type == "StructuredActivityNode"  # no xmi:type
    assert [n.id for n in block.region.nodes] == ["_s_a1", "_s_a2"]
    assert [(e.source, e.target) for e in block.region.edges] == [("_s_a1", "_s_a2")]


def test_loop_and_conditional_nodes(features: Model) -> None:
    nodes = _nodes(features)
    loop = nodes["_loop"]
    assert loop.kind is NodeKind.LOOP
    assert (loop.loop.setup, loop.loop.test, loop.loop.body, loop.loop.tested_first) == (
        ("_l_setup",),
        ("_l_test",),
        ("_l_body",),
        True,
    )
    assert loop.perf.role is Role.LOOP and loop.perf.get("iterations") == "N"
    cond = nodes["_cond"]
    assert cond.kind is NodeKind.CONDITIONAL
    assert [(c.test, c.body) for c in cond.clauses] == [(("_c_t1",), ("_c_b1",)), (("_c_t2",), ("_c_b2",))]


def test_pins_are_dropped_and_object_flows_join_the_actions(features: Model) -> None:
    nodes = _nodes(features)
    assert "_setup_out" not in nodes and "_s_a1_in" not in nodes
    edges = _edges(features)
    assert (edges["_e2"].source, edges["_e2"].target, edges["_e2"].kind) == ("_setup", "_struct", "object")
    dropped = [d for d in features.diagnostics if d.code == "dropped-flow"]
    assert [d.location.element_id for d in dropped] == ["_s_e0"]
    assert dropped[0].severity is Severity.INFO


def test_guards_else_brackets_and_defaults(features: Model) -> None:
    edges = _edges(features)
    assert edges["_e6"].guard == "N < 100"
    assert edges["_e7"].guard == "else"
    assert edges["_e11"].guard is None  # LiteralBoolean without value: the tools' default guard


def test_probabilities_from_flow_tags_and_marte_steps(features: Model) -> None:
    edges = _edges(features)
    assert edges["_e6"].probability == "0.25"
    assert edges["_e7"].probability == "1-p"  # GaStep.prob on the action after the decision


def test_action_bodies(features: Model) -> None:
    nodes = _nodes(features)
    assert nodes["_setup"].code == "N = 128\ni = 0"  # C++ plain assignments
    assert nodes["_setup"].body_language == "C++"
    assert nodes["_s_a2"].code is None and nodes["_s_a2"].body_text == 'WriteLine("hello");'


def test_partitions_variables_globals_functions(features: Model) -> None:
    nodes = _nodes(features)
    assert nodes["_fast"].partition == "Rank0" and nodes["_init"].partition is None
    activity = features.activities[0]
    assert [(v.name, v.type_name) for v in activity.variables] == [("i", "Integer")]
    assert [(v.name, v.default) for v in features.globals] == [("N", "64"), ("flag", "True")]
    assert [(f.name, f.parameters, f.language) for f in features.functions] == [("work", ("n",), "uml2perf")]


def test_contents_count_what_the_file_holds(features: Model) -> None:
    contents = dict(features.contents)
    assert contents["activities"] == 1 and contents["state machines"] == 1 and contents["classes"] == 1
    assert contents["stereotype applications"] == 8


def test_diagnostics_report_what_was_skipped(features: Model) -> None:
    codes = {d.code: d for d in features.diagnostics}
    assert codes["orphan-stereotype"].severity is Severity.WARNING
    assert "_no_such_element" in codes["dangling-stereotype"].message
    assert codes["interruptible-region"].location.name == "Abortable"
    assert "Alf" in codes["not-a-function"].message
    assert "'cots'" in codes["unknown-tag"].message and "known: cost" in codes["unknown-tag"].message


# --------------------------------------------------------------------------- detection and bad input

_MINIMAL = """<?xml version="1.0"?>
<xmi:XMI xmi:version="20131001" xmlns:xmi="http://www.omg.org/spec/XMI/20131001" xmlns:uml="{ns}">
  {doc}
  <uml:Model xmi:id="m" name="m">
    <packagedElement xmi:type="uml:Activity" xmi:id="a" name="A">
      <node xmi:type="uml:OpaqueAction" xmi:id="n1" name="N1"/>
      <node xmi:type="uml:OpaqueAction" xmi:id="n2" name="N2"/>
      <edge xmi:type="uml:ControlFlow" xmi:id="e1" source="n1" target="{target}"/>
    </packagedElement>
  </uml:Model>
</xmi:XMI>
"""


def _minimal(ns: str = "http://www.eclipse.org/uml2/5.0.0/UML", doc: str = "", target: str = "n2") -> bytes:
    return _MINIMAL.format(ns=ns, doc=doc, target=target).encode()


def test_registry_lists_the_builtin_dialects_with_the_generic_fallback_last() -> None:
    names = [d.name for d in DIALECTS]
    assert names[0] == "papyrus" and names[-1] == "uml2"
    assert {"magicdraw", "ea", "visual-paradigm", "rsa", "modelio"} <= set(names)
    assert by_name("EA") is by_name("ea")


def test_unknown_exporter_falls_back_to_generic_uml2_with_a_warning() -> None:
    data = _minimal("http://www.omg.org/spec/UML/20131001", '<xmi:Documentation exporter="HomeGrown" />')
    model = read_bytes(data, "homegrown.xmi")
    assert model.dialect == "uml2"
    warning = next(d for d in model.diagnostics if d.code == "unknown-exporter")
    assert warning.severity is Severity.WARNING and "HomeGrown" in warning.message


def test_dialect_can_be_forced_by_name() -> None:
    assert read_bytes(_minimal(), "x.uml", dialect="magicdraw").dialect == "magicdraw"
    with pytest.raises(InputError, match="unknown dialect"):
        read_bytes(_minimal(), "x.uml", dialect="rational-rose")


def test_detect_dialect_on_loaded_documents() -> None:
    assert detect_dialect(load_bytes(_minimal(), "x.uml")).name == "papyrus"
    vp = _minimal("http://schema.omg.org/spec/UML/2.0", '<xmi:Documentation exporter="Visual Paradigm"/>')
    assert detect_dialect(load_bytes(vp, "x.xmi")).name == "visual-paradigm"


def test_dangling_edge_end_is_a_warning_with_location_and_the_flow_is_skipped() -> None:
    model = read_bytes(_minimal(target="n99"), "broken.uml")
    (warning,) = [d for d in model.diagnostics if d.code == "broken-flow"]
    text = str(warning)
    assert "broken.uml:8" in text and "e1" in text and "'n99'" in text and "dangling" in text
    assert warning.severity is Severity.WARNING
    assert all(e.id != "e1" for a in model.activities for e in a.region.edges)


def test_not_xmi_at_all_names_what_the_file_looks_like() -> None:
    with pytest.raises(InputError) as info:
        read_bytes(b"<html><body>hello</body></html>", "page.xmi")
    assert "page.xmi" in str(info.value) and "<html>" in str(info.value)


def test_truncated_xml_is_an_input_error_with_a_line() -> None:
    data = _minimal()[:-60]
    with pytest.raises(InputError) as info:
        read_bytes(data, "cut.uml")
    assert info.value.location.file == "cut.uml" and info.value.location.line


def test_external_entities_are_never_loaded(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    data = (
        f'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY leak SYSTEM "file://{secret}">]>'
        '<xmi:XMI xmlns:xmi="http://www.omg.org/spec/XMI/20131001">&leak;</xmi:XMI>'
    ).encode()
    with pytest.raises(InputError) as info:
        read_bytes(data, "leak.xmi")
    assert "TOPSECRET" not in str(info.value)


def test_billion_laughs_is_refused() -> None:
    entities = '<!ENTITY a0 "lol">' + "".join(f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 10))
    data = f'<?xml version="1.0"?><!DOCTYPE x [{entities}]><x>&a9;</x>'.encode()
    with pytest.raises(InputError, match="entity declarations"):
        read_bytes(data, "lol.xmi")


def test_too_deep_nesting_is_refused() -> None:
    data = b"<a>" * 300 + b"</a>" * 300
    with pytest.raises(InputError, match="nested"):
        read_bytes(data, "deep.xmi")


def test_too_deep_nesting_is_refused_by_the_walk_when_the_parser_allows_it(monkeypatch) -> None:
    """A libxml2 with a higher depth limit parses 300 levels; the XPath walk then refuses them."""
    from lxml import etree

    from uml2perf.reader import xml

    deep = etree.fromstring(b"<a>" * 257 + b"</a>" * 257, parser=etree.XMLParser(huge_tree=True))
    monkeypatch.setattr(xml, "_parser_limits_depth", lambda: False)
    with pytest.raises(InputError, match="nested more than 256 levels") as info:
        xml._check_depth(deep, "deep.xmi")
    assert info.value.location.file == "deep.xmi"
    xml._check_depth(etree.fromstring(b"<a>" * 256 + b"</a>" * 256), "flat.xmi")  # the limit itself passes


def test_the_parser_probe_matches_what_the_parser_does() -> None:
    """The probe says True exactly when the hardened parser refuses MAX_DEPTH + 1 levels."""
    from lxml import etree

    from uml2perf.reader import xml

    depth = xml.MAX_DEPTH + 1
    try:
        etree.fromstring(b"<a>" * depth + b"</a>" * depth, parser=xml._parser())
        refused = False
    except etree.XMLSyntaxError:
        refused = True
    assert xml._parser_limits_depth() is refused


def test_a_file_without_activities_names_its_contents() -> None:
    data = b"""<?xml version="1.0"?>
<xmi:XMI xmi:version="20131001" xmlns:xmi="http://www.omg.org/spec/XMI/20131001"
         xmlns:uml="http://www.eclipse.org/uml2/5.0.0/UML">
  <uml:Model xmi:id="m" name="m">
    <packagedElement xmi:type="uml:Class" xmi:id="c1" name="A"/>
    <packagedElement xmi:type="uml:Class" xmi:id="c2" name="B"/>
    <packagedElement xmi:type="uml:StateMachine" xmi:id="s1" name="S"/>
  </uml:Model>
</xmi:XMI>"""
    with pytest.raises(ModelError, match=r"no activity found; the file holds 2 classes, 1 state machine"):
        read_bytes(data, "classes.uml")
    assert read_bytes(data, "classes.uml", require_activity=False).activities == ()


def test_every_edge_of_a_region_joins_nodes_of_that_region() -> None:
    model = read_model(DATA / "features.uml")

    def check(region) -> None:  # type: ignore[no-untyped-def]
        ids = {n.id for n in region.nodes}
        for edge in region.edges:
            assert edge.source in ids and edge.target in ids
        for node in region.nodes:
            if node.region is not None:
                check(node.region)

    for activity in model.activities:
        check(activity.region)
        assert len(list(walk_region(activity.region))) == len(list(activity.walk()))


_ANNOTATED = """<?xml version="1.0" encoding="UTF-8"?>
<xmi:XMI xmi:version="20131001" xmlns:xmi="http://www.omg.org/spec/XMI/20131001"
    xmlns:uml="http://www.eclipse.org/uml2/5.0.0/UML" xmlns:P="http://example.org/p">
  <uml:Model xmi:id="_m" name="annotated">
    <packagedElement xmi:type="uml:Package" xmi:id="_pkg" name="lib"/>
    <packagedElement xmi:type="uml:Activity" xmi:id="_act" name="main">
      <node xmi:type="uml:InitialNode" xmi:id="_i"/>
      <node xmi:type="uml:OpaqueAction" xmi:id="_a" name="A"/>
      <edge xmi:type="uml:ControlFlow" xmi:id="_e" source="_i" target="_a"/>
    </packagedElement>
  </uml:Model>
  <P:Context xmi:id="_s1" base_Package="_gone" note="first"/>
  <P:Context xmi:id="_s2" base_Package="_pkg" note="on the package"/>
  <P:Step xmi:id="_s3" base_Action="_a" note="on the action"/>
  <P:Context xmi:id="_s4" base_Model="_m" note="on the model"/>
  <P:Other xmi:id="_s5" base_Package="_pkg" note="again"/>
  <P:Context xmi:id="_s6" base_Package="_gone" note="second"/>
</xmi:XMI>
"""


def test_applications_on_elements_not_read_are_checked_once_each() -> None:
    """Dangling bases are reported in file order, once per application; the model and the package keep
    theirs as container annotations, each container once with all its applications; the action's is
    neither."""
    model = read_bytes(_ANNOTATED.encode(), "annotated.uml")
    dangling = [d for d in model.diagnostics if d.code == "dangling-stereotype"]
    assert [(d.location.line, d.location.element_id) for d in dangling] == [(12, "_s1"), (17, "_s6")]
    assert all("'_gone'" in d.message for d in dangling)
    found = [(a.element_id, a.metaclass, [s.name for s in a.stereotypes]) for a in model.annotations]
    assert found == [("_pkg", "Package", ["Context", "Other"]), ("_m", "Model", ["Context"])]
