"""The sidecar: every problem at once with "did you mean", names shared by a node and a flow,
and tags of a user's own profile mapped to ours (``[tags]``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from uml2perf.api import convert, predict, read
from uml2perf.check import check_file
from uml2perf.errors import ModelError, Severity
from uml2perf.profile.sidecar import SidecarError

DATA = Path(__file__).parent / "data" / "guards"


def _nodes(model):
    return {n.name: n for a in model.activities for n in a.walk()}


def test_every_sidecar_problem_is_reported_at_once_with_did_you_mean() -> None:
    with pytest.raises(SidecarError) as info:
        read(DATA / "yes-no.uml", sidecar=DATA / "mistakes.toml")
    error = info.value
    assert isinstance(error, ModelError) and error.location.file.endswith("mistakes.toml")
    assert len(error.problems) == 7
    text = str(error)
    for expected in (
        "unknown table [element]",
        "did you mean 'elements'?",
        "unknown key 'cots' in [defaults]",
        "'sned+' is not a uml2perf stereotype",
        "did you mean 'send+'?",
        "[elements.'Acept'] names no node or flow",
        "did you mean 'Accept'?",
        "[activities.'mian'] names no activity",
        "did you mean 'main'?",
        "'cots' is not a tag of the uml2perf profile",
    ):
        assert expected in text, expected


def test_check_lists_each_sidecar_problem_as_its_own_finding() -> None:
    report = check_file(DATA / "yes-no.uml", sidecar=DATA / "mistakes.toml")
    errors = [d for d in report.diagnostics if d.severity is Severity.ERROR]
    assert len(errors) == 7
    assert all(d.location.file and d.location.file.endswith("mistakes.toml") for d in errors)
    assert all(d.code == "sidecar" for d in errors)


def test_one_problem_keeps_its_own_message_and_hint(tmp_path: Path) -> None:
    sidecar = tmp_path / "one.toml"
    sidecar.write_text('[elements."Accept"]\ncots = "1"\n')
    with pytest.raises(SidecarError, match="unknown key 'cots'") as info:
        read(DATA / "yes-no.uml", sidecar=sidecar)
    assert info.value.hint is not None and "did you mean 'cost'?" in info.value.hint


def test_a_name_of_both_an_action_and_a_flow_applies_where_its_tags_fit() -> None:
    model = read(DATA / "ambiguous.uml", sidecar=DATA / "ambiguous.toml")
    assert _nodes(model)["Transfer"].perf.get("cost") == "7"
    warnings = [d for d in model.diagnostics if d.code == "sidecar-ambiguous"]
    assert len(warnings) == 1
    assert "_a1" in (warnings[0].hint or "") and "_f1" in (warnings[0].hint or "")
    flow = next(e for a in model.activities for e in a.region.edges if e.id == "_f1")
    assert flow.probability == "0.5"  # the flow keeps its share: the cost was not forced on it


def test_a_name_of_both_whose_tags_fit_both_asks_for_the_id() -> None:
    with pytest.raises(SidecarError, match="names both OpaqueAction 'Transfer'") as info:
        convert(DATA / "ambiguous.uml", sidecar=DATA / "ambiguous-both.toml")
    assert '[elements."_a1"]' in (info.value.hint or "") and '[elements."_f1"]' in (info.value.hint or "")


def test_a_custom_profile_is_mapped_to_ours_with_units() -> None:
    model = read(DATA / "custom-profile.uml", sidecar=DATA / "custom-profile.toml")
    nodes = _nodes(model)
    assert nodes["Fast"].perf.get("cost") == "50"
    assert nodes["Slow"].perf.get("cost") == "0.003" and nodes["Slow"].perf.get("repeat") == "7"
    without = _nodes(read(DATA / "custom-profile.uml"))
    assert without["Fast"].perf is None  # the home-made stereotype alone says nothing to uml2perf
    times = {
        predict(DATA / "custom-profile.uml", sidecar=DATA / "custom-profile.toml", procs=1, seed=s).time
        for s in range(30)
    }
    assert sorted(round(t, 9) for t in times) == [1.021, 51.0]


def test_tag_mapping_mistakes_are_problems(tmp_path: Path) -> None:
    sidecar = tmp_path / "bad.toml"
    sidecar.write_text('[tags]\n"Timed.time" = "sendd+.size"\n"Timed.x" = 3\n"Timed.y" = "send+.cost2"\n')
    with pytest.raises(SidecarError) as info:
        read(DATA / "custom-profile.uml", sidecar=sidecar)
    assert len(info.value.problems) == 3
    assert "did you mean 'send+'?" in str(info.value)


def test_mapped_values_that_cannot_be_read_are_problems(tmp_path: Path) -> None:
    sidecar = tmp_path / "units.toml"
    sidecar.write_text('[tags]\n"Timed.time" = "cost"\n')
    source = (
        (DATA / "custom-profile.uml").read_text(encoding="utf-8").replace('time="50s"', 'time="50 parsecs"')
    )
    model_path = tmp_path / "custom.uml"
    model_path.write_text(source, encoding="utf-8")
    with pytest.raises(SidecarError, match="50 parsecs"):
        read(model_path, sidecar=sidecar)


def test_a_mapped_tag_can_give_the_role(tmp_path: Path) -> None:
    sidecar = tmp_path / "role.toml"
    sidecar.write_text('[tags]\n"Timed.time" = "allreduce+.cost"\n')
    nodes = _nodes(read(DATA / "custom-profile.uml", sidecar=sidecar))
    assert nodes["Fast"].perf.role.value == "allreduce" and nodes["Fast"].perf.get("cost") == "50"


def test_a_tag_of_any_stereotype_can_be_mapped(tmp_path: Path) -> None:
    sidecar = tmp_path / "any.toml"
    sidecar.write_text('[tags]\n"time" = "cost"\n')
    nodes = _nodes(read(DATA / "custom-profile.uml", sidecar=sidecar))
    assert nodes["Fast"].perf.get("cost") == "50" and nodes["Slow"].perf.get("cost") == "0.003"


def test_our_own_stereotype_wins_over_a_mapped_tag(tmp_path: Path) -> None:
    sidecar = tmp_path / "ours.toml"
    sidecar.write_text('[tags]\n"time" = "cost"\n[elements."Fast"]\ncost = "2"\n')
    nodes = _nodes(read(DATA / "custom-profile.uml", sidecar=sidecar))
    assert nodes["Fast"].perf.get("cost") == "2"


def test_function_and_activity_mistakes_are_collected_too(tmp_path: Path) -> None:
    sidecar = tmp_path / "functions.toml"
    sidecar.write_text(
        '[functions]\nF = { bdy = "1" }\nG = { body = "2", parameters = "x" }\n'
        '[activities."main"]\nrepet = "2"\n[variables]\n"not a name" = "1"\n'
    )
    with pytest.raises(SidecarError) as info:
        read(DATA / "yes-no.uml", sidecar=sidecar)
    text = str(info.value)
    assert len(info.value.problems) == 4
    assert "did you mean 'body'?" in text and "did you mean 'repeat'?" in text
    assert "parameters must be a list" in text and "'not a name' is not a variable name" in text


def test_a_mapped_tag_on_a_flow_can_be_its_guard(tmp_path: Path) -> None:
    source = (DATA / "custom-profile.uml").read_text(encoding="utf-8")
    source = source.replace("<body>Yes</body>", "<body></body>").replace(
        '<Timing:Branch xmi:id="_b2"',
        '<Timing:Branch xmi:id="_b1" base_ControlFlow="_f1" when="p=0.75"/>\n  <Timing:Branch xmi:id="_b2"',
    )
    path = tmp_path / "custom.uml"
    path.write_text(source, encoding="utf-8")
    sidecar = tmp_path / "guards.toml"
    sidecar.write_text('[tags]\n"Branch.when" = "guard"\n"Timed.time" = "cost"\n', encoding="utf-8")
    edges = {e.id: e for a in read(path, sidecar=sidecar).activities for e in a.region.edges}
    assert edges["_f1"].probability == "0.75" and edges["_f2"].probability == "0.25"
