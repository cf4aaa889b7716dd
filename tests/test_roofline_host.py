"""Host costs of hardware-aware actions: ``fresh`` bytes first touched and ``calls`` library calls.

The machine keys behind them are ``first_touch`` (bytes/s, one number or ranges by the size of
the allocation) and ``call_cost`` (seconds per call).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from command_helpers import converted, predicted, uml2perf
from runtime_helpers import machine, one_roofline_action, spec

from uml2perf_runtime import Machine, simulate
from uml2perf_runtime.errors import MachineError, SimulationError
from uml2perf_runtime.platform.roofline import sized

ROOT = Path(__file__).resolve().parents[1]

#: small pages below 4 MiB (2 GB/s), huge pages from there on (16 GB/s)
TOUCH = ((4194303.0, 2e9), (float("inf"), 1.6e10))


def host(cores: int = 1, **kwargs: Any) -> Machine:
    values: dict[str, Any] = {
        "peak_flops": 1e10,
        "memory_bandwidth": 1e10,
        "first_touch": TOUCH,
        "call_cost": 1e-6,
    } | kwargs
    return machine(cores=cores, **values)


@pytest.mark.parametrize(
    "tags, seconds",
    [
        ({"fresh": 1 << 20}, (1 << 20) / 2e9),  # one allocation of 1 MiB: small pages
        ({"fresh": 8 << 20}, (8 << 20) / 1.6e10),  # one allocation of 8 MiB: huge pages
        ({"fresh": 8 << 20, "allocation": 1 << 20}, (8 << 20) / 2e9),  # eight of 1 MiB
        ({"calls": 40}, 40e-6),
        ({"bytes": 1e6, "fresh": 1e6, "calls": 3}, 1e6 / 1e10 + 1e6 / 2e9 + 3e-6),  # added to the roofline
        ({"flops": 1e7, "calls": 2, "cost": 1e-3}, 1e7 / 1e10 + 2e-6 + 1e-3),
    ],
)
def test_host_costs_add_to_the_roofline_time(tags: dict[str, Any], seconds: float) -> None:
    main, elems = one_roofline_action(**tags)
    assert simulate(spec(main, elems), machine=host(), procs=1).time == pytest.approx(seconds)


def test_host_costs_share_the_core_like_any_computation() -> None:
    """Two processes on one core: each one's first touch takes twice as long."""
    main, elems = one_roofline_action(fresh=1 << 20)
    alone = simulate(spec(main, elems), machine=host(cores=2), procs=2).time
    crowded = simulate(spec(main, elems), machine=host(cores=1), procs=2).time
    assert crowded == pytest.approx(2 * alone)


def test_without_the_tags_nothing_changes() -> None:
    main, elems = one_roofline_action(bytes=1e6, flops=1e6)
    plain = simulate(spec(main, elems), machine=host(first_touch=(), call_cost=None), procs=1).time
    assert simulate(spec(main, elems), machine=host(), procs=1).time == plain == pytest.approx(1e-4)


@pytest.mark.parametrize(
    "tags, key",
    [({"fresh": 4096}, "first_touch"), ({"calls": 1}, "call_cost")],
)
def test_a_tag_without_its_machine_key_says_which_key(tags: dict[str, Any], key: str) -> None:
    main, elems = one_roofline_action(**tags)
    bare = machine(cores=1, peak_flops=1e10, memory_bandwidth=1e10)
    with pytest.raises(MachineError, match=f"has no '{key}'"):
        simulate(spec(main, elems), machine=bare, procs=1)


@pytest.mark.parametrize("tag", ["fresh", "allocation", "calls"])
def test_a_negative_tag_names_the_element(tag: str) -> None:
    tags = {"fresh": 4096, tag: -1}
    main, elems = one_roofline_action(**tags)
    with pytest.raises(SimulationError, match=f"{tag} of 'K' .*is -1"):
        simulate(spec(main, elems), machine=host(), procs=1)


def test_sized_picks_the_first_range_that_holds_the_size() -> None:
    assert sized(TOUCH, 1) == 2e9
    assert sized(TOUCH, 4194303) == 2e9
    assert sized(TOUCH, 4194304) == 1.6e10
    assert sized((), 1) is None


