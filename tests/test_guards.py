"""Guards as people write them: expressions, probabilities and prose (uml2perf.profile.guards).

The fixtures under tests/data/guards are small Papyrus exports with one
decision after the action 'Start' (cost 1 s); each branch is one action whose
cost is given in the fixture (see the file).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import corpus_file, find_corpus

from uml2perf.api import convert, predict, read
from uml2perf.check import check_file
from uml2perf.errors import Location, ModelError, Severity
from uml2perf.model import Edge, NodeKind
from uml2perf.profile.guards import GuardKind, read_guard, resolve_choices

DATA = Path(__file__).parent / "data" / "guards"


def _edges(model, source="_decision"):
    return {e.id: e for a in model.activities for e in a.region.edges if e.source == source}


def _codes(report, code):
    return [d for d in report.diagnostics if d.code == code]


# --------------------------------------------------------------------------- one guard


@pytest.mark.parametrize(
    ("text", "kind", "probability"),
    [
        ("Yes", GuardKind.PROSE, None),
        ("No", GuardKind.PROSE, None),
        ("none", GuardKind.PROSE, None),
        ("more", GuardKind.PROSE, None),
        ("idea(s) available", GuardKind.PROSE, None),
        ("not valid", GuardKind.PROSE, None),
        ("valid credentials", GuardKind.PROSE, None),
        ("[another transaction]", GuardKind.PROSE, None),
        ("да", GuardKind.PROSE, None),
        ("нет", GuardKind.PROSE, None),
        ("oui", GuardKind.PROSE, None),
        ("données valides", GuardKind.PROSE, None),
        ("prob:0.7", GuardKind.PROBABILITY, "0.7"),
        ("p=0.3", GuardKind.PROBABILITY, "0.3"),
        ("p = 0,3", GuardKind.PROBABILITY, "0.3"),
        ("probability = 25%", GuardKind.PROBABILITY, "0.25"),
        ("P(0.7)", GuardKind.PROBABILITY, "0.7"),
        ("70%", GuardKind.PROBABILITY, "0.7"),
        ("[70 %]", GuardKind.PROBABILITY, "0.7"),
        ("вероятность=0.2", GuardKind.PROBABILITY, "0.2"),
        ("yes (70%)", GuardKind.PROSE, "0.7"),
        ("hit, p=0.9", GuardKind.PROSE, "0.9"),
        ("x > 0", GuardKind.EXPRESSION, None),
        ("x = 1", GuardKind.EXPRESSION, None),
        ("pid == 0", GuardKind.EXPRESSION, None),
        ("True", GuardKind.EXPRESSION, None),
        ("else", GuardKind.ELSE, None),
        ("[else]", GuardKind.ELSE, None),
        ("x > limt", GuardKind.MISTYPED, None),
        ("x => 1", GuardKind.MISTYPED, None),
    ],
)
def test_each_guard_form_is_read_for_what_it_is(text: str, kind: GuardKind, probability: str | None) -> None:
    reading = read_guard(text, {"x", "limit", "pid"})
    assert reading is not None
    assert reading.kind is kind, reading
    assert reading.probability == probability


def test_a_probability_word_that_is_a_model_variable_is_an_expression() -> None:
    reading = read_guard("p = 0.3", {"p"})
    assert reading is not None and reading.kind is GuardKind.EXPRESSION


def test_mistyped_guard_suggests_the_variable() -> None:
    reading = read_guard("count > limt", {"count", "limit"})
    assert reading is not None and reading.kind is GuardKind.MISTYPED
    assert ("limt", "limit") in reading.suggestions


def test_out_of_range_probability_is_prose_with_a_problem() -> None:
    reading = read_guard("p=1.5", set())
    assert reading is not None and reading.kind is GuardKind.PROSE
    assert reading.probability is None and reading.problem and "not a probability" in reading.problem


def test_empty_guard_is_no_guard() -> None:
    assert read_guard("  ", set()) is None
    assert read_guard("[]", set()) is None


# --------------------------------------------------------------------------- whole models


@pytest.mark.parametrize(
    ("fixture", "branches"),
    [
        ("yes-no", 2),
        ("several-words", 3),
        ("not-valid", 3),
        ("cyrillic", 2),
        ("french", 3),
        ("names-as-labels", 2),
    ],
)
def test_prose_decisions_become_uniform_random_choices(fixture: str, branches: int) -> None:
    path = DATA / f"{fixture}.uml"
    model = read(path)
    edges = _edges(model)
    assert len(edges) == branches
    assert all(e.guard is None for e in edges.values())
    shares = {e.probability for e in edges.values()}
    assert shares == {"0.5"} if branches == 2 else shares == {"1/3"}
    report = check_file(path)
    assert not report.has_errors
    warnings = _codes(report, "prose-guard")
    assert len(warnings) == branches
    for warning in warnings:
        assert warning.severity is Severity.WARNING
        assert warning.location.line and warning.location.element_id
        assert "probability" in warning.message and "--sidecar" in (warning.hint or "")
        assert f'[elements."{warning.location.element_id}"]' in (warning.hint or "")
    conversion = convert(path)
    assert "p.random()" in conversion.text


def test_exactly_one_branch_is_taken_and_the_draw_follows_the_seed() -> None:
    path = DATA / "yes-no.uml"
    times = {predict(path, procs=1, seed=seed).time for seed in range(40)}
    assert times == {2.0, 4.0}  # Start (1 s) and then Accept (1 s) or Reject (3 s), never both
    assert predict(path, procs=1, seed=7).time == predict(path, procs=1, seed=7).time


def test_probabilities_written_into_guards() -> None:
    edges = _edges(read(DATA / "probabilities.uml"))
    assert sorted(e.probability for e in edges.values()) == ["0.3", "0.7"]
    edges = _edges(read(DATA / "percent.uml"))
    assert edges["_f1"].probability == "0.7" and edges["_f2"].guard == "else"
    report = check_file(DATA / "percent.uml")
    notes = [d.message for d in _codes(report, "guard-reading")]
    assert any("'70%'" in m and "probability 0.7" in m for m in notes)
    assert not report.has_errors and not _codes(report, "prose-guard")


def test_probabilities_that_do_not_add_up_are_scaled_with_a_warning() -> None:
    path = DATA / "probability-sum.uml"
    edges = _edges(read(path))
    assert sorted(e.probability for e in edges.values()) == ["0.5", "0.5"]
    report = check_file(path)
    (warning,) = _codes(report, "probability-sum")
    assert "1.2" in warning.message and warning.location.element_id == "_decision"


def test_guard_text_left_in_the_flow_name() -> None:
    edges = _edges(read(DATA / "guard-in-name.uml"))
    assert edges["_f1"].guard == "n > 2"
    assert edges["_f2"].probability == "0.25" and edges["_f2"].guard is None
    assert edges["_f3"].guard == "else"
    assert predict(DATA / "guard-in-name.uml", procs=1).time == 2.0  # n = 4: 'Big'
    report = check_file(DATA / "guard-in-name.uml", sidecar=None)
    assert not report.has_errors and not [d for d in report.diagnostics if d.severity is Severity.WARNING]


def test_mixed_decision_tests_formal_guards_first() -> None:
    path = DATA / "mixed-decision.uml"
    edges = _edges(read(path))
    assert edges["_f1"].guard == "n > 2"
    assert edges["_f2"].guard is None and edges["_f2"].probability == "0.5"
    assert edges["_f3"].guard == "else"
    text = convert(path).text
    assert text.index("v.n > 2") < text.index("_u < 0.5")
    times = {predict(path, procs=1, seed=s, overrides={"n": 1}).time for s in range(30)}
    assert times == {4.0, 6.0}  # 'Perhaps' or 'Other' at random
    assert {predict(path, procs=1, seed=s, overrides={"n": 5}).time for s in range(5)} == {2.0}
    (warning,) = _codes(check_file(path), "prose-guard")
    assert "when no other guard holds" in warning.message


def test_guard_mixing_known_and_unknown_names_is_an_error_with_did_you_mean() -> None:
    path = DATA / "mixed-names.uml"
    report = check_file(path)
    errors = [d for d in report.diagnostics if d.severity is Severity.ERROR]
    assert len(errors) == 1
    assert "limt" in errors[0].message and "did you mean 'limit'" in (errors[0].hint or "")
    assert errors[0].location.element_id == "_f1" and errors[0].location.line
    with pytest.raises(ModelError, match="limt"):
        convert(path)


def test_formal_guards_are_listed_as_read_by_check_verbose() -> None:
    report = check_file(DATA / "formal.uml")
    notes = _codes(report, "guard-reading")
    assert any("'n > 2'" in d.message and "expression over n" in d.message for d in notes)
    assert all(d.severity is Severity.INFO for d in notes)
    assert predict(DATA / "formal.uml", procs=1).time == 2.0


# --------------------------------------------------------------------------- real exports

CORPUS = find_corpus()
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS}")


@needs_corpus
def test_argouml_branch_labels_in_hebrew_are_prose_choices() -> None:
    path = corpus_file("argouml/argouml034-student-activity-uml.xmi")
    report = check_file(path)
    prose = _codes(report, "prose-guard")
    assert any("'הפריט לא נמצא'" in d.message for d in prose)  # "item not found", the label of a branch
    assert all(d.location.line and d.location.element_id for d in prose)
    assert not report.has_errors
    assert "p.random()" in convert(path).text


@needs_corpus
def test_a_corpus_prose_choice_runs_with_a_sidecar(tmp_path: Path) -> None:
    path = corpus_file("argouml/argouml034-student-activity-uml.xmi")
    sidecar = tmp_path / "costs.toml"
    sidecar.write_text('[defaults]\ncost = "1"\n', encoding="utf-8")
    times = {predict(path, procs=1, sidecar=sidecar, seed=seed).time for seed in range(6)}
    assert all(t > 0 for t in times) and len(times) > 1  # the branches cost different numbers of actions


@needs_corpus
def test_rsa_spanish_prose_guards_are_uniform_choices() -> None:
    path = corpus_file("rsa/rsa7-business-model-early.emx")
    report = check_file(path)
    texts = [d.message for d in _codes(report, "prose-guard")]
    assert any("'Petición aceptada'" in t and "probability 0.5" in t for t in texts)
    assert any("'Petición rechazada'" in t and "probability 0.5" in t for t in texts)


@needs_corpus
def test_visual_paradigm_prose_guard_beside_unguarded_flows_is_always_taken() -> None:
    path = corpus_file("visual-paradigm/vp702-staruml-unittest-xmi21.xmi")
    (warning,) = _codes(check_file(path), "prose-guard")
    assert "'This is guard'" in warning.message and "always taken" in warning.message


def _read_without_variables(edge: Edge):
    return read_guard(edge.guard or "", set()), "guard"


def test_else_shares_what_given_probabilities_leave() -> None:
    here = Location(file="t.uml", line=1)
    edges = [
        Edge("a", "d", "x", here, guard="yes"),
        Edge("b", "d", "y", here, guard="p=0.3"),
        Edge("c", "d", "z", here, guard="else"),
    ]
    choice = resolve_choices(
        NodeKind.DECISION, "d", here, edges, lambda e: (read_guard(e.guard, set()), "guard")
    )
    assert choice.edges["a"].probability == "0.35" and choice.edges["b"].probability == "0.3"
    assert "c" not in choice.edges  # the else keeps its guard and takes the last share
    notes = [d.message for d in choice.diagnostics if d.code == "guard-reading"]
    assert any("[else]" in m and "0.35" in m for m in notes)


def test_symbolic_probabilities_leave_the_rest_as_an_expression() -> None:
    here = Location(file="t.uml", line=1)
    edges = [
        Edge("a", "d", "x", here, guard="hit", probability="pHit"),
        Edge("b", "d", "y", here, guard="miss"),
        Edge("c", "d", "z", here, guard="other"),
    ]
    choice = resolve_choices(
        NodeKind.DECISION, "d", here, edges, lambda e: (read_guard(e.guard, set()), "guard")
    )
    assert choice.edges["a"].probability == "pHit"
    assert choice.edges["b"].probability == "(1 - (pHit)) / 2"


def test_a_prose_loop_exit_repeats_a_random_number_of_times() -> None:
    path = DATA / "loop-more.uml"
    text = convert(path).text
    assert "while True:" in text and "_u < 0.5" in text
    times = {predict(path, procs=1, seed=seed).time for seed in range(30)}
    assert all(t >= 11 and float(t - 10).is_integer() for t in times)  # 'Collect idea' (1 s) k >= 1 times
    assert len(times) > 1


def test_argouml_prose_guard_with_a_percentage_and_a_mapped_tagged_value() -> None:
    path, sidecar = DATA / "argouml-french.xmi", DATA / "argouml-french.toml"
    edges = {e.id: e for a in read(path, sidecar=sidecar).activities for e in a.region.edges}
    assert edges["t_oui"].probability == "0.9" and edges["t_non"].probability == "0.1"
    report = check_file(path, sidecar=sidecar)
    assert not report.has_errors and not [d for d in report.diagnostics if d.severity is Severity.WARNING]
    times = {round(predict(path, sidecar=sidecar, procs=1, seed=s).time, 9) for s in range(40)}
    assert times == {51.0, 1.003}
    without = check_file(path)
    assert without.actions_without_cost == 2  # 'durée' means nothing without the sidecar's [tags]
    assert len(_codes(without, "prose-guard")) == 2


def test_unguarded_flows_beside_given_probabilities_share_the_rest(tmp_path: Path) -> None:
    sidecar = tmp_path / "one.toml"
    sidecar.write_text('[elements."_f1"]\nprobability = "0.2"\n', encoding="utf-8")
    edges = _edges(read(DATA / "names-as-labels.uml", sidecar=sidecar))
    assert edges["_f1"].probability == "0.2" and edges["_f2"].probability == "0.8"
    sidecar.write_text(
        '[elements."_f1"]\nprobability = "0.5"\n[elements."_f2"]\nprobability = "0.75"\n', encoding="utf-8"
    )
    model = read(DATA / "names-as-labels.uml", sidecar=sidecar)
    edges = _edges(model)
    assert edges["_f1"].probability == "0.4" and edges["_f2"].probability == "0.6"
    assert any(d.code == "probability-sum" and "1.25" in d.message for d in model.diagnostics)


def test_a_broken_expression_over_a_model_variable_stays_an_error(tmp_path: Path) -> None:
    source = (
        (DATA / "mixed-names.uml").read_text(encoding="utf-8").replace("count &gt; limt", "count =&gt; 1")
    )
    path = tmp_path / "typo.uml"
    path.write_text(source, encoding="utf-8")
    (error,) = [d for d in check_file(path).diagnostics if d.severity is Severity.ERROR]
    assert "'count => 1'" in error.message and "does not parse" in error.message
    with pytest.raises(ModelError, match="does not parse"):
        convert(path)


def test_an_action_whose_flows_all_carry_prose_guards_takes_exactly_one() -> None:
    here = Location(file="t.uml", line=1)
    edges = [Edge("a", "act", "x", here, guard="ok"), Edge("b", "act", "y", here, guard="failed")]
    choice = resolve_choices(NodeKind.ACTION, "act", here, edges, _read_without_variables)
    assert [choice.edges[e].probability for e in ("a", "b")] == ["0.5", "0.5"]
    assert all(choice.edges[e].guard is None for e in ("a", "b"))
