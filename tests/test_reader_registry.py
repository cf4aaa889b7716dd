"""Dialects are found through the entry-point group ``uml2perf.dialects``, third-party ones too."""

from __future__ import annotations

import sys
import textwrap

import pytest

from uml2perf.errors import InputError
from uml2perf.reader import read_bytes
from uml2perf.reader.registry import BUILTIN, GROUP, all_dialects, by_name, plugin_targets

_TOY = b"""<?xml version="1.0"?>
<toy:Flow xmlns:toy="http://example.org/toy/1"><step name="only"/></toy:Flow>
"""


def _install(tmp_path, monkeypatch, module: str, source: str, entry: str) -> None:
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
    dist = tmp_path / f"{module}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[{GROUP}]\n{entry}\n")
    monkeypatch.syspath_prepend(str(tmp_path))


def test_builtin_table_matches_the_dialect_names():
    assert [d.name for d in all_dialects()] == list(BUILTIN)


def test_a_third_party_dialect_is_found_through_its_entry_point(tmp_path, monkeypatch):
    _install(
        tmp_path,
        monkeypatch,
        "toydialect",
        """
        from uml2perf.errors import Location
        from uml2perf.model import Activity, Model, Node, NodeKind, Region


        class ToyDialect:
            name = "toy"
            description = "toy flows"

            def detect(self, doc):
                return 60 if "http://example.org/toy/1" in doc.namespaces else 0

            def read(self, doc):
                where = Location(file=doc.display_name)
                step = doc.root[0]
                node = Node("s1", step.get("name"), NodeKind.ACTION, "Step", where)
                activity = Activity("a1", "main", where, Region((node,), ()), is_main=True)
                return Model(source=doc.path, dialect=self.name, name="toy", activities=(activity,))


        DIALECT = ToyDialect()
        """,
        "toy = toydialect:DIALECT",
    )
    try:
        assert plugin_targets() == {"toy": "toydialect:DIALECT"}
        names = [d.name for d in all_dialects()]
        assert names[-2:] == ["toy", "uml2"]  # plug-ins before the generic fallback
        model = read_bytes(_TOY, "flow.toy")
        assert model.dialect == "toy" and [n.name for n in model.activities[0].region.nodes] == ["only"]
        assert by_name("TOY") is by_name("toy") is not None
    finally:
        sys.modules.pop("toydialect", None)


def test_a_broken_plugin_is_reported_by_name(tmp_path, monkeypatch):
    _install(
        tmp_path,
        monkeypatch,
        "brokendialect",
        "raise ImportError('missing dependency')\n",
        "bad = brokendialect:X",
    )
    try:
        with pytest.raises(InputError, match="cannot load dialect 'bad'"):
            read_bytes(_TOY, "flow.toy")
    finally:
        sys.modules.pop("brokendialect", None)


def test_an_object_that_is_no_dialect_is_refused(tmp_path, monkeypatch):
    _install(tmp_path, monkeypatch, "notadialect", "X = 42\n", "odd = notadialect:X")
    try:
        with pytest.raises(InputError, match="has no name, description"):
            by_name("odd")
    finally:
        sys.modules.pop("notadialect", None)


def _asking_every_dialect(doc):  # noqa: ANN001, ANN202 - the rule of best_dialect, written out plainly
    best, best_score = None, 0
    for dialect in all_dialects():
        score = dialect.detect(doc)
        if score > best_score:
            best, best_score = dialect, score
    return best


def test_detection_without_loading_every_dialect_picks_what_asking_every_dialect_picks():
    """The light tests of the UML 1.x and Umbrello dialects change no choice, over every corpus file."""
    from conftest import find_corpus

    from uml2perf.reader.registry import best_dialect
    from uml2perf.reader.xml import load_file

    files = [p for p in sorted(find_corpus().rglob("*")) if p.suffix.lower() in {".xmi", ".uml", ".xml"}]
    assert files
    for path in files:
        try:
            doc = load_file(path)
        except InputError:
            continue
        chosen = best_dialect(doc)
        expected = _asking_every_dialect(doc)
        assert (chosen.name if chosen else None) == (expected.name if expected else None), path


def test_a_uml2_export_is_read_without_importing_the_uml1_and_umbrello_readers(tmp_path):
    """Only the dialects a file could belong to are imported (the UML 1.x and Umbrello readers are
    the largest modules of the reader)."""
    import subprocess

    from synthetic import chain_model

    model = tmp_path / "chain.uml"
    model.write_text(chain_model(3))
    code = (
        "import sys\nfrom uml2perf.reader import read_model\nread_model(sys.argv[1])\n"
        "print(sorted(m for m in sys.modules if m.startswith('uml2perf.reader.dialects.')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code, str(model)], capture_output=True, text=True, check=True
    )
    assert "uml2perf.reader.dialects.uml2" in loaded.stdout
    assert "uml14" not in loaded.stdout and "umbrello" not in loaded.stdout
