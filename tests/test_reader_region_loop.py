"""The region loop reads plain nodes and flows exactly as ``read_node``/``read_edge`` would.

``ActivityReading.read_region`` reads childless nodes and flows of the common
types in its own loop; every other element goes through ``read_node`` /
``read_edge``.  Reading a file with the loop's shortcut switched off must give
the same model, diagnostics included.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from synthetic import bsp_model, chain_model, ring_model
from test_corpus_uml2 import CORPUS

from uml2perf.model import Model, NodeKind
from uml2perf.reader import detect_dialect
from uml2perf.reader.activities import TypeTable
from uml2perf.reader.dialects.uml2 import Uml2Dialect
from uml2perf.reader.xml import XmiDocument, load_bytes, load_file


def _both(doc: XmiDocument) -> tuple[Model, Model]:
    dialect = detect_dialect(doc)
    assert isinstance(dialect, Uml2Dialect)
    general = dialect.reader_class(doc)
    # no xmi:type qualifies for the loop: every element goes through read_node/read_edge
    general.plain_node_types = TypeTable(lambda typed: None)
    general.plain_edge_types = TypeTable(lambda typed: None)
    return dialect.reader_class(doc).read(), general.read()


@pytest.mark.parametrize("build", [lambda: chain_model(50), lambda: ring_model(), lambda: bsp_model()])
def test_synthetic_models_read_the_same_either_way(build):
    doc = load_bytes(build().encode(), "model.uml")
    fast, general = _both(doc)
    assert fast == general
    assert [n.line for a in fast.activities for n in a.walk()] == [
        n.line for a in general.activities for n in a.walk()
    ]


def _uml2_corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    found = []
    for folder in ("papyrus", "magicdraw", "visual-paradigm", "enterprise-architect", "modelio", "rsa"):
        found += sorted(p for p in (CORPUS / folder).glob("*") if p.suffix in (".uml", ".xmi", ".mdxml"))
    return found


@pytest.mark.parametrize("path", _uml2_corpus_files(), ids=lambda p: p.name)
def test_corpus_reads_the_same_either_way(path):
    doc = load_file(path)
    if not isinstance(detect_dialect(doc), Uml2Dialect):
        pytest.skip("not read by the UML 2 reader")
    fast, general = _both(doc)
    assert fast == general


def test_type_table_classifies_each_type_once():
    asked: list[str] = []

    def classify(typed: str) -> NodeKind | None:
        asked.append(typed)
        return NodeKind.ACTION if typed.endswith("Action") else None

    table = TypeTable(classify)
    for typed in ["uml:OpaqueAction", "uml:InputPin", "uml:OpaqueAction", "uml:InputPin"] * 3:
        table[typed]
    assert asked == ["uml:OpaqueAction", "uml:InputPin"]
    assert table["uml:OpaqueAction"] is NodeKind.ACTION
    assert table["uml:InputPin"] is None