BASE = 'name = "m"\nnodes = 1\ncores_per_node = 2\n'


@pytest.mark.parametrize(
    "text, ranges, call_cost",
    [
        ('first_touch = "2 GB/s"\ncall_cost = "0.5 us"\n', ((float("inf"), 2e9),), 5e-7),
        (
            'first_touch = [{ up_to = "4 MiB", bandwidth = 2e9 }, '
            "{ bandwidth = { value = 1.6e10, low = 1e10, high = 2e10 } }]\n",
            ((4194304.0, 2e9), (float("inf"), 1.6e10)),
            None,
        ),
    ],
)
def test_machine_files_give_first_touch_and_call_cost(
    tmp_path: Path, text: str, ranges: tuple[tuple[float, float], ...], call_cost: float | None
) -> None:
    path = tmp_path / "m.toml"
    path.write_text(BASE + text)
    loaded = Machine.load(path)
    assert loaded.first_touch == ranges
    assert loaded.call_cost == call_cost
    again = tmp_path / "again.toml"
    assert Machine.from_dict(loaded.to_dict(), str(again)).first_touch == ranges


def test_an_uncertain_first_touch_is_sampled(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    path.write_text(BASE + "first_touch = { value = 2e9, low = 1e9, high = 3e9 }\n")
    found = Machine.load(path).uncertain
    assert found is not None and any("first_touch" in name for name in found.names)


@pytest.mark.parametrize(
    "text, words",
    [
        ("first_touch = 0\n", "first_touch must be a positive number"),
        ("first_touch = []\n", "needs 1 to"),
        ("first_touch = [{ bandwidth = 1e9 }, { up_to = 5, bandwidth = 2e9 }]\n", "needs 'up_to'"),
        ("first_touch = [{ up_to = 5, bandwidth = 1e9 }, { bandwidth = -2 }]\n", "must be a positive number"),
        ("first_touch = [{ up_to = 5, rate = 1e9 }, { bandwidth = 2e9 }]\n", "rate"),
        ("call_cost = -1\n", "call_cost must be a positive number"),
    ],
)
def test_bad_host_keys_are_refused_with_the_key(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(BASE + text)
    with pytest.raises(MachineError, match=words):
        Machine.load(path)


def test_the_tags_reach_the_generated_call_and_the_prediction(tmp_path: Path) -> None:
    """samples/kernels.uml with fresh and calls on its first roofline action: the time grows by both."""
    text = (ROOT / "samples" / "kernels.uml").read_text()
    model = tmp_path / "kernels.uml"
    model.write_text(text.replace('bytes="16 * N * N"', 'bytes="16 * N * N" fresh="1000000" calls="1000"', 1))
    plain = tmp_path / "plain.uml"
    plain.write_text(text)
    machine_file = tmp_path / "m.toml"
    machine_file.write_text(
        BASE + "memory_bandwidth = 4e10\ncore_bandwidth = 3e10\npeak_flops = 1e12\n"
        "first_touch = 1e9\ncall_cost = 1e-6\n"
    )

    code = converted(model, tmp_path / "kernels.py")
    assert "fresh=1000000" in code and "calls=1000" in code
    # every call of that action adds 1 MB / 1 GB/s + 1000 x 1 us = 2 ms
    assert predicted(model, "--machine", machine_file)["time"] > (
        predicted(plain, "--machine", machine_file)["time"] + 1.9e-3
    )


@pytest.mark.parametrize("tags", ['calls="12"', 'fresh="1048576"'])
def test_check_counts_host_tags_as_a_cost(tmp_path: Path, tags: str) -> None:
    """An action timed by its calls or its fresh memory alone takes time: no "no cost" warning."""
    text = (ROOT / "samples" / "relax.uml").read_text()
    model = tmp_path / "host.uml"
    model.write_text(text.replace('flops="2 * N" bytes="8 * N" footprint="16 * N"', tags, 1))
    done = uml2perf("check", model)
    assert done.returncode == 0, done.stderr
    assert "has no cost" not in done.stdout + done.stderr
