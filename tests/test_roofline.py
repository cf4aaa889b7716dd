"""Roofline actions, shared memory bandwidth, devices and automatic mapping, against hand-computed times."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from runtime_helpers import elements, machine, spec

from uml2perf_runtime import Machine, simulate
from uml2perf_runtime.errors import MachineError, SimulationError
from uml2perf_runtime.platform.machine import Device, Link
from uml2perf_runtime.platform.mapping import choose_mapping

ROOT = Path(__file__).resolve().parents[1]


def node(
    cores: int = 4,
    *,
    flops: float = 1e9,
    bandwidth: float = 1e9,
    cap: float | None = None,
    speed: float = 1.0,
    devices: dict[str, Device] | None = None,
) -> Machine:
    return machine(
        cores=cores,
        speed=speed,
        peak_flops=flops,
        memory_bandwidth=bandwidth,
        core_bandwidth=cap,
        devices=devices or {},
    )


def gpu(
    count: int = 1, *, flops: float = 1e12, bandwidth: float = 1e12, latency: float = 1e-3, link: float = 1e9
) -> dict[str, Device]:
    return {"gpu": Device("gpu", count, flops, bandwidth, Link(latency, link))}


def finish(results: Any) -> list[float]:
    return [row["time"] for row in results.per_process]


def test_a_compute_bound_and_a_memory_bound_action() -> None:
    (k,) = elements("K")

    def compute_bound(p: Any, v: Any) -> Any:
        yield from p.roofline(k, flops=2e9, bytes=1e8)

    def memory_bound(p: Any, v: Any) -> Any:
        yield from p.roofline(k, 0.25, flops=1e8, bytes=3e9)

    assert simulate(spec(compute_bound, [k]), machine=node(), procs=1).time == pytest.approx(2.0)
    # max(0.1 s of flops, 3 s of bytes), then the cost tag's 0.25 s
    assert simulate(spec(memory_bound, [k]), machine=node(), procs=1).time == pytest.approx(3.25)


def test_speed_scales_the_flops_side_only() -> None:
    (k,) = elements("K")

    def flops_only(p: Any, v: Any) -> Any:
        yield from p.roofline(k, flops=1e9)

    def bytes_only(p: Any, v: Any) -> Any:
        yield from p.roofline(k, bytes=1e9)

    assert simulate(spec(flops_only, [k]), machine=node(speed=2.0), procs=1).time == pytest.approx(0.5)
    assert simulate(spec(bytes_only, [k]), machine=node(speed=2.0), procs=1).time == pytest.approx(1.0)


def test_two_streams_share_the_node_bandwidth_as_they_start_and_end() -> None:
    work, k = elements("Work", "K")

    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.roofline(k, bytes=2e9)
        else:
            yield from p.compute(work, 0.5)
            yield from p.roofline(k, bytes=0.5e9)

    r = simulate(spec(main, [work, k]), machine=node(bandwidth=2e9), procs=2)
    # 0-0.5 s: process 0 alone at 2 GB/s (1 GB); then 1 GB/s each: process 1 is done at 1.0 s,
    # process 0 has 0.5 GB left at 2 GB/s again: 1.25 s
    assert finish(r) == pytest.approx([1.25, 1.0])


def test_four_streams_with_a_per_core_cap() -> None:
    (k,) = elements("K")
    sizes = (1e9, 2e9, 3e9, 3e9)

    def main(p: Any, v: Any) -> Any:
        yield from p.roofline(k, bytes=sizes[p.pid])

    r = simulate(spec(main, [k]), machine=node(bandwidth=4e9, cap=1.5e9), procs=4)
    # 4 streams: 1 GB/s each until 1 s; 3 streams: min(1.5, 4/3) GB/s, process 1 ends at 1.75 s;
    # 2 streams: capped at 1.5 GB/s, 1 GB left each: 1.75 + 2/3 s
    assert finish(r) == pytest.approx([1.0, 1.75, 1.75 + 2 / 3, 1.75 + 2 / 3])


def test_device_kernel_with_transfers() -> None:
    (k,) = elements("K")

    def main(p: Any, v: Any) -> Any:
        yield from p.roofline(k, flops=1e12, bytes=1e9, device="gpu", copy_in=1e9, copy_out=5e8)

    r = simulate(spec(main, [k]), machine=node(devices=gpu()), procs=1)
    # copy in 1 ms + 1 s, kernel max(1 s, 1 ms), copy out 1 ms + 0.5 s
    assert r.time == pytest.approx(2.502)


def test_a_device_shared_by_two_processes_queues() -> None:
    (k,) = elements("K")

    def main(p: Any, v: Any) -> Any:
        yield from p.roofline(k, flops=1e12, device="gpu")

    r = simulate(spec(main, [k]), machine=node(devices=gpu(count=1)), procs=2)
    assert sorted(finish(r)) == pytest.approx([1.0, 2.0])
    assert sorted(row["wait"] for row in r.per_process) == pytest.approx([0.0, 1.0])
    two = simulate(spec(main, [k]), machine=node(devices=gpu(count=2)), procs=2)
    assert finish(two) == pytest.approx([1.0, 1.0])


def test_transfers_make_the_locally_fastest_device_the_wrong_choice() -> None:
    (k,) = elements("K")

    def main(p: Any, v: Any) -> Any:
        yield from p.roofline(k, flops=1e10, device="auto", copy_in=2e10)

    r = simulate(spec(main, [k]), machine=node(devices=gpu()), procs=1)
    # the kernel alone: 10 s on a core, 0.01 s on the GPU;
    # with its input crossing the link the GPU takes 20.011 s
    assert r.mapping == {"K": "cpu"} and r.time == pytest.approx(10.0)
    assert r.alternatives == pytest.approx({"cpu": 10.0, "gpu": 20.011})


def test_the_mapping_counts_the_whole_model() -> None:
    a, b = elements("A", "B")

    def main(p: Any, v: Any) -> Any:
        yield from p.roofline(a, flops=1e10, device="auto", copy_in=1e9)  # cpu 10 s, gpu 1.011 s
        yield from p.roofline(b, flops=1e8, device="auto", copy_in=1e9)  # cpu 0.1 s, gpu 1.0011 s

    r = simulate(spec(main, [a, b]), machine=node(devices=gpu()), procs=1)
    assert r.mapping == {"A": "gpu", "B": "cpu"}
    assert r.time == pytest.approx(1.0 + 1e-3 + 0.01 + 0.1)
    assert r.alternatives["cpu"] == pytest.approx(10.1) and r.alternatives["gpu"] == pytest.approx(2.0121)


def test_the_stepwise_search_with_look_ahead_matches_exhaustive_on_a_separable_model() -> None:
    costs = {
        (0, None): 3.0,
        (0, "gpu"): 1.0,
        (1, None): 1.0,
        (1, "gpu"): 2.0,
        (2, None): 2.0,
        (2, "gpu"): 0.5,
    }

    def evaluate(mapping: dict[int, str | None]) -> float:
        return sum(costs[(i, d)] for i, d in mapping.items())

    import uml2perf_runtime.platform.mapping as mapping_module

    exhaustive, alternatives = choose_mapping([0, 1, 2], [None, "gpu"], evaluate)
    original = mapping_module.EXHAUSTIVE_LIMIT
    mapping_module.EXHAUSTIVE_LIMIT = 1
    try:
        stepwise, _ = choose_mapping([0, 1, 2], [None, "gpu"], evaluate)
    finally:
        mapping_module.EXHAUSTIVE_LIMIT = original
    assert exhaustive == stepwise == {0: "gpu", 1: None, 2: "gpu"}
    assert alternatives == {"cpu": 6.0, "gpu": 3.5}


@pytest.mark.parametrize(
    "tags, words",
    [
        ({"flops": -1.0}, "flops"),
        ({"bytes": float("nan")}, "bytes"),
        ({"flops": 1.0, "device": "fpga"}, "devices.fpga"),
    ],
)
def test_bad_values_name_the_element_or_key(tags: dict[str, Any], words: str) -> None:
    (k,) = elements("K")

    def main(p: Any, v: Any) -> Any:
        yield from p.roofline(k, **tags)

    with pytest.raises(SimulationError, match=words):
        simulate(spec(main, [k]), machine=node(devices=gpu()), procs=1)


def test_a_missing_machine_key_is_named() -> None:
    (k,) = elements("K")

    def main(p: Any, v: Any) -> Any:
        yield from p.roofline(k, bytes=1.0)

    with pytest.raises(MachineError, match="memory_bandwidth"):
        simulate(spec(main, [k]), machine=machine(cores=1), procs=1)


@pytest.mark.parametrize(
    "text, words",
    [
        ("peak_flops = 0", "peak_flops"),
        ("memory_bandwidth = -1", "memory_bandwidth"),
        ("core_bandwidth = inf", "core_bandwidth"),
        ("[devices.gpu]\ncount = 1\npeak_flops = 1e12\nmemory_bandwidth = 1e12", "link"),
        (
            "[devices.auto]\ncount = 1\npeak_flops = 1\nmemory_bandwidth = 1\n"
            "link = { latency = 0, bandwidth = 1 }",
            "plain name",
        ),
    ],
)
def test_machine_file_keys_are_checked(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(f'name = "m"\nnodes = 1\ncores_per_node = 2\n{text}\n')
    with pytest.raises(MachineError, match=words):
        Machine.load(path)


def test_the_sample_machine_and_model() -> None:
    m = Machine.load("gpu-node")
    assert m.devices["gpu"].count == 4 and m.peak_flops == pytest.approx(39.2e9)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "uml2perf",
            "run",
            str(ROOT / "samples" / "kernels.uml"),
            "--machine",
            "gpu-node",
            "--procs",
            "4",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["mapping"] == {"Stencil": "gpu", "Map": "gpu", "Reduce": "gpu"}
    assert data["time"] == pytest.approx(min(data["alternatives"].values()))
    crowded = subprocess.run(
        [
            sys.executable,
            "-m",
            "uml2perf",
            "run",
            str(ROOT / "samples" / "kernels.uml"),
            "--machine",
            "gpu-node",
            "--procs",
            "16",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(crowded.stdout)["mapping"]["Stencil"] == "cpu"  # 16 processes would queue for 4 GPUs


def test_the_analytic_path_declines_roofline_actions() -> None:
    from uml2perf.api import read
    from uml2perf.generation import generate
    from uml2perf.sweep import ModelSource, run_sweep

    text = generate(read(ROOT / "samples" / "kernels.uml"), "python").text
    result = run_sweep(
        ModelSource(text, "kernels.py"), Machine.load("gpu-node"), {"procs": [1, 2]}, workers=1
    )
    assert all(row["method"] == "simulation" for row in result.rows)


def test_check_counts_flops_and_bytes_as_timed_and_convert_refuses_an_expression_as_device(
    tmp_path: Path,
) -> None:
    sample = (ROOT / "samples" / "kernels.uml").read_text()
    done = subprocess.run(
        [sys.executable, "-m", "uml2perf", "check", str(ROOT / "samples" / "kernels.uml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "0 warning(s)" in done.stdout and "4 of 4 actions" in done.stdout
    bad = tmp_path / "bad.uml"
    bad.write_text(sample.replace('device="auto"', 'device="gpu + 1"', 1))
    done = subprocess.run(
        [sys.executable, "-m", "uml2perf", "convert", str(bad), "-o", str(tmp_path / "x.py")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "not a plain name" in done.stderr and not (tmp_path / "x.py").exists()
