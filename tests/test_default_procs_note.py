"""Without --procs a threads-only model runs one process per core: the output says so."""

from __future__ import annotations

from pathlib import Path

from uml2perf.cli import main

ROOT = Path(__file__).resolve().parents[1]
POOL = ROOT / "validation" / "models" / "pool.uml"


def _sidecar(tmp_path: Path) -> Path:
    path = tmp_path / "pool.toml"
    path.write_text(
        (ROOT / "validation" / "models" / "pool.toml").read_text() + '\n[elements."work"]\ncost = "1e-3"\n'
    )
    return path


def test_note_without_procs(tmp_path, capsys):
    assert main(["run", str(POOL), "--sidecar", str(_sidecar(tmp_path))]) == 0
    out = capsys.readouterr()
    assert "note: no --procs given, so 4 processes ran (one per core)" in out.err
    assert "pass --procs 1" in out.err


def test_no_note_with_procs_or_communication(tmp_path, capsys):
    assert main(["run", str(POOL), "--sidecar", str(_sidecar(tmp_path)), "--procs", "1"]) == 0
    assert "note: no --procs" not in capsys.readouterr().err
    assert main(["run", str(ROOT / "samples" / "lapw0.uml")]) == 0
    assert "note: no --procs" not in capsys.readouterr().err
