"""The validation loop: measure real programs, predict their models, compare.

The machine file is the one ``uml2perf calibrate`` writes, afresh in every
suite run, used unchanged.  A case group (a module of :mod:`cases`) fits
its kernels' costs into the :class:`Setup`, then hands over its
:class:`Case` list.  This module runs the cases interleaved (disturbed runs
again later), predicts them with uml2perf (each with its prediction
interval from the calibrated intervals), and turns both into the table,
the JSON report and the plot.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from quiet import Probe, probe

from uml2perf.api import predict

MODELS = Path(__file__).resolve().parent / "models"


@dataclass
class Setup:
    """What the suite measured before the cases run, shared by all of them.

    ``machine_path`` is the file ``uml2perf calibrate`` wrote this run; the predictions use it
    unchanged, and the case groups read values from it (``machine``) where a tag needs one.
    """

    smoke: bool
    machine_path: Path
    machine: Any  # the calibrated Machine
    costs: dict[str, str] = field(default_factory=dict)  # kernel -> fitted cost expression
    #: kernel -> the fit's 90% prediction interval as factors of its cost (what ``fit --sidecar`` writes)
    spreads: dict[str, tuple[float, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def mpi(self) -> bool:
        """Whether calibrate measured the network (MPI was there)."""
        return self.machine.intra_node.pieces is not None


@dataclass
class Case:
    """One real program and the model that predicts it."""

    name: str
    model: str  # validation/models/<model>.uml with <model>.toml beside it
    variables: dict[str, float]
    measure: Callable[[], float]  # runs the program once, returns its seconds
    procs: int = 1
    costs: dict[str, str] = field(default_factory=dict)  # element -> kernel whose fitted cost it takes
    tags: dict[str, dict[str, str]] = field(default_factory=dict)  # element -> extra sidecar keys
    #: element -> kernel whose fit's interval factors the element's ``cost`` tag takes
    spread_of: dict[str, str] = field(default_factory=dict)
    #: seconds of the runs before which the machine was quiet (the ones that count)
    measured: list[float] = field(default_factory=list)
    busy: list[float] = field(default_factory=list)
    #: runs before which others kept the machine busy: (seconds, others' busy share); re-run later
    disturbed: list[tuple[float, float]] = field(default_factory=list)
    predicted: float | None = None
    interval: tuple[float, float] | None = None
    sensitivity: list[dict[str, Any]] = field(default_factory=list)

    def sidecar(self, setup: Setup, folder: Path) -> Path:
        """The model's sidecar with this case's costs and tags appended."""
        text = (MODELS / f"{self.model}.toml").read_text()
        entries: dict[str, dict[str, str]] = {}
        for element, kernel in self.costs.items():
            entries.setdefault(element, {})["cost"] = setup.costs[kernel]
        for element, keys in self.tags.items():
            entries.setdefault(element, {}).update(keys)
        spread_of = {**{element: kernel for element, kernel in self.costs.items()}, **self.spread_of}
        for element, keys in entries.items():
            text += f'\n[elements."{element}"]\n'
            for key, value in keys.items():
                spread = setup.spreads.get(spread_of.get(element, "")) if key == "cost" else None
                if spread is None:
                    text += f'{key} = "{value}"\n'
                else:  # the cost with the fit's prediction interval, as ``fit --sidecar`` writes it
                    low, high = spread
                    text += (
                        f'{key} = {{ value = "{value}", low = "{low:.4g} * ({value})", '
                        f'high = "{high:.4g} * ({value})" }}\n'
                    )
        path = folder / f"{self.model}-{len(list(folder.iterdir()))}.toml"
        path.write_text(text)
        return path


def measure_interleaved(
    cases: list[Case], repeats: int, pause: float, max_busy: float, retry_rounds: int, wait: float = 10.0
) -> list[Probe]:
    """Run every case ``repeats`` times in shuffled round robin, a quiet check before each run.

    A run before which others kept more than ``max_busy`` of the machine busy is disturbed: it
    is kept aside and the case runs again later, in up to ``retry_rounds`` extra rounds (each
    after a ``wait``), until it has ``repeats`` quiet runs.  A case that never got a quiet run
    is left out of the accuracy figures.
    """
    probes: list[Probe] = []
    order = list(cases)
    for round_ in range(repeats + retry_rounds):
        wanting = [case for case in order if len(case.measured) < repeats]
        if not wanting:
            break
        if round_ >= repeats:
            print(f"  re-running {len(wanting)} cases with disturbed runs (after {wait:.0f} s)", flush=True)
            time.sleep(wait)
        random.Random(round_).shuffle(wanting)
        disturbed = 0
        for case in wanting:
            if round_ < repeats or len(case.measured) < repeats:
                checked = probe(pause)
                probes.append(checked)
                seconds = case.measure()
                if checked.busy > max_busy:
                    case.disturbed.append((seconds, checked.busy))
                    disturbed += 1
                else:
                    case.busy.append(checked.busy)
                    case.measured.append(seconds)
        worst = max((p.busy for p in probes[-len(wanting) :]), default=0.0)
        print(
            f"  round {round_ + 1}: {len(wanting)} runs, {disturbed} disturbed "
            f"(others busy up to {worst * 100:.0f}%)",
            flush=True,
        )
    return probes


def predict_all(cases: list[Case], setup: Setup, samples: int) -> None:
    """Each case's prediction with the calibrated machine file as it is, and its prediction interval.

    The interval is the one of a single launch (``run`` without ``--median-of``): on this machine
    the quiet runs of a case share the machine's state, so their median moves as one launch does
    (``validation/reinterval.py`` measures both intervals on a stored run).
    """
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            results = predict(
                MODELS / f"{case.model}.uml",
                machine=setup.machine_path,
                procs=case.procs,
                overrides=case.variables,
                sidecar=case.sidecar(setup, Path(tmp)),
                samples=samples,
            )
            case.predicted = float(results.time)
            if results.interval is not None:
                case.interval = (results.interval["low"], results.interval["high"])
                case.sensitivity = list(results.sensitivity or [])[:3]


def rows_of(cases: list[Case], smoke: bool) -> list[dict[str, Any]]:
    """One row per case; error and coverage only from quiet runs (and never for a smoke run)."""
    rows = []
    for case in cases:
        assert case.predicted is not None
        quiet = bool(case.measured) and not smoke
        runs = case.measured or [t for t, _ in case.disturbed]
        median = statistics.median(runs)
        low, high = (float(v) for v in np.percentile(runs, [5, 95]))
        error = (case.predicted - median) / median * 100
        interval = case.interval or (case.predicted, case.predicted)
        rows.append(
            {
                "case": case.name,
                "measured_median": median,
                "measured_p5": low,
                "measured_p95": high,
                "spread": (max(runs) - min(runs)) / median if median else 0.0,
                "runs": len(case.measured),
                "disturbed_runs": len(case.disturbed),
                "predicted": case.predicted,
                "interval_low": interval[0],
                "interval_high": interval[1],
                "interval_width_percent": (interval[1] - interval[0]) / case.predicted * 100
                if case.predicted
                else 0.0,
                "covered": (interval[0] <= median <= interval[1]) if quiet else None,
                "error_percent": error if quiet else None,
                "error_percent_unquiet": None if quiet else error,
                "sensitivity": case.sensitivity,
                "others_busy_max": max(case.busy, default=0.0),
                "measured_runs": list(case.measured),
                "others_busy_runs": list(case.busy),
                "disturbed": [list(d) for d in case.disturbed],
            }
        )
    return rows


def print_table(rows: list[dict[str, Any]]) -> None:
    """The table: measured median and spread, prediction, its interval, error, covered or not."""
    width = max(len(r["case"]) for r in rows)
    print(
        f"\n{'case':<{width}}  {'measured':>10}  {'spread':>7}  {'predicted':>10}  "
        f"{'90% interval':>21}  {'error':>8}  covered"
    )
    for r in rows:
        quiet = r["error_percent"] is not None
        err = r["error_percent"] if quiet else r["error_percent_unquiet"]
        covered = "yes" if r["covered"] else "no" if quiet else "-"
        mark = "" if quiet else "  (no quiet run)" if not r["runs"] else "  (smoke)"
        print(
            f"{r['case']:<{width}}  {_ms(r['measured_median'])}  {r['spread'] * 100:6.1f}%  "
            f"{_ms(r['predicted'])}  {_ms(r['interval_low'])}–{_ms(r['interval_high']).strip():<9}  "
            f"{err:+7.1f}%  {covered}{mark}"
        )


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.3f}ms"


def summary_of(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Mean, median and max |error|, coverage and median width of the intervals, over quiet cases."""
    quiet = [r for r in rows if r["error_percent"] is not None]
    if not quiet:
        return None
    errors = [abs(r["error_percent"]) for r in quiet]
    return {
        "cases": len(quiet),
        "left_out": [r["case"] for r in rows if r["error_percent"] is None],
        "mean_abs_error_percent": statistics.mean(errors),
        "median_abs_error_percent": statistics.median(errors),
        "max_abs_error_percent": max(errors),
        "within_10_percent": sum(e <= 10 for e in errors),
        "coverage_percent": 100 * sum(bool(r["covered"]) for r in quiet) / len(quiet),
        "median_interval_width_percent": statistics.median(r["interval_width_percent"] for r in quiet),
    }


def plot(rows: list[dict[str, Any]], title: str, write: Callable[[Any], None]) -> bool:
    """Measured against predicted, one bar pair per case; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(rows) + 1.5))
    ys = range(len(rows))
    ax.barh(
        [y + 0.2 for y in ys],
        [r["measured_median"] * 1e3 for r in rows],
        0.4,
        label="measured (median, 5th..95th percentile)",
        xerr=[
            [(r["measured_median"] - r["measured_p5"]) * 1e3 for r in rows],
            [(r["measured_p95"] - r["measured_median"]) * 1e3 for r in rows],
        ],
    )
    ax.barh(
        [y - 0.2 for y in ys],
        [r["predicted"] * 1e3 for r in rows],
        0.4,
        label="predicted (90% interval)",  # a skewed interval may leave out the prediction itself
        xerr=[
            [max(0.0, r["predicted"] - r["interval_low"]) * 1e3 for r in rows],
            [max(0.0, r["interval_high"] - r["predicted"]) * 1e3 for r in rows],
        ],
    )
    ax.set_yticks(list(ys), [r["case"] for r in rows], fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("ms")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    write(fig)
    plt.close(fig)
    return True
