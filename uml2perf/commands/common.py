"""What every subcommand shares: exit statuses, option types and printing of untrusted text."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from ..errors import UsageError

EXIT_OK = 0
EXIT_PROBLEM = 1
EXIT_USAGE = 2


def parse_assignment(text: str) -> tuple[str, Any]:
    """Parse ``NAME=VALUE`` from ``--set`` into a name and a typed value."""
    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep or not name:
        raise UsageError(f"--set expects NAME=VALUE, got {text!r}")
    if not name.isidentifier():
        raise UsageError(f"--set: {name!r} is not a variable name")
    return name, parse_value(raw.strip())


def parse_value(raw: str) -> Any:
    """Numbers become int/float, true/false booleans; anything else stays text."""
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return raw


def overrides(items: Sequence[str] | None) -> dict[str, Any]:
    """Every ``--set NAME=VALUE`` option as a dict (a name given twice: the last one wins)."""
    values: dict[str, Any] = {}
    for item in items or ():
        name, value = parse_assignment(item)
        values[name] = value
    return values


def report_file(text: str) -> str:
    """``--report``'s file name: '-' is refused (the report is a file beside the terminal's text)."""
    if text == "-":
        raise argparse.ArgumentTypeError(
            "the report is one HTML file and does not go to standard output; give a file name, "
            "e.g. --report run.html"
        )
    return text


def positive_int(text: str) -> int:
    """An argparse type for counts (processes, nodes...): a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of at least 1, got {value}")
    return value


_CONTROL = {code: f"\\x{code:02x}" for code in (*range(0x09), *range(0x0B, 0x20), 0x7F)}
_CONTROL.update({code: f"\\x{code:02x}" for code in range(0x80, 0xA0)})


def printable(text: str) -> str:
    """Text with terminal control characters made visible (``\\x1b``), lines and tabs kept.

    Names come from model, sidecar and machine files: an escape sequence in
    one must not recolour, retitle or clear the user's terminal.
    """
    return text.translate(_CONTROL)


def print_warnings(warnings: Sequence[str], args: argparse.Namespace) -> None:
    """The model's warnings on standard error, or with ``--quiet`` one line counting them."""
    if getattr(args, "quiet", False):
        if warnings:
            print(
                f"{len(warnings)} warning{'s' if len(warnings) != 1 else ''} not shown (--quiet)",
                file=sys.stderr,
            )
        return
    for warning in warnings:
        print(printable(warning), file=sys.stderr)


def seconds(text: str) -> float:
    """An argparse type for a time in seconds: a finite number of at least 0 (``1e-3``, ``0.5``)."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds of at least 0, got {text!r}")
    return value


def add_default_cost_option(parser: argparse.ArgumentParser) -> None:
    """``--default-cost SECONDS``: the cost of every action of an export without one."""
    parser.add_argument(
        "--default-cost",
        type=seconds,
        metavar="SECONDS",
        help="cost of every action without one (as a sidecar's [defaults] cost, which it replaces)",
    )


def add_limit_option(parser: argparse.ArgumentParser) -> None:
    """The ``--limit NAME=N`` option of every command that reads a model."""
    parser.add_argument(
        "--limit",
        action="append",
        metavar="NAME=N",
        help="raise or lower a limit: input_bytes, processes, threads, nodes, cores, iterations, events, "
        "sweep_points, replications, devices, device_kinds, measurements, measured_points "
        "(see docs/security.md)",
    )
