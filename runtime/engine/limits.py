"""Bounds on the work and memory one command may spend, each with a default and an override.

A model, a sidecar or a machine file can ask for astronomically much work
(``repeat = 1e18``, ``threads = 1e8``, a machine of 10^9 nodes, a sweep of
millions of points) or memory (an input that is ``/dev/zero``).  uml2perf
refuses such requests *before* it starts, naming the limit and how to raise
it, instead of running until the machine kills it.  The defaults admit every
serious use (32,768 simulated processes of the LAPW0 sample, a 200,000-action
model, the benchmark ring) with room to spare; every limit can be raised:

=================  ============  ==============================  ==================================
limit              default       environment variable            what it bounds
=================  ============  ==============================  ==================================
input_bytes        512 MiB       UML2PERF_MAX_BYTES              an XMI, sidecar or machine file
processes          1,048,576     UML2PERF_MAX_PROCESSES          simulated processes of one run
threads            65,536        UML2PERF_MAX_THREADS            threads, pipeline stages, workers
                                                                 one region of one process starts
nodes              1,048,576     UML2PERF_MAX_NODES              nodes of a machine
cores              1,048,576     UML2PERF_MAX_CORES              cores per node of a machine
iterations         10,000,000    UML2PERF_MAX_ITERATIONS         iterations of one loop, repeat
                                                                 count or pipeline/pool item count
                                                                 (per element and process)
events             1,000,000,000 UML2PERF_MAX_EVENTS             simulation events of one run
sweep_points       100,000       UML2PERF_MAX_SWEEP_POINTS       points of one sweep grid
replications       10,000        UML2PERF_MAX_REPLICATIONS       runs of one ``--replications``
                                                                 (per sweep point)
devices            1,048,576     UML2PERF_MAX_DEVICES            devices of one kind per node
device_kinds       256           UML2PERF_MAX_DEVICE_KINDS       ``[devices.*]`` tables of a machine
measurements       20,000        UML2PERF_MAX_MEASUREMENTS       rows (values) ``fit`` reads
measured_points    200           UML2PERF_MAX_MEASURED_POINTS    distinct points ``fit`` searches
=================  ============  ==============================  ==================================

The command line takes the same limits as ``--limit NAME=VALUE``.  Integer
values computed by expressions are bounded separately (see
:data:`uml2perf_runtime.functions.MAX_INT_BITS`).
"""

from __future__ import annotations

import math
import os
from typing import Any

from ..errors import SimulationError
from .records import FrozenRecord

__all__ = ["ENVIRONMENT", "LimitExceeded", "Limits", "current", "parse_limit", "set_current"]


class LimitExceeded(SimulationError):
    """A request is larger than a limit; the message names the limit and how to raise it."""


