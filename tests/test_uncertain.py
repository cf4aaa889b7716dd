"""Uncertain inputs { value, low, high }: how they are read, drawn, and turned into a prediction interval."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

from uml2perf.cli import main
from uml2perf_runtime.errors import MachineError
from uml2perf_runtime.platform.machine import Machine
from uml2perf_runtime.platform.uncertain import Uncertain, latin_hypercube, percentile_interval, sensitivity

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "validation" / "models"

HEAD = 'name = "u"\nnodes = 1\ncores_per_node = 2\n'


@pytest.mark.parametrize("interval", [Uncertain(2.0, 1.5, 3.5), Uncertain(1.0, 0.0, 0.5 + 1.0)])
def test_low_value_high_are_the_5th_50th_95th_percentiles(interval):
    got = interval.quantile(np.array([0.05, 0.5, 0.95]))
    assert got == pytest.approx([interval.low, interval.value, interval.high], rel=1e-9, abs=1e-12)
    draws = latin_hypercube([interval], 4000, seed=1)[:, 0]
    assert np.percentile(draws, [5, 50, 95]) == pytest.approx(
        [interval.low, interval.value, interval.high], rel=0.02, abs=0.01
    )
    assert draws.min() >= 0.0  # times and rates never go below 0


def test_an_interval_out_of_order_is_refused():
    with pytest.raises(ValueError):
        Uncertain(1.0, 2.0, 3.0)


def test_machine_values_accept_intervals_anywhere_with_units():
    text = HEAD + (
        "speed = { value = 1.0, low = 0.9, high = 1.2 }\n"
        "[network]\n"
        'eager_limit = { value = "4 KiB", low = 4096, high = 8192 }\n'
        "[network.intra_node]\n"
        'handshake = { value = "2 us", low = "2 us", high = "2 us" }\n'
        'ranges = [{ up_to = 4096, latency = { value = "0.7 us", low = "0.6 us", high = "1 us" }, '
        "bandwidth = 2e9 }, { latency = 1e-6, bandwidth = { value = 3e9, low = 1e9, high = 4e9 } }]\n"
    )
    machine = Machine.from_dict(tomllib.loads(text), source="m.toml")
    assert machine.speed == 1.0 and machine.eager_limit == 4096
    assert machine.intra_node.handshake == pytest.approx(2e-6)  # no spread: a plain number
    assert machine.intra_node.pieces[0][1] == pytest.approx(0.7e-6)
    uncertain = machine.uncertain
    assert uncertain.names == [
        "speed",
        "network.eager_limit",
        "network.intra_node.ranges[1].latency",
        "network.intra_node.ranges[2].bandwidth",
    ]
    drawn = uncertain.draw([1.1, 5000.4, 0.8e-6, 2e9])
    assert drawn.speed == 1.1 and drawn.eager_limit == 5000
    assert drawn.intra_node.pieces[0][1] == pytest.approx(0.8e-6)
    assert drawn.intra_node.pieces[1][2] == pytest.approx(1 / 2e9)
    assert drawn.uncertain is None
    # the machine at the values is the plain machine of the same numbers
    plain = text.replace("{ value = 1.0, low = 0.9, high = 1.2 }", "1.0")
    assert machine.speed == Machine.from_dict(tomllib.loads(plain), source="m.toml").speed


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("speed = { value = 1.0, low = 1.1, high = 1.2 }", "low <= value <= high"),
        ('speed = { value = "fast" }', "speed"),
        ("[threads]\nstart = { value = 1e-5, low = 2e-5 }", "threads.start"),
    ],
)
def test_bad_intervals_name_the_key(line, words):
    with pytest.raises(MachineError) as caught:
        Machine.from_dict(tomllib.loads(HEAD + line), source="m.toml")
    assert "m.toml" in str(caught.value) and words in str(caught.value)


def test_counts_cannot_be_intervals():
    with pytest.raises(MachineError, match="count"):
        Machine.from_dict(
            tomllib.loads("nodes = 1\ncores_per_node = { value = 2, low = 1, high = 4 }\n"), source="m.toml"
        )


def _run_json(capsys, *args: str) -> dict:
    assert main(["run", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


PINGPONG = [str(MODELS / "pingpong.uml"), "--sidecar", str(MODELS / "pingpong.toml"), "--procs", "2"]


def test_exact_inputs_give_no_interval_and_the_same_prediction(tmp_path, capsys):
    plain = tmp_path / "plain.toml"
    plain.write_text(HEAD + "[network.intra_node]\nlatency = 1e-6\nbandwidth = 2e9\n")
    exact = tmp_path / "exact.toml"
    exact.write_text(
        HEAD + "[network.intra_node]\nlatency = { value = 1e-6, low = 1e-6, high = 1e-6 }\nbandwidth = 2e9\n"
    )
    a = _run_json(capsys, *PINGPONG, "--set", "S=4096", "--machine", str(plain))
    b = _run_json(capsys, *PINGPONG, "--set", "S=4096", "--machine", str(exact))
    assert "interval" not in a and "sensitivity" not in a
    assert "interval" not in b and "sensitivity" not in b
    assert a["time"] == b["time"]  # bit for bit


def _uncertain_machine(tmp_path: Path) -> Path:
    path = tmp_path / "m.toml"
    path.write_text(
        HEAD + "[network.intra_node]\n"
        "latency = { value = 1e-6, low = 0.8e-6, high = 2e-6 }\n"
        "bandwidth = { value = 2e9, low = 1.5e9, high = 2.2e9 }\n"
    )
    return path


def test_run_reports_the_interval_and_the_inputs_that_make_it(tmp_path, capsys):
    machine = _uncertain_machine(tmp_path)
    plain = tmp_path / "plain.toml"
    plain.write_text(HEAD + "[network.intra_node]\nlatency = 1e-6\nbandwidth = 2e9\n")
    small = _run_json(capsys, *PINGPONG, "--set", "S=8", "--machine", str(machine), "--samples", "60")
    at_values = _run_json(capsys, *PINGPONG, "--set", "S=8", "--machine", str(plain))
    assert small["time"] == at_values["time"]  # the prediction is the one at the values
    box = small["interval"]
    assert box["level"] == 0.9 and box["samples"] == 60
    assert box["low"] < small["time"] < box["high"]
    # a small message: the latency makes the width
    assert small["sensitivity"][0]["input"] == "machine network.intra_node.latency"
    assert small["sensitivity"][0]["share"] > 0.9
    large = _run_json(capsys, *PINGPONG, "--set", "S=4194304", "--machine", str(machine), "--samples", "60")
    assert large["sensitivity"][0]["input"] == "machine network.intra_node.bandwidth"
    # a wider level holds a wider interval
    half = _run_json(
        capsys, *PINGPONG, "--set", "S=8", "--machine", str(machine), "--samples", "60", "--level", "0.5"
    )
    assert half["interval"]["high"] - half["interval"]["low"] < box["high"] - box["low"]
    # text: one line with the interval, and the inputs
    assert main(["run", *PINGPONG, "--set", "S=8", "--machine", str(machine), "--samples", "30"]) == 0
    text = capsys.readouterr().out
    assert "(90% interval " in text and ", 30 samples)" in text
    assert "network.intra_node.latency" in text
    # --no-interval: the prediction alone
    plain_run = _run_json(capsys, *PINGPONG, "--set", "S=8", "--machine", str(machine), "--no-interval")
    assert "interval" not in plain_run and plain_run["time"] == small["time"]


def test_too_few_samples_are_refused(tmp_path, capsys):
    assert main(["run", *PINGPONG, "--machine", str(_uncertain_machine(tmp_path)), "--samples", "3"]) != 0
    assert "--samples" in capsys.readouterr().err


def test_analytic_samples_equal_simulated_ones(tmp_path):
    """The analytic path serves the samples of a bulk-synchronous model, with the simulator's times."""
    from uml2perf.api import load_spec
    from uml2perf.intervals import Sampler, uncertain_inputs

    machine = Machine.load(_uncertain_machine(tmp_path))
    spec = load_spec(MODELS / "allreduce.uml", sidecar=MODELS / "allreduce.toml")
    inputs = uncertain_inputs(machine, None, {}, (), "m.toml")
    sampler = Sampler(spec, machine, inputs, 2, None, {"S": 65536, "R": 5}, 0, None, None, {})
    draws = latin_hypercube([inp.interval for inp in inputs], 12, seed=4)
    analytic = sampler.analytic(draws)
    assert analytic is not None
    simulated = [sampler.simulate(i, row) for i, row in enumerate(draws)]
    assert analytic == pytest.approx(simulated, rel=1e-9)


