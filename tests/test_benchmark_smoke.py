"""The benchmark runs end to end at tiny sizes and reports every part (structure only, never speed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def test_quick_benchmark_reports_every_part(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "run.py"),
            "--quick",
            "--repeat",
            "2",
            "--actions",
            "40",
            "--procs",
            "4",
            "--rounds",
            "3",
            "--scaling",
            "2,4",
            "--sweep-procs",
            "2,4",
            "--peer-ring",
            "4,2",
            "--peer-allreduce",
            "4,2",
            "--peer-lapw0",
            "4",
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
    convert, ring, startup, scaling = report["convert"], report["ring"], report["startup"], report["scaling"]
    assert convert["actions"] == 40 and convert["generated_lines"] > 40
    measured = [convert["uml2perf"], convert["floor"], ring["uml2perf"], ring["lean"], ring["store"]]
    measured.append(ring["heapq"])
    measured += [startup["uml2perf"], startup["floor"]]
    for m in measured:
        # two interleaved rounds each, median inside the spread, the child's own memory
        assert m["returncode"] == 0 and len(m["cpus"]) == len(m["walls"]) == 2
        assert m["cpu_spread"][0] <= m["cpu"] <= m["cpu_spread"][1]
        assert m["wall"] > 0 and m["peak_mib"] > 0
    for ratio in (convert["ratio"], ring["vs_lean"], ring["vs_store"], startup["ratio"]):
        assert ratio["cpu"] > 0 and ratio["cpu_spread"][0] <= ratio["cpu"] <= ratio["cpu_spread"][1]
    for part in (convert, ring, startup):
        assert isinstance(part["met"], bool)
    assert ring["simulated_time"]["same"] is True
    assert ring["events"]["uml2perf"] == ring["events"]["lean"] < ring["events"]["store"]
    assert all(v > 0 for v in ring["events_per_s"].values())
    assert [row["procs"] for row in scaling["rows"]] == [2, 4]
    for row in scaling["rows"]:
        assert row["events"] > 0 and row["events_per_s"] > 0 and row["simulated_time"] > 0
        assert row["measurement"]["cpu"] > 0
    assert "kib_per_process" in scaling["rows"][1]
    sweep = report["sweep"]
    assert sweep["points"] == 4 and sweep["same_times"] is True
    peer = report["peer"]
    if peer["available"]:
        assert [row["procs"] for row in peer["rows"]] == [4, 4, 4]
        for row in peer["rows"]:
            assert row["relative_difference"] < 1e-9
    else:
        assert "not installed" in peer["note"] and "not installed" in proc.stdout
    assert "| convert 40-action model" in proc.stdout
    assert "Ring simulated time: identical in all four" in proc.stdout


def test_peak_memory_is_the_childs_own(tmp_path: Path) -> None:
    """The wrapper reports what the command itself used, not the memory of whoever started it."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import run
    finally:
        sys.path.pop(0)
    ballast = bytearray(200 * 2**20)  # make this process big: a plain fork would inherit it
    ballast[::4096] = b"x" * len(ballast[::4096])
    wall, cpu, peak, code, stdout, _ = run.run_child([sys.executable, "-c", "print(1)"], tmp_path)
    del ballast
    assert code == 0 and stdout.strip() == "1"
    assert 0 < cpu and 0 < wall
    assert 1 < peak < 100  # a bare interpreter, far below this process's 200 MiB
    big = "b = bytearray(120 * 2**20); b[::4096] = b'x' * len(b[::4096])"
    assert run.run_child([sys.executable, "-c", big], tmp_path)[2] > 120


def test_bare_simpy_ring_matches_the_closed_form() -> None:
    """Each round costs WORK plus one message time, all ranks in lock-step (single node: intra link)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bare_simpy_ring
    finally:
        sys.path.pop(0)
    now, events, _ = bare_simpy_ring.run(4, 10, 1e-3, 1000, 4, (1e-6, 1e9), (5e-5, 1e7))
    assert abs(now - 10 * (1e-3 + 1e-6 + 1000 / 1e9)) < 1e-12
    assert events > 4 * 10 * 2


def test_lean_simpy_ring_matches_the_closed_form_with_half_the_events() -> None:
    """The lean floor predicts what the Store-based floor predicts, with one event per step."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bare_simpy_ring
        import heapq_ring
        import lean_simpy_ring
    finally:
        sys.path.pop(0)
    args = (4, 10, 1e-3, 1000, 4, (1e-6, 1e9), (5e-5, 1e7))
    now, events, _ = lean_simpy_ring.run(*args)
    assert abs(now - 10 * (1e-3 + 1e-6 + 1000 / 1e9)) < 1e-12
    bare_now, bare_events, _ = bare_simpy_ring.run(*args)
    assert abs(now - bare_now) < 1e-12
    # two events per process and round at most (compute, receive) plus start and end of each process
    assert events <= 4 * 10 * 2 + 2 * 4 < bare_events
    # across nodes (2 processes per node) the ring still matches the Store-based floor,
    # and the heapq loop without SimPy takes the same steps: the same time to the bit
    cross = (6, 7, 1e-3, 4096, 2, (1e-6, 1e9), (5e-5, 1e7))
    assert abs(lean_simpy_ring.run(*cross)[0] - bare_simpy_ring.run(*cross)[0]) < 1e-12
    assert heapq_ring.run(*cross)[0] == lean_simpy_ring.run(*cross)[0]
    assert heapq_ring.run(*args)[0] == now


