"""``uml2perf calibrate``: the knee search of the ping-pong and the machine file it writes."""

from __future__ import annotations

import math
import os
import statistics
import tomllib

import numpy as np
import pytest

from uml2perf import calibrate, counting, quiet
from uml2perf.cli import main
from uml2perf_runtime.platform.machine import Machine


def _ping_pong(eager: int, alpha: float = 2e-6, beta: float = 1 / 2e9, handshake: float = 6e-6):
    """Times of an MPI whose messages above ``eager`` pay a rendezvous handshake."""
    out = {}
    for size in calibrate.PING_PONG_SIZES:
        t = alpha + size * beta + (handshake if size > eager else 0.0)
        out[size] = [t * 0.99, t, t * 1.03]
    return out


def _allreduce(eager: int, overhead: float = 3e-6, gamma: float = 5e-10, algorithm: str | None = None):
    """Allreduce times on 2 ranks of the :func:`_ping_pong` MPI: the model's algorithm plus costs."""
    from uml2perf_runtime.platform.machine import Link
    from uml2perf_runtime.platform.network import CollectiveModel

    line = Link(2e-6, 2e9, 6e-6)
    choices = {"allreduce": algorithm} if algorithm else None
    model = CollectiveModel([0, 0], lambda a, b: line, choices, gamma, overhead=overhead, eager_limit=eager)
    return {size: [model.duration("allreduce", 0, size)] * 3 for size in calibrate.ALLREDUCE_SIZES}


@pytest.fixture(autouse=True)
def quiet_machine(monkeypatch):
    """Tests run beside others: the quiet check of calibrate's launches sees a quiet machine."""
    monkeypatch.setattr(quiet, "probe", lambda pause=0.2: quiet.Probe(0.0, 0.0))


def _readings(busy_shares, load=0.0):
    """A fake quiet check that returns ``busy_shares`` one after the other (then quiet)."""
    shares = iter(busy_shares)
    return lambda pause=0.2: quiet.Probe(next(shares, 0.0), load)


def test_a_disturbed_launch_is_repeated_until_quiet():
    gate = quiet.QuietGate(max_busy=0.1, retries=2, wait=0.0, reader=_readings([0.0, 0.6, 0.3, 0.0], 1.5))
    runs = []
    assert gate.run(lambda: runs.append(1) or len(runs)) == 3  # before/after: quiet/busy, busy/quiet, quiet
    assert gate.launches == 1 and gate.repeated == 2 and gate.kept_disturbed == 0
    assert gate.busiest == pytest.approx(0.6) and gate.highest_load == pytest.approx(1.5)
    assert "1 launches, 2 repeated" in gate.describe() and "busiest 60%" in gate.describe()


def test_repeats_are_bounded_and_a_still_disturbed_launch_is_said_so():
    gate = quiet.QuietGate(max_busy=0.1, retries=1, wait=0.0, reader=_readings([0.9] * 10))
    runs = []
    gate.run(lambda: runs.append(1))
    assert len(runs) == 2 and gate.repeated == 1 and gate.kept_disturbed == 1
    assert "1 kept though still disturbed" in gate.describe()


