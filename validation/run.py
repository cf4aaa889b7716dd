"""Measure real programs, fit their costs, predict them with uml2perf, and compare.

    python validation/run.py                # the whole suite (a few minutes, on a quiet machine)
    python validation/run.py --smoke        # tiny sizes, one repetition: checks the loop works, not accuracy
    python validation/run.py --only mpi     # one case group (threads, mpi)

Steps: (1) each case group measures what its models need on this machine
(micro-measurements of its kernels, timed the way its programs run them,
fitted by ``uml2perf fit``; the network from an MPI ping-pong); (2) every
real program runs ``--repeats`` times, the cases interleaved (round robin in
a shuffled order) so that slow phases of a shared machine hit every case
alike; (3) the Papyrus models beside the programs are predicted; (4) the
table (case, measured median and spread, predicted, error) is printed and
written as JSON and a plot.

Accuracy is reported only from a quiet machine: before every measured run
the suite pauses and reads how busy the CPUs were meanwhile (others' load,
not its own); when that exceeds ``--max-busy`` (default 10% of the machine)
in any run, the errors are withheld and the table says why.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import suite  # noqa: E402  (found through the sys.path entry just above)
from cases import GROUPS  # noqa: E402
from quiet import probe  # noqa: E402

from uml2perf_runtime.output.files import write_output  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repetition: correctness only")
    parser.add_argument("--repeats", type=int, default=None, help="runs of every case (default 7; smoke 1)")
    parser.add_argument(
        "--max-busy",
        type=float,
        default=0.10,
        help="quiet check: highest share of the CPUs others may use (default 0.10)",
    )
    parser.add_argument("--no-mpi", action="store_true", help="skip the MPI cases")
    parser.add_argument("--only", choices=sorted(GROUPS), action="append", help="run only these case groups")
    parser.add_argument(
        "--out", default=None, help="folder of results.json and results.png (default: a temp dir)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    repeats = args.repeats or (1 if args.smoke else 7)
    out_dir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="uml2perf-validation-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    names = args.only or [name for name in GROUPS if not (args.no_mpi and name == "mpi")]
    print(f"at start: {probe(0.5).describe()}; quiet means others busy ≤ {args.max_busy * 100:.0f}%")

    setup = suite.Setup(smoke=args.smoke)
    print("1. measuring this machine")
    for name in names:
        GROUPS[name].prepare(setup)
    cases = [case for name in names for case in GROUPS[name].cases(setup)]
    for note in setup.notes:
        print(f"  {note}")
    if not cases:
        print("no case can run here")
        return 1
    machine_text = setup.machine_text(os.cpu_count() or 1)
    machine_path = out_dir / "machine.toml"
    write_output(machine_path, machine_text, what="machine file")

    print(f"2. real programs: {len(cases)} cases x {repeats} runs, interleaved")
    probes = suite.measure_interleaved(cases, repeats, pause=0.05 if args.smoke else 0.2)

    print("3. predictions")
    suite.predict_all(cases, setup, machine_path)

    busiest = max(p.busy for p in probes)
    quiet = busiest <= args.max_busy and not args.smoke  # one tiny run of each case is no accuracy
    rows = suite.rows_of(cases, quiet)
    suite.print_table(rows, quiet, "smoke" if args.smoke else "loaded")
    summary = suite.summary_of(rows, quiet)
    if quiet:
        print(
            f"\nmean |error| {summary['mean_abs_error_percent']:.1f}%, "
            f"max {summary['max_abs_error_percent']:.1f}% (quiet: others busy ≤ {busiest * 100:.0f}%)"
        )
    elif args.smoke:
        print("\nNO ACCURACY REPORTED: a smoke run (tiny sizes, one run each) checks the loop, not accuracy.")
    else:
        print(
            f"\nNO ACCURACY REPORTED: the machine was loaded (others kept up to {busiest * 100:.0f}% of the "
            f"CPUs busy, quiet is ≤ {args.max_busy * 100:.0f}%). The errors above are of a loaded run "
            f"(mean {summary['mean_abs_error_percent']:.1f}%, max {summary['max_abs_error_percent']:.1f}%) "
            "and say nothing about uml2perf's accuracy."
        )
    report = {
        "quiet": quiet,
        "others_busy_max": busiest,
        "max_busy": args.max_busy,
        "load_average_max": max(p.load_average for p in probes),
        "repeats": repeats,
        "smoke": args.smoke,
        "kernel_costs": setup.costs,
        "machine": machine_text,
        "notes": setup.notes,
        "rows": rows,
        "summary": summary if quiet else None,
        "loaded_summary": None if quiet else summary,
        "seconds": time.perf_counter() - started,
    }
    write_output(out_dir / "results.json", json.dumps(report, indent=2), what="results")
    title = "uml2perf validation" + ("" if quiet else f" (LOADED machine, others busy {busiest * 100:.0f}%)")
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
    sys.exit(main())
