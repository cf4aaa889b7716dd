"""How well counted tags price numpy kernels on a machine: measured time over priced time.

``uml2perf calibrate`` times this catalogue and writes the spread of its ratios as the machine's
``counting_factor`` interval; ``python benchmarks/counting.py --machine FILE`` prints the table.

A model prices an action from its counts (``flops``, ``bytes``, ``footprint``, ``fresh``,
``allocation``, ``calls``) at the machine's rates, which ``uml2perf calibrate`` measures with a
few clean kernels: a triad, a matrix product, tiny additions.  Real numpy code can spend time the
counts do not see: an index gather's passes, a reduction along a short axis, a running sum's
dependency from element to element.  Each kernel here is a line of numpy a program might hold,
run at sizes from tiny (calls dominate) through the caches to memory, with the counts a user
following docs/profile.md writes for it; the table prints each one's measured time over the price
of its counts for one process alone (:func:`uml2perf_runtime.platform.roofline.alone_seconds`).
A ratio near 1 says the counting rules hold for that kind of line on the machine; a large one
says to time such kernels instead (docs/profile.md lists them).  Run it with the machine file
``uml2perf calibrate`` wrote on the same machine, when the machine is quiet.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

#: Elements per kernel run: tiny (calls dominate), in the core's caches, in the last-level cache,
#: from memory.
SIZES = (256, 16_384, 262_144, 4_194_304)
#: docs/profile.md: only temporaries and new arrays of this many bytes or more count as ``fresh``.
FRESH_BLOCK = 131_072
#: A timed batch lasts at least this long (seconds), so the clock's resolution does not matter.
BATCH_SECONDS = 2e-3


@dataclass(frozen=True)
class Counts:
    """An action's tags for one run of a kernel, as docs/profile.md counts them."""

    flops: float = 0.0
    bytes: float = 0.0
    footprint: float | None = None
    fresh: float = 0.0
    allocation: float | None = None
    calls: float = 0.0
    #: elements one run of the kernel's array operation goes over (what its weight is counted per)
    weighed: float = 0.0
    #: how many times the kernel runs that operation
    runs: float = 1.0


def _fresh(*blocks: float) -> tuple[float, float | None]:
    """``fresh`` and ``allocation`` of temporaries alive at once: the blocks of 128 KiB or more."""
    large = [b for b in blocks if b >= FRESH_BLOCK]
    return float(sum(large)), (max(large) if large else None)


def _gathered(n: int, table_bytes: float, cache_bytes: float) -> float:
    """Bytes read per gathered element: 8 while the table fits in a cache, a line (64) beyond."""
    return 8.0 * n if table_bytes <= cache_bytes else 64.0 * n


@dataclass(frozen=True)
class CountedKernel:
    """One kernel: ``make(n)`` returns the call to time; ``counts(n, cache_bytes)`` its tags.

    ``weight`` names the array operation whose flops per element docs/profile.md says to add
    (the weights ``uml2perf calibrate`` prints), counted once per element of the kernel.
    """

    name: str
    source: str
    make: Callable[[int], Callable[[], Any]]
    counts: Callable[[int, float], Counts]
    weight: str = ""

    def counted(self, n: int, cache_bytes: float, weights: dict[str, float] | None = None) -> Counts:
        """The tags a user writes for ``n`` elements, the operation's weight in the flops.

        The weight is the one measured over arrays of the size nearest the kernel's (``"NAME"``
        over cached arrays of 128 KiB, ``"NAME 2 MiB"`` and so on), as docs/profile.md says to
        choose.
        """
        c = self.counts(n, cache_bytes)
        if not self.weight or not weights:
            return c
        extra = nearest_weight(weights, self.weight, 8.0 * c.weighed)
        if not extra:
            return c
        return replace(c, flops=c.flops + extra * c.weighed * c.runs)


def _side(n: int) -> int:
    return max(1, int(n**0.5))


def _scaled_sum(n: int) -> Callable[[], Any]:
    x, y = np.random.default_rng(1).random(n), np.random.default_rng(2).random(n)
    return lambda: 0.5 * x + y


def _scaled_sum_counts(n: int, cache: float) -> Counts:
    fresh, block = _fresh(8 * n)  # the product, freed once the sum is made (the sum is kept)
    return Counts(flops=2 * n, bytes=40 * n, footprint=32 * n, fresh=fresh, allocation=block, calls=2)


