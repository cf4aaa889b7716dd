"""The ``uml2perf`` command line.

Each subcommand is one small function over :mod:`uml2perf.api`.  Every problem
a user can cause is a :class:`~uml2perf.errors.Uml2PerfError` (or a runtime
``SimulationError``) printed once, without a traceback, with exit status 1;
wrong usage exits with 2.  ``--debug`` shows the traceback for bug reports.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from . import __version__
from .commands.common import (
    EXIT_OK,
    EXIT_PROBLEM,
    EXIT_USAGE,
    add_default_cost_option,
    add_limit_option,
    overrides,
    positive_int,
    print_warnings,
    printable,
    report_file,
)
from .errors import Severity, Uml2PerfError, UsageError

# --------------------------------------------------------------------------- helpers


def _speedups(items: Sequence[str] | None) -> dict[str, float] | None:
    """``--speedup NAME=FACTOR`` options as a dict (the runtime checks names and factors)."""
    if not items:
        return None
    found: dict[str, float] = {}
    for item in items:
        name, sep, raw = item.rpartition("=")
        if not sep or not name.strip():
            raise UsageError(f"--speedup expects NAME=FACTOR, got {item!r}")
        try:
            factor = float(raw)
        except ValueError:
            from .errors import InputError

            raise InputError(
                f"--speedup {item}: the factor {raw!r} is not a number", hint="e.g. --speedup SFT=2"
            ) from None
        found[name.strip()] = factor
    return found


def _severity(text: str) -> float:
    """An argparse type for a severity: a number from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {value}")
    return value


def _print_diagnostics(diagnostics: Sequence[Any], stream: Any = sys.stderr) -> None:
    for diagnostic in diagnostics:
        print(printable(str(diagnostic)), file=stream)


def _refuse_overwriting_inputs(args: argparse.Namespace, outputs: dict[str, Any]) -> None:
    """Stop before any work when an output path names the model, the sidecar or the machine file."""
    from uml2perf_runtime.output.files import OutputError, refuse_inputs_as_outputs

    machine = getattr(args, "machine", None)
    inputs = [
        args.model,
        getattr(args, "sidecar", None),
        machine if machine and os.path.exists(machine) else None,
    ]
    try:
        refuse_inputs_as_outputs(outputs, inputs)
    except OutputError as exc:
        from .errors import InputError, Location

        raise InputError(exc.message, Location(file=str(args.model)), hint=exc.hint) from None


# --------------------------------------------------------------------------- subcommands


def cmd_convert(args: argparse.Namespace) -> int:
    """Write a generated representation of the model (Python by default)."""
    from .api import convert

    output = args.output
    if output is None:
        output = "-"
    _refuse_overwriting_inputs(args, {"output": output})
    _handlers_from_current_directory(args.handler)
    result = convert(
        args.model,
        output,
        handler=args.handler,
        activity=args.activity,
        sidecar=args.sidecar,
        default_cost=args.default_cost,
    )
    if result.path is None:
        sys.stdout.write(result.text)
    else:
        print(f"wrote {result.path} ({args.handler}, {line_count(result.text)} lines)", file=sys.stderr)
    warnings = [d for d in result.diagnostics if getattr(d, "severity", None) != Severity.INFO]
    print_warnings([str(d) for d in warnings], args)
    return EXIT_OK


#: Line boundaries of ``str.splitlines`` other than the newline; generated modules normally hold none.
_OTHER_LINE_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")


def line_count(text: str) -> int:
    """``len(text.splitlines())`` without building the lines (600,000 strings for a large model).

    Counting newlines gives the same number when the newline is the only line boundary in the text:
    ASCII text without the other boundaries ``splitlines`` knows; anything else is split as before.
    """
    if not text.isascii() or any(mark in text for mark in _OTHER_LINE_BREAKS):
        return len(text.splitlines())
    return text.count("\n") + (bool(text) and not text.endswith("\n"))


