"""The numpy stencil of the halo-exchange program, and its micro-measurement.

A five-point Jacobi step on a ``rows x COLS`` block of doubles with one halo row above and
below.  Each numpy pass streams its arrays through memory; by the triad's convention (arrays
read plus arrays written, no write-allocate) a step moves :data:`BYTES_PER_POINT` bytes per
point, which the model's ``bytes`` tag uses.
"""

from __future__ import annotations

import time

import numpy as np

COLS = 1024
#: three additions (two arrays read, one written) and a scaling (one read, one written): 11 doubles
BYTES_PER_POINT = 11 * 8


def block(rows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The block with its two halo rows, the next block, and a scratch array."""
    a = np.random.default_rng(seed).random((rows + 2, COLS))
    return a, a.copy(), np.empty((rows, COLS - 2))


def step(a: np.ndarray, new: np.ndarray, tmp: np.ndarray) -> None:
    """One Jacobi step of the interior into ``new`` (the halo rows of ``a`` are read)."""
    np.add(a[:-2, 1:-1], a[2:, 1:-1], out=tmp)
    np.add(tmp, a[1:-1, :-2], out=tmp)
    np.add(tmp, a[1:-1, 2:], out=tmp)
    np.multiply(tmp, 0.25, out=new[1:-1, 1:-1])


def micro(rows: int, repeats: int) -> list[float]:
    """Seconds per step on one core alone, the block kept between steps as the program keeps it."""
    a, new, tmp = block(rows)
    step(a, new, tmp)  # first touch of the pages is not part of a step
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step(a, new, tmp)
        times.append(time.perf_counter() - start)
        a, new = new, a
    return times