def test_peer_comparison_says_so_when_simgrid_is_absent(tmp_path: Path, monkeypatch) -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import run
    finally:
        sys.path.pop(0)
    monkeypatch.setattr(run, "simgrid_python", lambda: None)
    part = run.bench_peer(tmp_path, run.QUICK, 1)
    assert part == {"available": False, "note": part["note"]} and "python3-simgrid" in part["note"]
    text = run.render({"machine": run.machine_info(), "repeat": 1, "quick": True, "peer": part})
    assert "Peer comparison: SimGrid's Python bindings are not installed" in text


def test_quick_shapes_benchmark_compares_whole_commands_with_their_floors(tmp_path: Path) -> None:
    out = tmp_path / "shapes.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "shapes.py"),
            "--quick",
            "-k",
            "1",
            "--actions",
            "20",
            "--sizes",
            "1024,131072",
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
    assert [row["protocol"] for row in report["ring"]] == ["eager", "rendezvous", "eager"]
    assert report["ring"][-1]["local"] > 0
    for row in [*report["ring"], report["allreduce"], report["threads"]]:
        # the lean floors simulate exactly what uml2perf simulates: same time, same events
        assert row["same_time"] is True, row["simulated"]
        assert row["events"]["uml2perf"] == row["events"]["floor"]
        assert row["ratio"]["cpu"] > 0 and row["in_process"]["ratio"] > 0
    convert = report["convert"][0]
    assert convert["uml2perf"]["returncode"] == 0 and convert["in_process"]["convert"] > 0
    assert report["sample"]["uml2perf"]["returncode"] == 0 and report["lapw0"]["uml2perf"]["returncode"] == 0
    assert "| row |" in proc.stdout and "in-process ratio" in proc.stdout


def test_shapes_compares_convert_with_another_copy_of_uml2perf(tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(REPO / "uml2perf", other / "uml2perf", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "shapes.json"
    command = [sys.executable, str(REPO / "benchmarks" / "shapes.py"), "--quick", "-k", "1"]
    proc = subprocess.run(
        [
            *command,
            "--only",
            "convert,sample",
            "--actions",
            "20",
            "--against",
            str(other),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    for row in [*report["convert"], report["sample"]]:
        against = row["against"]
        assert against["other"]["returncode"] == 0 and against["ratio"]["cpu"] > 0
        assert against["same_output"] is True  # the same code writes the same module
    assert f"Against the copy of uml2perf in {other.resolve()}" in proc.stdout
    refused = subprocess.run(
        [*command, "--only", "sample", "--against", str(tmp_path / "nothing")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "holds no uml2perf package" in refused.stderr


def test_convert_stages_times_every_stage_of_one_conversion(tmp_path: Path) -> None:
    """Every stage is reached by a conversion of a chain (the wrapped names still exist)."""
    model = tmp_path / "chain.uml"
    subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "synthetic.py"), "chain", str(model), "--actions", "30"],
        check=True,
    )
    out = tmp_path / "stages.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "convert_stages.py"),
            str(model),
            "-k",
            "1",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    figures = json.loads(out.read_text())
    assert "| regions (nodes and flows) |" in proc.stdout
    stages = [line.split(" | ")[0].lstrip("| ") for line in proc.stdout.splitlines()[2:]]
    assert stages == list(figures)
    assert all(len(values) == 1 and values[0] is not None for values in figures.values()), figures


def test_counting_prints_every_kernel_of_the_catalogue(tmp_path: Path, capsys: Any) -> None:
    """benchmarks/counting.py: every kernel runs, and its ratio is measured over priced time."""
    import counting

    path = tmp_path / "m.toml"
    path.write_text(
        'name = "m"\nnodes = 1\ncores_per_node = 1\npeak_flops = 1e10\nmemory_bandwidth = 1e10\n'
        "first_touch = 2e9\ncall_cost = 3e-7\n"
    )
    assert counting.main(["--machine", str(path), "--sizes", "256"]) == 0
    out = capsys.readouterr().out
    for kernel in counting.COUNTED_KERNELS:
        assert kernel.name in out
    assert "median" in out


def test_counting_counts_follow_the_profile_rules() -> None:
    """Fresh bytes only from blocks of 128 KiB up; every kernel moves bytes or does flops."""
    import counting

    for kernel in counting.COUNTED_KERNELS:
        for n in counting.SIZES:
            c = kernel.counts(n, 32 << 20)
            assert c.bytes > 0 or c.flops > 0, kernel.name
            assert c.calls >= 1, kernel.name
            if c.fresh:
                assert c.allocation is not None and c.allocation >= counting.FRESH_BLOCK, kernel.name
                assert c.fresh >= c.allocation
    gather = next(k for k in counting.COUNTED_KERNELS if k.name == "gather")
    assert (
        gather.counts(1 << 22, 1 << 20).bytes > gather.counts(1 << 22, 1 << 26).bytes
    )  # a line per index beyond the caches


def test_counting_refuses_a_bad_machine_file(tmp_path: Path, capsys: Any) -> None:
    import counting

    path = tmp_path / "m.toml"
    path.write_text('name = "m"\nnodes = 1\n')
    assert counting.main(["--machine", str(path), "--sizes", "256"]) == 2
    assert "error:" in capsys.readouterr().err
