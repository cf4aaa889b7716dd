"""Property-based tests of the guard classifier (uml2perf.profile.guards).

Any text at all is read without an exception; the same text with the same
known names is always read the same way; and what the classifier calls an
expression parses and reads only known names, what it calls a probability lies
in [0, 1], and prose never reads a known name.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from uml2perf.errors import Location
from uml2perf.expressions import SYSTEM_PARAMETERS, parse_expression
from uml2perf.model import Edge, NodeKind
from uml2perf.profile.guards import GuardKind, read_guard, resolve_choices

KNOWN = frozenset({"x", "n", "GV", "да"}) | frozenset(SYSTEM_PARAMETERS)
WORDS = st.sampled_from(
    ["x", "n", "GV", "да", "yes", "No", "none", "valid", "données", "idée(s)", "p", "prob", "else", "pid"]
)
PIECES = st.sampled_from(
    [" ", "=", "==", ">", "<", "%", ":", "(", ")", "[", "]", "0.3", "70", ",", "and", "not"]
)
GUARDISH = st.lists(st.one_of(WORDS, PIECES), max_size=8).map(" ".join)
TEXT = st.one_of(st.text(max_size=60), GUARDISH)


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_any_text_is_read_without_raising(text: str) -> None:
    reading = read_guard(text, KNOWN)
    if reading is None:
        return
    assert reading.kind in GuardKind
    assert reading.describe()


@settings(max_examples=150, deadline=None)
@given(TEXT)
def test_classification_is_stable(text: str) -> None:
    assert read_guard(text, KNOWN) == read_guard(text, KNOWN)
    assert read_guard(text, set(KNOWN)) == read_guard(text, KNOWN)


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_each_kind_keeps_its_promise(text: str) -> None:
    reading = read_guard(text, KNOWN)
    if reading is None:
        return
    if reading.kind is GuardKind.EXPRESSION:
        assert set(parse_expression(reading.text).names) <= KNOWN
    if reading.probability is not None:
        value = Fraction(reading.probability)
        assert 0 <= value <= 1
    if reading.kind is GuardKind.PROSE:
        assert not set(reading.names) & KNOWN


@settings(max_examples=200, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=4))
def test_a_choice_of_any_guards_never_raises_and_is_a_distribution(texts: list[str]) -> None:
    here = Location(file="t.uml", line=1)
    edges = [Edge(f"e{i}", "d", f"t{i}", here, guard=t or None) for i, t in enumerate(texts)]

    def read(edge: Edge):
        return (read_guard(edge.guard, KNOWN) if edge.guard is not None else None), "guard"

    choice = resolve_choices(NodeKind.DECISION, "d", here, edges, read)
    shares = [choice.edges[e.id].probability for e in edges if e.id in choice.edges]
    constant = [Fraction(s) for s in shares if s is not None and "(" not in s]
    assert all(0 <= s <= 1 for s in constant)
    assert sum(constant) <= 1
