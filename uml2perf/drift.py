"""``uml2perf calibrate --check FILE``: does a machine file still hold on this machine now?

A machine file is one sample of the machine's state, and the state moves over minutes (other
programs, frequency, where pages land, what the MPI settled into).  Before acting on a
prediction, a user wants to know whether the file's numbers still describe the machine.  The
check measures a quick subset of what calibrate measures, the same way (the flop rate, the
memory and cache triads, and with MPI a bound ping-pong at a few sizes, in one launch), and
compares each with the file's value and interval.

A file holds when at least :data:`HOLDS_SHARE` of the checked keys fall inside their intervals:
the intervals are 90% ones, so about one key in ten falls outside by chance alone.
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Share of the checked keys that must lie inside their intervals for the file to hold.
HOLDS_SHARE = 0.8
#: Message sizes of the quick ping-pong (bytes): latency, eager, bandwidth-bound and rendezvous.
CHECK_SIZES = (8, 4096, 65536, 1 << 20)


@dataclass(frozen=True)
class KeyCheck:
    """One key of the file against its measurement now."""

    name: str
    unit: str
    value: float
    low: float
    high: float
    now: float

    @property
    def judged(self) -> bool:
        """Whether the file gives this key an interval (a plain number says nothing of its spread)."""
        return self.low < self.high

    @property
    def inside(self) -> bool:
        return self.low <= self.now <= self.high

    @property
    def ratio(self) -> float:
        return self.now / self.value if self.value else math.inf


def file_intervals(machine: Any) -> dict[str, tuple[float, float]]:
    """``low, high`` of every key the file gives as an interval, by path (``caches.levels[1].bandwidth``)."""
    found = getattr(machine, "uncertain", None)
    if found is None:
        return {}
    return {name: (u.low, u.high) for name, u in zip(found.names, found.intervals, strict=True)}


def rate_checks(machine: Any, repeats: int, say: Callable[[str], None]) -> list[KeyCheck]:
    """The roofline keys and cache levels the file has, measured now as calibrate measures them."""
    from .calibrate import MATMUL_N, cache_bandwidths, matmul_seconds, memory_bandwidths

    cores = os.cpu_count() or 1
    bounds = file_intervals(machine)
    checks: list[KeyCheck] = []

    def check(name: str, unit: str, value: float | None, now: float) -> None:
        if value is not None:
            low, high = bounds.get(name, (value, value))
            checks.append(KeyCheck(name, unit, value, low, high, now))

    if machine.peak_flops is not None:
        say("flop rate (matrix product, one core)")
        product = matmul_seconds(MATMUL_N)
        product()
        seconds = statistics.median(product() for _ in range(repeats))
        check("peak_flops", "flop/s", machine.peak_flops, 2 * MATMUL_N**3 / seconds)
    if machine.memory_bandwidth is not None or machine.core_bandwidth is not None:
        memory = memory_bandwidths(repeats, cores, say)
        check("memory_bandwidth", "B/s", machine.memory_bandwidth, memory["memory_bandwidth"].median)
        check("core_bandwidth", "B/s", machine.core_bandwidth, memory["core_bandwidth"].median)
    if machine.caches:
        sizes = tuple(level.up_to for level in machine.caches)
        cached = cache_bandwidths(repeats, cores, say, sizes)
        for index, level in enumerate(machine.caches, start=1):
            where = f"caches.levels[{index}]"
            check(
                f"{where}.core_bandwidth",
                "B/s",
                level.core_bandwidth,
                cached[f"cache_core {level.up_to}"].median,
            )
            check(f"{where}.bandwidth", "B/s", level.bandwidth, cached[f"cache_node {level.up_to}"].median)
    checks += host_checks(machine, repeats, say, bounds)
    return checks


def host_checks(
    machine: Any, repeats: int, say: Callable[[str], None], bounds: dict[str, tuple[float, float]]
) -> list[KeyCheck]:
    """``first_touch`` (each range, at the block size calibrate measured for it) and ``call_cost``."""
    from .calibrate import FIRST_TOUCH_BLOCKS, call_seconds, first_touch_rates

    checks: list[KeyCheck] = []
    if machine.first_touch:
        say("first touch of fresh memory")
        rates = first_touch_rates(repeats)
        for index, (up_to, rate) in enumerate(machine.first_touch, start=1):
            name = "first_touch" if len(machine.first_touch) == 1 else f"first_touch[{index}].bandwidth"
            inside = [block for block in FIRST_TOUCH_BLOCKS if block <= up_to] or [FIRST_TOUCH_BLOCKS[0]]
            block = FIRST_TOUCH_BLOCKS[-1] if up_to == float("inf") else inside[-1]
            now = rates["first_touch" if len(machine.first_touch) == 1 else f"first_touch {block}"].median
            low, high = bounds.get(name, (rate, rate))
            checks.append(KeyCheck(name, "B/s", rate, low, high, now))
    if machine.call_cost is not None:
        say("cost of a library call")
        call_seconds(1000)
        now = statistics.median(call_seconds() for _ in range(repeats))
        low, high = bounds.get("call_cost", (machine.call_cost, machine.call_cost))
        checks.append(KeyCheck("call_cost", "s", machine.call_cost, low, high, now))
    return checks


def corner(machine: Any, fast: bool) -> Any:
    """A corner of the file's intervals: latencies and handshakes at one end, bandwidths at the other.

    ``fast``: latencies low, bandwidths high; else the reverse.  The times of a message on these
    two machines bound where the file says it may take.
    """
    found = getattr(machine, "uncertain", None)
    if found is None:
        return machine
    values = []
    for name, interval in zip(found.names, found.intervals, strict=True):
        key = name.rsplit(".", 1)[-1]
        if key in ("latency", "handshake"):
            values.append(interval.low if fast else interval.high)
        elif key == "bandwidth" and name.startswith("network."):
            values.append(interval.high if fast else interval.low)
        else:
            values.append(interval.value)
    return found.draw(values)


def network_checks(machine: Any, repeats: int, say: Callable[[str], None]) -> list[KeyCheck]:
    """One-way ping-pong times now against the file's intra-node link (empty without MPI)."""
    from .calibrate import mpi_available, ping_pong_launches

    if mpi_available() is None:
        return []
    say(f"MPI ping-pong, {', '.join(f'{s} B' for s in CHECK_SIZES)}, one launch with ranks bound to cores")
    launches = ping_pong_launches(repeats, 1, sizes=list(CHECK_SIZES))
    if not launches:
        return []
    from uml2perf_runtime.platform.network import eager_limit_of

    fast, slow = corner(machine, True), corner(machine, False)

    def one_way(m: Any, size: int) -> float:
        return float(m.intra_node.message_time(size, eager_limit_of(m)))

    checks = []
    for size in CHECK_SIZES:
        now = statistics.median(launches[0][size]["reused"])
        checks.append(
            KeyCheck(
                f"network.intra_node {size} B one-way",
                "s",
                one_way(machine, size),
                min(one_way(fast, size), one_way(machine, size)),
                max(one_way(slow, size), one_way(machine, size)),
                now,
            )
        )
    return checks