def cmd_run(args: argparse.Namespace) -> int:
    """Simulate the model and print the prediction."""
    from .api import predict

    _refuse_overwriting_inputs(
        args, {"trace file": args.trace, "plot": args.plot, "report": getattr(args, "report", None)}
    )
    if args.plot:  # a missing matplotlib or an unknown picture format stops the command before the run
        from .sweep_plot import check_plot_target

        check_plot_target(args.plot)
    report = getattr(args, "report", None)
    warnings: list[str] = []
    try:
        results = _predict_for_run(predict, args, warnings)
    except Uml2PerfError:
        print_warnings(warnings, args)  # what the model's warnings say comes before the error they explain
        raise
    print_warnings(warnings, args)
    note = default_processes_note(results, args.procs)
    if note:
        print(note, file=sys.stderr)
    # the prediction is printed first: a picture that cannot be written never loses it
    if args.json:
        from uml2perf_runtime.output.writers import render

        sys.stdout.write(str(render("run", "json", results)))
    else:
        from uml2perf_runtime.output.writers import render

        sys.stdout.write(printable(str(render("run", "text", results, top=args.top))))
        if args.trace:
            print(f"\ntrace written to {args.trace} (open it in https://ui.perfetto.dev or chrome://tracing)")
    sys.stdout.flush()
    if args.plot:
        results.write("plot", args.plot)
        print(f"plot written to {args.plot}", file=sys.stderr if args.json else sys.stdout)
    if report:
        from uml2perf_runtime.output.report import command_line

        results.write_report(report, command=command_line(args.argv))
        print(f"report written to {report}", file=sys.stderr if args.json else sys.stdout)
    return EXIT_OK


def _predict_for_run(predict: Any, args: argparse.Namespace, warnings: list[str]) -> Any:
    """``predict`` with the options of ``run``."""
    return predict(
        args.model,
        machine=args.machine,
        procs=args.procs,
        nodes=args.nodes,
        overrides=overrides(args.set),
        seed=args.seed,
        placement=args.placement,
        trace=args.trace or (True if args.plot or getattr(args, "report", None) else None),
        activity=args.activity,
        sidecar=args.sidecar,
        max_time=args.max_time,
        progress=args.progress if args.progress is not None else sys.stderr.isatty(),
        warnings=warnings,
        replications=args.replications,
        min_severity=args.min_severity,
        critical_path=True if args.critical_path else ("auto" if args.json else False),
        speedups=_speedups(args.speedup),
        rank_speedups=args.rank_speedups,
        default_cost=args.default_cost,
        allow_zero=args.allow_zero,
        samples=args.samples,
        level=args.level,
        interval=not args.no_interval,
        median_of=args.median_of,
    )


def _handlers_from_current_directory(handler: str) -> None:
    """Let ``--handler package.module:Class`` find a package in the current directory, not installed.

    ``python -m`` puts the current directory on the path; the installed ``uml2perf`` command does
    not.  It is added last, so an installed package of the same name (and the standard library)
    still wins, and only for the explicit ``module:Class`` form a user typed.
    """
    if ":" not in handler:
        return
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.append(here)


def default_processes_note(results: Any, procs: int | None) -> str | None:
    """A note when ``--procs`` was not given and the copies started by default never communicated.

    Without ``--procs`` a model runs one process per core.  A threads-only
    program is one process; run as several independent copies it shares the
    cores among them and its time grows without a word, so say so.
    """
    if procs is not None or getattr(results, "processes", 1) <= 1:
        return None
    rows = getattr(results, "per_process", None) or []
    if any(row.get("communication", 0) or row.get("wait", 0) for row in rows):
        return None
    return (
        f"note: no --procs given, so {results.processes} processes ran (one per core) and they never "
        "communicated; a threads-only program is one process: pass --procs 1"
    )


def cmd_check(args: argparse.Namespace) -> int:
    """List every problem of a model at once; exit 1 when any is an error."""
    from .api import default_cost_text
    from .check import check_file

    report = check_file(
        args.model,
        sidecar=args.sidecar,
        activity=args.activity,
        default_cost=default_cost_text(args.default_cost),
    )
    shown = [d for d in report.diagnostics if args.verbose or d.severity != Severity.INFO]
    if args.quiet:
        shown = [d for d in shown if d.severity == Severity.ERROR]
    _print_diagnostics(shown, sys.stdout)
    print(printable(report.summary(notes_hidden=not args.verbose)))
    return EXIT_PROBLEM if report.has_errors else EXIT_OK


def cmd_activities(args: argparse.Namespace) -> int:
    """List the activities of a file and which one is the main activity."""
    from .api import PYTHON_SUFFIXES, read
    from .profile import main_activity

    if os.path.splitext(str(args.model))[1] in PYTHON_SUFFIXES:
        return _module_activities(args.model)
    model = read(args.model, sidecar=args.sidecar)
    try:
        main = main_activity(model).id
    except Uml2PerfError:
        main = None
    print(f"{model.source}: {model.dialect} export, {len(model.activities)} activities")
    for activity in model.activities:
        nodes = sum(1 for _ in activity.walk())
        marker = "*" if activity.id == main else " "
        line = activity.location.line or "?"
        shown = printable(f"{activity.name or '<unnamed>'}  (xmi:id={activity.id}")
        print(f" {marker} {shown}, line {line}, {nodes} nodes)")
    if main is None and model.activities:
        print("no main activity could be chosen: pass --activity NAME to 'run'")
    return EXIT_OK


