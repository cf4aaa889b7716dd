"""The cache-aware roofline: ``[caches] levels`` in machine files and the ``footprint`` tag of actions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from command_helpers import converted, predicted
from runtime_helpers import elements, finish_times, machine, one_roofline_action, spec

from uml2perf_runtime import Machine, simulate
from uml2perf_runtime.errors import MachineError
from uml2perf_runtime.platform.machine import CacheLevel
from uml2perf_runtime.platform.roofline import cache_level

ROOT = Path(__file__).resolve().parents[1]

#: two levels: 64 KiB per core at 8 GB/s alone (16 GB/s per node), 1 MiB at 4 GB/s (6 GB/s per node)
LEVELS = (CacheLevel(65536, 8e9, 16e9, "L1"), CacheLevel(1 << 20, 4e9, 6e9, "L2"))


def cached(cores: int = 2, levels: tuple[CacheLevel, ...] = LEVELS, memory: float | None = 1e9) -> Machine:
    return machine(
        cores=cores, peak_flops=1e12, memory_bandwidth=memory, core_bandwidth=memory, caches=levels
    )


@pytest.mark.parametrize(
    "tags, seconds",
    [
        ({"bytes": 32768}, 32768 / 8e9),  # fits the first level
        ({"bytes": 65536}, 65536 / 8e9),  # up_to is inclusive
        ({"bytes": 65537}, 65537 / 4e9),  # the second level
        ({"bytes": 2e6}, 2e6 / 1e9),  # beyond every level: memory
        ({"bytes": 2e6, "footprint": 4096}, 2e6 / 8e9),  # many sweeps over a small working set
        ({"bytes": 4096, "footprint": 5e6}, 4096 / 1e9),  # a few bytes out of a large one
    ],
)
def test_the_working_set_picks_the_level(tags: dict[str, Any], seconds: float) -> None:
    main, elems = one_roofline_action(**tags)
    assert simulate(spec(main, elems), machine=cached(), procs=1).time == pytest.approx(seconds)


def test_without_caches_every_byte_streams_from_memory_as_before() -> None:
    main, elems = one_roofline_action(bytes=32768, footprint=1)
    assert simulate(spec(main, elems), machine=cached(levels=()), procs=1).time == pytest.approx(32768 / 1e9)


def test_streams_of_one_level_share_its_node_bandwidth_and_levels_do_not_share() -> None:
    (k,) = elements("K")

    def same_level(p: Any, v: Any) -> Any:
        yield from p.roofline(k, bytes=6e6, footprint=1 << 20)

    # two streams in the second level: min(4 GB/s, 6 GB/s / 2) = 3 GB/s each
    r = simulate(spec(same_level, [k]), machine=cached(), procs=2)
    assert finish_times(r) == pytest.approx([2e-3, 2e-3])

    def other_levels(p: Any, v: Any) -> Any:
        yield from p.roofline(k, bytes=8e6, footprint=1024 if p.pid == 0 else 1 << 20)

    # one stream in each level: each at its core rate, 8 GB/s and 4 GB/s
    r = simulate(spec(other_levels, [k]), machine=cached(), procs=2)
    assert finish_times(r) == pytest.approx([1e-3, 2e-3])


def test_flops_still_bound_a_cached_action() -> None:
    main, elems = one_roofline_action(bytes=1024, flops=1e9)
    assert simulate(spec(main, elems), machine=cached(), procs=1).time == pytest.approx(1e-3)


def test_a_working_set_beyond_the_caches_needs_the_memory_bandwidth() -> None:
    main, elems = one_roofline_action(bytes=1e7)
    with pytest.raises(MachineError, match="memory_bandwidth"):
        simulate(spec(main, elems), machine=cached(memory=None), procs=1)
    small, elems = one_roofline_action(bytes=1024)
    assert simulate(spec(small, elems), machine=cached(memory=None), procs=1).time == pytest.approx(
        1024 / 8e9
    )


def test_a_bad_footprint_names_the_element() -> None:
    from uml2perf_runtime.errors import SimulationError

    main, elems = one_roofline_action(bytes=1024, footprint=-5)
    with pytest.raises(SimulationError, match="footprint of 'K' .*is -5"):
        simulate(spec(main, elems), machine=cached(), procs=1)


def test_cache_level_lookup() -> None:
    assert [cache_level(LEVELS, n) for n in (0, 65536, 65537, 1 << 20, (1 << 20) + 1)] == [0, 0, 1, 1, -1]
    assert cache_level((), 1) == -1


MACHINE = """name = "m"
nodes = 1
cores_per_node = 2
memory_bandwidth = 4e10
core_bandwidth = 3e10
[caches]
levels = [
  { name = "L1", up_to = "64 KiB", core_bandwidth = "80 GB/s", bandwidth = 1.6e11 },
  { up_to = 1048576, core_bandwidth = { value = 9e10, low = 8e10, high = 1e11 }, bandwidth = 1.7e11 },
]
"""


def test_a_machine_file_with_levels_reads_units_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    path.write_text(MACHINE)
    m = Machine.load(path)
    assert m.caches == (CacheLevel(65536, 8e10, 1.6e11, "L1"), CacheLevel(1048576, 9e10, 1.7e11))
    again = Machine.from_dict(m.to_dict(), source="again")
    assert again.caches == m.caches and again.to_dict() == m.to_dict()
    assert m.caches[0].describe() == "L1 (up to 65,536 bytes per core)"
    # an interval in a level is an uncertain input, drawn like any other machine value
    assert m.uncertain is not None and m.uncertain.names == ["caches.levels[2].core_bandwidth"]
    low = m.uncertain.draw([8e10])
    assert low.caches[1].core_bandwidth == pytest.approx(8e10) and low.caches[0] == m.caches[0]


@pytest.mark.parametrize(
    "levels, words",
    [
        ("levels = 3", "list of tables"),
        ("levels = [{ up_to = 1024, core_bandwidth = 1e9 }]", "needs 'bandwidth'"),
        ("levels = [{ up_to = 0, core_bandwidth = 1e9, bandwidth = 1e9 }]", "up_to must be a whole number"),
        (
            "levels = [{ up_to = 1024, core_bandwidth = -1, bandwidth = 1e9 }]",
            "core_bandwidth must be a positive",
        ),
        ("levels = [{ up_to = 1024, core_bandwith = 1, bandwidth = 1e9 }]", "did you mean 'core_bandwidth'"),
        (
            "levels = [{ up_to = 4096, core_bandwidth = 1e9, bandwidth = 1e9 },"
            " { up_to = 1024, core_bandwidth = 1e9, bandwidth = 1e9 }]",
            "not above the level before",
        ),
        ("level = []", "did you mean 'levels'"),
        (
            "levels = ["
            + ", ".join(f"{{ up_to = {i}, core_bandwidth = 1, bandwidth = 1 }}" for i in range(1, 18))
            + "]",
            "17 levels, more than 16",
        ),
    ],
)
def test_bad_levels_are_named(tmp_path: Path, levels: str, words: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(f'name = "m"\nnodes = 1\ncores_per_node = 2\n[caches]\n{levels}\n')
    with pytest.raises(MachineError, match=words):
        Machine.load(path)


def test_the_footprint_tag_reaches_the_generated_call_and_the_prediction(tmp_path: Path) -> None:
    """samples/kernels.uml on a CPU-only machine with a cache: a footprint makes the stencil cached."""
    model = tmp_path / "kernels.uml"
    text = (ROOT / "samples" / "kernels.uml").read_text()
    model.write_text(text.replace('bytes="16 * N * N"', 'bytes="16 * N * N" footprint="1024"', 1))
    machine_file = tmp_path / "m.toml"
    machine_file.write_text(
        MACHINE.replace("core_bandwidth = 3e10\n", "core_bandwidth = 3e10\npeak_flops = 1e12\n")
    )

    assert "footprint=1024" in converted(model, tmp_path / "kernels.py")
    plain = tmp_path / "plain.uml"
    plain.write_text(text)
    cached = predicted(model, "--machine", machine_file)["time"]
    assert cached < predicted(plain, "--machine", machine_file)["time"]


def test_processes_sharing_a_core_share_its_caches() -> None:
    """Two processes per core: each 40 KiB working set counts twice, so the second level prices it."""
    main, elems = one_roofline_action(bytes=40960 * 8, footprint=40960)
    alone = simulate(spec(main, elems), machine=cached(cores=2), procs=2)
    crowded = simulate(spec(main, elems), machine=cached(cores=2), procs=4)
    assert finish_times(alone) == pytest.approx([40960 * 8 / 8e9] * 2)
    # four streams in the second level: min(4 GB/s, 6 GB/s / 4) each
    assert finish_times(crowded) == pytest.approx([40960 * 8 / 1.5e9] * 4)
