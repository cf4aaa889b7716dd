"""What a generated model module hands to the runtime, and its stand-alone CLI.

A generated module declares one :class:`Element` per performance-modelling
element (action, call, loop, communication, pattern...) and one
:class:`ModelSpec` that ties the elements to the generated functions:

* ``init(p, v)`` sets the model variables of one process on the namespace ``v``
  (reading ``--set`` overrides through ``p.param``);
* ``main(p, v)`` is the generator function of the main activity.

``Element.index`` is the element's position in ``ModelSpec.elements``: the
runtime keeps its statistics in flat lists indexed by it, which is what makes
recording an operation a handful of float additions.

``main(spec)`` lets a generated module run on its own::

    python model.py --procs 8 --machine m.toml --set K=V --json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .functions import bounded, count


class Element:
    """One performance-modelling element of the UML model.

    ``kind`` is a short word such as ``"action"``, ``"activity"``, ``"loop"``,
    ``"send"``, ``"parallel"``; ``xmi_id`` and ``line`` point back into the XMI
    file so every message and profile row can be traced to the diagram.
    """

    __slots__ = ("index", "name", "kind", "xmi_id", "line")

    def __init__(
        self, index: int, name: str, kind: str = "action", xmi_id: str | None = None, line: int | None = None
    ) -> None:
        self.index = index
        self.name = name
        self.kind = kind
        self.xmi_id = xmi_id
        self.line = line

    def describe(self) -> str:
        """``'A1' (xmi:id=_a1, line 12)``: how messages name this element."""
        where = []
        if self.xmi_id:
            where.append(f"xmi:id={self.xmi_id}")
        if self.line:
            where.append(f"line {self.line}")
        return f"'{self.name}' ({', '.join(where)})" if where else f"'{self.name}'"

    def as_dict(self) -> dict[str, Any]:
        """The element's identity as JSON-ready data."""
        return {"name": self.name, "id": self.xmi_id, "kind": self.kind, "line": self.line}

    def __repr__(self) -> str:
        return f"Element({self.index!r}, {self.name!r}, {self.kind!r}, {self.xmi_id!r}, {self.line!r})"


def _no_init(p: Any, v: Any) -> None:
    """Default ``init``: a model without variables."""


@dataclass(frozen=True)
class ModelSpec:
    """A generated performance model, ready for :func:`uml2perf_runtime.simulate`.

    ``parameters`` is a sequence of ``(name, default)`` pairs: the model
    variables that ``--set NAME=VALUE`` may override; the type of the default
    decides how a textual override is converted.  ``activities`` is free-form
    metadata about the model's activities (names, ids) for tools.
    """

    name: str
    source: str
    elements: Sequence[Element]
    init: Callable[[Any, Any], Any] = _no_init
    main: Callable[[Any, Any], Any] | None = None
    parameters: Sequence[tuple[str, Any]] = ()
    activities: Sequence[Any] = field(default=())

    def parameter_names(self) -> list[str]:
        """Names of the overridable model variables, in model order."""
        return [name for name, _ in self.parameters]


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