def _module_activities(path: str) -> int:
    """The activities a generated module can run (``--activity``), its main one marked."""
    from pathlib import Path

    from .api import module_spec

    spec = module_spec(Path(path))
    entries = [tuple(entry) for entry in spec.activities]
    print(printable(f"{path}: a module generated from {spec.source}, {len(entries)} activities"))
    for entry in entries:
        main = len(entry) >= 3 and spec.main is not None and entry[2] is spec.main
        name = entry[0] or "<unnamed>"
        print(f" {'*' if main else ' '} {printable(f'{name}  (xmi:id={entry[1]})')}")
    if spec.main is None and entries:
        print("no main activity: pass --activity NAME to 'run' or to the module")
    return EXIT_OK


def cmd_handlers(args: argparse.Namespace) -> int:
    """List the content handlers installed (built-in and from other packages)."""
    from .handlers.registry import available_handlers

    for info in available_handlers():
        print(f"{info.name:<12} {info.description}  [{info.origin}]")
    return EXIT_OK


def cmd_dialects(args: argparse.Namespace) -> int:
    """List the XMI dialects the reader detects."""
    from .reader import DIALECTS

    for dialect in DIALECTS:
        print(f"{dialect.name:<18} {dialect.description}")
    return EXIT_OK


# --------------------------------------------------------------------------- parser


