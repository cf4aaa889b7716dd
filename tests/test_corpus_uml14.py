"""Real UML 1.x and Umbrello exports from the shared corpus, checked against PROVENANCE.md.

PROVENANCE.md counts, per file, the activities and the nodes and edges inside
them (UML 1.x: states, pseudostates and transitions inside each ActivityGraph,
top CompositeState excluded; Umbrello: every widget and association widget of
a type-6 diagram).  The readers differ from that raw count in documented ways,
and each difference is computed from the model rather than hard-coded:

* a junction/branch with several ways in and out is split into a merge and a
  decision joined by a synthetic flow (one extra node and one extra edge each;
  the same for an Umbrello fork/join bar used as both);
* a transition between two different activity graphs (Poseidon writes them)
  cannot be an edge of either and is dropped with a warning;
* Umbrello pins are not nodes (flows drawn from a pin belong to its owner, as
  UML 2 readers leave pins out too), an interruptible region is a group, not a
  node, and an anchor (type 513) links a note, not two nodes.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from conftest import corpus_file, find_corpus

from uml2perf.model import Model
from uml2perf.reader import detect_dialect
from uml2perf.reader.xml import load_file

CORPUS = find_corpus()

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not found at {CORPUS}")

#: path: (dialect, activities, nodes, edges) exactly as PROVENANCE.md gives them
UML14_FILES = {
    "argouml/argouml025-guitest-propertypanels-uml14.xmi": ("uml14", 1, 10, 13),
    "argouml/argouml034-student-activity-uml.xmi": ("uml14", 1, 16, 20),
    "argouml/argouml-novosoft-uml13-xmi10-alittlebit.xmi": ("uml14", 1, 5, 4),
    "magicdraw/md95-uml14-andromda-timetracker.xmi": ("uml14", 3, 14, 12),
    "other/poseidon-choreography-cdl.xmi": ("uml14", 4, 44, 62),
}

#: Umbrello widget counts from PROVENANCE.md: nodes by widget kind, edges by association type
UMBRELLO_FILES = {
    "umbrello/umbrello161-activity-all-elements.xmi": (
        1,
        {
            "signalwidget": 3,
            "objectnodewidget": 3,
            "activitywidget": 6,
            "forkjoin": 2,
            "pinwidget": 2,
            "regionwidget": 1,
        },
        {"515": 14, "513": 6, "516": 1},
    ),
    "umbrello/umbrello2-xmi21-activity-diagram.xmi": (
        1,
        {"objectnodewidget": 11, "activitywidget": 9, "forkjoin": 2},
        {"515": 22},
    ),
}
#: widget kinds and association types that are not nodes/edges in the neutral model
UMBRELLO_NOT_NODES = ("pinwidget", "regionwidget")
UMBRELLO_NOT_EDGES = ("513",)


def read(relative: str) -> tuple[str, Model]:
    doc = load_file(corpus_file(relative))
    dialect = detect_dialect(doc)
    return dialect.name, dialect.read(doc)


def synthetic(model: Model) -> tuple[int, int]:
    """Nodes and edges the reader added when it split junctions and bars."""
    nodes = sum(1 for a in model.activities for n in a.region.nodes if "#" in n.id)
    edges = sum(1 for a in model.activities for e in a.region.edges if e.id.endswith("-flow") and "#" in e.id)
    return nodes, edges


def dropped(model: Model, *codes: str) -> int:
    return sum(1 for d in model.diagnostics if d.code in codes)


def totals(model: Model) -> tuple[int, int]:
    return (
        sum(len(a.region.nodes) for a in model.activities),
        sum(len(a.region.edges) for a in model.activities),
    )


@pytest.mark.parametrize("relative", sorted(UML14_FILES))
def test_uml14_corpus_counts(relative: str) -> None:
    dialect, activities, nodes, edges = UML14_FILES[relative]
    name, model = read(relative)
    assert name == dialect and model.dialect == dialect
    assert len(model.activities) == activities
    added_nodes, added_edges = synthetic(model)
    assert added_nodes == added_edges
    node_total, edge_total = totals(model)
    assert node_total - added_nodes == nodes
    assert edge_total - added_edges + dropped(model, "uml14.foreign-transition") == edges


def test_student_model_splits_its_loop_junction() -> None:
    _, model = read("argouml/argouml034-student-activity-uml.xmi")
    assert synthetic(model) == (1, 1)
    labels = {n.name for n in model.activities[0].region.nodes}
    assert "חפש" in labels  # ArgoUML labels action states by their entry script


def test_poseidon_cross_graph_transitions_are_reported() -> None:
    _, model = read("other/poseidon-choreography-cdl.xmi")
    assert dropped(model, "uml14.foreign-transition") == 16
    assert {a.name for a in model.activities} == {
        "Negotiation",
        "AnalyseDesign",
        "DesignCycle",
        "EvaluateManufacturability",
    }


@pytest.mark.parametrize("relative", sorted(UMBRELLO_FILES))
def test_umbrello_corpus_counts(relative: str) -> None:
    activities, widget_counts, assoc_counts = UMBRELLO_FILES[relative]
    name, model = read(relative)
    assert name == "umbrello" and model.dialect == "umbrello"
    assert len(model.activities) == activities
    added_nodes, added_edges = synthetic(model)
    node_total, edge_total = totals(model)
    expected_nodes = sum(widget_counts.values()) - sum(widget_counts.get(k, 0) for k in UMBRELLO_NOT_NODES)
    expected_edges = sum(assoc_counts.values()) - sum(assoc_counts.get(k, 0) for k in UMBRELLO_NOT_EDGES)
    assert node_total - added_nodes == expected_nodes
    assert edge_total - added_edges + dropped(model, "umbrello.flow-to-non-node") == expected_edges
    uml_types = Counter(
        n.uml_type.partition("/")[0] for a in model.activities for n in a.region.nodes if "#" not in n.id
    )
    for kind, count in widget_counts.items():
        if kind not in UMBRELLO_NOT_NODES:
            assert uml_types[kind] == count


def test_umbrello_class_diagram_file_has_no_activity_and_names_its_contents() -> None:
    name, model = read("umbrello/nonactivity-umbrello161-class-all-elements.xmi")
    assert name == "umbrello"
    assert model.activities == ()
    contents = dict(model.contents)
    assert contents["classes"] == 2 and contents["interfaces"] == 3
    assert contents["class diagrams"] == 1 and contents["collaboration diagrams"] == 1


ALL_FILES = sorted(UML14_FILES) + sorted(UMBRELLO_FILES)


@pytest.mark.parametrize("relative", ALL_FILES)
def test_corpus_graphs_are_well_formed(relative: str) -> None:
    _, model = read(relative)
    for activity in model.activities:
        ids = [n.id for n in activity.region.nodes]
        assert len(ids) == len(set(ids))
        for node in activity.region.nodes:
            assert node.location.file == Path(relative).name and node.location.line
            assert node.location.element_id == node.id.partition("#")[0]
        for edge in activity.region.edges:
            assert edge.source in ids and edge.target in ids


@pytest.mark.parametrize("relative", ALL_FILES)
def test_corpus_reads_are_deterministic(relative: str) -> None:
    assert read(relative)[1] == read(relative)[1]
