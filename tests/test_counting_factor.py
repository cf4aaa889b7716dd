"""How far counted work may be from its counts: the machine's ``counting_factor``.

``uml2perf calibrate`` times a catalogue of numpy lines (``uml2perf.counting``), prices each by
the counts docs/profile.md gives it, and writes ``counting_factor = { value = 1, low, high }``
from the spread of measured over priced time. The value 1 keeps every prediction what its
counts say; the interval widens the prediction interval of counted work only.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

import pytest
from command_helpers import predicted
from runtime_helpers import machine, one_roofline_action, spec

from uml2perf import calibrate, counting
from uml2perf_runtime import Machine, simulate
from uml2perf_runtime.errors import MachineError
from uml2perf_runtime.platform.roofline import alone_seconds

ROOT = Path(__file__).resolve().parents[1]


def host(**kwargs: Any) -> Machine:
    values = {
        "peak_flops": 1e10,
        "memory_bandwidth": 1e10,
        "first_touch": ((math.inf, 2e9),),
        "call_cost": 1e-6,
    }
    return machine(cores=1, **(values | kwargs))


@pytest.mark.parametrize(
    "tags, counted",
    [
        ({"flops": 1e7}, 1e-3),
        ({"bytes": 1e7}, 1e-3),
        ({"calls": 100, "fresh": 2e6}, 1e-4 + 1e-3),
        ({"flops": 1e7, "cost": 5e-3}, 1e-3),  # a measured cost is not counted work
    ],
)
def test_the_factor_multiplies_counted_work_only(tags: dict[str, Any], counted: float) -> None:
    main, elems = one_roofline_action(**tags)
    plain = simulate(spec(main, elems), machine=host(), procs=1).time
    doubled = simulate(spec(main, elems), machine=host(counting_factor=2.0), procs=1).time
    assert doubled - plain == pytest.approx(counted)


BASE = 'name = "m"\nnodes = 1\ncores_per_node = 2\npeak_flops = 1e10\nmemory_bandwidth = 1e10\n'


def test_an_uncertain_factor_widens_the_interval_of_counted_work_and_names_itself(tmp_path: Path) -> None:
    machine_file = tmp_path / "m.toml"
    machine_file.write_text(BASE + "counting_factor = { value = 1, low = 0.5, high = 3 }\n")
    exact = tmp_path / "exact.toml"
    exact.write_text(BASE)
    model = ROOT / "samples" / "relax.uml"
    sure = predicted(model, "--machine", exact, "--procs", "2")
    unsure = predicted(model, "--machine", machine_file, "--procs", "2", "--samples", "40")
    assert unsure["time"] == sure["time"]  # the prediction is what the counts say
    assert "interval" not in sure
    low, high = unsure["interval"]["low"], unsure["interval"]["high"]
    assert low < unsure["time"] < high and high / low > 2
    assert unsure["sensitivity"][0]["input"].endswith("counting_factor")


@pytest.mark.parametrize(
    "text", ["counting_factor = 0\n", "counting_factor = -2\n", 'counting_factor = "x"\n']
)
def test_a_bad_factor_is_refused_with_the_key(tmp_path: Path, text: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(BASE + text)
    with pytest.raises(MachineError, match="counting_factor"):
        Machine.load(path)


def _values(machine_text: str) -> dict[str, calibrate.Measured]:
    """Calibrate's values for a machine (its rates as measured keys), without measuring anything."""
    data = tomllib.loads(machine_text)
    m = calibrate.Measured

    def key(value: float) -> calibrate.Measured:
        return m(value, value, value, "given")

    return {
        "speed": key(1.0),
        "core_flops": key(data["peak_flops"]),
        "peak_flops": key(2 * data["peak_flops"]),
        "memory_bandwidth": key(data["memory_bandwidth"]),
        "core_bandwidth": key(data["memory_bandwidth"]),
        "first_touch": key(2e9),
        **{f"first_touch {block}": key(2e9) for block in calibrate.FIRST_TOUCH_BLOCKS},
        "call_cost": key(4e-7),
        "thread_start": key(0.0),
        "thread_handoff": key(0.0),
        "thread_overhead": key(0.0),
        "thread_wakeup": key(0.0),
    }


