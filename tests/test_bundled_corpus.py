"""The corpus subset that ships with the tests: every file is described, under a permissive licence,
and the corpus tests read it unless ``UML2PERF_CORPUS`` names another corpus."""

from __future__ import annotations

import os
import re

import pytest
from conftest import BUNDLED_CORPUS, corpus_file, find_corpus

PROVENANCE = (BUNDLED_CORPUS / "PROVENANCE.md").read_text(encoding="utf-8")
FILES = sorted(
    str(p.relative_to(BUNDLED_CORPUS)) for p in BUNDLED_CORPUS.rglob("*") if p.is_file() and p.suffix != ".md"
)


def test_the_subset_is_small_and_spans_several_tools() -> None:
    assert 3 <= len(FILES) <= 8
    assert sum((BUNDLED_CORPUS / f).stat().st_size for f in FILES) < 1_000_000
    assert len({f.split("/")[0] for f in FILES}) >= 3


@pytest.mark.parametrize("relative", FILES)
def test_every_bundled_file_has_its_source_and_a_permissive_licence(relative: str) -> None:
    row = next((line for line in PROVENANCE.splitlines() if line.startswith(f"| `{relative}` |")), None)
    assert row is not None, f"{relative} is not described in tests/corpus/PROVENANCE.md"
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert re.fullmatch(r"[0-9a-f]{40}", cells[4]), "the commit the file was copied from"
    assert cells[5].split()[0] in ("MIT", "BSD", "Apache-2.0")


def test_the_corpus_is_the_bundled_one_unless_the_variable_names_another(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.delenv("UML2PERF_CORPUS", raising=False)
    assert find_corpus() == BUNDLED_CORPUS
    monkeypatch.setenv("UML2PERF_CORPUS", str(tmp_path))
    assert find_corpus() == tmp_path
    with pytest.raises(pytest.skip.Exception, match="UML2PERF_CORPUS"):
        corpus_file("argouml/argouml025-guitest-propertypanels-uml14.xmi")


@pytest.mark.skipif(bool(os.environ.get("UML2PERF_CORPUS")), reason="another corpus is chosen")
def test_the_corpus_tests_read_the_bundled_files() -> None:
    assert corpus_file("enterprise-architect/ea65-staruml-unittest-xmi21.xmi").is_file()
