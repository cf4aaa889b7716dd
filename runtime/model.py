"""What a generated model module imports as ``rt``: its declarations and its stand-alone CLI.

:class:`Element` and :class:`ModelSpec` are defined in ``uml2perf_runtime.spec`` (see there);
``count`` and ``bounded`` guard loop counts; :func:`main` runs a generated module on its own.

``main(spec)`` lets a generated module run on its own::

    python model.py --procs 8 --machine m.toml --set K=V --json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from .functions import bounded, count
from .spec import Element, ModelSpec

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
    parser = argparse.ArgumentParser(
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
    from .engine import simulate
    from .errors import SimulationError
    from .machine import Machine

    parser = build_parser(spec)
    args = parser.parse_args(argv)
    try:
        overrides = _parse_set(args.overrides)
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))
    try:
        machine = Machine.load(args.machine) if args.machine else None
        results = simulate(
            spec,
            machine=machine,
            procs=args.procs,
            nodes=args.nodes,
            overrides=overrides,
            seed=args.seed,
            placement=args.placement,
            trace=args.trace,
            max_time=args.max_time,
            max_iterations=args.max_iterations,
        )
    except SimulationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        if args.json:
            print(json.dumps(results.to_dict(), indent=2, allow_nan=False))
        else:
            sys.stdout.write(results.report())
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader (``| head``) has gone: end quietly, and keep Python from reporting the
        # failed flush of standard output at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 0


__all__ = ["Element", "ModelSpec", "main", "build_parser", "count", "bounded"]
