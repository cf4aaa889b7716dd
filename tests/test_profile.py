"""The performance profile: stereotype interpretation, MARTE VSL, the sidecar, the main activity."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uml2perf.errors import Location, ModelError, Severity
from uml2perf.model import Activity, Model, Node, NodeKind, Region, Role, StereotypeApplication
from uml2perf.profile import (
    apply_profile,
    main_activity,
    parse_vsl_duration,
    parse_vsl_real,
    parse_vsl_size,
)
from uml2perf.reader import read_model

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
HERE = Location(file="t.uml")


# --------------------------------------------------------------------------- VSL


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("(5,ms)", "0.005"),
        ("(value=5,unit=ms)", "0.005"),
        ("5ms", "0.005"),
        ("5 ms", "0.005"),
        ("4.5,ms", "0.0045"),
        ("(12.3,ms)", "0.0123"),
        ("0.0722", "0.0722"),
        ("(2,min)", "120"),
        ("(1,h)", "3600"),
        ("(250,us)", "0.00025"),
        ("(7,ns)", "0.000000007"),
        ("(expr=$x,unit=s,source=est)", "x"),
        ("(expr=$timeUpdate,unit=s,statQ=mean,source=est)", "timeUpdate"),
        ("(expr=$t,unit=ms,statQ=mean,source=est)", "(t)*0.001"),
        ("(expr=max($a,$b),unit=ms)", "(max(a,b))*0.001"),
    ],
)
def test_vsl_durations_become_seconds(text: str, seconds: str) -> None:
    assert parse_vsl_duration(text) == seconds


@pytest.mark.parametrize(
    "text, size",
    [
        ("(1024,B)", "1024"),
        ("(4,KB)", "4096"),
        ("(2,KiB)", "2048"),
        ("(1,MB)", "1048576"),
        ("(16,b)", "2"),
        ("(8,bit)", "1"),
        ("(3,kB)", "3000"),
        ("(1,GB)", "1073741824"),
        ("100", "100"),
        ("(expr=$n*8,unit=B)", "n*8"),
    ],
)
def test_vsl_sizes_become_bytes(text: str, size: str) -> None:
    assert parse_vsl_size(text) == size


def test_vsl_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match="unknown time unit 'fortnight'"):
        parse_vsl_duration("(3,fortnight)")
    with pytest.raises(ValueError):
        parse_vsl_duration("()")
    assert parse_vsl_real("(expr=1-$pbFire,source=est)") == "1-pbFire"


_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "min": 60.0, "h": 3600.0}


@given(
    value=st.decimals(min_value=0, max_value=10**6, places=4, allow_nan=False, allow_infinity=False),
    unit=st.sampled_from(sorted(_UNITS)),
)
def test_every_vsl_spelling_of_a_duration_agrees(value, unit) -> None:  # type: ignore[no-untyped-def]
    text = format(value, "f")
    spellings = [f"({text},{unit})", f"(value={text},unit={unit})", f"{text}{unit}", f"{text},{unit}"]
    results = {parse_vsl_duration(s) for s in spellings}
    assert len(results) == 1
    assert math.isclose(float(results.pop()), float(value) * _UNITS[unit], rel_tol=1e-12, abs_tol=1e-15)


# --------------------------------------------------------------------------- stereotypes


def _model(*nodes: Node, stereotypes: tuple[StereotypeApplication, ...] = (), name: str = "Act") -> Model:
    activity = Activity(
        id="act", name=name, location=HERE, region=Region(nodes=nodes), stereotypes=stereotypes
    )
    return Model(source="t.uml", dialect="test", activities=(activity,))


def _node(
    *stereotypes: StereotypeApplication,
    kind: NodeKind = NodeKind.ACTION,
    ident: str = "n1",
    name: str = "A1",
    code: str | None = None,
) -> Node:
    return Node(
        id=ident,
        name=name,
        kind=kind,
        uml_type="OpaqueAction",
        location=HERE,
        stereotypes=stereotypes,
        code=code,
    )


@pytest.mark.parametrize("spelling", ["action+", "ActionPlus", "action_plus", "Action Plus", "ACTION-PLUS"])
def test_stereotype_names_match_in_every_spelling(spelling: str) -> None:
    model = apply_profile(_model(_node(StereotypeApplication(spelling, tags=(("Time", "2*N"),)))))
    perf = model.activities[0].region.nodes[0].perf
    assert perf is not None and perf.role is Role.ACTION and perf.tags == (("cost", "2*N"),)


@pytest.mark.parametrize(
    "stereotype, role",
    [
        ("send+", Role.SEND),
        ("IrecvPlus", Role.IRECV),
        ("barrier+", Role.BARRIER),
        ("AllgatherPlus", Role.ALLGATHER),
        ("parallel+", Role.PARALLEL),
        ("critical+", Role.CRITICAL),
        ("pipeline+", Role.PIPELINE),
        ("taskpool+", Role.TASKPOOL),
        ("alltoall+", Role.ALLTOALL),
        ("wait+", Role.WAIT),
    ],
)
def test_every_role_is_recognised(stereotype: str, role: Role) -> None:
    model = apply_profile(_model(_node(StereotypeApplication(stereotype))))
    assert model.activities[0].region.nodes[0].perf.role is role


def test_unknown_tags_warn_and_foreign_stereotypes_are_kept_silently() -> None:
    node = _node(
        StereotypeApplication("send+", tags=(("dest", "pid+1"), ("colour", "red"))),
        StereotypeApplication("Requirement", profile="SysML", tags=(("text", "fast"),)),
    )
    model = apply_profile(_model(node))
    warnings = [d for d in model.diagnostics if d.code == "unknown-tag"]
    assert len(warnings) == 1 and "'colour' on send+ of 'A1'" in warnings[0].message
    assert model.activities[0].region.nodes[0].perf.tags == (("dest", "pid+1"),)
    assert model.activities[0].region.nodes[0].stereotypes[1].name == "Requirement"


def test_code_tag_and_opaque_body_end_up_in_one_place() -> None:
    tagged = apply_profile(_model(_node(StereotypeApplication("action+", tags=(("code", "x = 1; y = 2"),)))))
    node = tagged.activities[0].region.nodes[0]
    assert node.code == "x = 1\ny = 2" and node.perf.get("code") == node.code
    bodied = apply_profile(_model(_node(StereotypeApplication("action+"), code="x = 1")))
    node = bodied.activities[0].region.nodes[0]
    assert node.code == "x = 1" and node.perf.get("code") == "x = 1"


def test_main_and_activity_stereotypes_on_activities() -> None:
    model = apply_profile(
        _model(
            stereotypes=(
                StereotypeApplication("Main"),
                StereotypeApplication("activity+", tags=(("repeat", "3"),)),
            )
        )
    )
    activity = model.activities[0]
    assert activity.is_main and activity.perf.role is Role.ACTIVITY and activity.perf.get("repeat") == "3"


def test_marte_steps_become_actions_and_bad_vsl_warns() -> None:
    node = _node(StereotypeApplication("GaStep", "GQAM", (("hostDemand", "(3,ms)"), ("rep", "4"))))
    bad = _node(
        StereotypeApplication("PaStep", "PAM", (("hostDemand", "(3,parsecs)"),)), ident="n2", name="B"
    )
    model = apply_profile(_model(node, bad))
    first, second = model.activities[0].region.nodes
    assert first.perf.origin == "marte" and dict(first.perf.tags) == {"cost": "0.003", "repeat": "4"}
    assert second.perf is None
    assert any(d.code == "bad-vsl" and "parsecs" in d.message for d in model.diagnostics)


# --------------------------------------------------------------------------- sidecar


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "costs.toml"
    path.write_text(text)
    return path


def test_sidecar_gives_costs_roles_defaults_functions_and_main(tmp_path: Path) -> None:
    sidecar = _write(
        tmp_path,
        """
