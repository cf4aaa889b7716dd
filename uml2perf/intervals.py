"""The prediction interval: the model run at samples drawn through the uncertain inputs.

Uncertain inputs are the machine file's ``{ value, low, high }`` keys and the sidecar's
variables and element costs given that way (see :mod:`uml2perf_runtime.platform.uncertain` for how a
sample is drawn).  The prediction itself is the run at the values, exactly as without
intervals; the interval is the central ``level`` share of the times predicted at the samples.

How the samples are evaluated: by the analytic fast path when the model allows it (every
sample a point of one batch when only variables vary, one analytic evaluation per sample
when the machine does), else by the simulator, in parallel worker processes when the
samples would take a while.  Each simulated sample runs with its own seed (``seed + i``),
so a model's random choices are part of the interval too.

Which inputs make the width: each input's share of the squared rank correlations between it
and the predicted time over the samples (:func:`uml2perf_runtime.platform.uncertain.sensitivity`).
"""

from __future__ import annotations

import os
import sys
import time as _time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import InputError, Location

#: Samples drawn when ``--samples`` does not say.
DEFAULT_SAMPLES = 200
#: The interval's level when ``--level`` does not say (low/high of the inputs are a 90% range).
DEFAULT_LEVEL = 0.90
#: The most launches an interval can be asked to be the median of (``--median-of``).
MAX_RUNS = 10_000
#: Simulated samples run in parallel processes when they would take longer than this (seconds).
PARALLEL_AFTER = 8.0


@dataclass(frozen=True)
class Input:
    """One uncertain input: its name, where it goes (``machine``, ``variable``, ``cost``), its interval."""

    name: str
    kind: str
    target: str
    interval: Any  # uml2perf_runtime.platform.uncertain.Uncertain
    whole: bool = False


def uncertain_inputs(
    machine: Any,
    car: Any,
    parameters: Mapping[str, Any],
    given: Sequence[str],
    where: str,
    median_of: int = 1,
    operations: Sequence[str] = (),
) -> list[Input]:
    """Every uncertain input of a run: the machine's, then the sidecar's (variables set by ``--set`` are not).

    A machine's ``[operations]`` entries count only for the ``operations`` the model names (its
    spec's): the others cannot move its time, and drawing them would only add chance
    correlations to the sensitivity.

    ``parameters`` are the run's variable values (the central run's), at which sidecar
    expressions are evaluated.  ``median_of``: the interval is for the median of that many launches
    of the program, so the whole-run factors (``[variability]``), which move each launch on its
    own, are narrowed to what they move a median by (:func:`median_spread`).  The machine's
    other keys stay as they are: they say where the machine's state may be during the runs.
    """
    from uml2perf_runtime.platform.uncertain import FACTOR_TABLE, Uncertain, median_spread

    found: list[Input] = []
    um = getattr(machine, "uncertain", None)
    if um is not None:
        for (path, interval), name in zip(um.inputs, um.names, strict=True):
            if path[0] == "operations" and path[1] not in operations:
                continue
            if path[0] == FACTOR_TABLE:
                narrowed = interval.narrowed(median_spread(median_of))
                found.append(Input(f"machine {name}", "factor", name, narrowed))
            else:
                found.append(Input(f"machine {name}", "machine", name, interval))
    for entry in getattr(car, "uncertain", None) or ():
        if entry.kind == "variable" and entry.name in given:
            continue
        value, low, high = (
            _evaluate(text, parameters, entry.label, where) for text in (entry.value, entry.low, entry.high)
        )
        if entry.kind == "cost" and value <= 0:  # no time at these variables: nothing to be unsure of
            continue
        if not low <= value <= high:
            raise InputError(
                f"{entry.label}: needs low <= value <= high at this run's variables, got low {low:g}, "
                f"value {value:g}, high {high:g}",
                Location(file=car.path),
            )
        if entry.kind == "variable":
            whole = all(float(v).is_integer() for v in (value, low, high)) and isinstance(
                parameters.get(entry.name), int
            )
            found.append(Input(entry.label, "variable", entry.name, Uncertain(value, low, high), whole))
        else:
            found.append(Input(entry.label, "cost", entry.name, Uncertain(1.0, low / value, high / value)))
    return found