class Limits(FrozenRecord):
    """The limits in force (see the module documentation for each one)."""

    input_bytes: int
    processes: int
    threads: int
    nodes: int
    cores: int
    iterations: int
    events: int
    sweep_points: int
    replications: int
    devices: int
    device_kinds: int
    measurements: int
    measured_points: int

    __slots__ = _FIELDS = (
        "input_bytes",
        "processes",
        "threads",
        "nodes",
        "cores",
        "iterations",
        "events",
        "sweep_points",
        "replications",
        "devices",
        "device_kinds",
        "measurements",
        "measured_points",
    )

    def __init__(
        self,
        input_bytes: int = 512 * 1024 * 1024,
        processes: int = 1 << 20,
        threads: int = 65_536,
        nodes: int = 1 << 20,
        cores: int = 1 << 20,
        iterations: int = 10_000_000,
        events: int = 1_000_000_000,
        sweep_points: int = 100_000,
        replications: int = 10_000,
        devices: int = 1 << 20,
        device_kinds: int = 256,
        measurements: int = 20_000,
        measured_points: int = 200,
    ) -> None:
        put = object.__setattr__
        put(self, "input_bytes", input_bytes)
        put(self, "processes", processes)
        put(self, "threads", threads)
        put(self, "nodes", nodes)
        put(self, "cores", cores)
        put(self, "iterations", iterations)
        put(self, "events", events)
        put(self, "sweep_points", sweep_points)
        put(self, "replications", replications)
        put(self, "devices", devices)
        put(self, "device_kinds", device_kinds)
        put(self, "measurements", measurements)
        put(self, "measured_points", measured_points)

    @classmethod
    def from_environment(cls, environ: Any = None) -> Limits:
        """The defaults, with every ``UML2PERF_MAX_*`` variable that is set applied."""
        environ = os.environ if environ is None else environ
        limits = cls()
        for name, variable in ENVIRONMENT.items():
            raw = environ.get(variable)
            if raw is None or not raw.strip():
                continue
            limits = limits._replace(**{name: _whole(raw, f"the environment variable {variable}")})
        return limits

    def with_overrides(self, assignments: dict[str, int]) -> Limits:
        """These limits with some replaced (names checked by :func:`parse_limit`)."""
        return self._replace(**assignments)

    def check(self, name: str, value: float, what: str) -> None:
        """Raise :class:`LimitExceeded` when ``value`` is above the limit ``name``."""
        bound = getattr(self, name)
        if value > bound:
            raise LimitExceeded(
                f"{what} is {_show(value)}, more than the limit of {bound:,} ({name})",
                hint=f"raise it with --limit {name}=N or the environment variable {ENVIRONMENT[name]}",
            )


#: Environment variable of each limit.
ENVIRONMENT: dict[str, str] = {
    "input_bytes": "UML2PERF_MAX_BYTES",
    "processes": "UML2PERF_MAX_PROCESSES",
    "threads": "UML2PERF_MAX_THREADS",
    "nodes": "UML2PERF_MAX_NODES",
    "cores": "UML2PERF_MAX_CORES",
    "iterations": "UML2PERF_MAX_ITERATIONS",
    "events": "UML2PERF_MAX_EVENTS",
    "sweep_points": "UML2PERF_MAX_SWEEP_POINTS",
    "replications": "UML2PERF_MAX_REPLICATIONS",
    "devices": "UML2PERF_MAX_DEVICES",
    "device_kinds": "UML2PERF_MAX_DEVICE_KINDS",
    "measurements": "UML2PERF_MAX_MEASUREMENTS",
    "measured_points": "UML2PERF_MAX_MEASURED_POINTS",
}


def _show(value: float) -> str:
    if isinstance(value, int) and value.bit_length() > 64:
        return f"about 10^{len(str(value)) - 1}" if value.bit_length() < 20_000 else "astronomically large"
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def _whole(raw: str, where: str) -> int:
    text = raw.strip().replace("_", "").replace(",", "")
    try:
        value = int(text)
    except ValueError:
        try:
            as_float = float(text)
        except ValueError:
            as_float = float("nan")
        if not (math.isfinite(as_float) and as_float.is_integer() and abs(as_float) < 2**62):
            raise LimitExceeded(
                f"{where} is {raw.strip()!r}: a limit must be a whole number", hint="for example 1000000"
            ) from None
        value = int(as_float)
    if value < 1:
        raise LimitExceeded(f"{where} is {value}: a limit must be at least 1", hint="for example 1000000")
    return value


def parse_limit(text: str) -> tuple[str, int]:
    """``NAME=VALUE`` from ``--limit`` into a limit name and a whole number."""
    name, sep, raw = text.partition("=")
    name = name.strip().replace("-", "_")
    known = list(Limits._FIELDS)
    if not sep or name not in known:
        raise LimitExceeded(f"--limit expects NAME=VALUE with NAME one of {', '.join(known)}; got {text!r}")
    return name, _whole(raw, f"--limit {name}")


_CURRENT: list[Limits] = []


def current() -> Limits:
    """The limits of this process (from the environment unless :func:`set_current` was called)."""
    if not _CURRENT:
        _CURRENT.append(Limits.from_environment())
    return _CURRENT[0]


def set_current(limits: Limits) -> None:
    """Make ``limits`` the limits of this process (the command line does this once)."""
    _CURRENT[:] = [limits]