def check_machine(
    machine: Any, repeats: int = 7, mpi: bool = True, progress: Callable[[str], None] | None = None
) -> list[KeyCheck]:
    """Every key of ``machine`` the quick measurement covers, against its measurement now."""
    say = progress or (lambda _m: None)
    checks = rate_checks(machine, repeats, say)
    if mpi and machine.intra_node.pieces is not None:
        checks += network_checks(machine, repeats, say)
    return checks


def holds(checks: list[KeyCheck]) -> bool:
    """Whether the file still describes the machine: enough of its keys with intervals inside them."""
    judged = [c for c in checks if c.judged]
    return bool(judged) and sum(c.inside for c in judged) >= HOLDS_SHARE * len(judged)


def _number(value: float, unit: str) -> str:
    return f"{value * 1e6:.4g} us" if unit == "s" else f"{value:.4g} {unit}"


def _cells(row: tuple[str, ...], widths: list[int]) -> list[str]:
    """A table row: the key left-aligned, the numbers right-aligned."""
    return [
        cell.ljust(w) if i == 0 else cell.rjust(w)
        for i, (cell, w) in enumerate(zip(row, widths, strict=True))
    ]


def report_lines(checks: list[KeyCheck], source: str) -> list[str]:
    """The table and the verdict ``calibrate --check`` prints."""
    if not checks:
        return [f"{source}: nothing to check (no roofline, cache or measured network keys)"]
    rows = [("key", "file", "file interval", "now", "now/file", "inside")] + [
        (
            c.name,
            _number(c.value, c.unit),
            f"{_number(c.low, c.unit)} .. {_number(c.high, c.unit)}",
            _number(c.now, c.unit),
            f"{c.ratio:.2f}",
            ("yes" if c.inside else "NO") if c.judged else "-",
        )
        for c in checks
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(_cells(row, widths)) for row in rows]
    judged = [c for c in checks if c.judged]
    lines.append("")
    if len(judged) < len(checks):
        lines.append(
            f"{len(checks) - len(judged)} key(s) marked '-' have no interval in the file: not judged"
        )
    if not judged:
        lines.append(f"{source} gives no key an interval: write it with uml2perf calibrate to check it")
        return lines
    inside = sum(c.inside for c in judged)
    share = inside / len(judged)
    if holds(checks):
        lines.append(
            f"{inside} of {len(judged)} keys inside the file's intervals ({share:.0%}): "
            f"{source} holds on this machine now"
        )
    else:
        moved = ", ".join(c.name for c in judged if not c.inside)
        lines.append(
            f"{inside} of {len(judged)} keys inside the file's intervals ({share:.0%}, fewer than "
            f"{HOLDS_SHARE:.0%}): the machine has moved from {source} ({moved}); when it is quiet, "
            f"calibrate again: uml2perf calibrate -o {source}"
        )
    return lines
