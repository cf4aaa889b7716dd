"""When an action's ``fresh`` bytes are new pages: the machine's ``[allocator]``.

A loop's single temporary comes back from the allocator each iteration (no new pages); several
freed together go back to the system once they reach ``reuse_below`` blocks; blocks of
``mapped_from`` bytes or more are always mapped anew.  Without ``[allocator]`` every fresh byte
costs first touch, as before the table existed.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_helpers import machine, one_roofline_action, spec

from uml2perf import calibrate
from uml2perf_runtime import Machine, simulate
from uml2perf_runtime.errors import MachineError
from uml2perf_runtime.platform.machine import Allocator, CacheLevel
from uml2perf_runtime.platform.roofline import alone_seconds

MIB = 1 << 20
TOUCH = ((float("inf"), 2e9),)
GLIBC = Allocator(reuse_below=2, mapped_from=32 * MIB)


def host(**kwargs: Any) -> Machine:
    values: dict[str, Any] = {"peak_flops": 1e10, "memory_bandwidth": 1e10, "first_touch": TOUCH} | kwargs
    return machine(cores=1, **values)


@pytest.mark.parametrize(
    "tags, paid",
    [
        ({"fresh": MIB}, False),  # one temporary: kept by the allocator for the next iteration
        ({"fresh": MIB, "allocation": MIB}, False),
        ({"fresh": 2 * MIB, "allocation": MIB}, True),  # two freed together: given back
        ({"fresh": 3 * MIB, "allocation": MIB}, True),
        ({"fresh": 32 * MIB}, True),  # always mapped anew
        ({"fresh": 48 * MIB, "allocation": 48 * MIB}, True),
    ],
)
def test_fresh_bytes_cost_first_touch_only_when_they_are_new_pages(tags: dict[str, Any], paid: bool) -> None:
    main, elems = one_roofline_action(**tags)
    time = simulate(spec(main, elems), machine=host(allocator=GLIBC), procs=1).time
    assert time == pytest.approx(tags["fresh"] / 2e9 if paid else 0.0)


def test_without_an_allocator_every_fresh_byte_costs_as_before() -> None:
    main, elems = one_roofline_action(fresh=MIB)
    assert simulate(spec(main, elems), machine=host(), procs=1).time == pytest.approx(MIB / 2e9)


BASE = 'name = "m"\nnodes = 1\ncores_per_node = 2\nfirst_touch = 2e9\n'


@pytest.mark.parametrize(
    "text, reuse, mapped",
    [
        ('[allocator]\nreuse_below = 2\nmapped_from = "32 MiB"\n', 2.0, 32.0 * MIB),
        ("[allocator]\nreuse_below = 3\n", 3.0, math.inf),
        ("[allocator]\nreuse_below = 0\n", 0.0, math.inf),  # nothing kept: every fresh byte is new
    ],
)
def test_machine_files_give_the_allocator(tmp_path: Path, text: str, reuse: float, mapped: float) -> None:
    path = tmp_path / "m.toml"
    path.write_text(BASE + text)
    loaded = Machine.load(path)
    assert loaded.allocator == Allocator(reuse, mapped)
    assert Machine.from_dict(loaded.to_dict(), "again").allocator == loaded.allocator


@pytest.mark.parametrize(
    "text, words",
    [
        ("[allocator]\nreuse_below = -1\n", "reuse_below must be a number"),
        ('[allocator]\nreuse_below = "two"\n', "reuse_below must be a number"),
        ("[allocator]\nmapped_from = 0\n", "mapped_from must be a number of bytes"),
        ("[allocator]\nkept = 2\n", "unknown key 'kept' in \\[allocator\\]"),
        ("allocator = 2\n", "allocator"),
    ],
)
def test_bad_allocator_tables_are_refused_with_the_key(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(BASE + text)
    with pytest.raises(MachineError, match=words):
        Machine.load(path)


LEVELS = (CacheLevel(256 * 1024, 8e10, 1.6e11), CacheLevel(8 * MIB, 4e10, 6e10))


@settings(max_examples=40, deadline=None)
@given(
    flops=st.sampled_from([0.0, 1e3, 1e6, 1e9]),
    nbytes=st.sampled_from([0.0, 1e3, 1e5, 1e7, 1e9]),
    footprint=st.sampled_from([None, 1e4, 1e6, 1e8]),
    fresh=st.sampled_from([0.0, MIB, 3 * MIB, 64 * MIB]),
    calls=st.sampled_from([0.0, 1.0, 17.0]),
    speed=st.sampled_from([0.5, 1.0, 2.0]),
)
def test_alone_seconds_is_the_simulated_time_of_one_process(
    flops: float, nbytes: float, footprint: float | None, fresh: float, calls: float, speed: float
) -> None:
    """What calibrate prices its counted kernels with agrees with the simulator on an idle node."""
    tags: dict[str, Any] = {"flops": flops, "bytes": nbytes, "fresh": fresh, "allocation": MIB}
    tags["calls"] = calls
    if footprint is not None:
        tags["footprint"] = footprint
    m = Machine(
        name="m",
        nodes=1,
        cores_per_node=2,
        speed=speed,
        peak_flops=1e10,
        memory_bandwidth=2e10,
        core_bandwidth=1.2e10,
        caches=LEVELS,
        first_touch=((4 * MIB - 1.0, 2e9), (math.inf, 1e10)),
        call_cost=3e-7,
        allocator=GLIBC,
    )
    main, elems = one_roofline_action(**tags)
    simulated = simulate(spec(main, elems), machine=m, procs=1).time
    priced = alone_seconds(m, flops, nbytes, footprint, fresh, MIB, calls)
    assert priced == pytest.approx(simulated, rel=1e-9, abs=1e-15)


def test_alone_seconds_names_a_missing_key() -> None:
    with pytest.raises(MachineError, match="peak_flops"):
        alone_seconds(machine(cores=1), flops=1.0)


def faults_of(table: dict[tuple[int, int], float | None]) -> Any:
    return lambda block, count, rounds=9: table.get((block, count), 0.0)


def test_calibrate_finds_where_freed_blocks_go_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two blocks freed together fault pages in, one does not; 32 MiB blocks always do."""
    mapped = {(b, 1): 528.0 for b in calibrate.MAPPED_BLOCKS if b >= 32 * MIB}
    table = {(MIB, 2): 480.0, (MIB, 3): 736.0} | mapped
    monkeypatch.setattr(calibrate, "_iteration_faults", faults_of(table))
    found = calibrate.allocator_reuse()
    assert found["reuse_below"].median == 2
    assert found["mapped_from"].median == 32 * MIB
    text = "\n".join(calibrate.allocator_text(found))
    assert "[allocator]" in text and "reuse_below = 2" in text and f"mapped_from = {32 * MIB}" in text
    path_text = BASE + text + "\n"
    assert Machine.from_dict(__import__("tomllib").loads(path_text)).allocator == GLIBC


def test_calibrate_writes_no_allocator_when_nothing_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """An allocator that gives every freed block back: every fresh byte costs, no table needed."""
    monkeypatch.setattr(calibrate, "_iteration_faults", lambda block, count, rounds=9: 256.0)
    assert calibrate.allocator_reuse() == {}
    assert calibrate.allocator_text({}) == []


def test_calibrate_says_nothing_when_the_probe_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(calibrate, "_iteration_faults", lambda block, count, rounds=9: None)
    assert calibrate.allocator_reuse() == {}


def test_the_probe_counts_page_faults_of_a_real_loop() -> None:
    """One block of 1 MiB reused each iteration faults (almost) nothing in; 64 MiB faults pages in."""
    kept = calibrate._iteration_faults(MIB, 1)
    mapped = calibrate._iteration_faults(64 * MIB, 1)
    if kept is None or mapped is None:
        pytest.skip("the probe's process could not run here")
    assert mapped > kept