def _apply_limits(args: argparse.Namespace) -> None:
    """The limits of this command: defaults, then UML2PERF_MAX_* variables, then --limit flags."""
    from uml2perf_runtime.engine.limits import LimitExceeded, Limits, parse_limit, set_current

    limits = Limits.from_environment()
    assignments: dict[str, int] = {}
    for item in getattr(args, "limit", None) or ():
        try:
            name, value = parse_limit(item)
        except LimitExceeded as exc:
            raise UsageError(exc.message) from None
        assignments[name] = value
    set_current(limits.with_overrides(assignments))


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    add_limit_option(parser)
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="do not list the model's warnings (errors still show)"
    )
    parser.add_argument("--activity", metavar="NAME", help="the activity to start from (name or xmi:id)")
    parser.add_argument(
        "--sidecar",
        metavar="FILE.toml",
        help="costs and stereotypes by element name or id, for plain exports",
    )
    add_default_cost_option(parser)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of every subcommand, or of the subcommand ``only`` alone.

    ``only`` names the subcommand a command line starts with (:func:`named_command`): argparse
    hands every word after it to that subcommand's parser, so the others' parsers (about a
    hundred options, a few milliseconds of every start-up) would be built and never read.
    """
    from uml2perf_runtime.arguments import SuggestingParser

    parser = SuggestingParser(
        prog="uml2perf",
        description="Predict the performance of parallel programs from UML activity diagrams.",
    )
    parser.add_argument("--version", action="version", version=f"uml2perf {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, add in _subcommands().items():
        if only is None or name == only:
            add(sub)
    for command in sub.choices.values():  # --debug also after the subcommand (uml2perf run X --debug)
        command.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks of errors"
        )
        if "--force" not in command._option_string_actions:
            command.add_argument(
                "--force",
                action="store_true",
                default=argparse.SUPPRESS,
                help="replace outputs that are read-only (mode 0444) too",
            )
    return parser


def _add_convert(sub: Any) -> None:
    convert = sub.add_parser(
        "convert", help="convert an XMI export into a Python performance model (or dot/json)"
    )
    convert.add_argument("model", help="XMI export (.uml, .xmi, .mdxml, .emx...)")
    convert.add_argument("-o", "--output", metavar="OUT", help="output file ('-' or absent: standard output)")
    convert.add_argument(
        "--handler", default="python", help="content handler: python, dot, json, or pkg.mod:Class"
    )
    _add_model_options(convert)
    convert.set_defaults(func=cmd_convert)


def _add_run(sub: Any) -> None:
    run = sub.add_parser("run", help="simulate a model and print the predicted time and where it goes")
    run.add_argument("model", help="XMI export or a generated model .py")
    run.add_argument(
        "--machine",
        metavar="FILE.toml|NAME",
        help="machine file, or a bundled machine: gescher, laptop, cluster-modern "
        "(default: 1 node x 4 cores)",
    )
    run.add_argument(
        "--procs", type=positive_int, metavar="N", help="number of processes (default: all cores)"
    )
    run.add_argument(
        "--nodes", type=positive_int, metavar="N", help="number of nodes to use (default: machine's)"
    )
    run.add_argument("--set", action="append", metavar="NAME=VALUE", help="override a model variable")
    run.add_argument("--seed", type=int, default=0, help="seed of the random choices (default 0)")
    run.add_argument("--placement", choices=("block", "round_robin"), help="process placement on nodes")
    run.add_argument("--trace", metavar="FILE.json", help="write a Perfetto / chrome://tracing trace")
    run.add_argument(
        "--plot", metavar="FILE.png", help="write a timeline and profile plot (needs matplotlib)"
    )
    run.add_argument("--json", action="store_true", help="print the results as one JSON object")
    run.add_argument(
        "--report",
        metavar="FILE.html",
        type=report_file,
        help="also write one self-contained HTML report: summary, diagram shaded by time, tables, "
        "findings, critical path, timeline",
    )
    run.add_argument(
        "--top", type=positive_int, default=15, metavar="N", help="elements shown in the profile"
    )
    run.add_argument("--max-time", type=float, metavar="SECONDS", help="stop at this simulated time")
    run.add_argument(
        "--replications",
        type=int,
        default=1,
        metavar="N",
        help="run N seeds and report mean, std and a 95%% confidence interval (default 1)",
    )
    run.add_argument(
        "--samples",
        type=positive_int,
        default=None,
        metavar="N",
        help="samples drawn through uncertain inputs { value, low, high } for the interval (default 200)",
    )
    run.add_argument(
        "--level",
        type=float,
        default=None,
        metavar="L",
        help="share of the samples the prediction interval holds (default 0.9)",
    )
    run.add_argument(
        "--median-of",
        type=positive_int,
        default=1,
        metavar="N",
        help="the interval is for the median of N launches of the program (default 1: one launch)",
    )
    run.add_argument(
        "--no-interval",
        action="store_true",
        help="predict at the values of uncertain inputs only (no samples, no interval)",
    )
    run.add_argument(
        "--speedup",
        action="append",
        metavar="NAME=FACTOR",
        help="predict as if element NAME (name or xmi id) were FACTOR times faster (repeatable)",
    )
    run.add_argument(
        "--rank-speedups",
        action="store_true",
        help="try each element that does work (actions, communication, critical sections) 2x faster, "
        "those on the critical path first, and list the gains",
    )
    run.add_argument(
        "--allow-zero",
        action="store_true",
        help="accept a prediction of 0 s from a model whose elements take time (an error otherwise)",
    )
    run.add_argument(
        "--critical-path",
        action="store_true",
        help="show the elements on the critical path (always part of --json)",
    )
    run.add_argument(
        "--min-severity",
        type=_severity,
        default=None,
        metavar="S",
        help="report performance properties of at least this severity (0..1, default 0.01)",
    )
    run.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a status line during long runs (default: when standard error is a terminal)",
    )
    _add_model_options(run)
    run.set_defaults(func=cmd_run)


def _add_check(sub: Any) -> None:
    check = sub.add_parser("check", help="list the problems of a model (file:line, element id and name)")
    check.add_argument("model")
    check.add_argument("-v", "--verbose", action="store_true", help="also show informational notes")
    _add_model_options(check)
    check.set_defaults(func=cmd_check)


def _add_activities(sub: Any) -> None:
    activities = sub.add_parser("activities", help="list the activities of a file and the main one")
    activities.add_argument("model")
    activities.add_argument("--sidecar", metavar="FILE.toml")
    activities.set_defaults(func=cmd_activities)


def _add_handlers(sub: Any) -> None:
    handlers = sub.add_parser("handlers", help="list the installed content handlers")
    handlers.set_defaults(func=cmd_handlers)


def _add_dialects(sub: Any) -> None:
    dialects = sub.add_parser("dialects", help="list the UML tools whose exports are read")
    dialects.set_defaults(func=cmd_dialects)


def _extra(module: str) -> Callable[[Any], None]:
    """The ``register_command`` of a module of :mod:`uml2perf.commands`, imported when called."""

    def add(sub: Any) -> None:
        from importlib import import_module

        import_module(f".commands.{module}", __package__).register_command(sub)

    return add


def _subcommands() -> dict[str, Callable[[Any], None]]:
    """Each subcommand's name and the function that adds its parser, in the order ``--help`` lists them.

    The subcommands kept in :mod:`uml2perf.commands` (one module each) are imported only when
    their parser is built.
    """
    return {
        "convert": _add_convert,
        "run": _add_run,
        "check": _add_check,
        "activities": _add_activities,
        "handlers": _add_handlers,
        "dialects": _add_dialects,
        **{name: _extra(name) for name in EXTRA_COMMANDS},
    }


#: Subcommands whose parsers are kept in :mod:`uml2perf.commands`, each in the module of its name.
EXTRA_COMMANDS = ("sweep", "fit", "calibrate", "compare")


def named_command(argv: Sequence[str]) -> str | None:
    """The subcommand a command line names, when its first word is one (``uml2perf run ...``).

    Only the first word counts: before it could stand an option of ``uml2perf`` itself, and then
    the whole parser is built as before.
    """
    if argv and argv[0] in _subcommands():
        return str(argv[0])
    return None


def _is_simulation_error(exc: BaseException) -> bool:
    """True for the runtime's own errors (deadlock, limits, model faults), without importing it eagerly."""
    errors = sys.modules.get("uml2perf_runtime.errors")
    base = getattr(errors, "SimulationError", None)
    return base is not None and isinstance(exc, base)


