"""The validation suite's bookkeeping: disturbed runs run again later, and the summary's figures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

VALIDATION = Path(__file__).resolve().parents[1] / "validation"


@pytest.fixture
def suite(monkeypatch):
    monkeypatch.syspath_prepend(str(VALIDATION))
    import quiet
    import suite as module

    monkeypatch.setattr(module.time, "sleep", lambda _s: None)
    yield module, quiet
    sys.modules.pop("suite", None)


def test_disturbed_runs_are_run_again_and_never_counted(suite, monkeypatch):
    module, quiet = suite
    busy = iter([0.5, 0.0, 0.0, 0.9, 0.0, 0.0, 0.0] + [0.9] * 50)
    monkeypatch.setattr(module, "probe", lambda pause: quiet.Probe(next(busy), 0.0))
    calls = {"a": 0, "b": 0}

    def runner(name):
        def run():
            calls[name] += 1
            return 1.0 if name == "a" else 2.0

        return run

    a = module.Case("a", "pool", {}, runner("a"))
    b = module.Case("b", "pool", {}, runner("b"))
    module.measure_interleaved([a, b], repeats=2, pause=0.0, max_busy=0.1, retry_rounds=3)
    # every case got its two quiet runs; the disturbed ones were kept aside with the share others used
    assert len(a.measured) == len(b.measured) == 2
    assert len(a.disturbed) + len(b.disturbed) == 2
    assert all(share > 0.1 for _, share in a.disturbed + b.disturbed)
    assert calls["a"] + calls["b"] == 6


def test_a_case_that_never_got_a_quiet_run_is_left_out(suite, monkeypatch):
    module, quiet = suite
    monkeypatch.setattr(module, "probe", lambda pause: quiet.Probe(0.0, 0.0))
    good = module.Case("good", "pool", {}, lambda: 1.0, measured=[1.0, 1.1, 0.9])
    good.predicted, good.interval = 1.05, (0.95, 1.2)
    wide_miss = module.Case("miss", "pool", {}, lambda: 1.0, measured=[2.0, 2.0, 2.0])
    wide_miss.predicted, wide_miss.interval = 1.5, (1.4, 1.6)
    never = module.Case("never", "pool", {}, lambda: 1.0, disturbed=[(3.0, 0.5)])
    never.predicted = 3.0
    rows = module.rows_of([good, wide_miss, never], smoke=False)
    assert rows[0]["covered"] is True and rows[0]["error_percent"] == pytest.approx(5.0)
    assert rows[1]["covered"] is False and rows[1]["error_percent"] == pytest.approx(-25.0)
    assert rows[2]["error_percent"] is None and rows[2]["runs"] == 0 and rows[2]["disturbed_runs"] == 1
    summary = module.summary_of(rows)
    assert summary["cases"] == 2 and summary["left_out"] == ["never"]
    assert summary["mean_abs_error_percent"] == pytest.approx(15.0)
    assert summary["max_abs_error_percent"] == pytest.approx(25.0)
    assert summary["coverage_percent"] == pytest.approx(50.0)
    # widths: 0.25/1.05 and 0.2/1.5 of the predictions
    assert summary["median_interval_width_percent"] == pytest.approx((0.25 / 1.05 + 0.2 / 1.5) / 2 * 100)


def test_two_calibrations_side_by_side(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(VALIDATION))
    import compare

    first = tmp_path / "a.toml"
    first.write_text(
        'name = "a"\nnodes = 1\ncores_per_node = 2\n'
        "peak_flops = { value = 2e10, low = 1.8e10, high = 2.3e10 }\n"
        "[network.intra_node]\nranges = [{ up_to = 256, latency = { value = 6e-7, low = 5e-7, high = 7e-7 }, "
        "bandwidth = 2e9 }, { latency = 1e-6, bandwidth = 3e9 }]\n"
    )
    second = tmp_path / "b.toml"
    second.write_text(
        'name = "b"\nnodes = 1\ncores_per_node = 2\npeak_flops = 2.5e10\n'
        "[network.intra_node]\nranges = [{ up_to = 256, latency = 6.5e-7, bandwidth = 2e9 }, "
        "{ up_to = 4096, latency = 1e-6, bandwidth = 3e9 }, { latency = 1e-6, bandwidth = 3e9 }]\n"
    )
    rows, inside, total = compare.keys_table(first, second)
    # peak_flops outside, the first range's latency inside, its bandwidth equal; the last range
    # covers other sizes in the second file, so it is not compared
    assert (inside, total) == (2, 3)
    text = "\n".join(rows)
    assert "`network.intra_node.ranges[0..256].latency`" in text and "(not written)" in text


def test_side_by_side_groups_the_cases_by_program_kind(monkeypatch):
    monkeypatch.syspath_prepend(str(VALIDATION))
    import compare

    def row(case, error, covered, width):
        return {"case": case, "error_percent": error, "covered": covered, "interval_width_percent": width}

    rows = [
        row("pool T=2 sort n=16384", 5.0, True, 20.0),
        row("pool T=1 noop n=16384", -15.0, False, 40.0),
        row("ping-pong 8 B x5000 2 ranks", 30.0, True, 10.0),
        row("allreduce 8 B x2048 4 ranks", -2.0, True, 50.0),
        row("halo 256x1024 x20 4 ranks", None, None, 60.0),  # no quiet run: left out
    ]
    got = compare.group_figures(rows)
    assert got["threads"]["cases"] == 2 and got["threads"]["mean"] == pytest.approx(10.0)
    assert got["threads"]["coverage"] == pytest.approx(50.0)
    assert got["threads"]["width"] == pytest.approx(30.0)
    assert got["MPI, 2 ranks"]["max"] == pytest.approx(30.0)
    assert got["MPI, 4 ranks on 2 cores"]["cases"] == 1
    assert got["all"]["cases"] == 4 and got["all"]["median"] == pytest.approx(10.0)
    sys.modules.pop("compare", None)


def test_side_by_side_says_whether_each_machine_file_held(monkeypatch):
    monkeypatch.syspath_prepend(str(VALIDATION))
    import compare

    held = {"holds": True, "output": "x\n9 of 10 keys inside the file's intervals (90%): m holds"}
    moved = {"holds": False, "output": "2 of 10 keys inside the file's intervals (20%, fewer than 80%): ..."}
    assert compare._held({"machine_check": held}) == "yes (9 of 10 keys)"
    assert compare._held({"machine_check": moved}) == "NO (2 of 10 keys)"
    assert compare._held({}) == "—"
    sys.modules.pop("compare", None)
