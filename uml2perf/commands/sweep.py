"""``uml2perf sweep``: the options, and the run of :mod:`uml2perf.sweep` they ask for."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import Uml2PerfError, UsageError
from .common import (
    EXIT_OK,
    add_default_cost_option,
    add_limit_option,
    overrides,
    positive_int,
    printable,
    report_file,
)


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run the model over the Cartesian grid and print (or write) one row per point."""
    from uml2perf_runtime.output import writers
    from uml2perf_runtime.output.files import refuse_inputs_as_outputs

    from ..sweep import axis_names, parse_grid, sweep

    inputs = (
        args.model,
        args.sidecar,
        args.machine if args.machine and os.path.exists(args.machine) else None,
    )
    refuse_inputs_as_outputs(
        {"CSV file": args.csv, "JSON file": args.json, "plot": args.plot, "report": args.report}, inputs
    )
    if args.plot:
        from ..sweep_plot import check_plot_target

        check_plot_target(args.plot)
    grid_text = parse_grid(args.grid or [])
    if args.plot and not any("procs" in axis_names(key) for key in grid_text):
        raise UsageError(
            f"--plot {args.plot} draws scaling over processes: sweep procs (e.g. --grid procs=1,2,4,8)"
        )
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    warnings: list[str] = []
    try:
        result = _sweep_for_command(sweep, args, grid_text, warnings)
    except Uml2PerfError:
        for warning in warnings:  # what the model's warnings say comes before the error they explain
            print(printable(warning), file=sys.stderr)
        raise
    for warning in warnings:
        print(printable(warning), file=sys.stderr)
    if args.csv:
        _write(result, "csv", args.csv, inputs)
    if args.json:
        _write(result, "json", args.json, inputs, model=str(args.model))
    if args.csv != "-" and args.json != "-":
        sys.stdout.write(printable(str(writers.render("sweep", "text", result))))
    sys.stdout.flush()
    for prop in result.properties:
        if prop["severity"] >= 0.01:
            print(
                f"finding: non_scalability {prop['severity']:.2f}: {printable(prop['hint'])}",
                file=sys.stderr,
            )
    for note in dict.fromkeys(result.notes):
        print(f"note: {printable(note)}", file=sys.stderr)
    if args.report:
        from uml2perf_runtime.output.report import command_line

        _write(result, "report", args.report, inputs, command=command_line(getattr(args, "argv", None)))
        print(f"report written to {args.report}", file=sys.stderr)
    if args.plot:  # last: the table and the files are written whatever happens to the picture
        _write(result, "plot", args.plot, inputs)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return EXIT_OK


def _sweep_for_command(sweep: Any, args: argparse.Namespace, grid_text: Any, warnings: list[str]) -> Any:
    """``sweep`` with the options of the command."""
    return sweep(
        args.model,
        grid_text,
        machine=args.machine,
        fixed=overrides(args.set),
        procs=args.procs,
        nodes=args.nodes,
        seed=args.seed,
        placement=args.placement,
        analytic=not args.no_analytic,
        workers=args.workers,
        dask_address=args.dask,
        replications=args.replications,
        activity=args.activity,
        sidecar=args.sidecar,
        default_cost=args.default_cost,
        progress=args.progress or sys.stderr.isatty(),
        warnings=warnings,
        allow_zero=args.allow_zero,
        samples=args.samples,
        level=args.level,
        interval=not args.no_interval,
        median_of=args.median_of,
    )


def _write(
    result: Any, format: str, target: str, inputs: tuple[str | None, ...] = (), **options: Any
) -> None:
    """The sweep in ``format`` to standard output (``-``) or, by its result writer, into ``target``."""
    from uml2perf_runtime.output import writers

    if target == "-":
        sys.stdout.write(str(writers.render("sweep", format, result, **options)))
        return
    from uml2perf_runtime.output.files import OutputError

    from ..errors import InputError, Location

    try:
        writers.write("sweep", format, result, Path(target), inputs=inputs, **options)
    except OutputError as exc:
        raise InputError(exc.message, Location(file=str(target)), hint=exc.hint) from None