def _evaluate(text: str, parameters: Mapping[str, Any], label: str, where: str) -> float:
    from .expressions.evaluation import evaluate

    try:
        return float(evaluate(text, dict(parameters)))
    except Exception as exc:  # an ExpressionError (unknown name, bad arithmetic) for people
        raise InputError(f"{label}: {exc}", Location(file=where)) from None


@dataclass
class Sampler:
    """Everything one sample's run needs besides its drawn values."""

    spec: Any
    machine: Any
    inputs: list[Input]
    procs: int | None
    nodes: int | None
    overrides: dict[str, Any]
    seed: int
    placement: str | None
    max_time: float | None
    speedups: dict[str, float]

    def configuration(self, values: Sequence[float]) -> tuple[Any, dict[str, Any], dict[str, float]]:
        """``(machine, variables, speedups)`` of one sample."""
        drawn = any(inp.kind == "machine" for inp in self.inputs)
        machine = self.machine
        if drawn:
            # every uncertain key of the file, drawn or (an operation the model never names) at its value
            um = machine.uncertain
            by_name = {
                inp.target: v for inp, v in zip(self.inputs, values, strict=True) if inp.kind == "machine"
            }
            machine = um.draw(
                [
                    by_name.get(name, interval.value)
                    for name, interval in zip(um.names, um.intervals, strict=True)
                ]
            )
        overrides = dict(self.overrides)
        speedups = dict(self.speedups)
        for inp, value in zip(self.inputs, values, strict=True):
            if inp.kind == "variable":
                overrides[inp.target] = int(round(value)) if inp.whole else float(value)
            elif inp.kind == "cost":
                speedups[inp.target] = speedups.get(inp.target, 1.0) / max(float(value), 1e-300)
        return machine, overrides, speedups

    def simulate(self, index: int, values: Sequence[float]) -> float:
        from uml2perf_runtime import simulate

        machine, overrides, speedups = self.configuration(values)
        result = simulate(
            self.spec,
            machine=machine,
            procs=self.procs,
            nodes=self.nodes,
            overrides=overrides,
            seed=self.seed + index,
            placement=self.placement,
            max_time=self.max_time,
            speedups=speedups or None,
        )
        return float(result.time) * self.factor(values)

    def factor(self, values: Sequence[float]) -> float:
        """The product of the sample's whole-run factors (``[variability]`` of the machine file)."""
        product = 1.0
        for inp, value in zip(self.inputs, values, strict=True):
            if inp.kind == "factor":
                product *= float(value)
        return product

    def analytic(self, draws: np.ndarray) -> list[float] | None:
        """Every sample's time by the analytic path, or None when the model needs the simulator."""
        if any(inp.kind == "cost" for inp in self.inputs) or self.speedups or self.max_time is not None:
            return None
        from uml2perf_runtime.analysis.analytic import evaluate_points
        from uml2perf_runtime.parameters import validate_overrides

        configurations = [self.configuration(row) for row in draws]
        if not any(inp.kind == "machine" for inp in self.inputs):
            groups = [(self.machine, list(range(len(draws))))]
        else:
            groups = [(configurations[i][0], [i]) for i in range(len(draws))]
        times: list[float] = [0.0] * len(draws)
        for machine, indices in groups:
            points = [validate_overrides(self.spec, configurations[i][1]) for i in indices]
            rows, _ = evaluate_points(
                self.spec, machine, points, procs=self.procs, nodes=self.nodes, placement=self.placement
            )
            if any(row is None for row in rows):
                return None
            for i, row in zip(indices, rows, strict=True):
                assert row is not None
                times[i] = float(row["time"]) * self.factor(draws[i])
        return times


def prediction_interval(sampler: Sampler, samples: int, level: float) -> dict[str, Any]:
    """``{"interval": {...}, "sensitivity": [...]}`` of a run whose inputs are ``sampler.inputs``."""
    from uml2perf_runtime.platform.uncertain import latin_hypercube, percentile_interval, sensitivity

    started = _time.perf_counter()
    intervals = [inp.interval for inp in sampler.inputs]
    draws = latin_hypercube(intervals, samples, seed=sampler.seed)
    method = "analytic"
    times = sampler.analytic(draws) if samples else []
    if times is None:
        method = "simulated"
        times = _simulate_all(sampler, draws)
    low, high = percentile_interval(times, level)
    return {
        "interval": {
            "low": low,
            "high": high,
            "level": level,
            "samples": samples,
            "method": method,
            "seconds": round(_time.perf_counter() - started, 3),
        },
        "sensitivity": sensitivity([inp.name for inp in sampler.inputs], draws, times),
    }


