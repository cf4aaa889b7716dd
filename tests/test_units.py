"""Machine-file values with units, as data sheets write them."""

from __future__ import annotations

from pathlib import Path

import pytest

from uml2perf_runtime import Machine
from uml2perf_runtime.errors import MachineError
from uml2perf_runtime.platform.units import quantity


@pytest.mark.parametrize(
    "text, kind, expected",
    [
        ("1us", "time", 1e-6),
        ("0.5 ms", "time", 5e-4),
        ("100 ns", "time", 1e-7),
        ("2 s", "time", 2.0),
        ("10 Gbit/s", "bandwidth", 1.25e9),
        ("1.25 GB/s", "bandwidth", 1.25e9),
        ("12.5MB/s", "bandwidth", 12.5e6),
        ("1 GiB/s", "bandwidth", 1024.0**3),
        ("64 KiB", "bytes", 65536.0),
        ("4KB", "bytes", 4000.0),
        ("9.7 Tflop/s", "flops", 9.7e12),
        ("39.2 GFLOP/s", "flops", 39.2e9),
        ("300e6", "bandwidth", 300e6),
    ],
)
def test_quantities(text: str, kind: str, expected: float) -> None:
    assert quantity(text, kind) == pytest.approx(expected)


@pytest.mark.parametrize(
    "text, kind",
    [
        ("1 GB/s", "time"),
        ("fast", "bandwidth"),
        ("3 parsecs", "time"),
        ("64 KiB", "bandwidth"),
        ("1e999 s", "time"),
    ],
)
def test_wrong_units_are_refused(text: str, kind: str) -> None:
    with pytest.raises(ValueError):
        quantity(text, kind)


def test_a_machine_file_with_units(tmp_path: Path) -> None:
    path = tmp_path / "units.toml"
    path.write_text(
        'name = "units"\nnodes = 2\ncores_per_node = 4\npeak_flops = "39.2 Gflop/s"\n'
        'memory_bandwidth = "204.8 GB/s"\n'
        '[network]\neager_limit = "64 KiB"\n'
        '[network.intra_node]\nlatency = "0.5us"\nbandwidth = "20 GB/s"\n'
        '[network.inter_node]\nlatency = "2 us"\nbandwidth = "200 Gbit/s"\n'
        '[devices.gpu]\ncount = 1\npeak_flops = "9.7 Tflop/s"\nmemory_bandwidth = "1555 GB/s"\n'
        'link = { latency = "10us", bandwidth = "25 GB/s" }\n'
    )
    m = Machine.load(path)
    assert m.intra_node.latency == pytest.approx(0.5e-6) and m.inter_node.bandwidth == pytest.approx(25e9)
    assert m.eager_limit == 65536 and m.peak_flops == pytest.approx(39.2e9)
    assert m.devices["gpu"].link.latency == pytest.approx(1e-5)


def test_a_unit_of_the_wrong_kind_names_the_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'name = "bad"\nnodes = 1\ncores_per_node = 1\n[network.intra_node]\nlatency = "10 GB/s"\n'
    )
    with pytest.raises(MachineError, match="latency"):
        Machine.load(path)