def test_sidecar_variables_and_costs_take_intervals(tmp_path, capsys):
    sidecar = tmp_path / "pool.toml"
    sidecar.write_text(
        (MODELS / "pool.toml")
        .read_text()
        .replace('n = "65536"', "n = { value = 65536, low = 60000, high = 70000 }")
        + '[elements."work"]\ncost = { value = "1e-9 * n", low = "0.8e-9 * n", high = "1.5e-9 * n" }\n'
    )
    out = _run_json(
        capsys, str(MODELS / "pool.uml"), "--sidecar", str(sidecar), "--procs", "1", "--samples", "50"
    )
    assert out["time"] > 0 and out["interval"]["low"] < out["time"] < out["interval"]["high"]
    names = [row["input"] for row in out["sensitivity"]]
    assert names[0] == 'elements."work".cost' and "variables.n" in names
    # a variable given with --set is not uncertain
    fixed = _run_json(
        capsys,
        str(MODELS / "pool.uml"),
        "--sidecar",
        str(sidecar),
        "--procs",
        "1",
        "--set",
        "n=1000",
        "--samples",
        "20",
    )
    assert "variables.n" not in [row["input"] for row in fixed["sensitivity"]]


def test_a_sidecar_table_that_is_no_interval_is_a_problem(tmp_path, capsys):
    sidecar = tmp_path / "s.toml"
    sidecar.write_text((MODELS / "pool.toml").read_text().replace('n = "65536"', "n = { median = 3 }"))
    assert main(["run", str(MODELS / "pool.uml"), "--sidecar", str(sidecar), "--procs", "1"]) != 0
    assert "value, low and high" in capsys.readouterr().err