_FORKED: list[Any] = []


def _simulate_all(sampler: Sampler, draws: np.ndarray) -> list[float]:
    """Each sample simulated: in forked worker processes when they would take a while, else in turn.

    The first few samples run here and time the rest: starting workers costs more than it saves
    for samples that together take less than :data:`PARALLEL_AFTER` seconds.
    """
    jobs = list(enumerate(draws.tolist()))
    first = min(len(jobs), 4)
    started = _time.perf_counter()
    times = [sampler.simulate(i, row) for i, row in jobs[:first]]
    rest = jobs[first:]
    each = (_time.perf_counter() - started) / max(first, 1)
    workers = min(os.cpu_count() or 1, len(rest))
    if workers < 2 or each * len(rest) <= PARALLEL_AFTER or sys.platform != "linux":
        return times + [sampler.simulate(i, row) for i, row in rest]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    _FORKED[:] = [sampler]  # inherited by the forked workers: only the drawn numbers are sent
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
            chunk = max(1, len(rest) // (4 * workers))
            return times + list(pool.map(_sample_in_worker, rest, chunksize=chunk))
    finally:
        _FORKED.clear()


def _sample_in_worker(job: tuple[int, list[float]]) -> float:
    return float(_FORKED[0].simulate(job[0], job[1]))


def check_options(samples: int, level: float, where: str, median_of: int = 1) -> None:
    """Refuse a sample count, level or run count that cannot give an interval, in words."""
    if not isinstance(median_of, int) or isinstance(median_of, bool) or not 1 <= median_of <= MAX_RUNS:
        raise InputError(
            f"--median-of must be a whole number from 1 to {MAX_RUNS}, got {median_of!r}",
            Location(file=where),
            hint="the number of launches whose median the interval is for (1: a single launch)",
        )
    if not isinstance(samples, int) or isinstance(samples, bool) or samples < 10:
        raise InputError(
            f"--samples must be a whole number of at least 10, got {samples!r}",
            Location(file=where),
            hint="200 samples (the default) give the interval's ends to a few percent",
        )
    if not 0.0 < level < 1.0:
        raise InputError(
            f"--level must be between 0 and 1 (exclusive), got {level!r}",
            Location(file=where),
            hint="e.g. --level 0.9 for a 90% interval",
        )


def add_sweep_intervals(
    result: Any,
    spec: Any,
    sidecar: Any,
    fixed: Mapping[str, Any],
    procs: int | None,
    nodes: int | None,
    seed: int,
    placement: str | None,
    samples: int | None,
    level: float | None,
    where: str,
    system: Sequence[str] = ("procs", "nodes"),
    median_of: int = 1,
) -> None:
    """``time_low``/``time_high`` on every row of a sweep whose machine or sidecar has intervals.

    ``system`` are the grid names that shape the machine rather than set variables.
    """
    from uml2perf_runtime.parameters import validate_overrides

    car = None
    if sidecar is not None:
        from .profile.sidecar import load_sidecar

        car = load_sidecar(sidecar)
    machine = result.machine
    if getattr(machine, "uncertain", None) is None and not getattr(car, "uncertain", None):
        return
    samples = DEFAULT_SAMPLES if samples is None else samples
    level = DEFAULT_LEVEL if level is None else level
    check_options(samples, level, where, median_of)
    fixed_values = validate_overrides(spec, dict(fixed))
    for row in result.rows:
        point = {k: row[k] for k in result.parameters if k not in system and k in row}
        overrides = {**fixed_values, **point}
        parameters = {**dict(spec.parameters), **overrides}
        inputs = uncertain_inputs(
            machine, car, parameters, tuple(overrides), where, median_of, getattr(spec, "operations", ())
        )
        if not inputs:
            row["time_low"] = row["time_high"] = row["time"]
            continue
        sampler = Sampler(
            spec,
            machine,
            inputs,
            procs=row.get("procs", procs),
            nodes=row.get("nodes", nodes),
            overrides=overrides,
            seed=seed,
            placement=placement,
            max_time=None,
            speedups={},
        )
        found = prediction_interval(sampler, samples, level)
        row["time_low"] = found["interval"]["low"]
        row["time_high"] = found["interval"]["high"]
