"""Sums, means and maxima of the statistics, in plain Python, equal to numpy's to the last bit.

The figures of a run (element totals, spreads, performance properties) were always computed
with numpy, and every prediction printed since then depends on the order in which numpy adds:
``sum`` of a float64 vector is a pairwise sum (blocks of eight partial sums), while ``sum``
along the first axis of a processes × elements table adds the rows one after another (unless the
table has a single column, when it is the pairwise sum of that column).  These functions add in
exactly those orders, so a run needs no numpy (which takes longer to import than SimPy) and the
numbers stay what they were.  ``tests/test_runtime_summation.py`` holds them to numpy's results.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce
from operator import add

#: numpy adds up to this many numbers with eight running partial sums before halving the range.
_BLOCK = 128


def _pairwise(values: Sequence[float], lo: int, n: int) -> float:
    if n < 8:
        total = 0.0
        for i in range(lo, lo + n):
            total += values[i]
        return total
    if n <= _BLOCK:
        # eight running sums over every eighth value (each added in order), then the rest
        end = lo + n - n % 8
        r0, r1, r2, r3, r4, r5, r6, r7 = (reduce(add, values[lo + j : end : 8]) for j in range(8))
        total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        for i in range(end, lo + n):
            total += values[i]
        return total
    half = n // 2
    half -= half % 8
    return _pairwise(values, lo, half) + _pairwise(values, lo + half, n - half)


def vector_sum(values: Sequence[float]) -> float:
    """``float(numpy.sum(values))`` of a float vector."""
    return 0.0 + _pairwise(values, 0, len(values))


def vector_mean(values: Sequence[float]) -> float:
    """``float(numpy.mean(values))`` of a non-empty float vector."""
    return vector_sum(values) / len(values)


def argmax(values: Sequence[float]) -> int:
    """``int(numpy.argmax(values))``: the first position of the largest value."""
    best = 0
    for i in range(1, len(values)):
        if values[i] > values[best]:
            best = i
    return best


def table_sum(rows: Sequence[Sequence[float]]) -> float:
    """``float(numpy.array(rows).sum())``: the pairwise sum of the table read row by row."""
    return vector_sum([x for row in rows for x in row])


def column_sum(column: Sequence[float], width: int) -> float:
    """One entry of ``numpy.array(rows).sum(axis=0)`` for a table ``width`` columns wide.

    numpy adds the rows one after another, except for a one-column table, which it sums like
    a vector (pairwise).
    """
    if width == 1:
        return vector_sum(column)
    return reduce(add, column, 0.0)


def column_sums(rows: Sequence[Sequence[float]], width: int) -> list[float]:
    """``numpy.array(rows).sum(axis=0)`` of a non-empty table of ``width`` float columns."""
    return [column_sum(column, width) for column in zip(*rows, strict=True)]


__all__ = ["vector_sum", "vector_mean", "argmax", "table_sum", "column_sum", "column_sums"]
