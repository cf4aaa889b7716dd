"""``uml2perf calibrate --check``: a machine file against quick measurements now."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from uml2perf import calibrate, drift
from uml2perf.calibrate import Measured
from uml2perf.cli import main
from uml2perf_runtime.platform.machine import Machine

FILE = """name = "m"
nodes = 1
cores_per_node = 2
peak_flops = { value = 5e10, low = 4e10, high = 6e10 }
memory_bandwidth = { value = 4e10, low = 3e10, high = 5e10 }
core_bandwidth = 3e10
first_touch = { value = 2e9, low = 1.5e9, high = 2.5e9 }
call_cost = { value = 4e-7, low = 3e-7, high = 5e-7 }
[caches]
levels = [{ up_to = 65536, core_bandwidth = { value = 6e10, low = 5e10, high = 7e10 }, bandwidth = 1.2e11 }]
[network.intra_node]
handshake = { value = 1e-6, low = 0, high = 3e-6 }
ranges = [
  { up_to = 4096, latency = { value = 1e-6, low = 0.5e-6, high = 2e-6 }, bandwidth = 4e9 },
  { latency = 2e-6, bandwidth = { value = 1e10, low = 5e9, high = 2e10 } },
]
[network]
eager_limit = 4096
"""


def _fake_measurements(monkeypatch: pytest.MonkeyPatch, scale: float) -> None:
    """Measurements ``scale`` times the file's values (1: exactly the file)."""

    def rate(value: float) -> Measured:
        return Measured(value * scale, value * scale, value * scale, "fake")

    monkeypatch.setattr(calibrate, "matmul_seconds", lambda n: lambda: 2 * n**3 / (5e10 * scale))
    monkeypatch.setattr(
        calibrate,
        "memory_bandwidths",
        lambda repeats, cores, say=None: {"memory_bandwidth": rate(4e10), "core_bandwidth": rate(3e10)},
    )
    monkeypatch.setattr(
        calibrate,
        "cache_bandwidths",
        lambda repeats, cores, say=None, sizes=(): {
            "cache_core 65536": rate(6e10),
            "cache_node 65536": rate(1.2e11),
        },
    )
    monkeypatch.setattr(
        calibrate,
        "first_touch_rates",
        lambda repeats: {"first_touch": rate(2e9), "first_touch 1048576": rate(2e9)},
    )
    monkeypatch.setattr(calibrate, "call_seconds", lambda calls=1: 4e-7 / scale)
    machine = Machine.from_dict(tomllib.loads(FILE))
    link = machine.intra_node

    def ping_pong(repeats: int, launches: int, sizes: Any = None) -> Any:
        return [{s: {"reused": [link.message_time(s, 4096) / scale] * 3} for s in sizes}]

    monkeypatch.setattr(calibrate, "ping_pong_launches", ping_pong)
    monkeypatch.setattr(calibrate, "mpi_available", lambda: "/usr/bin/mpiexec")


def test_a_file_that_matches_the_machine_holds(monkeypatch, tmp_path, capsys):
    _fake_measurements(monkeypatch, 1.0)
    path = tmp_path / "m.toml"
    path.write_text(FILE)
    assert main(["calibrate", "--check", str(path), "--repeats", "2"]) == 0
    out = capsys.readouterr().out
    assert "9 of 9 keys inside the file's intervals (100%)" in out and "holds on this machine now" in out
    assert "2 key(s) marked '-' have no interval in the file" in out  # core_bandwidth, the level's bandwidth
    for key in ("peak_flops", "caches.levels[1].core_bandwidth", "network.intra_node 1048576 B one-way"):
        assert key in out


def test_a_machine_that_moved_is_said_so_with_the_keys_and_what_to_do(monkeypatch, tmp_path, capsys):
    _fake_measurements(monkeypatch, 0.4)  # everything 2.5x slower than the file says
    path = tmp_path / "m.toml"
    path.write_text(FILE)
    assert main(["calibrate", "--check", str(path), "--repeats", "2"]) == 3
    out = capsys.readouterr().out
    assert "the machine has moved from" in out and f"uml2perf calibrate -o {path}" in out
    assert "peak_flops" in out.split("the machine has moved from", 1)[1]


def test_the_corners_bound_a_message_between_the_intervals_ends():
    machine = Machine.from_dict(tomllib.loads(FILE))
    fast, slow = drift.corner(machine, True), drift.corner(machine, False)
    for size in drift.CHECK_SIZES:
        times = [m.intra_node.message_time(size, 4096) for m in (fast, machine, slow)]
        assert times[0] < times[1] < times[2]
    assert fast.peak_flops == machine.peak_flops  # only the network's keys move to the corners


def test_holding_needs_most_keys_inside():
    inside = drift.KeyCheck("a", "B/s", 1.0, 0.9, 1.1, 1.0)
    outside = drift.KeyCheck("b", "B/s", 1.0, 0.9, 1.1, 2.0)
    assert drift.holds([inside] * 8 + [outside] * 2)
    assert not drift.holds([inside] * 7 + [outside] * 3)
    assert not drift.holds([])
    assert "nothing to check" in drift.report_lines([], "m.toml")[0]
    plain = drift.KeyCheck("c", "B/s", 1.0, 1.0, 1.0, 5.0)
    assert drift.holds([inside] * 4 + [plain] * 6)  # keys without an interval are not judged
    assert "gives no key an interval" in drift.report_lines([plain], "m.toml")[-1]


def test_check_and_output_are_one_or_the_other(capsys):
    with pytest.raises(SystemExit):
        main(["calibrate", "--check", "a.toml", "-o", "b.toml"])
    assert "not allowed with" in capsys.readouterr().err


def test_a_missing_file_is_an_error_in_words(tmp_path, capsys):
    assert main(["calibrate", "--check", str(tmp_path / "none.toml")]) != 0
    assert "not found" in capsys.readouterr().err


def test_the_quick_measurement_runs_here(monkeypatch, tmp_path):
    """The real measurements, briefly: every key of a calibrate-like file is checked (no MPI)."""
    monkeypatch.setattr(calibrate, "CACHE_SAMPLE_BYTES", 2_000_000)
    machine = Machine.from_dict(tomllib.loads(FILE))
    checks = drift.check_machine(machine, repeats=2, mpi=False)
    assert [c.name for c in checks] == [
        "peak_flops",
        "memory_bandwidth",
        "core_bandwidth",
        "caches.levels[1].core_bandwidth",
        "caches.levels[1].bandwidth",
        "first_touch",
        "call_cost",
    ]
    assert all(c.now > 0 for c in checks)
