"""What a generated model module imports as ``rt``: its declarations and its stand-alone CLI.

:class:`Element` and :class:`ModelSpec` are defined in ``uml2perf_runtime.spec`` (see there);
``count`` and ``bounded`` guard loop counts; :func:`main` runs a generated module on its own.

``main(spec)`` lets a generated module run on its own::

    python model.py --procs 8 --machine m.toml --set K=V --json
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from .arguments import SuggestingParser, parse_args
from .errors import SimulationError
from .functions import bounded, count
from .spec import Element, ModelSpec

# Choosing the activity and checking the variables -------------------------------


def _describe_activities(entries: Sequence[Sequence[Any]]) -> str:
    return ", ".join(f"{entry[0]!r} [xmi:id={entry[1]}]" for entry in entries)


def choose_activity(spec: ModelSpec, activity: str | None = None) -> ModelSpec:
    """The model to run: ``spec`` with ``activity`` (a name or xmi id) as its main activity.

    Without ``activity`` a model whose main activity could not be told (several activities,
    none marked) is refused with the list of its activities, as ``uml2perf run`` does on the
    XMI file: running nothing would predict 0 s.
    """
    entries = [tuple(entry) for entry in spec.activities]
    if activity is None:
        if spec.main is not None or not entries:
            return spec
        raise ModelSetupError(
            f"{spec.source}: cannot tell which activity is the main one; "
            f"candidates: {_describe_activities(entries)}",
            hint="stereotype one activity «main», name it MainActivity, or choose with --activity NAME",
        )
    found = [e for e in entries if activity in (e[1], e[0])]
    by_id = [e for e in found if e[1] == activity]
    found = by_id or found
    if len(found) != 1:
        what = "several activities are" if found else "no activity is"
        raise ModelSetupError(
            f"{spec.source}: {what} named {activity!r}; activities: {_describe_activities(entries)}",
            hint="choose one by its xmi:id with --activity ID" if found else "check the name",
        )
    entry = found[0]
    if len(entry) < 3 or not callable(entry[2]):
        raise ModelSetupError(
            f"{spec.source}: this module was generated before a module could run a chosen activity",
            hint=f"regenerate it: uml2perf convert MODEL --activity {activity!r} -o MODULE.py",
        )
    return spec._replace(main=entry[2])


def unset_variables_message(names: Sequence[str]) -> tuple[str, str]:
    """The message and hint of a run stopped by variables without a value (one text everywhere)."""
    shown = ", ".join(names)
    settings = " ".join(f"--set {n}=VALUE" for n in names[:6]) + (" ..." if len(names) > 6 else "")
    table = "\n".join(f'    {n} = "VALUE"' for n in names[:6]) + ("\n    ..." if len(names) > 6 else "")
    return (
        f"{len(names)} variable{'s' if len(names) > 1 else ''} without a value: {shown} "
        "(declared by a MARTE analysis context or used as $name in a MARTE value, with no value given)",
        f"give each a value on the command line: {settings}\n"
        f"  or in a sidecar file passed with --sidecar FILE.toml:\n    [variables]\n{table}",
    )


def _running_activity(spec: ModelSpec) -> str | None:
    """The xmi id of the activity ``spec`` runs (None when its module does not say)."""
    for entry in spec.activities:
        if len(entry) >= 3 and entry[2] is spec.main:
            return str(entry[1])
    return None


def require_values(spec: ModelSpec, given: Iterable[str]) -> None:
    """Refuse to run a model that declares variables without a value that ``given`` does not set.

    ``spec.required`` holds ``(name, where)`` pairs, or ``(name, where, activity id)`` triples
    that count only when that activity is the one run.
    """
    supplied = set(given)
    running = _running_activity(spec)
    missing = list(
        {
            entry[0]: (entry[0], entry[1])
            for entry in reversed(spec.required)  # the first declaration of a name wins
            if entry[0] not in supplied and (len(entry) < 3 or running is None or entry[2] == running)
        }.values()
    )[::-1]
    if missing:
        message, hint = unset_variables_message([name for name, _ in missing])
        raise ModelSetupError(f"{missing[0][1]}: {message}", hint=hint)


def require_time(spec: ModelSpec, results: Any) -> None:
    """Refuse a prediction of 0 s: nothing in the model took time, which its author never means."""
    if results.time == 0 and not any(row.get("exclusive") for row in results.elements):
        raise ModelSetupError(
            f"{spec.source}: nothing in this model took time, so the prediction would be 0 s",
            hint="give its actions costs and convert it again: an action+ cost tag, a sidecar "
            "(--sidecar FILE.toml) with [defaults] cost, or --default-cost SECONDS",
        )


class ModelSetupError(SimulationError):
    """The model cannot start: no main activity chosen, or a variable without a value."""


# Stand-alone command line ------------------------------------------------------


def _parse_set(values: Sequence[str]) -> dict[str, str]:
    """``["K=V", ...]`` -> ``{"K": "V"}``; values stay text, the runtime converts them."""
    overrides: dict[str, str] = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise argparse.ArgumentTypeError(f"--set expects NAME=VALUE, got {item!r}")
        overrides[name.strip()] = value.strip()
    return overrides


def build_parser(spec: ModelSpec) -> argparse.ArgumentParser:
    """The argument parser of a stand-alone generated module."""
    parser = SuggestingParser(
        prog=f"python {spec.name}.py",
        description=f"Evaluate the performance model '{spec.name}' (from {spec.source}).",
    )
    parser.add_argument(
        "--machine",
        metavar="FILE",
        help="machine file (TOML) or the name of a bundled machine (gescher, laptop, "
        "cluster-modern); default: 1 node x 4 cores",
    )
    parser.add_argument("--procs", type=int, metavar="N", help="number of processes (default: nodes x cores)")
    parser.add_argument("--nodes", type=int, metavar="N", help="override the machine's node count")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="K=V",
        dest="overrides",
        help="override a model variable (repeatable)",
    )
    parser.add_argument(
        "--activity", metavar="NAME", help="the activity to run (name or xmi:id; default: the main one)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--placement", choices=("block", "round_robin"), help="process placement")
    parser.add_argument("--trace", metavar="FILE", help="write a Chrome/Perfetto trace (JSON)")
    parser.add_argument("--max-time", type=float, metavar="SECONDS", help="stop at this simulated time")
    parser.add_argument(
        "--max-iterations",
        type=int,
        metavar="N",
        help="stop a loop after N iterations per process (default 10,000,000)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument(
        "--report", metavar="FILE.html", help="also write one self-contained HTML report of the run"
    )
    return parser


def main(spec: ModelSpec, argv: Sequence[str] | None = None, *, exit: bool = True) -> int:
    """Run ``spec`` from the command line; exit status 0 ok, 1 model problem, 2 usage.

    With ``exit`` (the default, as ``rt.main(MODEL)`` at the end of a generated
    module) the process exits with that status; otherwise it is returned.
    """
    code = _run(spec, argv)
    if exit:
        sys.exit(code)
    return code


def _run(spec: ModelSpec, argv: Sequence[str] | None) -> int:
    from .engine.simulation import simulate
    from .errors import SimulationError
    from .platform.machine import Machine

    parser = build_parser(spec)
    args = parse_args(parser, argv)
    try:
        overrides = _parse_set(args.overrides)
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))
    try:
        spec = choose_activity(spec, args.activity)
        require_values(spec, overrides)
        machine = Machine.load(args.machine) if args.machine else None
        # a report draws the timeline: keep it in memory (True) when no trace file is asked for
        trace: Any = args.trace or (True if args.report else None)
        results = simulate(
            spec,
            machine=machine,
            procs=args.procs,
            nodes=args.nodes,
            overrides=overrides,
            seed=args.seed,
            placement=args.placement,
            trace=trace,
            max_time=args.max_time,
            max_iterations=args.max_iterations,
        )
        require_time(spec, results)
    except SimulationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    from .output.writers import render

    try:
        sys.stdout.write(str(render("run", "json" if args.json else "text", results)))
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader (``| head``) has gone: end quietly, and keep Python from reporting the
        # failed flush of standard output at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    if args.report:
        from .output.report import command_line

        try:
            results.write_report(args.report, command=command_line())
        except SimulationError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"report written to {args.report}", file=sys.stderr)
    return 0


__all__ = [
    "Element",
    "ModelSetupError",
    "ModelSpec",
    "bounded",
    "build_parser",
    "choose_activity",
    "count",
    "main",
    "require_time",
    "require_values",
    "unset_variables_message",
]
