"""The statistics' plain-Python sums equal numpy's to the last bit (they replace them)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from uml2perf_runtime.analysis.summation import argmax, column_sums, table_sum, vector_mean, vector_sum

#: Times as a run produces them: non-negative, of very different magnitudes.
times = st.builds(
    lambda mantissa, exponent: mantissa * 10.0**exponent,
    st.floats(0.0, 10.0, allow_nan=False),
    st.integers(-9, 4),
)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(times, min_size=1, max_size=700))
def test_vector_sum_mean_and_argmax_equal_numpy(values: list[float]) -> None:
    array = np.array(values)
    assert vector_sum(values) == float(array.sum())
    assert vector_mean(values) == float(array.mean())
    assert argmax(values) == int(np.argmax(array))


@settings(max_examples=200, deadline=None)
@given(
    shape=st.tuples(st.integers(1, 60), st.integers(1, 9)),
    data=st.data(),
)
def test_table_and_column_sums_equal_numpy(shape: tuple[int, int], data: st.DataObject) -> None:
    rows_count, width = shape
    rows = [data.draw(st.lists(times, min_size=width, max_size=width)) for _ in range(rows_count)]
    array = np.array(rows)
    assert table_sum(rows) == float(array.sum())
    assert column_sums(rows, width) == [float(x) for x in array.sum(axis=0)]
    for j in range(width):
        assert vector_sum([row[j] for row in rows]) == float(array[:, j].sum())


def test_long_vectors_and_tall_tables_equal_numpy() -> None:
    rng = np.random.default_rng(7)
    for n in (8, 127, 128, 129, 1000, 8191, 8192, 8193, 40_000):
        values = (rng.random(n) * 10.0 ** rng.integers(-8, 3, n)).tolist()
        assert vector_sum(values) == float(np.array(values).sum())
    for rows_count, width in ((5000, 1), (3000, 2), (2000, 10)):
        table = rng.random((rows_count, width)) * 10.0 ** rng.integers(-8, 3, (rows_count, width))
        rows = table.tolist()
        assert table_sum(rows) == float(table.sum())
        assert column_sums(rows, width) == [float(x) for x in table.sum(axis=0)]