[defaults]
cost = 0.001
[elements."A1"]
cost = "121/P"
[elements."n2"]
stereotype = "allreduce+"
size = 8
[activities."Act"]
main = true
[functions]
F = "2*x"
G = { parameters = ["a"], body = "a + 1" }
[globals]
P = "3.14"
""",
    )
    plain = _node(ident="n3", name="Other")
    model = apply_profile(_model(_node(), _node(ident="n2", name="B"), plain), sidecar)
    a1, b, other = model.activities[0].region.nodes
    assert a1.perf.tags == (("cost", "121/P"),) and a1.perf.origin == "sidecar"
    assert b.perf.role is Role.ALLREDUCE and b.perf.get("size") == "8"
    assert other.perf.get("cost") == "0.001" and other.perf.origin == "default"
    assert model.activities[0].is_main
    assert [(f.name, f.parameters, f.body) for f in model.functions] == [
        ("F", (), "2*x"),
        ("G", ("a",), "a + 1"),
    ]
    assert [(v.name, v.default) for v in model.globals] == [("P", "3.14")]


@pytest.mark.parametrize(
    "text, message",
    [
        ('[elements."Nope"]\ncost = "1"', "names no node or flow"),
        ('[elements."A1"]\ncots = "1"', "unknown key 'cots'"),
        ('[elements."A1"]\nstereotype = "teleport+"', "not a uml2perf stereotype"),
        ('[activities."Missing"]\nmain = true', "names no activity"),
        ("[weird]\nx = 1", "unknown table"),
        ("[elements\n", "not valid TOML"),
    ],
)
def test_sidecar_mistakes_name_the_file_and_the_key(tmp_path: Path, text: str, message: str) -> None:
    sidecar = _write(tmp_path, text)
    with pytest.raises(ModelError, match=message) as info:
        apply_profile(_model(_node()), sidecar)
    assert info.value.location.file == str(sidecar)


def test_sidecar_on_a_real_sample_overrides_the_profile(tmp_path: Path) -> None:
    sidecar = _write(
        tmp_path, '[elements."A2"]\ncost = "300"\n[elements."_e_decision_a2"]\nprobability = "0.5"\n'
    )
    model = read_model(SAMPLES / "prophet.uml", sidecar=sidecar)
    main = model.activity("MainActivity")
    assert next(n for n in main.walk() if n.name == "A2").perf.get("cost") == "300"
    assert next(e for e in main.region.edges if e.id == "_e_decision_a2").probability == "0.5"


# --------------------------------------------------------------------------- main activity


def _activities(*specs: tuple[str, str, bool, str | None]) -> Model:
    acts = []
    for ident, name, is_main, calls in specs:
        node = Node(
            id=ident + "_n",
            name="x",
            kind=NodeKind.CALL if calls else NodeKind.ACTION,
            uml_type="Action",
            location=HERE,
            behavior=calls,
        )
        acts.append(
            Activity(id=ident, name=name, location=HERE, region=Region(nodes=(node,)), is_main=is_main)
        )
    return Model(source="t.uml", dialect="test", activities=tuple(acts))


def test_main_activity_rules_in_order() -> None:
    assert main_activity(_activities(("a", "A", False, None), ("b", "B", True, None))).id == "b"
    assert main_activity(_activities(("a", "A", False, None), ("m", "MainActivity", False, None))).id == "m"
    assert main_activity(_activities(("a", "Top", False, "b"), ("b", "Sub", False, None))).id == "a"
    assert main_activity(_activities(("a", "A", False, None), ("b", "B", False, None)), "B").id == "b"
    assert main_activity(_activities(("a", "A", False, None), ("b", "B", False, None)), "a").id == "a"


def test_ambiguous_main_activity_lists_candidates_with_ids() -> None:
    with pytest.raises(ModelError) as info:
        main_activity(_activities(("a1", "A", False, None), ("b1", "B", False, None)))
    assert "'A' [xmi:id=a1]" in str(info.value) and "'B' [xmi:id=b1]" in str(info.value)
    with pytest.raises(ModelError, match="2 activities are stereotyped main"):
        main_activity(_activities(("a", "A", True, None), ("b", "B", True, None)))
    with pytest.raises(ModelError, match="no activity named 'C'"):
        main_activity(_activities(("a", "A", False, None)), "C")


def test_no_activity_message_names_the_contents() -> None:
    model = Model(source="x.uml", dialect="test", contents=(("classes", 12), ("state machines", 2)))
    with pytest.raises(ModelError, match="no activity found; the file holds 12 classes, 2 state machines"):
        main_activity(model)


def test_prophet_main_activity() -> None:
    model = read_model(SAMPLES / "prophet.uml")
    assert main_activity(model).name == "MainActivity"
    unmarked = replace(model, activities=tuple(replace(a, is_main=False) for a in model.activities))
    assert main_activity(unmarked).name == "MainActivity"
    assert not [d for d in model.diagnostics if d.severity is Severity.WARNING]


def _documented_sidecar() -> str:
    """The sidecar example of docs/profile.md, its element and function renamed to fit prophet.uml."""
    import re

    doc = (SAMPLES.parent / "docs" / "profile.md").read_text()
    example = re.findall(r"```toml\n(.*?)```", doc, re.S)[0]
    assert '[activities."MainActivity"]' in example and 'repeat = "2"' in example
    example = example.replace('"Calculate forces"', '"A1"').replace("FA4 =", "FX =")
    return re.sub(r'\[elements\."_f1"\].*?\n\n', "", example, flags=re.S)


@pytest.mark.parametrize("command", ["run", "check", "convert"])
def test_the_documented_sidecar_example_works(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every table of the example (an activity's repeat included) reads, checks, converts and runs."""
    from uml2perf.cli import main

    monkeypatch.setenv("UML2PERF_NO_CACHE", "1")
    car = tmp_path / "doc.toml"
    car.write_text(_documented_sidecar())
    extra = ["-o", str(tmp_path / "m.py")] if command == "convert" else []
    assert main([command, str(SAMPLES / "prophet.uml"), "--sidecar", str(car), *extra]) == 0
    out, err = capsys.readouterr()
    assert "bug" not in out + err and "error:" not in out + err


def test_an_activity_repeat_from_a_sidecar_repeats_the_activity(tmp_path: Path) -> None:
    from uml2perf.api import predict

    car = tmp_path / "repeat.toml"
    car.write_text('[activities."MainActivity"]\nrepeat = "2"\n')
    once = predict(SAMPLES / "prophet.uml").time
    assert predict(SAMPLES / "prophet.uml", sidecar=car).time == pytest.approx(2 * once)
