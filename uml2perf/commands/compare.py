"""``uml2perf compare``: the options, and the comparison of :mod:`uml2perf.compare` they ask for."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import EXIT_OK, positive_int, printable


def cmd_compare(args: argparse.Namespace) -> int:
    """Compare two saved predictions and print the table (or JSON)."""
    from ..compare import compare, format_comparison, load_result

    result = compare(load_result(args.a), load_result(args.b), a_name=args.a, b_name=args.b)
    if args.json:
        import json

        json.dump(result, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(printable(format_comparison(result, args.top)))
    return EXIT_OK


def register_command(sub: Any) -> None:
    """Add ``compare`` to the subcommands of the ``uml2perf`` parser."""
    parser = sub.add_parser("compare", help="compare two saved predictions (run --json) side by side")
    parser.add_argument("a", metavar="A.json", help="the first saved prediction")
    parser.add_argument("b", metavar="B.json", help="the second saved prediction")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument(
        "--top", type=positive_int, default=15, metavar="N", help="elements shown (default 15)"
    )
    parser.set_defaults(func=cmd_compare)