def _update(n: int) -> Callable[[], Any]:
    x, y = np.ones(n), np.full(n, 0.5)

    def run() -> Any:
        np.multiply(x, 0.5, out=x)
        return np.add(x, y, out=x)

    return run


def _update_counts(n: int, cache: float) -> Counts:
    return Counts(flops=2 * n, bytes=40 * n, footprint=16 * n, calls=2)


def _smooth(n: int) -> Callable[[], Any]:
    u, z = np.random.default_rng(3).random(n + 2), np.zeros(n + 2)

    def run() -> Any:
        z[1:-1] = 0.5 * (u[:-2] + u[2:])
        return z

    return run


def _smooth_counts(n: int, cache: float) -> Counts:
    fresh, block = _fresh(8 * n)  # the product, alive when the statement ends (the sum went before it)
    return Counts(flops=2 * n, bytes=56 * n, footprint=32 * n, fresh=fresh, allocation=block, calls=3)


def _dot(n: int) -> Callable[[], Any]:
    x, y = np.random.default_rng(4).random(n), np.random.default_rng(5).random(n)
    return lambda: x @ y


def _dot_counts(n: int, cache: float) -> Counts:
    return Counts(flops=2 * n, bytes=16 * n, calls=1)


def _matvec(n: int) -> Callable[[], Any]:
    side = _side(n)
    a, x = np.random.default_rng(6).random((side, side)), np.random.default_rng(7).random(side)
    return lambda: a @ x


def _matvec_counts(n: int, cache: float) -> Counts:
    side = _side(n)
    return Counts(flops=2 * side * side, bytes=8 * side * side + 16 * side, calls=1)


