"""The benchmark runs end to end at tiny sizes and reports every part (structure only, never speed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_quick_benchmark_reports_every_part(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "run.py"),
            "--quick",
            "--repeat",
            "1",
            "--actions",
            "40",
            "--procs",
            "4",
            "--rounds",
            "3",
            "--scaling",
            "2,4",
            "--json",
            str(out),
            "--workdir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert report["machine"]["cores"] >= 1 and report["machine"]["python"]
    convert, ring, scaling = report["convert"], report["ring"], report["scaling"]
    assert convert["actions"] == 40 and convert["generated_lines"] > 40
    for part in (convert, ring):
        assert part["ratio"] > 0 and isinstance(part["met"], bool)
        assert part["uml2perf"]["best"] > 0 and part["floor"]["best"] > 0
        assert part["uml2perf"]["max_rss_mib"] > 0
    assert ring["simulated_time"]["same"] is True
    assert [row["procs"] for row in scaling["rows"]] == [2, 4]
    for row in scaling["rows"]:
        assert row["events"] > 0 and row["events_per_s"] > 0 and row["simulated_time"] > 0
        assert row["measurement"]["best_cpu"] > 0
    sweep = report["sweep"]
    assert sweep["points"] == 4 and sweep["same_times"] is True
    assert "| (a) convert 40-action model" in proc.stdout
    assert "Ring simulated time" in proc.stdout and "identical" in proc.stdout


def test_bare_simpy_ring_matches_the_closed_form() -> None:
    """Each round costs WORK plus one message time, all ranks in lock-step (single node: intra link)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bare_simpy_ring
    finally:
        sys.path.pop(0)
    now, events = bare_simpy_ring.run(4, 10, 1e-3, 1000, 4, (1e-6, 1e9), (5e-5, 1e7))
    assert abs(now - 10 * (1e-3 + 1e-6 + 1000 / 1e9)) < 1e-12
    assert events > 4 * 10 * 2


def test_lean_simpy_ring_matches_the_closed_form_with_half_the_events() -> None:
    """The lean floor predicts what the Store-based floor predicts, with one event per step."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bare_simpy_ring
        import lean_simpy_ring
    finally:
        sys.path.pop(0)
    args = (4, 10, 1e-3, 1000, 4, (1e-6, 1e9), (5e-5, 1e7))
    now, events = lean_simpy_ring.run(*args)
    assert abs(now - 10 * (1e-3 + 1e-6 + 1000 / 1e9)) < 1e-12
    bare_now, bare_events = bare_simpy_ring.run(*args)
    assert abs(now - bare_now) < 1e-12
    # two events per process and round at most (compute, receive) plus start and end of each process
    assert events <= 4 * 10 * 2 + 2 * 4 < bare_events
    # across nodes (2 processes per node) the ring still matches the Store-based floor
    cross = (6, 7, 1e-3, 4096, 2, (1e-6, 1e9), (5e-5, 1e7))
    assert abs(lean_simpy_ring.run(*cross)[0] - bare_simpy_ring.run(*cross)[0]) < 1e-12
