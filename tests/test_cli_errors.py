"""Bad input never produces a traceback or a half-written file.

Each case breaks a copy of a bundled sample in one way and checks that
``convert`` and ``run`` exit with status 1, print one clear message that points
at the place (file and, where there is one, line and element), and leave no
output file behind.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from uml2perf.cli import main

ROOT = Path(__file__).resolve().parents[1]
LAPW0 = (ROOT / "samples" / "lapw0.uml").read_text()


def _replace(old: str, new: str) -> str:
    assert old in LAPW0, old
    return LAPW0.replace(old, new, 1)


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<xmi:XMI xmlns:xmi="http://www.omg.org/spec/XMI/20131001" name="&lol9;"/>
"""

EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE x [ <!ENTITY secret SYSTEM "file:///etc/passwd"> ]>
<xmi:XMI xmi:version="20131001" xmlns:xmi="http://www.omg.org/spec/XMI/20131001"
         xmlns:uml="http://www.eclipse.org/uml2/5.0.0/UML">
  <uml:Model xmi:id="m" name="&secret;"/>
</xmi:XMI>
"""

#: name -> (file text, words the message must contain)
CASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "truncated": (LAPW0[: len(LAPW0) // 2], ("bad.uml", "line")),
    "empty": ("", ("bad.uml", "empty")),
    "not_xml": ("this is not XML at all\n", ("bad.uml",)),
    "external_entity": (EXTERNAL_ENTITY, ("bad.uml", "entit")),
    "billion_laughs": (BILLION_LAUGHS, ("bad.uml",)),
    "import_in_cost": (
        _replace('cost="DoSFT(NAT)"', "cost=\"__import__('os').system('true')\""),
        ("bad.uml", "SFT", "__import__"),
    ),
    "attribute_access_in_cost": (
        _replace('cost="MPIterm()"', 'cost="NAT.__class__"'),
        ("bad.uml", "Terminate_MPI_Environment"),
    ),
    "call_outside_subset": (
        _replace('cost="MPIinit()"', 'cost="open(1)"'),
        ("bad.uml", "Initialize_MPI_Environment", "open"),
    ),
    "huge_power": (
        _replace('cost="MPIinit()"', 'cost="9**9**9"'),
        ("bad.uml", "Initialize_MPI_Environment"),
    ),
    "variable_name_not_identifier": (
        _replace('name="BUF"', 'name="buffer size"').replace('size="BUF"', 'size="1024"'),
        ("bad.uml", "buffer size"),
    ),
    "unknown_name_in_guard": (
        _replace("nprocs > 1 and pid != 0", "nprocs > 1 and rank != 0"),
        ("bad.uml", "rank"),
    ),
    "unknown_tag_on_profile_stereotype": (
        _replace('cost="o3(PNAT)"', 'cots="o3(PNAT)"'),
        ("bad.uml", "Output3", "cots"),
    ),
    "undefined_cost_function": (
        _replace('cost="MPIterm()"', 'cost="MPIfinalize()"'),
        ("bad.uml", "MPIfinalize"),
    ),
    "no_activity": (
        '<?xml version="1.0"?>\n<xmi:XMI xmi:version="20131001" '
        'xmlns:xmi="http://www.omg.org/spec/XMI/20131001" '
        'xmlns:uml="http://www.eclipse.org/uml2/5.0.0/UML"><uml:Model xmi:id="m" name="m">'
        '<packagedElement xmi:type="uml:Class" xmi:id="c1" name="Atom"/>'
        '<packagedElement xmi:type="uml:Class" xmi:id="c2" name="Cell"/></uml:Model></xmi:XMI>\n',
        ("bad.uml", "activit", "class"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", ["convert", "run"])
def test_bad_input_gives_one_clear_message(
    case: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, words = CASES[case]
    bad = tmp_path / "bad.uml"
    bad.write_text(text)
    out = tmp_path / "out.py"
    args = (
        ["convert", str(bad), "-o", str(out)] if command == "convert" else ["run", str(bad), "--procs", "2"]
    )
    code = main(args)
    captured = capsys.readouterr()
    assert code == 1, captured.out + captured.err
    message = captured.err
    assert "Traceback" not in message and "internal error" not in message, message
    assert message.startswith("error: "), message
    for word in words:
        assert word.lower() in message.lower(), f"{word!r} missing from: {message}"
    assert not out.exists(), "no output file may be left behind"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.uml"], "no temporary files may be left behind"


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path / "nope.uml")]) == 1
    assert "nope.uml" in capsys.readouterr().err


def test_deadlock_is_reported_not_hung(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Every process receives from its predecessor first: rank 0 waits for a message nobody sends.
    bad = tmp_path / "deadlock.uml"
    bad.write_text(
        _replace('source="pid - 1"', 'source="(pid + nprocs - 1) % nprocs"').replace(
            "nprocs > 1 and pid != 0", "nprocs > 1"
        )
    )
    code = main(["run", str(bad), "--procs", "3"])
    err = capsys.readouterr().err
    assert code == 1
    assert "deadlock" in err.lower()
    assert "Receive_I2" in err
    assert "Traceback" not in err


def test_bad_machine_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    machine = tmp_path / "m.toml"
    machine.write_text('name = "x"\nnodes = 2\ncores_per_node = -4\n')
    code = main(["run", str(ROOT / "samples" / "lapw0.uml"), "--machine", str(machine)])
    err = capsys.readouterr().err
    assert code == 1
    assert "cores_per_node" in err and "m.toml" in err


def test_debug_works_after_the_subcommand_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.uml"
    bad.write_text(_replace('cost="MPIinit()"', 'cost="open(1)"'))
    assert main(["run", str(bad), "--debug"]) == 1
    assert "Traceback" in capsys.readouterr().err
    assert main(["--debug", "run", str(bad)]) == 1
    assert "Traceback" in capsys.readouterr().err
    assert main(["run", str(bad)]) == 1
    assert "Traceback" not in capsys.readouterr().err


def test_a_generated_module_piped_into_head_exits_quietly(tmp_path: Path) -> None:
    import subprocess
    import sys

    module = tmp_path / "lapw0.py"
    assert main(["convert", str(ROOT / "samples" / "lapw0.uml"), "-o", str(module)]) == 0
    for command in (
        [sys.executable, str(module), "--procs", "64"],
        [sys.executable, "-m", "uml2perf", "run", str(ROOT / "samples" / "lapw0.uml"), "--procs", "64"],
    ):
        done = subprocess.run(
            f"{' '.join(command)} | head -1",
            shell=True,
            capture_output=True,
            text=True,
            timeout=120,
            executable="/bin/bash",
        )
        assert done.stdout.startswith("Model 'LAPW0'") and done.stderr == "", done.stderr


def test_quiet_counts_the_warnings_instead_of_listing_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "lapw0.uml"
    model.write_text(LAPW0)
    sidecar = tmp_path / "near.toml"
    sidecar.write_text("[variables]\nnat = 3\n")
    assert main(["run", str(model), "--sidecar", str(sidecar), "--procs", "2"]) == 0
    assert "did you mean 'NAT'" in capsys.readouterr().err
    assert main(["run", str(model), "--sidecar", str(sidecar), "--procs", "2", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "did you mean" not in err and "1 warning not shown (--quiet)" in err
    assert main(["check", str(model), "--sidecar", str(sidecar), "-q"]) == 0
    assert "did you mean" not in capsys.readouterr().out


def _prophet_without(*ids: str) -> str:
    text = (ROOT / "samples" / "prophet.uml").read_text()
    lines = [line for line in text.splitlines(keepends=True) if not any(f'xmi:id="{i}"' in line for i in ids)]
    return "".join(lines)


def test_a_model_where_nothing_takes_time_is_refused_with_the_fix(tmp_path: Path) -> None:
    import subprocess
    import sys

    model = tmp_path / "untimed.uml"
    model.write_text(_prophet_without("_st_a1", "_st_a2", "_st_a4", "_st_sa1", "_st_sa2"))
    for _ in range(2):  # the second run comes from the cache and must say the same
        done = subprocess.run(
            [sys.executable, "-m", "uml2perf", "run", str(model)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**__import__("os").environ, "XDG_CACHE_HOME": str(tmp_path / "c")},
        )
        assert done.returncode == 1 and "nothing in this model takes time" in done.stderr
        assert "[defaults] cost" in done.stderr and "Predicted time" not in done.stdout


def test_actions_without_a_cost_are_counted_once(tmp_path: Path) -> None:
    import subprocess
    import sys

    model = tmp_path / "partly.uml"
    model.write_text(_prophet_without("_st_a4"))
    done = subprocess.run(
        [sys.executable, "-m", "uml2perf", "run", str(model), "--procs", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0
    assert done.stderr.count("actions have no cost") == 1 and "1 of 4 actions" in done.stderr
