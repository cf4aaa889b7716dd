"""The validation loop: measure real programs, predict their models, compare.

A case group (a module of :mod:`cases`) prepares what its models need
(fitted kernel costs, machine-file sections from measurements of this
machine) into a :class:`Setup`, then hands over its :class:`Case` list.
This module runs the cases interleaved, predicts them with uml2perf,
and turns both into the table, the JSON report and the plot.
"""

from __future__ import annotations

import random
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from quiet import Probe, probe

from uml2perf.api import predict

MODELS = Path(__file__).resolve().parent / "models"


@dataclass
class Setup:
    """What the case groups measured before the cases run, shared by all of them."""

    smoke: bool
    costs: dict[str, str] = field(default_factory=dict)  # kernel -> fitted cost expression
    machine: dict[str, str] = field(default_factory=dict)  # machine-file section text by group
    notes: list[str] = field(default_factory=list)

    def machine_text(self, cores: int) -> str:
        head = f'name = "validation"\nnodes = 1\ncores_per_node = {cores}\n'
        return head + "".join(self.machine.values())


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
    measured: list[float] = field(default_factory=list)
    busy: list[float] = field(default_factory=list)
    predicted: float | None = None

    def sidecar(self, setup: Setup, folder: Path) -> Path:
        """The model's sidecar with this case's costs and tags appended."""
        text = (MODELS / f"{self.model}.toml").read_text()
        entries: dict[str, dict[str, str]] = {}
        for element, kernel in self.costs.items():
            entries.setdefault(element, {})["cost"] = setup.costs[kernel]
        for element, keys in self.tags.items():
            entries.setdefault(element, {}).update(keys)
        for element, keys in entries.items():
            text += f'\n[elements."{element}"]\n' + "".join(f'{k} = "{v}"\n' for k, v in keys.items())
        path = folder / f"{self.model}-{len(list(folder.iterdir()))}.toml"
        path.write_text(text)
        return path


def measure_interleaved(cases: list[Case], repeats: int, pause: float) -> list[Probe]:
    """Run every case ``repeats`` times in shuffled round robin, a quiet probe before each run."""
    probes: list[Probe] = []
    order = list(cases)
    for round_ in range(repeats):
        random.Random(round_).shuffle(order)
        for case in order:
            checked = probe(pause)
            probes.append(checked)
            case.busy.append(checked.busy)
            case.measured.append(case.measure())
        worst = max(case.busy[-1] for case in cases)
        print(f"  round {round_ + 1}/{repeats} done (others busy up to {worst * 100:.0f}%)", flush=True)
    return probes


def predict_all(cases: list[Case], setup: Setup, machine: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            results = predict(
                MODELS / f"{case.model}.uml",
                machine=machine,
                procs=case.procs,
                overrides=case.variables,
                sidecar=case.sidecar(setup, Path(tmp)),
            )
            case.predicted = float(results.time)


def rows_of(cases: list[Case], quiet: bool) -> list[dict[str, Any]]:
    rows = []
    for case in cases:
        assert case.predicted is not None
        median = statistics.median(case.measured)
        spread = (max(case.measured) - min(case.measured)) / median if median else 0.0
        error = (case.predicted - median) / median * 100
        rows.append(
            {
                "case": case.name,
                "measured_median": median,
                "spread": spread,
                "runs": len(case.measured),
                "predicted": case.predicted,
                "error_percent": error if quiet else None,
                "error_percent_loaded": None if quiet else error,
                "others_busy_max": max(case.busy),
                # every run with the share of the CPUs others used just before it
                "measured_runs": list(case.measured),
                "others_busy_runs": list(case.busy),
            }
        )
    return rows


def print_table(rows: list[dict[str, Any]], quiet: bool, why_not: str = "loaded") -> None:
    """The table; without ``quiet`` every error is marked with ``why_not`` (it is no accuracy)."""
    width = max(len(r["case"]) for r in rows)
    print(f"\n{'case':<{width}}  {'measured':>10}  {'spread':>7}  {'predicted':>10}  {'error':>8}")
    for r in rows:
        err = r["error_percent"] if quiet else r["error_percent_loaded"]
        mark = "" if quiet else f" ({why_not})"
        print(
            f"{r['case']:<{width}}  {_ms(r['measured_median'])}  {r['spread'] * 100:6.1f}%  "
            f"{_ms(r['predicted'])}  {err:+7.1f}%{mark}"
        )


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.3f}ms"


def summary_of(rows: list[dict[str, Any]], quiet: bool) -> dict[str, float]:
    errors = [abs(r["error_percent"] if quiet else r["error_percent_loaded"]) for r in rows]
    return {"mean_abs_error_percent": statistics.mean(errors), "max_abs_error_percent": max(errors)}


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
        label="measured (median)",
        xerr=[[0] * len(rows), [r["spread"] * r["measured_median"] * 1e3 for r in rows]],
    )
    ax.barh([y - 0.2 for y in ys], [r["predicted"] * 1e3 for r in rows], 0.4, label="predicted")
    ax.set_yticks(list(ys), [r["case"] for r in rows], fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("ms")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    write(fig)
    plt.close(fig)
    return True
