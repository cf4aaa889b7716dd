"""``uml2perf calibrate``: the options, and the measurement of :mod:`uml2perf.calibrate` they ask for."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from ..errors import InputError, Location
from .common import EXIT_OK, positive_int

#: Measurements printed under the key the machine file gives them: the one-core matrix product is
#: the file's ``peak_flops``; the all-core rate is only a comment there.
PRINTED_NAMES = {"core_flops": "peak_flops", "peak_flops": "all-core flops"}


def printed_name(key: str) -> str:
    """A measurement as the summary prints it: a cache row by its working set, others by their key."""
    kind, _, size = key.partition(" ")
    if kind in ("cache_core", "cache_node") and size.isdigit():
        return f"cache {int(size):,} B, {'one core' if kind == 'cache_core' else 'all cores'}"
    if kind == "first_touch" and size.isdigit():
        return f"first_touch, {int(size):,} B blocks"
    if kind == "weight":
        return f"flops per {size}"
    return PRINTED_NAMES.get(key, key)


#: Launches of every measurement (kept equal to ``uml2perf.calibrate.DEFAULT_LAUNCHES``, which the
#: parser does not import: numpy would load with every command).
DEFAULT_LAUNCHES = 4


#: Exit status of ``calibrate --check`` when the machine has moved from the file.
EXIT_MOVED = 3


def cmd_check(args: argparse.Namespace) -> int:
    """Measure a quick subset of the keys now and say whether the machine file still holds."""
    from uml2perf_runtime.platform.machine import Machine

    from ..drift import check_machine, holds, report_lines

    machine = Machine.load(args.check)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    step = [0]

    def say(message: str) -> None:
        step[0] += 1
        print(f"[{step[0]}] {message} ...", file=sys.stderr, flush=True)

    started = time.perf_counter()
    checks = check_machine(machine, repeats=args.repeats, mpi=not args.no_mpi, progress=say)
    print(
        f"{args.check} against this machine now ({time.perf_counter() - started:.1f} s; load average "
        f"{load:.2f} on {os.cpu_count() or 1} cores):"
    )
    for line in report_lines(checks, str(args.check)):
        print(line)
    if load > 0.5 * (os.cpu_count() or 1):
        print(
            "note: the machine was busy during the check (load average above half its cores): keys "
            "outside their intervals may be other programs' doing; check again when it is quiet"
        )
    return EXIT_OK if holds(checks) else EXIT_MOVED


def cmd_calibrate(args: argparse.Namespace) -> int:
    """Measure this machine and write a machine file that loads before it replaces anything."""
    if args.check is not None:
        return cmd_check(args)
    import tomllib
    from pathlib import Path

    from uml2perf_runtime.output.files import write_output
    from uml2perf_runtime.platform.machine import Machine

    from ..calibrate import COUNTED_PREFIX, machine_text, measure
    from ..quiet import QuietGate

    folder = Path(args.output).parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise InputError(
            f"cannot write the machine file: folder '{folder}' does not exist or is not writable",
            Location(file=str(args.output)),
            hint="create the folder or choose another -o path",
        )
    started = time.perf_counter()
    step = [0]

    def say(message: str) -> None:
        step[0] += 1
        print(f"[{step[0]}] {message} ...", file=sys.stderr, flush=True)

    gate = QuietGate(max_busy=args.max_busy, retries=args.quiet_retries)
    values = measure(
        repeats=args.repeats,
        progress=say,
        reference_sort=args.reference_sort,
        launches=args.launches,
        mpi=not args.no_mpi,
        gate=gate,
    )
    text = machine_text(values, name=args.name, gate=gate)
    # the file must load as a machine before it replaces anything
    Machine.from_dict(tomllib.loads(text), source=str(args.output))
    write_output(args.output, text, what="machine file")
    for key, m in values.items():
        if key == "link_table" or key.startswith(COUNTED_PREFIX):
            continue  # the catalogue's kernels are summed up by counting_factor
        print(
            f"{printed_name(key):<28} {m.median:12.4g}   5%..95% {m.low:10.4g} .. {m.high:<10.4g}"
            + (f"   modes: {m.modes}" if m.modes else "")
        )
    print(gate.describe(), file=sys.stderr)
    print(f"machine file written to {args.output} in {time.perf_counter() - started:.1f} s")
    return EXIT_OK


def register_command(sub: Any) -> None:
    """Add ``calibrate`` to the subcommands of the ``uml2perf`` parser."""
    cal = sub.add_parser("calibrate", help="measure this machine and write a machine file (TOML, commented)")
    target = cal.add_mutually_exclusive_group(required=True)
    target.add_argument("-o", "--output", metavar="machine.toml", help="the machine file to write")
    target.add_argument(
        "--check",
        metavar="machine.toml",
        help="measure a quick subset now and say whether this machine file still holds "
        f"(exit status {EXIT_MOVED} when the machine has moved from it)",
    )
    cal.add_argument("--name", default="calibrated", help="machine name in the file (default: calibrated)")
    cal.add_argument(
        "--repeats", type=positive_int, default=7, metavar="N", help="repetitions per measurement and launch"
    )
    cal.add_argument(
        "--launches",
        type=positive_int,
        default=DEFAULT_LAUNCHES,
        metavar="N",
        help=f"independent launches (processes, mpiexec runs) per measurement (default {DEFAULT_LAUNCHES})",
    )
    cal.add_argument(
        "--max-busy",
        type=float,
        default=0.10,
        metavar="SHARE",
        help="quiet check: a launch around which others kept more than this share of the CPUs busy "
        "is run again (default 0.10)",
    )
    cal.add_argument(
        "--quiet-retries",
        type=int,
        default=2,
        metavar="N",
        help="at most this many repeats of a disturbed launch (default 2)",
    )
    cal.add_argument(
        "--no-mpi", action="store_true", help="skip the MPI measurements (the default network applies)"
    )
    cal.add_argument(
        "--reference-sort",
        type=float,
        metavar="SECONDS",
        help="the reference kernel's time on the machine the costs were measured on (sets speed)",
    )
    cal.set_defaults(func=cmd_calibrate)
