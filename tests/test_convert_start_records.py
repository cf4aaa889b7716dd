"""Records and patterns that ``convert`` no longer builds at import behave as before."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import FrozenInstanceError

import pytest

from uml2perf.controlflow.finals import Endings
from uml2perf.controlflow.graph import Barrier, LoopContext, Shared
from uml2perf.model import Model
from uml2perf.profile.guards import probability_value
from uml2perf.profile.marte import parse_context_parameters, parse_vsl_duration, parse_vsl_size
from uml2perf.reader.activities import RegionState


def test_loop_contexts_and_barriers_compare_hash_print_and_refuse_changes_as_frozen_records() -> None:
    loop = LoopContext("h", frozenset({"a", "b"}), None)
    same = LoopContext("h", frozenset({"b", "a"}), None)
    assert loop == same and hash(loop) == hash(same) and len({loop, same}) == 1
    assert loop != LoopContext("h", frozenset({"a"}), None)
    assert loop != Barrier(None, frozenset({"h"}))
    assert repr(Barrier(None, frozenset())) == "Barrier(body=None, headers=frozenset())"
    with pytest.raises(FrozenInstanceError):
        loop.header = "other"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del loop.follow  # type: ignore[misc]


def test_shared_region_state_and_endings_start_empty_and_apart() -> None:
    first = Shared(Model(source="", dialect=""), {}, {})
    second = Shared(Model(source="", dialect=""), {}, {})
    first.diagnostics.append(object())  # type: ignore[arg-type]
    assert second.diagnostics == [] and first.statement(None, first) is None  # type: ignore[arg-type]
    assert not first.flat and not first.tokens
    outer = RegionState("a")
    inner = RegionState("b", parent=outer)
    assert inner.parent is outer and outer.nodes == [] and outer.nodes is not inner.nodes
    assert outer.ids == set() and outer.ids is not inner.ids
    one, two = Endings(), Endings()
    one.returns.add(1)
    assert two.returns == set() and two.owners == set() and two.setters == set() and two.scopes == set()


def test_vsl_values_and_probabilities_read_as_before() -> None:
    assert parse_vsl_duration("(5,ms)") == "0.005"
    assert parse_vsl_duration("(value=2,unit=min)") == "120"
    assert parse_vsl_duration("(expr=$x,unit=s,source=est)") == "x"
    assert parse_vsl_duration("(expr=$x,unit=us)") == "(x)*0.000001"
    assert parse_vsl_size("(4,KB)") == "4096" and parse_vsl_size("(8,b)") == "1"
    assert parse_vsl_size("(1.5, GiB)") == "1610612736"
    with pytest.raises(ValueError, match="unknown time unit"):
        parse_vsl_duration("(5,parsecs)")
    params = parse_context_parameters("[in$a, OUT$b, $c=(5,ms)]")
    assert [(p.name, p.direction, p.value) for p in params] == [
        ("a", "in", None),
        ("b", "out", None),
        ("c", "in", "0.005"),
    ]
    assert probability_value("70%") == "0.7" and probability_value("P = 0.25") == "0.25"


def test_importing_the_profile_compiles_no_guard_or_vsl_pattern_and_imports_no_decimal() -> None:
    code = (
        "import re, sys\n"
        "import uml2perf.profile\n"
        "from uml2perf.profile import guards, marte\n"
        "print('decimal' in sys.modules, isinstance(guards._WHOLE_KEYED, str),"
        " isinstance(marte._NUMBER, str))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True", "True"]


def test_check_reports_and_documents_compare_and_print_as_before() -> None:
    from uml2perf.check import CheckReport
    from uml2perf.reader.xml import XmiDocument, load_bytes

    report = CheckReport("m.uml")
    assert report == CheckReport(source="m.uml", diagnostics=[], actions=0, actions_without_cost=0)
    assert report != CheckReport("m.uml", actions=1)
    assert report.diagnostics is not CheckReport("x").diagnostics
    assert repr(report) == "CheckReport(source='m.uml', diagnostics=[], actions=0, actions_without_cost=0)"
    document = load_bytes(b"<a/>", "a.uml")
    assert document == XmiDocument("a.uml", document.root, document.data)
    assert document != XmiDocument("b.uml", document.root, document.data)
    assert repr(document).startswith("XmiDocument(path='a.uml', root=<Element a")
    assert "data" not in repr(document)
    with pytest.raises(TypeError):
        hash(report)
    with pytest.raises(TypeError):
        hash(document)
