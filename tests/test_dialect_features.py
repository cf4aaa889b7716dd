"""Dialect features the real corpus lacks, on small hand-written exports in ``tests/data/dialects``.

Every file is run through the command line (``uml2perf.cli.main``) and its
predicted time is compared with a sum worked out by hand in the test.  The
machine ``machine.toml`` has 1 ms latency and 1 MB/s bandwidth, so message
times are easy to add up: ``0.001 + size / 1e6`` seconds.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from uml2perf.cli import main as cli_main
from uml2perf.profile import parse_context_parameters
from uml2perf.reader import read_model

DATA = Path(__file__).resolve().parent / "data" / "dialects"
MACHINE = DATA / "machine.toml"
LATENCY, BANDWIDTH = 0.001, 1e6


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = cli_main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def _run(name: str, *options: str, procs: int = 1) -> dict:
    status, out, err = _cli(
        "run", DATA / name, "--json", "--procs", str(procs), "--machine", MACHINE, *options
    )
    assert status == 0, err
    return json.loads(out)


def _calls(result: dict) -> dict[str, int]:
    return {e["name"]: e["calls"] for e in result["elements"]}


# --------------------------------------------------------------------------- MARTE on Papyrus


def test_marte_hostdemand_forms_rep_prob_and_message_size() -> None:
    model = read_model(DATA / "papyrus-marte.uml")
    costs = {n.name: n.perf.get("cost") for n in model.activities[0].walk() if n.perf is not None}
    assert costs["Tuple"] == "0.005"  # (5,ms)
    assert costs["Keyed"] == "0.005"  # (value=5,unit=ms)
    assert costs["Compact"] == "0.005"  # 5ms
    assert costs["ByVariable"] == "x"  # (expr=$x,unit=s)
    keyed = next(n for n in model.activities[0].walk() if n.name == "Keyed")
    assert keyed.perf is not None and keyed.perf.get("repeat") == "2"  # rep=(2)
    sizes = {n.name: n.perf.get("size") for n in model.activities[0].walk() if n.perf is not None}
    assert sizes["SendBlock"] == "4096" and sizes["RecvBlock"] == "1024"  # (4,KB) and (1024,B)
    x = next(v for v in model.activities[0].attributes if v.name == "x")
    assert x.default == "0.01" and not x.required  # contextParams in$x=(10,ms)

    result = _run("papyrus-marte.uml", procs=2)
    compute = 0.005 + 2 * 0.005 + 0.005 + 0.010 + 0.001  # the 100 s branch has probability 0
    message = LATENCY + 4096 / BANDWIDTH  # rank 0 sends 4 KB to rank 1
    assert result["time"] == pytest.approx(compute + message, rel=1e-9)
    assert "Never" not in {e["name"] for e in result["elements"] if e["calls"]}


def test_context_parameter_lists_and_values() -> None:
    params = parse_context_parameters("[in$a, out$rt, inout$b=4, $c=(2,ms), in$d=(4,KB)]")
    assert [(p.name, p.direction, p.value) for p in params] == [
        ("a", "in", None),
        ("rt", "out", None),
        ("b", "inout", "4"),
        ("c", "in", "0.002"),
        ("d", "in", "4096"),
    ]
    with pytest.raises(ValueError, match="not a context parameter"):
        parse_context_parameters("in$a, rate")


# --------------------------------------------------------------------------- other tools


def test_magicdraw_stereotype_applications_with_profile_tags() -> None:
    result = _run("magicdraw-profile.xmi")
    # Assemble (cost 0.5, tag as a child element), Factor (time = 0.25: a synonym),
    # Smooth = activity+ repeat 2 of SmoothStep, whose Relax costs 0.1
    assert result["time"] == pytest.approx(0.5 + 0.25 + 2 * 0.1)
    assert _calls(result)["Relax"] == 2


def test_enterprise_architect_tags_only_in_the_extension() -> None:
    model = read_model(DATA / "ea-extension.xmi")
    assert model.dialect == "ea"
    kernel = model.activity("Kernel")
    assert kernel is not None and kernel.is_main  # «main» only in xmi:Extension
    result = _run("ea-extension.xmi")
    # Load: cost 0.2 (the #NOTES# part is cut off); Compute: stereotype from the xrefs, 0.3 twice
    assert result["time"] == pytest.approx(0.2 + 2 * 0.3)


def test_argouml_tagged_values_with_and_without_a_stereotype() -> None:
    result = _run("argouml-tagged.xmi")
    # «action+» cost 0.3 repeat 2, then a plain 'cost' tagged value of 0.4
    assert result["time"] == pytest.approx(2 * 0.3 + 0.4)


# --------------------------------------------------------------------------- structured nodes


def test_loop_node_conditional_node_partitions_and_interruptible_region() -> None:
    status, out, _ = _cli("check", "--verbose", DATA / "papyrus-structured.uml")
    assert status == 0
    assert "interruptible region read as plain flow" in out
    assert "2 partitions (swimlanes)" in out
    model = read_model(DATA / "papyrus-structured.uml")
    partitions = {n.name: n.partition for n in model.activities[0].region.nodes}
    assert partitions["Prepare"] == "Rank0" and partitions["Report"] == "Others"

    assert "clauses 1 (test 'TestSmall'), 2 (test 'TestLarge') have no condition" in out

    result = _run("papyrus-structured.uml")
    # Prepare 0.05; loop+ iterations=4 of Relax 0.1; the clauses have no conditions, so both
    # tests run (0.01 + 1) and a seeded draw picks one body (0.2 or 5); Report 0.02
    calls = _calls(result)
    assert calls["Relax"] == 4 and calls["TestSmall"] == calls["TestLarge"] == 1
    assert calls.get("SmallCase", 0) + calls.get("LargeCase", 0) == 1
    body = 0.2 if calls.get("SmallCase") else 5
    assert result["time"] == pytest.approx(0.05 + 4 * 0.1 + 0.01 + 1 + body + 0.02)


# --------------------------------------------------------------------------- main activity


def test_two_activities_need_activity_and_the_error_lists_the_candidates() -> None:
    status, _, err = _cli("run", DATA / "two-activities.uml")
    assert status == 1
    assert "cannot tell which activity is the main one" in err
    assert "'ReadPhase' [xmi:id=_read]" in err and "'WritePhase' [xmi:id=_write]" in err
    assert "--activity" in err
    assert _run("two-activities.uml", "--activity", "WritePhase")["time"] == pytest.approx(2.5)
    assert _run("two-activities.uml", "--activity", "_read")["time"] == pytest.approx(1.5)


# --------------------------------------------------------------------------- sidecar only


def test_plain_export_costed_entirely_by_the_sidecar() -> None:
    sidecar = DATA / "plain-export.toml"
    result = _run("plain-export.uml", "--sidecar", str(sidecar), procs=2)
    setup = 0.5
    steps = 3 * (0.01 * 20)  # repeat = steps (3); N = 20 from [variables], not the model's 10
    check = 0.001  # no entry: [defaults] cost
    output = 2.0  # guard write_output == 1 holds
    halo = 0.25 + LATENCY + 8 / BANDWIDTH  # allreduce+ of 8 bytes between 2 ranks
    assert result["time"] == pytest.approx(setup + steps + check + output + halo, rel=1e-9)
    assert _calls(result)["TimeStep"] == 6  # 3 per rank


def test_sidecar_variables_override_and_command_line_wins(tmp_path: Path) -> None:
    sidecar = DATA / "plain-export.toml"
    result = _run("plain-export.uml", "--sidecar", str(sidecar), "--set", "write_output=0", "--set", "N=10")
    assert result["time"] == pytest.approx(0.5 + 3 * 0.1 + 0.001 + 0.25)  # one rank: the allreduce is free


def test_required_variable_without_value_names_it(tmp_path: Path) -> None:
    text = (DATA / "papyrus-marte.uml").read_text(encoding="utf-8").replace("in$x=(10,ms)", "in$x")
    copy = tmp_path / "no-value.uml"
    copy.write_text(text, encoding="utf-8")
    status, _, err = _cli("run", copy, "--procs", "2", "--machine", MACHINE)
    assert status == 1
    assert "1 variable without a value: x" in err and "--set x=VALUE" in err and "[variables]" in err
    status, out, _ = _cli("check", copy)
    assert "variable 'x' has no value" in out
    sidecar = tmp_path / "values.toml"
    sidecar.write_text('[variables]\nx = "0.02"\n', encoding="utf-8")
    status, out, err = _cli("run", copy, "--procs", "2", "--machine", MACHINE, "--json", "--sidecar", sidecar)
    assert status == 0, err
    assert json.loads(out)["time"] == pytest.approx(0.031 + 0.01 + LATENCY + 4096 / BANDWIDTH)