def _report_error(exc: BaseException, debug: bool) -> int:
    if debug:
        _print_traceback()
    message = printable(str(exc))
    print(f"error: {message}", file=sys.stderr)
    return EXIT_USAGE if isinstance(exc, UsageError) else EXIT_PROBLEM


def _print_traceback() -> None:
    """The traceback of the exception being handled, quoting generated models' lines too."""
    import traceback

    from uml2perf_runtime.engine.sources import install

    install()
    traceback.print_exc()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``uml2perf`` command; returns the exit status."""
    _plain_warnings()
    from uml2perf_runtime.arguments import parse_args

    words = sys.argv[1:] if argv is None else [str(a) for a in argv]
    parser = build_parser(only=named_command(words))
    args = parse_args(parser, argv)  # "did you mean" for mistyped subcommands, options and choices
    # what a report shows as the command: as typed, or as given to main() by a program
    args.argv = ["uml2perf", *words]
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    # the console script and `python -m uml2perf` call main() without arguments: the process is this command
    if argv is None and args.func in _ONE_SHOT:
        # convert, check and run build hundreds of thousands of small objects and then the process ends:
        # no collection while they run, and what is left is frozen so the collection at exit skips it
        from uml2perf_runtime.engine.collector import collector_paused
        from uml2perf_runtime.engine.sources import defer

        defer()  # generated lines go to linecache only when an error or --debug reads them
        with collector_paused(freeze=True):
            return _run(args)
    return _run(args)


def _plain_warnings() -> None:
    """Python warnings (an unsafe cache folder, say) print as one ``warning:`` line, without source code."""
    import warnings

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: Any = None,
        line: str | None = None,
    ) -> None:
        print(f"warning: {printable(str(message))}", file=file or sys.stderr)

    warnings.showwarning = show


def _run(args: argparse.Namespace) -> int:
    """Run the chosen subcommand; every problem becomes a message and an exit status."""
    debug = args.debug or bool(os.environ.get("UML2PERF_DEBUG"))
    try:
        _apply_limits(args)
        if getattr(args, "force", False):
            from uml2perf_runtime.output.files import set_force

            set_force(True)
        return int(args.func(args) or EXIT_OK)
    except Uml2PerfError as exc:
        return _report_error(exc, debug)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)  # no complaint about the flush at exit
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:  # an unexpected failure is a bug in uml2perf: say so plainly
        if _is_simulation_error(exc):
            return _report_error(exc, debug)
        if debug:
            _print_traceback()
        print(
            f"internal error: {type(exc).__name__}: {printable(str(exc))}\n"
            "  this is a bug in uml2perf; run again with --debug and report the traceback",
            file=sys.stderr,
        )
        return EXIT_PROBLEM


#: Subcommands that read a model, write or print the result and end (see :func:`main`).  ``run``
#: builds a simulation of up to millions of objects and then its results and report: a collection
#: pass over them frees nothing and cost a third of a 32,768-process run's time after the loop.
#: Several simulations in one command free their predecessors' cycles themselves (``release_cycles``).
_ONE_SHOT = (cmd_convert, cmd_check, cmd_run)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
