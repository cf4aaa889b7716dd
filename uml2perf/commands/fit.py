"""``uml2perf fit``: the options, and the fit of :mod:`uml2perf.fit` they ask for."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import InputError, Location, UsageError
from .common import EXIT_OK, add_limit_option


def cmd_fit(args: argparse.Namespace) -> int:
    """Fit PMNF models to measurements and print, write or plot them."""
    from uml2perf_runtime.output.files import write_output

    from ..fit import Model, fit_model, plot_models, read_measurements, report_text, sidecar_text

    if args.plot:  # a missing matplotlib or an unknown picture format stops before the fit
        from ..sweep_plot import check_plot_target

        check_plot_target(args.plot)
    models: list[Model] = []
    for data in read_measurements(args.measurements, metric=args.metric):
        if args.element and data.element not in (None, *args.element):
            continue
        models.append(fit_model(data, negative=not args.no_negative))
    if not models:
        raise InputError(
            f"no element named {', '.join(args.element)} in the measurements",
            Location(file=args.measurements),
        )
    mapping = _parameter_mapping(args.as_variable or (), models)
    named: list[tuple[str, Model]] = []
    for model in models:
        if model.data.element is None and args.name:
            model.data.element = args.name  # the element the data is about, in every output
        name = model.data.element
        if args.sidecar and not name:
            raise UsageError(
                "--sidecar needs the element's name: add an 'element' column or pass --name NAME"
            )
        named.append((name or "", model))
    if args.sidecar:
        write_output(args.sidecar, sidecar_text(named, mapping), what="sidecar", inputs=(args.measurements,))
    if args.json:
        import json

        objects = [m.to_dict() for m in models]
        json.dump(objects[0] if len(objects) == 1 else objects, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        for model in models:
            sys.stdout.write(report_text(model))
        if args.sidecar:
            print(f"sidecar written to {args.sidecar}")
    for model in models:
        warning = model.warning()
        if warning:
            element = f"{model.data.element}: " if model.data.element else ""
            print(f"{args.measurements}: warning: {element}{warning}", file=sys.stderr)
    if args.plot:  # last: the fitted models are printed whatever happens to the picture
        sys.stdout.flush()
        plot_models(models, args.plot)
        print(f"plot written to {args.plot}", file=sys.stderr if args.json else sys.stdout)
    return EXIT_OK


def _parameter_mapping(pairs: Any, models: list[Any]) -> dict[str, str]:
    """``--as PARAMETER=VARIABLE`` pairs, checked against the parameters of the measurements."""
    known = sorted({p for model in models for p in model.parameters})
    mapping: dict[str, str] = {}
    for pair in pairs:
        parameter, sep, variable = pair.partition("=")
        parameter, variable = parameter.strip(), variable.strip()
        if not sep or not parameter or not variable.isidentifier():
            raise UsageError(
                f"--as {pair}: write PARAMETER=VARIABLE, e.g. --as n=NAT (the variable a model name)"
            )
        if parameter not in known:
            import difflib

            close = difflib.get_close_matches(parameter, known, 1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise UsageError(
                f"--as {pair}: the measurements have no parameter {parameter!r}{hint}; they have "
                + ", ".join(known)
            )
        mapping[parameter] = variable
    return mapping


def register_command(sub: Any) -> None:
    """Add ``fit`` to the subcommands of the ``uml2perf`` parser."""
    fit = sub.add_parser(
        "fit",
        help="fit cost functions (PMNF models, as Extra-P does) to measurements",
        description="Search sums of c*x^i*log2(x)^j terms for the model of each element's measurements, "
        "chosen by cross-validated SMAPE; print it as an expression of the model language.",
    )
    fit.add_argument(
        "measurements",
        help="CSV (parameter columns, 'time', optional 'element'), "
        "or an Extra-P text (.txt) or JSON input file",
    )
    fit.add_argument("--metric", metavar="NAME", help="the metric column or Extra-P metric (default: time)")
    fit.add_argument("--element", action="append", metavar="NAME", help="fit only this element (repeatable)")
    fit.add_argument("--name", metavar="NAME", help="element name for --sidecar when the data names none")
    fit.add_argument(
        "--json", action="store_true", help="print one JSON object (a list for several elements)"
    )
    fit.add_argument(
        "--sidecar", metavar="OUT.toml", help='write [elements."NAME"] cost entries for run --sidecar'
    )
    fit.add_argument(
        "--as",
        dest="as_variable",
        action="append",
        metavar="PARAM=VAR",
        help="write parameter PARAM of the measurements as model variable VAR in --sidecar costs "
        "(repeatable; parameters not mapped are declared under [variables])",
    )
    fit.add_argument("--plot", metavar="FILE.png", help="draw measurements, model and prediction interval")
    fit.add_argument(
        "--no-negative",
        action="store_true",
        help="search only non-negative exponents (quantities that never shrink)",
    )
    add_limit_option(fit)
    fit.set_defaults(func=cmd_fit)