def register_command(sub: Any) -> None:
    """Add ``sweep`` to the subcommands of the ``uml2perf`` parser."""
    sweep = sub.add_parser(
        "sweep",
        help="predict a model over a grid of processes, nodes and parameter values",
        description="Run the model over the Cartesian product of every --grid option. Points of "
        "bulk-synchronous models are evaluated analytically; the others are simulated in "
        "parallel.",
    )
    sweep.add_argument("model", help="XMI export or a generated model .py")
    sweep.add_argument(
        "--grid",
        action="append",
        metavar="NAME=V1,V2,...",
        help="values of procs, nodes or a model variable (repeat for more axes); "
        "A:B=a1:b1,a2:b2 moves several together, e.g. nodes:procs=1:4,2:8",
    )
    sweep.add_argument(
        "--machine",
        metavar="FILE.toml|NAME",
        help="machine file or bundled machine name (default: 1 node x 4 cores)",
    )
    sweep.add_argument("--procs", type=positive_int, metavar="N", help="processes when procs is not swept")
    sweep.add_argument("--nodes", type=positive_int, metavar="N", help="nodes when nodes is not swept")
    sweep.add_argument("--set", action="append", metavar="NAME=VALUE", help="fix a model variable")
    sweep.add_argument("--seed", type=int, default=0, help="seed of the random choices (default 0)")
    sweep.add_argument(
        "--samples",
        type=positive_int,
        default=None,
        metavar="N",
        help="samples per point through uncertain inputs { value, low, high } (default 200)",
    )
    sweep.add_argument(
        "--level",
        type=float,
        default=None,
        metavar="L",
        help="share the time_low..time_high columns hold (0.9)",
    )
    sweep.add_argument(
        "--median-of",
        type=positive_int,
        default=1,
        metavar="N",
        help="time_low/time_high for the median of N launches of the program (default 1)",
    )
    sweep.add_argument("--no-interval", action="store_true", help="no time_low/time_high columns")
    sweep.add_argument("--placement", choices=("block", "round_robin"), help="process placement on nodes")
    sweep.add_argument("--workers", type=int, metavar="N", help="local worker processes (default: all cores)")
    sweep.add_argument("--dask", metavar="ADDRESS", help="simulate on a Dask cluster (tcp://host:port)")
    out = sweep.add_mutually_exclusive_group()
    out.add_argument("--csv", metavar="FILE", help="also write the rows as CSV ('-': standard output only)")
    out.add_argument("--json", metavar="FILE", help="also write the rows as JSON ('-': standard output only)")
    sweep.add_argument("--no-analytic", action="store_true", help="simulate every point")
    sweep.add_argument(
        "--replications",
        type=int,
        default=1,
        metavar="N",
        help="simulate each point with N seeds: mean time, std and 95%% interval columns",
    )
    sweep.add_argument(
        "--allow-zero",
        action="store_true",
        help="accept points predicted at 0 s from a model whose elements take time (an error otherwise)",
    )
    sweep.add_argument(
        "--plot",
        metavar="FILE.png",
        help="draw time, speedup, efficiency and the breakdown "
        "over the swept process counts (needs matplotlib)",
    )
    sweep.add_argument(
        "--report",
        metavar="FILE.html",
        type=report_file,
        help="also write one self-contained HTML report: time, speedup, efficiency and the "
        "breakdown over the grid, findings and the table",
    )
    sweep.add_argument(
        "--progress", action="store_true", help="show progress even when stderr is not a terminal"
    )
    sweep.add_argument("--activity", metavar="NAME", help="the activity to start from (name or xmi:id)")
    sweep.add_argument("--sidecar", metavar="FILE.toml", help="costs and stereotypes for plain exports")
    add_default_cost_option(sweep)
    add_limit_option(sweep)
    sweep.set_defaults(func=cmd_sweep)