def test_calibrate_writes_the_spread_of_the_catalogue_around_one() -> None:
    """Kernels measured at known multiples of their price: the interval is those multiples' spread."""
    values = _values(BASE)
    priced = Machine.from_dict(tomllib.loads(calibrate.machine_text(values)))
    factors = [0.5, 1.0, 1.0, 2.0, 4.0]
    for index, kernel in enumerate(counting.COUNTED_KERNELS):
        for n in counting.SIZES:
            c = kernel.counted(n, 0.0)
            seconds = alone_seconds(priced, c.flops, c.bytes, c.footprint, c.fresh, c.allocation, c.calls)
            values[f"{calibrate.COUNTED_PREFIX}{kernel.name} {n}"] = calibrate.Measured.of(
                [seconds * factors[index % len(factors)]], "x"
            )
    found = calibrate.counting_factor(values)
    assert found is not None and found.median == 1.0
    assert found.low == pytest.approx(0.5) and found.high == pytest.approx(4.0)
    values["counting_factor"] = found
    text = calibrate.machine_text(values)
    assert "counting_factor = { value = 1, low = 0.5, high = 4 }" in text
    loaded = Machine.from_dict(tomllib.loads(text))
    assert loaded.counting_factor == 1.0 and "counting_factor" in loaded.uncertain.names


def test_calibrate_writes_no_factor_without_the_whole_catalogue() -> None:
    values = _values(BASE)
    assert calibrate.counting_factor(values) is None
    values[f"{calibrate.COUNTED_PREFIX}copy 256"] = calibrate.Measured.of([1e-6], "x")
    assert calibrate.counting_factor(values) is None


def test_the_weights_of_array_operations_are_counted_in_their_kernels() -> None:
    """docs/profile.md: a running sum counts calibrate's weight per element on top of its bytes."""
    for kernel in counting.COUNTED_KERNELS:  # a weight is counted over the kernel's own elements
        assert (kernel.counts(4096, 0.0).weighed > 0) == bool(kernel.weight), kernel.name
    running = next(k for k in counting.COUNTED_KERNELS if k.name == "running_sum")
    bare = running.counted(1000, 0.0)
    weighed = running.counted(1000, 0.0, {"cumsum": 150.0})
    assert weighed.flops == bare.flops + 150.0 * 1000 and weighed.bytes == bare.bytes
    # the weight of the size nearest the kernel's arrays counts, as docs/profile.md says
    sized = {"cumsum": 150.0, "cumsum 2 MiB": 250.0, "cumsum 32 MiB": 400.0}
    for n, weight in ((1000, 150.0), (200_000, 250.0), (3_000_000, 400.0)):
        assert running.counted(n, 0.0, sized).flops == running.counted(n, 0.0).flops + weight * n
    assert running.counted(3_000_000, 0.0, {"cumsum": 150.0}).flops == running.counted(
        3_000_000, 0.0
    ).flops + (150.0 * 3_000_000)
    assert counting.nearest_weight(sized, "where", 1e6) == 0.0
    text = (
        "# of 8, a gather through a permutation, a square transpose): "
        "cumsum 144, sum(axis=1) 93.7, gather 37, where 60, x[mask] 169, block 39\n"
    )
    assert counting.weights_in(text) == {
        "cumsum": 144.0,
        "sum(axis=1)": 93.7,
        "gather": 37.0,
        "where": 60.0,
        "x[mask]": 169.0,
        "block": 39.0,
    }


def test_the_catalogue_prices_a_named_operation_at_the_machine_s_rate() -> None:
    """With ``[operations]`` a kernel's operation is priced as an ``operations`` tag names it."""
    m = host(operations={"cumsum": ((math.inf, 2e-9),)})
    n = 1000
    seconds = {f"{k.name} {n}": 1e-3 for k in counting.COUNTED_KERNELS}
    table = counting.ratios(m, seconds, (n,), {"cumsum": 500.0})
    running = next(k for k in counting.COUNTED_KERNELS if k.name == "running_sum")
    c = running.counts(n, 0.0)
    priced = alone_seconds(m, c.flops, c.bytes, c.footprint, c.fresh, c.allocation, c.calls) + n * 2e-9
    assert table["running_sum"][n] == pytest.approx(1e-3 / priced)  # the flops weight is not counted too