def test_sweep_gains_interval_columns(tmp_path, capsys):
    machine = _uncertain_machine(tmp_path)
    args = ["sweep", *PINGPONG, "--grid", "S=8,65536", "--set", "R=10", "--machine", str(machine)]
    assert main([*args, "--samples", "30", "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "time_low" in data["columns"] and "time_high" in data["columns"]
    for row in data["rows"]:
        assert row["time_low"] <= row["time"] <= row["time_high"]
    assert main([*args, "--no-interval", "--json", "-"]) == 0
    assert "time_low" not in json.loads(capsys.readouterr().out)["columns"]


def test_sensitivity_shares_follow_the_inputs_that_matter():
    draws = latin_hypercube([Uncertain(1, 0.5, 2), Uncertain(1, 0.9, 1.1), Uncertain(5, 4, 6)], 400, seed=2)
    time = 10 * draws[:, 0] + draws[:, 1]  # the third input does nothing
    shares = {row["input"]: row["share"] for row in sensitivity(["a", "b", "c"], draws, time)}
    assert shares["a"] > 0.9 and shares["c"] == 0.0
    assert math.isclose(sum(shares.values()), 1.0, abs_tol=1e-3)
    assert sensitivity(["a"], draws[:, :1], np.ones(400)) == []


def test_percentile_interval_is_central():
    assert percentile_interval(list(range(101)), 0.9) == pytest.approx((5.0, 95.0))


def test_run_to_run_variability_widens_the_interval_around_the_same_prediction(tmp_path, capsys):
    machine = tmp_path / "m.toml"
    machine.write_text(
        HEAD + "[network.intra_node]\nlatency = 1e-6\nbandwidth = 2e9\n"
        "[variability]\nrun_to_run = { value = 1, low = 0.8, high = 1.5 }\n"
    )
    plain = tmp_path / "plain.toml"
    plain.write_text(HEAD + "[network.intra_node]\nlatency = 1e-6\nbandwidth = 2e9\n")
    varied = _run_json(capsys, *PINGPONG, "--set", "S=4096", "--machine", str(machine), "--samples", "200")
    exact = _run_json(capsys, *PINGPONG, "--set", "S=4096", "--machine", str(plain))
    assert varied["time"] == exact["time"]  # the prediction is the typical launch, bit for bit
    box = varied["interval"]
    # the only uncertain input is the factor: the interval is the prediction times its 5%..95% range
    assert box["low"] == pytest.approx(0.8 * exact["time"], rel=0.03)
    assert box["high"] == pytest.approx(1.5 * exact["time"], rel=0.03)
    assert varied["sensitivity"][0]["input"] == "machine variability.run_to_run"


def test_the_interval_of_a_median_of_runs_narrows_the_run_to_run_factor_only(tmp_path, capsys):
    from uml2perf_runtime.platform.uncertain import median_spread

    machine = tmp_path / "m.toml"
    machine.write_text(
        HEAD + "[network.intra_node]\nlatency = 1e-6\nbandwidth = { value = 2e9, low = 1e9, high = 3e9 }\n"
        "[variability]\nrun_to_run = { value = 1, low = 0.8, high = 1.5 }\n"
    )
    args = (*PINGPONG, "--set", "S=4096", "--machine", str(machine), "--samples", "400")
    one = _run_json(capsys, *args)
    five = _run_json(capsys, *args, "--median-of", "5")
    assert five["time"] == one["time"]
    assert one["interval"]["median_of"] == 1 and five["interval"]["median_of"] == 5

    def width(result: dict) -> float:
        return result["interval"]["high"] - result["interval"]["low"]

    assert width(five) < width(one)
    # the factor alone: its 5%..95% range shrinks to what it moves a median of five by
    machine.write_text(HEAD + "[variability]\nrun_to_run = { value = 1, low = 0.8, high = 1.5 }\n")
    alone = _run_json(capsys, *args, "--median-of", "5")
    c = median_spread(5)
    assert alone["interval"]["low"] == pytest.approx(0.8**c * alone["time"], rel=0.03)
    assert alone["interval"]["high"] == pytest.approx(1.5**c * alone["time"], rel=0.03)
    assert main(["run", *args, "--median-of", "5"]) == 0
    assert "for the median of 5 runs" in capsys.readouterr().out


def test_median_spread_of_a_few_runs_and_of_many():
    from uml2perf_runtime.platform.uncertain import median_spread

    assert median_spread(1) == 1.0
    assert median_spread(2) == pytest.approx(1 / math.sqrt(2), rel=0.01)  # the mean of two
    assert median_spread(3) == pytest.approx(0.670, rel=0.01)  # the exact order-statistic value
    assert median_spread(1000) == pytest.approx(math.sqrt(math.pi / 2000))
    assert median_spread(5) == median_spread(5)  # seeded: the same count gives the same number


def test_a_narrowed_interval_keeps_its_value_and_its_scale():
    log = Uncertain(2.0, 1.0, 8.0).narrowed(0.5)
    assert (log.value, log.low, log.high) == pytest.approx((2.0, 2.0 / math.sqrt(2), 4.0))
    plain = Uncertain(1.0, 0.0, 3.0).narrowed(0.5)
    assert (plain.value, plain.low, plain.high) == pytest.approx((1.0, 0.5, 2.0))


@pytest.mark.parametrize("runs", ["0", "-2", "x"])
def test_a_bad_run_count_is_refused_in_words(runs, capsys):
    with pytest.raises(SystemExit):
        main(["run", *PINGPONG, "--median-of", runs])
    assert "--median-of" in capsys.readouterr().err


def test_run_to_run_variability_combines_with_uncertain_keys(tmp_path):
    from uml2perf.api import load_spec
    from uml2perf.intervals import Sampler, uncertain_inputs

    path = _uncertain_machine(tmp_path)
    path.write_text(path.read_text() + "[variability]\nrun_to_run = { value = 1, low = 0.9, high = 1.2 }\n")
    machine = Machine.load(path)
    spec = load_spec(MODELS / "allreduce.uml", sidecar=MODELS / "allreduce.toml")
    inputs = uncertain_inputs(machine, None, {}, (), "m.toml")
    assert [inp.kind for inp in inputs].count("factor") == 1
    sampler = Sampler(spec, machine, inputs, 2, None, {"S": 65536, "R": 5}, 0, None, None, {})
    draws = latin_hypercube([inp.interval for inp in inputs], 12, seed=4)
    analytic = sampler.analytic(draws)
    assert analytic is not None
    simulated = [sampler.simulate(i, row) for i, row in enumerate(draws)]
    assert analytic == pytest.approx(simulated, rel=1e-9)
    factor = next(i for i, inp in enumerate(inputs) if inp.kind == "factor")
    unscaled = [t / row[factor] for t, row in zip(simulated, draws, strict=True)]
    assert max(unscaled) / min(unscaled) < max(simulated) / min(simulated)


@pytest.mark.parametrize(
    ("table", "words"),
    [
        ("run_to_run = 1.2", "must be 1 at its value"),
        ("run_to_run = { value = 1.1, low = 1, high = 1.3 }", "must be 1 at its value"),
        ("run_too_run = 1", "unknown key"),
    ],
)
def test_a_variability_other_than_a_factor_of_one_is_refused(tmp_path, table, words):
    path = tmp_path / "m.toml"
    path.write_text(HEAD + "[variability]\n" + table + "\n")
    with pytest.raises(MachineError, match=words):
        Machine.load(path)


def test_inputs_without_effect_rarely_get_a_share_however_many_there_are():
    """Thirty inputs, one that matters: chance may credit another in about one run of twenty."""
    spurious = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        draws = rng.random((200, 30))
        times = 1.0 + draws[:, 0] + 0.05 * rng.random(200)
        shares = sensitivity([f"x{i}" for i in range(30)], draws, times)
        assert shares[0]["input"] == "x0"
        spurious += sum(1 for s in shares if s["share"] > 0) > 1
    assert spurious <= 6  # about 2 expected at 5% for all inputs together (a 5% test each: nearly all)
