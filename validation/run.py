"""Calibrate this machine, measure real programs, predict them with uml2perf, and compare.

    python validation/run.py                # the whole suite (about ten minutes, on a quiet machine)
    python validation/run.py --smoke        # tiny sizes, one repetition: checks the loop works, not accuracy
    python validation/run.py --only mpi     # one case group (threads, mpi)

Steps: (1) ``uml2perf calibrate`` runs as a user runs it (the command, afresh each suite
run) and writes the machine file; the predictions use that file unchanged; (2) each case
group fits its kernels' costs with ``uml2perf fit`` from micro-measurements timed the way
its programs run them; (3) every real program runs ``--repeats`` times, the cases
interleaved (round robin in a shuffled order) so that slow phases of a shared machine hit
every case alike; (4) the Papyrus models beside the programs are predicted, each with its
prediction interval from the calibrated intervals; (5) the table (case, measured median
and spread, predicted, 90% interval, error, covered) and its summary (mean, median and max
|error|, coverage of the intervals, their median width) are printed and written as JSON
and a plot.

Quiet check: before every measured run the suite pauses and reads how busy the CPUs were
meanwhile (others' load, not its own); a run before which others kept more than
``--max-busy`` of the machine busy (default 10%) does not count and is run again later.
Only cases that never got a quiet run are left out of the summary, and the table says so.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import suite  # noqa: E402  (found through the sys.path entry just above)
from cases import GROUPS  # noqa: E402
from machine_check import check_machine  # noqa: E402
from quiet import probe  # noqa: E402

from uml2perf_runtime.output.files import write_output  # noqa: E402
from uml2perf_runtime.platform.machine import Machine  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repetition: correctness only")
    parser.add_argument(
        "--repeats", type=int, default=None, help="quiet runs of every case (default 7; smoke 1)"
    )
    parser.add_argument(
        "--max-busy",
        type=float,
        default=0.10,
        help="quiet check: highest share of the CPUs others may use (default 0.10)",
    )
    parser.add_argument(
        "--retry-rounds",
        type=int,
        default=None,
        help="extra rounds for cases whose runs were disturbed (default: as many as --repeats)",
    )
    parser.add_argument("--samples", type=int, default=100, help="samples of each prediction interval")
    parser.add_argument("--launches", type=int, default=None, help="calibrate's launches (default its own)")
    parser.add_argument("--no-mpi", action="store_true", help="skip the MPI cases")
    parser.add_argument("--only", choices=sorted(GROUPS), action="append", help="run only these case groups")
    parser.add_argument(
        "--out", default=None, help="folder of results.json and results.png (default: a temp dir)"
    )
    return parser.parse_args(argv)


def calibrate(path: Path, args: argparse.Namespace, max_busy: float, tries: int = 6) -> dict[str, object]:
    """``uml2perf calibrate -o PATH`` as a user runs it, once the machine is quiet (``tries`` waits)."""
    before = probe(1.0)
    for _ in range(tries):
        if before.busy <= max_busy:
            break
        print(f"  machine busy before calibrating ({before.describe()}): waiting 20 s", flush=True)
        time.sleep(20)
        before = probe(1.0)
    command = [sys.executable, "-m", "uml2perf", "calibrate", "-o", str(path)]
    if args.smoke:
        command += ["--repeats", "2", "--launches", "1"]
    elif args.launches:
        command += ["--launches", str(args.launches)]
    if args.no_mpi:
        command += ["--no-mpi"]
    started = time.perf_counter()
    print("  $ uml2perf " + " ".join(command[3:]), flush=True)
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"uml2perf calibrate failed:\n{done.stderr}")
    after = probe(1.0)
    for line in done.stdout.splitlines():
        print(f"    {line}")
    return {
        "command": "uml2perf " + " ".join(command[3:]),
        "seconds": time.perf_counter() - started,
        "others_busy_before": before.busy,
        "load_average_before": before.load_average,
        "others_busy_after": after.busy,
        "load_average_after": after.load_average,
        "output": done.stdout,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    repeats = args.repeats or (1 if args.smoke else 7)
    retry_rounds = 0 if args.smoke else (repeats if args.retry_rounds is None else args.retry_rounds)
    out_dir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="uml2perf-validation-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    names = args.only or [name for name in GROUPS if not (args.no_mpi and name == "mpi")]
    if "mpi" not in names:
        args.no_mpi = True
    print(f"at start: {probe(0.5).describe()}; quiet means others busy ≤ {args.max_busy * 100:.0f}%")

    print("1. calibrating this machine (the uml2perf calibrate command)")
    machine_path = out_dir / "machine.toml"
    calibration = calibrate(machine_path, args, args.max_busy, tries=0 if args.smoke else 3)
    setup = suite.Setup(smoke=args.smoke, machine_path=machine_path, machine=Machine.load(machine_path))

    print("2. fitted kernel costs")
    for name in names:
        GROUPS[name].prepare(setup)
    cases = [case for name in names for case in GROUPS[name].cases(setup)]
    for note in setup.notes:
        print(f"  {note}")
    if not cases:
        print("no case can run here")
        return 1

    print(f"3. real programs: {len(cases)} cases x {repeats} quiet runs, interleaved")
    probes = suite.measure_interleaved(
        cases, repeats, pause=0.05 if args.smoke else 0.2, max_busy=args.max_busy, retry_rounds=retry_rounds
    )

    print("4. does the machine file still hold after the programs? (the uml2perf calibrate --check command)")
    machine_check = check_machine(machine_path, args.smoke, args.no_mpi, lambda line: print(line, flush=True))

    print(f"5. predictions ({args.samples} samples each for the intervals)")
    suite.predict_all(cases, setup, args.samples)

    rows = suite.rows_of(cases, args.smoke)
    suite.print_table(rows)
    summary = None if args.smoke else suite.summary_of(rows)
    if summary is not None:
        print(
            f"\nover {summary['cases']} cases with quiet runs: mean |error| "
            f"{summary['mean_abs_error_percent']:.1f}%, median {summary['median_abs_error_percent']:.1f}%, "
            f"max {summary['max_abs_error_percent']:.1f}%, {summary['within_10_percent']} within 10%; "
            f"90% intervals cover {summary['coverage_percent']:.0f}% of the measured medians, "
            f"median width {summary['median_interval_width_percent']:.0f}% of the prediction"
        )
        if summary["left_out"]:
            print(f"left out (no quiet run): {', '.join(summary['left_out'])}")
    elif args.smoke:
        print("\nNO ACCURACY REPORTED: a smoke run (tiny sizes, one run each) checks the loop, not accuracy.")
    else:
        print("\nNO ACCURACY REPORTED: no case got a quiet run (others kept the machine busy throughout).")
    disturbed = sum(len(case.disturbed) for case in cases)
    report = {
        "quiet": summary is not None,
        "others_busy_max": max((p.busy for p in probes), default=0.0),
        "disturbed_runs": disturbed,
        "max_busy": args.max_busy,
        "load_average_max": max((p.load_average for p in probes), default=0.0),
        "repeats": repeats,
        "samples": args.samples,
        "smoke": args.smoke,
        "calibration": calibration,
        "machine_check": machine_check,
        "kernel_costs": setup.costs,
        "kernel_cost_intervals": setup.spreads,
        "machine": machine_path.read_text(),
        "notes": setup.notes,
        "rows": rows,
        "summary": summary,
        "seconds": time.perf_counter() - started,
    }
    write_output(out_dir / "results.json", json.dumps(report, indent=2), what="results")
    title = "uml2perf validation" + (" (smoke)" if args.smoke else "")
    suite.plot(
        rows,
        title,
        lambda fig: write_output(
            out_dir / "results.png", lambda tmp: fig.savefig(tmp, format="png"), what="plot"
        ),
    )
    print(f"results written to {out_dir / 'results.json'} (and results.png) in {report['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