def test_calibrate_repeats_disturbed_launches_and_says_so(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(calibrate, "ping_pong", lambda repeats=5, progress=None, launches=1: {})
    monkeypatch.setattr(calibrate, "TRIAD_ELEMENTS", 1 << 16)
    monkeypatch.setattr(calibrate, "MATMUL_N", 64)
    real = calibrate.measure_here
    calls = []
    monkeypatch.setattr(calibrate, "measure_here", lambda *a: calls.append(1) or real(*a))
    # others busy 40% before the first try, quiet around the second
    monkeypatch.setattr(quiet, "probe", _readings([0.4, 0.0, 0.0, 0.0], load=2.25))
    out = tmp_path / "m.toml"
    assert main(["calibrate", "-o", str(out), "--repeats", "1", "--launches", "1", "--no-mpi"]) == 0
    assert len(calls) == 2
    text = out.read_text()
    assert "# quiet check: 1 launches, 1 repeated because others kept more than 10%" in text
    assert "busiest 40%, load average up to 2.25" in text
    assert "launch disturbed (others busy 40%" in capsys.readouterr().err
    Machine.load(out)


@pytest.mark.parametrize("eager", [4096, 16384, 65536])
def test_knee_of_the_ping_pong_is_the_eager_limit(eager):
    got = calibrate.fit_ping_pong(_ping_pong(eager))
    assert got["eager_limit"].median == eager
    assert got["latency"].median == pytest.approx(2e-6, rel=0.01)
    assert got["bandwidth"].median == pytest.approx(2e9, rel=0.01)
    assert got["rendezvous_latency"].median == pytest.approx(8e-6, rel=0.02)
    # the median repetition is the time; one launch has no spread between launches
    assert got["latency"].spread == pytest.approx(0.0, abs=1e-9)
    assert got["handshake"].median == pytest.approx(6e-6, rel=0.02)


def test_machine_file_loads_and_explains_itself(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(
        calibrate,
        "ping_pong",
        lambda repeats=5, progress=None, launches=1: calibrate.fit_ping_pong(_ping_pong(4096)),
    )
    monkeypatch.setattr(
        calibrate,
        "allreduce_launches",
        # buffers from memory combine at 0.5 ns per byte, reused ones (in cache) at 0.1 ns
        lambda repeats=5, launches=1, rotate=calibrate.ROTATE_BYTES: [
            _allreduce(4096, gamma=5e-10 if rotate else 1e-10)
        ],
    )
    monkeypatch.setattr(
        calibrate,
        "crowded_ping_pong",
        lambda repeats=5, launches=1: {"wakeup": calibrate.Measured(4e-6, 4e-6, 4e-6, "two ranks per core")},
    )
    monkeypatch.setattr(calibrate, "TRIAD_ELEMENTS", 1 << 16)
    monkeypatch.setattr(calibrate, "MATMUL_N", 64)
    monkeypatch.setattr(calibrate, "CACHE_SAMPLE_BYTES", 4_000_000)
    out = tmp_path / "machine.toml"
    assert main(["calibrate", "-o", str(out), "--repeats", "2", "--launches", "1"]) == 0
    text = out.read_text()
    machine = Machine.from_dict(tomllib.loads(text), source=str(out))
    assert machine.speed == 1.0
    assert "eager_limit = 4096" in text
    assert machine.memory_bandwidth and machine.core_bandwidth and machine.peak_flops
    assert "memory_bandwidth = " in text and "triad" in text
    assert "[2] memory bandwidth" in capsys.readouterr().err  # the progress display
    assert "peak_flops = { value = " in text  # repetitions with a spread: an interval
    data = tomllib.loads(text)
    link = machine.intra_node
    assert link.handshake == pytest.approx(6e-6, rel=0.02)
    assert "ranges" in data["network"]["intra_node"]
    for size in calibrate.PING_PONG_SIZES:  # the ranges give back the measured (median) times
        assert link.message_time(size, 4096) == pytest.approx(_ping_pong(4096)[size][1], rel=0.02)
    # the allreduce's costs beyond its messages: 3 us per call, 0.5 ns per reduced byte
    assert machine.collective_overhead == pytest.approx(3e-6, rel=0.05)
    assert machine.reduce_cost == pytest.approx(5e-10, rel=0.05)
    # reused buffers: their own cost up to the largest size measured so
    (up_to, cached), (rest, memory) = machine.reduce_ranges
    assert up_to == max(calibrate.ALLREDUCE_SIZES) and rest == math.inf
    assert cached == pytest.approx(1e-10, rel=0.05) and memory == pytest.approx(5e-10, rel=0.05)
    assert "overhead = " in text and "fitted as overhead + reduce_cost" in text
    assert "allreduce = " not in text  # MPICH's rules (auto) made these times: nothing to choose
    assert machine.wakeup == pytest.approx(4e-6) and "two ranks per core" in text
    # the cache-aware roofline: one row per measured working set, smallest first
    assert [level.up_to for level in machine.caches] == list(calibrate.CACHE_WORKING_SETS)
    assert all(level.core_bandwidth > 0 and level.bandwidth > 0 for level in machine.caches)
    assert "[caches]" in text and "one process each" not in text  # the method is said once, above


def test_reference_sort_sets_the_speed(monkeypatch, tmp_path):
    monkeypatch.setattr(calibrate, "ping_pong", lambda repeats=5, progress=None, launches=1: {})
    monkeypatch.setattr(calibrate, "sort_seconds", lambda: 0.002)
    monkeypatch.setattr(calibrate, "TRIAD_ELEMENTS", 1 << 16)
    monkeypatch.setattr(calibrate, "MATMUL_N", 64)
    out = tmp_path / "m.toml"
    assert (
        main(["calibrate", "-o", str(out), "--repeats", "1", "--launches", "1", "--reference-sort", "0.004"])
        == 0
    )
    text = out.read_text()
    assert tomllib.loads(text)["speed"] == 2.0
    assert "no MPI measurement" in text


def test_unwritable_output_is_an_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(calibrate, "measure", lambda **kw: pytest.fail("measured before checking the output"))
    code = main(["calibrate", "-o", str(tmp_path / "missing" / "m.toml")])
    assert code == 1
    assert "missing" in capsys.readouterr().err


def test_thread_costs_split_serialised_and_parallel_parts():
    # one worker: 10 µs per item; two workers: 6 µs, the pace of the lock -> 6 serialised, 4 parallel
    start, handoff, overhead = calibrate.split_thread_costs({1: 50e-6, 2: 100e-6}, {1: 10e-6, 2: 6e-6})
    assert start == pytest.approx(50e-6)
    assert handoff == pytest.approx(6e-6)
    assert overhead == pytest.approx(4e-6)
    # two workers twice as fast: nothing is serialised
    assert calibrate.split_thread_costs({1: 0.0, 2: 0.0}, {1: 10e-6, 2: 5e-6}) == pytest.approx(
        (0.0, 0.0, 10e-6)
    )
    # no speed-up at all: everything is serialised; noise below zero is clamped
    assert calibrate.split_thread_costs({1: -1e-6, 2: 0.0}, {1: 6e-6, 2: 6.5e-6}) == pytest.approx(
        (0.0, 6e-6, 0.0)
    )
    # a single core cannot tell the parts apart: all of it is hand-off
    assert calibrate.split_thread_costs({1: 20e-6}, {1: 5e-6}) == pytest.approx((20e-6, 5e-6, 0.0))


def test_calibrated_machine_has_threads_keys(monkeypatch, tmp_path):
    monkeypatch.setattr(calibrate, "ping_pong", lambda repeats=5, progress=None, launches=1: {})
    monkeypatch.setattr(calibrate, "TRIAD_ELEMENTS", 1 << 16)
    monkeypatch.setattr(calibrate, "MATMUL_N", 64)
    monkeypatch.setattr(calibrate, "POOL_ITEMS", (2, 4, 8))
    out = tmp_path / "m.toml"
    assert main(["calibrate", "-o", str(out), "--repeats", "1", "--launches", "1"]) == 0
    machine = Machine.load(out)
    assert machine.threads is not None
    assert machine.threads.start >= 0.0 and machine.threads.handoff >= 0.0
    assert "[threads]" in out.read_text()


def test_thread_costs_recover_the_costs_of_a_known_pool(monkeypatch):
    start, handoff, overhead = 30e-6, 4e-6, 2e-6

    def pool(threads, items):
        # T threads started, then items at the pace of the serial hand-off or of T parallel workers
        return threads * start + items * max(handoff, (handoff + overhead) / threads)

    monkeypatch.setattr(calibrate, "pool_seconds", pool)
    # pools of 60 µs tasks: per item the task, the caller's 25 µs wake-up and the hand-off
    monkeypatch.setattr(calibrate, "task_seconds", lambda: 60e-6)
    monkeypatch.setattr(
        calibrate, "task_pool_seconds", lambda items: start + items * (60e-6 + 25e-6 + handoff + overhead)
    )
    got = calibrate.thread_costs(repeats=3, cores=2)
    assert got["thread_wakeup"].median == pytest.approx(25e-6)
    assert got["thread_start"].median == pytest.approx(start, rel=1e-6)
    assert got["thread_handoff"].median == pytest.approx(handoff, rel=1e-6)
    assert got["thread_overhead"].median == pytest.approx(overhead, rel=1e-6)
    assert got["thread_handoff"].spread == pytest.approx(0.0, abs=1e-9)
    section = calibrate.threads_section(got, comments=False)
    threads = Machine.from_dict({"nodes": 1, "cores_per_node": 2} | tomllib.loads(section)).threads
    assert threads is not None
    assert (threads.start, threads.handoff, threads.overhead) == pytest.approx((start, handoff, overhead))
    assert threads.wakeup == pytest.approx(25e-6)


def test_reference_task_and_its_pool_run_here():
    assert calibrate.task_seconds(calls=3) > 0.0
    assert calibrate.task_pool_seconds(4) > 0.0


@pytest.mark.parametrize("algorithm", ["recursive_doubling", "ring"])
def test_the_allreduce_algorithm_that_fits_best_is_chosen(algorithm):
    """An MPI whose allreduce follows another algorithm than MPICH's rules: calibrate finds it."""
    pieces = calibrate.fit_ping_pong(_ping_pong(4096))
    network = calibrate.network_text(pieces, collectives=False)
    got = calibrate.fit_collective_algorithm(_allreduce(4096, algorithm=algorithm), network)
    assert got["collective_overhead"].choice == algorithm
    assert got["collective_overhead"].median == pytest.approx(3e-6, rel=0.05)
    assert got["reduce_cost"].median == pytest.approx(5e-10, rel=0.05)
    text = calibrate.network_text({**pieces, **got})
    assert f'allreduce = "{algorithm}"' in text and "fit error by algorithm" in text
    machine = Machine.from_dict(tomllib.loads('name = "m"\nnodes = 1\ncores_per_node = 2\n' + text))
    assert machine.collectives["allreduce"] == algorithm


def _launch(eager: int, factor: float = 1.0, fresh_above: int | None = None, fresh_factor: float = 2.0):
    """One launch's ping-pong: reused and fresh buffers, fresh ones ``fresh_factor`` slower above a size."""
    out = {}
    for size, reps in _ping_pong(eager).items():
        reused = [t * factor for t in reps]
        slow = fresh_factor if fresh_above is not None and size > fresh_above else 1.0
        out[size] = {"reused": reused, "fresh": [t * slow for t in reused]}
    return out


def test_the_eager_limit_is_where_the_time_steps():
    times = {s: 1e-6 + s / 5e9 + (2.5e-6 if s > 4096 else 0.0) for s in calibrate.PING_PONG_SIZES}
    assert calibrate.eager_step(times) == 4096
    smooth = {s: 1e-6 + s / 5e9 for s in calibrate.PING_PONG_SIZES}
    assert calibrate.eager_step(smooth) is None


def test_modes_are_separate_groups_named_where_they_appeared():
    found = calibrate.modes_of(
        [("1 reused", 118e-6), ("2 reused", 120e-6), ("1 fresh", 400e-6), ("2 fresh", 430e-6)]
    )
    assert "1 reused, 2 reused" in found and "1 fresh, 2 fresh" in found and "us" in found
    assert calibrate.modes_of([("a", 1.0), ("b", 1.1), ("c", 1.2), ("d", 1.05)]) == ""


def test_launches_give_intervals_and_modes():
    launches = [_launch(4096, f, fresh_above=262144) for f in (0.97, 1.0, 1.02, 1.05)]
    got = calibrate.fit_ping_pong(launches)
    assert got["eager_limit"].median == 4096
    # the value is of the reused buffers (the steady state of a program's loop) ...
    assert got["latency"].median == pytest.approx(2e-6 * 1.01, rel=0.02)
    latency = got["latency"]
    assert latency.low < latency.median < latency.high
    # ... the interval and the comment hold the slow mode of fresh buffers for large messages
    table = got["link_table"]
    assert "4194304 B:" in table.modes and "fresh" in table.modes
    assert "1024 B:" not in table.modes
    text = calibrate.network_text(got, collectives=False)
    machine = Machine.from_dict(tomllib.loads('name = "m"\nnodes = 1\ncores_per_node = 2\n' + text))
    assert machine.uncertain is not None
    names = machine.uncertain.names
    assert any(name.endswith(".bandwidth") for name in names) and "network.intra_node.handshake" in names
    last = [i for path, i in machine.uncertain.inputs if path[-1] == "bandwidth"][-1]
    assert last.low < last.value * 0.85  # the slow fresh buffers widen the interval downwards
    assert "separate modes" in text


def test_number_text_is_plain_without_spread():
    assert calibrate.number_text(calibrate.Measured(2.0, 2.0, 2.0, "")) == "2"
    assert (
        calibrate.number_text(calibrate.Measured(2.0, 1.5, 3.0, "")) == "{ value = 2, low = 1.5, high = 3 }"
    )


def test_pooled_launches_take_the_median_of_launches_and_the_spread_of_all():
    runs = [calibrate.Measured.of([v, v * 1.1], "x") for v in (1.0, 1.2, 1.4)]
    got = calibrate.pooled(runs, "x")
    assert got.median == pytest.approx(statistics.median([1.05, 1.26, 1.47]))
    launch_low, launch_high = calibrate.launch_interval([1.05, 1.26, 1.47])
    assert got.low == pytest.approx(min(np.percentile(got.values, 5), launch_low))
    assert got.high == pytest.approx(max(np.percentile(got.values, 95), launch_high))
    # three launches back the interval for a fourth: wider than the repetitions' own range
    assert got.low < min(got.values) and got.high > max(got.values)
    assert "3 launches" in got.how


def test_launch_interval_holds_the_next_launch_nine_times_in_ten():
    rng = np.random.default_rng(7)
    for n in (3, 4, 8):
        trials = 4000
        draws = rng.lognormal(mean=-13.0, sigma=0.3, size=(trials, n + 1))
        inside = 0
        for row in draws:
            low, high = calibrate.launch_interval(row[:n])
            inside += low <= row[n] <= high
        assert 0.87 <= inside / trials <= 0.95, (n, inside / trials)


def test_launch_interval_of_few_or_signed_values():
    assert calibrate.launch_interval([2.0, 4.0]) == pytest.approx((2.1, 3.9))  # the percentiles alone
    low, high = calibrate.launch_interval([0.0, 1e-6, 2e-6])  # a zero: on the plain scale, cut at 0
    assert low == 0 and high > 2e-6
    low, high = calibrate.launch_interval([-1.0, 0.0, 1.0])
    assert low < -1.0 and high > 1.0
    low, high = calibrate.launch_interval([1.0, 1.0, 1.0])
    assert low == high == 1.0


def _pong(size: float) -> float:
    """A link with a kink at 2 KiB (the eager limit) and another near 100 KiB, with a little noise."""
    wiggle = 1 + 0.02 * math.sin(size)
    if size <= 2048:
        return (6e-7 + size / 5e9) * wiggle
    if size <= 100_000:
        return (3e-6 + size / 6e9) * wiggle
    return (3e-5 + size / 1.2e10) * wiggle


def test_link_ranges_cut_only_at_fixed_sizes_and_the_eager_limit():
    sizes = [8 << k for k in range(20)]
    ranges = calibrate.link_ranges(tuple((s, _pong(s), 0.0) for s in sizes), eager=2048)
    ends = [up_to for up_to, _, _ in ranges]
    assert ends[-1] == math.inf
    assert set(ends[:-1]) <= set(calibrate.RANGE_CUTS) | {2048.0}
    assert 2048.0 in ends  # never one line across the protocol change
    for up_to, alpha, beta in ranges:  # each range prices its sizes within a few percent
        inside = [s for s in sizes if s <= up_to and all(s > e for e in ends if e < up_to)]
        for s in inside:
            assert alpha + s * beta == pytest.approx(_pong(s), rel=0.15)


def test_link_ranges_of_two_noisy_calibrations_cut_at_the_same_sizes():
    sizes = [8 << k for k in range(20)]
    rng = np.random.default_rng(3)
    cuts = []
    for _ in range(2):
        points = tuple((s, _pong(s) * rng.lognormal(0, 0.05), 0.0) for s in sizes)
        cuts.append([up_to for up_to, _, _ in calibrate.link_ranges(points, eager=2048)])
    assert cuts[0] == cuts[1]


def _group(launch_factors, cases, noise, rng):
    """Cases measured in the same launches: each launch moves all of them by its factor."""
    base = rng.lognormal(-10.0, 1.0, size=cases)
    return [tuple(b * f * rng.lognormal(0.0, noise) for f in launch_factors) for b in base]


def test_run_to_run_is_what_moves_every_case_of_a_launch():
    rng = np.random.default_rng(11)
    factors = rng.lognormal(0.0, 0.1, size=(3, 8))  # three groups of eight launches
    groups = [_group(f, 20, 0.02, rng) for f in factors]
    got = calibrate.run_to_run(groups)
    assert got is not None and got.median == 1.0
    # the launches' own factors spread by 0.1 in logarithms: one more launch within exp(+-0.1645) or so
    assert math.exp(-0.3) < got.low < math.exp(-0.1)
    assert math.exp(0.1) < got.high < math.exp(0.3)
    assert calibrate.run_to_run([groups[0][:3]]) is None  # too few cases to say
    assert calibrate.run_to_run([[(1.0, 2.0)] * 10]) is None  # two launches of each: no spread to say


def test_run_to_run_ignores_a_case_that_alone_jumps_between_modes():
    """A message size that runs three times slower in half the launches moves its key, not the run."""
    rng = np.random.default_rng(5)
    steady = [_group(np.ones(6), 30, 0.02, rng)]
    jumpy = [steady[0] + [(1e-3, 3e-3, 1e-3, 3e-3, 1e-3, 3e-3)] * 3]
    quiet, moded = calibrate.run_to_run(steady), calibrate.run_to_run(jumpy)
    assert quiet is not None and moded is not None
    assert moded.high < 1.1 and moded.high == pytest.approx(quiet.high, rel=0.05)


def test_launch_series_take_each_case_across_launches_with_rates_as_times():
    launches = [_launch(4096, f, fresh_above=262144) for f in (0.97, 1.0, 1.02, 1.05)]
    values = calibrate.fit_ping_pong(launches)
    values["peak_flops"] = calibrate.pooled(
        [calibrate.Measured.of([r], "x") for r in (1e10, 2e10, 4e10)], "matrix products"
    )
    series = calibrate.launch_series(values)
    assert series[0] == pytest.approx((1e-10, 5e-11, 2.5e-11))  # a rate's launches as times
    # every ping-pong size in each buffer condition: one value per launch
    assert len(series) == 1 + 2 * len(calibrate.PING_PONG_SIZES)
    assert all(len(case) == 4 for case in series[1:])
    groups = calibrate.launch_groups(values)
    assert [len(group) for group in groups] == [1, 2 * len(calibrate.PING_PONG_SIZES)]  # host, bound
    found = calibrate.run_to_run(groups)
    assert found is not None and found.low < 1.0 < found.high
    text = calibrate.variability_text(found)
    data = tomllib.loads('name = "m"\nnodes = 1\ncores_per_node = 2\n' + text)
    machine = Machine.from_dict(data)
    assert machine.uncertain is not None and machine.uncertain.names == ["variability.run_to_run"]


def test_mpiexec_binds_ranks_as_users_launch_them_and_oversubscribes_only_when_needed(tmp_path, monkeypatch):
    fake = tmp_path / "mpiexec"
    fake.write_text("#!/bin/sh\necho 'mpiexec (Open MPI) 5.0.0'\n")
    fake.chmod(0o755)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    calibrate._is_openmpi.cache_clear()
    try:
        assert "--oversubscribe" not in calibrate.mpiexec_command(str(fake), 2)
        assert "--oversubscribe" in calibrate.mpiexec_command(str(fake), 4)  # more ranks than cores
        assert "--oversubscribe" in calibrate.mpiexec_command(str(fake), 2, unbound=True)
        assert ("--allow-run-as-root" in calibrate.mpiexec_command(str(fake), 2)) == (os.geteuid() == 0)
        other = tmp_path / "mpirun"
        other.write_text("#!/bin/sh\necho 'HYDRA build details'\n")
        other.chmod(0o755)
        assert calibrate.mpiexec_command(str(other), 4) == [str(other), "-n", "4"]  # MPICH: no such flags
    finally:
        calibrate._is_openmpi.cache_clear()


def test_unbound_launches_are_named_as_modes_but_move_neither_values_nor_intervals():
    bound = [_launch(4096, f) for f in (0.98, 1.0, 1.02, 1.01)]
    loose = [
        {s: {f"unbound {how}": [t * 3 for t in v] for how, v in launch[s].items()} for s in launch}
        for launch in [_launch(4096, 1.0), _launch(4096, 1.05)]
    ]
    alone = calibrate.fit_ping_pong(bound)
    both = calibrate.fit_ping_pong(bound + loose)
    for key in ("latency", "bandwidth", "handshake"):
        assert (both[key].median, both[key].low, both[key].high) == pytest.approx(
            (alone[key].median, alone[key].low, alone[key].high)
        )
    assert "unbound" in both["link_table"].modes  # ... but the comment names them
    assert (
        calibrate.network_text(both, collectives=False).replace(both["link_table"].how, "").count("unbound")
        >= 1
    )
    series = calibrate.launch_series(both)
    assert {len(case) for case in series} == {4, 2}  # each condition's launches apart


def test_range_intervals_move_a_message_by_what_its_sizes_were_seen_to_move():
    """Per-launch lines over a few sizes trade latency against slope; the range's interval must not."""
    rng = np.random.default_rng(2)
    launches = []
    for _ in range(4):
        launch = _launch(4096, float(rng.lognormal(0, 0.05)))
        for size in launch:  # a little noise per size, as measured: the per-launch lines would wobble
            for how in launch[size]:
                launch[size][how] = [t * float(rng.lognormal(0, 0.05)) for t in launch[size][how]]
        launches.append(launch)
    got = calibrate.fit_ping_pong(launches)
    text = calibrate.network_text(got, collectives=False)
    machine = Machine.from_dict(tomllib.loads('name = "m"\nnodes = 1\ncores_per_node = 2\n' + text))
    for path, interval in machine.uncertain.inputs:
        if "ranges" in path:
            assert interval.high / interval.low < 2.0, (path, interval)  # times moved by ~5-10% here


def test_the_caches_table_reads_back_with_its_intervals():
    values = {}
    for i, size in enumerate(calibrate.CACHE_WORKING_SETS[:2]):
        values[f"cache_core {size}"] = calibrate.Measured(
            5e10 + i * 5e9, 4e10, 6e10, "x; 3 launches", launches=(4e10, 5e10, 6e10)
        )
        values[f"cache_node {size}"] = calibrate.Measured(9e10, 9e10, 9e10, "y")
    text = 'name = "m"\nnodes = 1\ncores_per_node = 2\n' + calibrate.caches_text(values)
    machine = Machine.from_dict(tomllib.loads(text))
    assert [(c.up_to, c.core_bandwidth, c.bandwidth) for c in machine.caches] == [
        (16384, 5e10, 9e10),
        (65536, 5.5e10, 9e10),
    ]
    assert machine.uncertain.names == ["caches.levels[1].core_bandwidth", "caches.levels[2].core_bandwidth"]
    assert "# bytes/s; 3 launches" in text


def test_first_touch_costs_more_than_writing_warm_memory():
    fresh, again = calibrate.first_touch_seconds(1 << 20)
    assert fresh > again > 0
    rates = calibrate.first_touch_rates(repeats=1)
    assert set(rates) == {"first_touch", *(f"first_touch {block}" for block in calibrate.FIRST_TOUCH_BLOCKS)}
    assert all(m.median > 0 and m.low <= m.median <= m.high for m in rates.values())
    assert 0 < calibrate.call_seconds(100) < 1e-3


def test_slow_operations_weigh_more_than_an_addition():
    weights = calibrate.operation_weights(core_flops=3e10, repeats=1)
    names = (*calibrate.WEIGHED_OPERATIONS, *calibrate.ARRAY_OPERATIONS)
    sized = {
        f"weight {name}{calibrate.size_suffix(n)}"
        for name in calibrate.ARRAY_OPERATIONS
        for n in calibrate.LARGER_ELEMENTS
    }
    keys = {f"weight {name}" for name in names} | sized
    assert set(weights) == keys | {calibrate.OPERATION_PREFIX + key[len("weight ") :] for key in keys}
    assert all(m.median >= 1.0 for key, m in weights.items() if key.startswith("weight "))
    assert all(m.low >= 0.0 for key, m in weights.items() if key.startswith(calibrate.OPERATION_PREFIX))
    assert weights["weight sin"].median > weights["weight divide"].median  # a sine is no division
    # a running sum waits for each element: far slower than an addition over the same data
    assert weights["weight cumsum"].median > 4 * weights["weight floor"].median
    # two blocks of a wider array leave numpy's fast loop: slower than whole arrays
    assert weights["weight block"].median > 2 * weights["weight floor"].median
    lines = calibrate.weights_text(weights)
    assert lines[0].startswith("# flops to count") and "sqrt " in lines[1]
    assert "cumsum " in lines[3] and "transpose " in lines[3] and "block " in lines[3]
    # a gather from memory waits for a line per element: far more than over cached arrays
    assert weights["weight gather 32 MiB"].median > 2 * weights["weight gather"].median
    assert lines[4].startswith("# the same array operations over arrays of 2 MiB") and "gather " in lines[5]
    assert lines[6].startswith("# the same array operations over arrays of 32 MiB")
    read = counting.weights_in("\n".join(lines))
    assert read["gather 32 MiB"] == float(f"{weights['weight gather 32 MiB'].median:.3g}")
    assert read["where 2 MiB"] == float(f"{weights['weight where 2 MiB'].median:.3g}")
    # the same measurements in seconds per element, as [operations] in a machine file that loads
    text = "\n".join(['name = "m"', "nodes = 1", "cores_per_node = 2", *calibrate.operations_text(weights)])
    table = Machine.from_dict(tomllib.loads(text)).operations
    assert set(table) == set(calibrate.WEIGHED_OPERATIONS) | set(calibrate.ARRAY_OPERATIONS)
    assert len(table["divide"]) == 1
    assert [up_to for up_to, _ in table["gather"]] == [262_144, 1_048_576, 4_194_304, 16_777_216, math.inf]
    gather = weights["operation gather 32 MiB"].median
    assert table["gather"][-1][1] == pytest.approx(gather, rel=1e-3)
    # a weight and its seconds are one measurement: weight = 1 + seconds x peak
    assert weights["weight gather 32 MiB"].median == pytest.approx(1 + gather * 3e10, rel=1e-9)
    assert read["x[mask/10]"] == float(f"{weights['weight x[mask/10]'].median:.3g}")
    assert calibrate.weights_text({}) == []


def test_every_array_operation_runs_over_the_elements_it_is_weighed_by():
    for name, run in calibrate._array_operations(1024).items():
        assert calibrate.array_operation_seconds(run, 1024, calls=2) > 0, name


def _host_values(large: float) -> dict[str, calibrate.Measured]:
    small = calibrate.Measured(2e9, 1.5e9, 2.5e9, "small; 3 launches", launches=(1.5e9, 2e9, 2.5e9))
    big = calibrate.Measured(large, large * 0.8, large * 1.2, "large")
    return {
        "first_touch": calibrate.Measured(2e9, 1.6e9, 2.4e9, "both"),
        "first_touch 1048576": small,
        "first_touch 16777216": big,
        "call_cost": calibrate.Measured(4e-7, 3e-7, 5e-7, "calls"),
    }


@pytest.mark.parametrize(
    "large, expected",
    [
        (2.1e9, ((float("inf"), 2e9),)),  # the sizes agree: one number
        (1.6e10, ((4194303.0, 2e9), (float("inf"), 1.6e10))),  # huge pages: ranges by allocation size
    ],
)
def test_the_host_keys_read_back(large, expected):
    text = 'name = "m"\nnodes = 1\ncores_per_node = 2\n' + "\n".join(calibrate.host_text(_host_values(large)))
    machine = Machine.from_dict(tomllib.loads(text))
    assert machine.first_touch == expected
    assert machine.call_cost == 4e-7
    assert "call_cost" in machine.uncertain.names


def test_a_cached_triad_loop_moves_what_it_says():
    run, moved = calibrate.triad_loop(24 * 1000)
    assert moved == 40 * 1000 * (calibrate.CACHE_SAMPLE_BYTES // 40_000)
    assert run() > 0


def test_the_summary_names_cache_rows_by_their_working_set():
    from uml2perf.commands.calibrate import printed_name

    assert printed_name("cache_core 1048576") == "cache 1,048,576 B, one core"
    assert printed_name("cache_node 16384") == "cache 16,384 B, all cores"
    assert printed_name("core_flops") == "peak_flops" and printed_name("latency") == "latency"
    assert printed_name("first_touch 1048576") == "first_touch, 1,048,576 B blocks"
    assert printed_name("weight sqrt") == "flops per sqrt"


def test_the_cost_of_reused_buffers_is_fitted_with_the_overhead_kept():
    network = calibrate.network_text(calibrate.fit_ping_pong(_ping_pong(4096)), collectives=False)
    launches = [_allreduce(4096, overhead=3e-6, gamma=g) for g in (1.0e-10, 1.2e-10, 0.9e-10)]
    got = calibrate.cached_reduce_cost(launches, network, "auto", 3e-6)
    assert got.median == pytest.approx(1.0e-10, rel=0.03)
    assert got.low <= 0.9e-10 * 1.03 and got.high >= 1.2e-10 * 0.97
    assert "one pair of buffers" in got.how