def _row_sums(n: int) -> Callable[[], Any]:
    m = np.random.default_rng(8).random((n // 8, 8))
    return lambda: m.sum(axis=1)


def _row_sums_counts(n: int, cache: float) -> Counts:
    fresh, block = _fresh(n)  # n/8 sums of 8 bytes
    return Counts(
        flops=7 * n // 8, bytes=9 * n, fresh=fresh, allocation=block, calls=1, weighed=n
    )  # 7 adds a row


def _nearest(n: int) -> Callable[[], Any]:
    d = np.random.default_rng(9).random((n // 8, 8))
    return lambda: d.argmin(axis=1)


def _nearest_counts(n: int, cache: float) -> Counts:
    fresh, block = _fresh(n)  # n/8 int64 indices
    return Counts(bytes=9 * n, fresh=fresh, allocation=block, calls=1, weighed=n)


def _gather(n: int) -> Callable[[], Any]:
    rng = np.random.default_rng(10)
    x, idx = rng.random(n), rng.permutation(n)
    return lambda: x[idx]


def _gather_counts(n: int, cache: float) -> Counts:
    fresh, block = _fresh(8 * n)
    table = 8.0 * n
    return Counts(
        bytes=16 * n + _gathered(n, table, cache),
        footprint=24 * n,
        fresh=fresh,
        allocation=block,
        calls=1,
        weighed=n,
    )


def _transpose(n: int) -> Callable[[], Any]:
    side = _side(n)
    a, b = np.random.default_rng(11).random((side, side)), np.empty((side, side))

    def run() -> Any:
        b[...] = a.T
        return b

    return run


def _transpose_counts(n: int, cache: float) -> Counts:
    side = _side(n)
    m = side * side
    return Counts(bytes=8 * m + _gathered(m, 8.0 * m, cache), footprint=16 * m, calls=1, weighed=m)


def _running_sum(n: int) -> Callable[[], Any]:
    x = np.random.default_rng(12).random(n)
    return lambda: np.cumsum(x)


def _running_sum_counts(n: int, cache: float) -> Counts:
    fresh, block = _fresh(8 * n)
    return Counts(flops=n, bytes=16 * n, fresh=fresh, allocation=block, calls=1, weighed=n)


def _threshold(n: int) -> Callable[[], Any]:
    x = np.random.default_rng(13).random(n)
    return lambda: np.where(x > 0.5, x, 0.0)


def _threshold_counts(n: int, cache: float) -> Counts:
    fresh, block = _fresh(n)  # the mask (one byte each), freed as the statement ends (the result is kept)
    return Counts(bytes=26 * n, footprint=18 * n, fresh=fresh, allocation=block, calls=2, weighed=n)


def _select(n: int) -> Callable[[], Any]:
    x = np.random.default_rng(19).random(n)
    return lambda: x[x > 0.5]


def _select_counts(n: int, cache: float) -> Counts:
    # the comparison reads x and writes a byte each; the selection reads the mask and x and
    # writes the half of x that passes, which is kept (the mask is freed as the line ends)
    fresh, block = _fresh(n)
    return Counts(
        bytes=8 * n + n + n + 8 * n + 4 * n,
        footprint=22 * n,
        fresh=fresh,
        allocation=block,
        calls=2,
        weighed=n,
    )


def _select_few(n: int) -> Callable[[], Any]:
    x = np.random.default_rng(21).random(n)
    return lambda: x[x < 0.1]


def _select_few_counts(n: int, cache: float) -> Counts:
    # as ``select``, with a tenth of x passing (0.8 bytes written per element)
    fresh, block = _fresh(n)
    kept = 0.8 * n
    return Counts(
        bytes=8 * n + n + n + 8 * n + kept,
        footprint=18 * n + kept,
        fresh=fresh,
        allocation=block,
        calls=2,
        weighed=n,
    )


def _histogram(n: int) -> Callable[[], Any]:
    idx = np.random.default_rng(14).integers(0, 1024, n)
    return lambda: np.bincount(idx, minlength=1024)


def _histogram_counts(n: int, cache: float) -> Counts:
    return Counts(bytes=8 * n + 8 * 1024, calls=1, weighed=n)


def _copy(n: int) -> Callable[[], Any]:
    x = np.random.default_rng(15).random(n)
    return lambda: x.copy()


def _copy_counts(n: int, cache: float) -> Counts:
    fresh, block = _fresh(8 * n)
    return Counts(bytes=16 * n, fresh=fresh, allocation=block, calls=1)


def _distances(n: int) -> Callable[[], Any]:
    a, b = np.random.default_rng(16).random(n // 16), np.random.default_rng(17).random(16)
    return lambda: ((a[:, None] - b[None, :]) ** 2).sum(axis=1)


def _distances_counts(n: int, cache: float) -> Counts:
    rows = n // 16
    fresh, block = _fresh(8 * n)  # the differences, squared in place from 256 KiB, freed once summed
    return Counts(
        flops=3 * n - rows,  # a subtraction and a square (a multiply) per element, 15 adds a row
        bytes=8 * rows + 128 + 8 * n + 16 * n + 8 * n + 8 * rows,
        footprint=16 * n + 16 * rows,
        fresh=fresh,
        allocation=block,
        calls=3,
        weighed=n,
    )


def _neighbours(n: int) -> Callable[[], Any]:
    side = _side(n)
    g = np.random.default_rng(20).random((side + 2, side + 2))
    return lambda: g[1:-1, :-2] + g[1:-1, 2:]


def _neighbours_counts(n: int, cache: float) -> Counts:
    m = _side(n) ** 2
    fresh, block = _fresh(8 * m)  # the sum, kept until the next one is made
    # two blocks of the grid read, the sum written; the block weight stands for the addition
    return Counts(bytes=24 * m, footprint=24 * m, fresh=fresh, allocation=block, calls=1, weighed=m)


def _stencil(n: int) -> Callable[[], Any]:
    side = _side(n)
    g = np.random.default_rng(22).random((side + 2, side + 2))
    return lambda: 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])


def _stencil_counts(n: int, cache: float) -> Counts:
    m = _side(n) ** 2
    # three additions with a block of the grid (the weight stands for each addition's flop), the
    # product: 4 x 24 bytes less the product's reuse of the sum (16), one temporary from 256 KiB
    fresh, block = _fresh(8 * m)
    return Counts(
        flops=m,
        bytes=88 * m,
        footprint=(16 + 8) * m,
        fresh=fresh,
        allocation=block,
        calls=7,  # four operations, three of them blocks (2 calls each)
        weighed=m,
        runs=3,
    )


def _in_band(n: int) -> Callable[[], Any]:
    x = np.random.default_rng(23).random(n)
    return lambda: (x > 0.3) & (x < 0.7)


def _in_band_counts(n: int, cache: float) -> Counts:
    fresh, block = _fresh(n, n)  # two masks alive when the third is made
    return Counts(bytes=21 * n, footprint=11 * n, fresh=fresh, allocation=block, calls=3)


def _int_remainder(n: int) -> Callable[[], Any]:
    k = np.random.default_rng(24).integers(0, 1 << 30, n)
    return lambda: k % 7


def _int_remainder_counts(n: int, cache: float) -> Counts:
    fresh, block = _fresh(8 * n)  # bytes and the integer remainder's weight, no flops
    return Counts(bytes=16 * n, footprint=16 * n, fresh=fresh, allocation=block, calls=1, weighed=n)


def _concatenate(n: int) -> Callable[[], Any]:
    parts = [np.random.default_rng(18 + k).random(n // 4) for k in range(4)]
    return lambda: np.concatenate(parts)


def _concatenate_counts(n: int, cache: float) -> Counts:
    fresh, block = _fresh(8 * n)
    return Counts(bytes=16 * n, fresh=fresh, allocation=block, calls=1)


#: The catalogue: a kernel per kind of numpy line a program holds.
COUNTED_KERNELS: tuple[CountedKernel, ...] = (
    CountedKernel("scaled_sum", "0.5 * x + y", _scaled_sum, _scaled_sum_counts),
    CountedKernel("update", "np.multiply(x, 0.5, out=x); np.add(x, y, out=x)", _update, _update_counts),
    CountedKernel("smooth", "z[1:-1] = 0.5 * (u[:-2] + u[2:])", _smooth, _smooth_counts),
    CountedKernel("dot", "x @ y", _dot, _dot_counts),
    CountedKernel("matvec", "a @ x (square a)", _matvec, _matvec_counts),
    CountedKernel("row_sums", "m.sum(axis=1) (rows of 8)", _row_sums, _row_sums_counts, "sum(axis=1)"),
    CountedKernel("nearest", "d.argmin(axis=1) (rows of 8)", _nearest, _nearest_counts, "argmin(axis=1)"),
    CountedKernel("gather", "x[idx] (a permutation)", _gather, _gather_counts, "gather"),
    CountedKernel("transpose", "b[...] = a.T", _transpose, _transpose_counts, "transpose"),
    CountedKernel("running_sum", "np.cumsum(x)", _running_sum, _running_sum_counts, "cumsum"),
    CountedKernel("threshold", "np.where(x > 0.5, x, 0.0)", _threshold, _threshold_counts, "where"),
    CountedKernel("select", "x[x > 0.5]", _select, _select_counts, "x[mask]"),
    CountedKernel("select_few", "x[x < 0.1]", _select_few, _select_few_counts, "x[mask/10]"),
    CountedKernel("histogram", "np.bincount(idx, minlength=1024)", _histogram, _histogram_counts, "bincount"),
    CountedKernel("copy", "x.copy()", _copy, _copy_counts),
    CountedKernel(
        "distances",
        "((a[:, None] - b[None, :]) ** 2).sum(axis=1) (16 columns)",
        _distances,
        _distances_counts,
        "sum(axis=1)",
    ),
    CountedKernel("concatenate", "np.concatenate(parts) (4 parts)", _concatenate, _concatenate_counts),
    CountedKernel("neighbours", "g[1:-1, :-2] + g[1:-1, 2:]", _neighbours, _neighbours_counts, "block"),
    CountedKernel(
        "stencil",
        "0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])",
        _stencil,
        _stencil_counts,
        "block",
    ),
    CountedKernel("in_band", "(x > 0.3) & (x < 0.7)", _in_band, _in_band_counts),
    CountedKernel("int_mod", "k % 7 (int64)", _int_remainder, _int_remainder_counts, "int_remainder"),
)


def kernel_seconds(run: Callable[[], Any], batches: int = 5) -> float:
    """Seconds of one call of ``run``: the median of ``batches`` timed batches of calls.

    Each call's result is kept until the next one is made, as a program's loop keeps the
    previous iteration's array (so the allocator sees what it sees in a program).
    """
    kept = run()
    start = time.perf_counter()
    kept = run()
    once = max(time.perf_counter() - start, 1e-7)
    calls = max(1, int(BATCH_SECONDS / once))
    times = []
    for _ in range(max(1, batches)):
        start = time.perf_counter()
        for _ in range(calls):
            kept = run()
        times.append((time.perf_counter() - start) / calls)
    del kept
    return statistics.median(times)


def counted(sizes: tuple[int, ...] = SIZES, batches: int = 5) -> dict[str, float]:
    """Seconds of every catalogue kernel at every size, by ``"NAME N"``."""
    out: dict[str, float] = {}
    for kernel in COUNTED_KERNELS:
        for n in sizes:
            out[f"{kernel.name} {n}"] = kernel_seconds(kernel.make(n), batches)
    return out


def ratios(
    machine: Any,
    seconds: dict[str, float],
    sizes: tuple[int, ...] = SIZES,
    weights: dict[str, float] | None = None,
) -> dict[str, dict[int, float]]:
    """Measured over priced time of every kernel at every size, priced on ``machine``: its array
    operation named as an ``operations`` tag names it when the machine's ``[operations]`` prices it,
    else with its ``weights`` in the flops (as docs/profile.md counts them either way)."""
    from uml2perf_runtime.platform.array_operations import operation_seconds
    from uml2perf_runtime.platform.roofline import alone_seconds

    cache = float(machine.caches[-1].up_to) if machine.caches else 0.0
    table = getattr(machine, "operations", {})
    out: dict[str, dict[int, float]] = {}
    for kernel in COUNTED_KERNELS:
        row = out[kernel.name] = {}
        for n in sizes:
            if kernel.weight in table:  # named in an operations tag: the machine's own rate at the size
                c = kernel.counts(n, cache)
                extra = c.runs * operation_seconds(table, kernel.weight, c.weighed)
            else:  # the weight counted as flops, as a model without the tag does
                c, extra = kernel.counted(n, cache, weights), 0.0
            priced = (
                alone_seconds(machine, c.flops, c.bytes, c.footprint, c.fresh, c.allocation, c.calls) + extra
            )
            row[n] = seconds[f"{kernel.name} {n}"] / priced
    return out


#: The start of the comment line that holds the array operations' weights over cached arrays,
#: and of the lines that hold them over larger arrays (as ``uml2perf calibrate`` writes them).
_CACHED_LINE = "# of 8, a gather through a permutation"
_SIZED_LINE = "# their sizes; take the weights of the size nearest"
#: The array size (bytes) of the weights over cached arrays: 16,384 doubles.
CACHED_WEIGHT_BYTES = 131_072


def weights_in(text: str) -> dict[str, float]:
    """The array operations' weights from a machine file's comments: ``NAME`` over cached arrays,
    ``NAME 2 MiB`` over arrays of that size."""
    import re

    pattern = r"([a-z_]+(?:\(axis=1\)|\[mask(?:/10)?\])?) ([0-9.eE+-]+)"
    found: dict[str, float] = {}
    for line in text.splitlines():
        head, _, values = line.partition(":")
        if not values:
            continue
        if line.startswith(_CACHED_LINE):
            suffix = ""
        elif line.startswith(_SIZED_LINE) and (size := re.search(r", (\d+) MiB$", head)):
            suffix = f" {size.group(1)} MiB"
        else:
            continue
        for name, value in re.findall(pattern, values):
            found[f"{name}{suffix}"] = float(value)
    return found


def nearest_weight(weights: dict[str, float], name: str, array_bytes: float) -> float:
    """``name``'s weight at the size nearest ``array_bytes`` (on a log scale) among those given."""
    import math
    import re

    sizes = {CACHED_WEIGHT_BYTES: name} if name in weights else {}
    for key in weights:
        if key.startswith(f"{name} ") and (size := re.fullmatch(r" (\d+) MiB", key[len(name) :])):
            sizes[int(size.group(1)) * 2**20] = key
    if not sizes:
        return 0.0
    nearest = min(sizes, key=lambda b: abs(math.log(max(array_bytes, 1.0) / b)))
    return weights[sizes[nearest]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--machine", required=True, help="a machine file (as uml2perf calibrate writes it)")
    parser.add_argument("--sizes", default=",".join(str(n) for n in SIZES), help="elements per kernel run")
    args = parser.parse_args(argv)
    from uml2perf_runtime.errors import MachineError
    from uml2perf_runtime.platform.machine import Machine

    sizes = tuple(int(n) for n in args.sizes.split(","))
    try:
        machine = Machine.load(args.machine)
        weights = weights_in(Path(args.machine).read_text(encoding="utf-8"))
        table = ratios(machine, counted(sizes), sizes, weights)
    except MachineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("measured / priced time of each kernel, one process alone (1 = the counts price it right)")
    print(f"{'kernel':12s} " + " ".join(f"{n:>10,}" for n in sizes) + "  line")
    for kernel in COUNTED_KERNELS:
        cells = " ".join(f"{table[kernel.name][n]:10.2f}" for n in sizes)
        print(f"{kernel.name:12s} {cells}  {kernel.source}")
    every = [v for row in table.values() for v in row.values()]
    print(
        f"median {statistics.median(every):.2f}, 5th..95th percentile {np.percentile(every, 5):.2f}.."
        f"{np.percentile(every, 95):.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
