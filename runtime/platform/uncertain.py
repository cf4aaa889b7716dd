"""Uncertain inputs: a number with the range it may take, and how samples are drawn through it.

A machine file or a sidecar may give any measured number as an interval::

    latency = { value = 0.7e-6, low = 0.65e-6, high = 0.9e-6 }

``value`` is the typical value (the median of what was measured), ``low`` and
``high`` the 5th and 95th percentiles.  A prediction with such inputs runs the
model at the values (the prediction, exactly as with plain numbers) and at
samples drawn through the intervals (the prediction interval).

How a sample is drawn: through a *split normal* distribution whose median is
``value`` and whose 5th and 95th percentiles are ``low`` and ``high`` (two half
normals with their own widths, ``(value - low) / 1.645`` below and
``(high - value) / 1.645`` above), taken in logarithms when ``low > 0``
(quantities of this kind, times and rates, spread by factors and never become
0 or negative) and on the plain scale, cut at 0, when ``low`` is 0.  Why this
one: it is the distribution the three numbers describe and no more: its median
and its 5th/95th percentiles are exactly what calibrate measures, a skewed
interval (a slow mode above the value) stays skewed, and it needs no bound that
was not measured (a triangular or PERT distribution would make ``low``/``high``
hard limits, which a 5th/95th percentile is not).

The samples are stratified (Latin hypercube): each input's 5%..95% range is
hit evenly by few samples, and the inputs are paired at random.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..engine.records import FrozenRecord

if TYPE_CHECKING:  # numpy is imported where samples are drawn: reading a machine file needs none
    import numpy as np

__all__ = [
    "Uncertain",
    "Z90",
    "is_interval",
    "parse_interval",
    "split_intervals",
    "latin_hypercube",
    "percentile_interval",
    "median_spread",
    "sensitivity",
    "UncertainMachine",
]

#: The standard normal's 95th percentile: ``low``/``high`` lie this many half-widths from the value.
Z90 = 1.6448536269514722
#: The keys of an interval table.
INTERVAL_KEYS = ("value", "low", "high")


class Uncertain(FrozenRecord):
    """A number known as ``value`` (median) with ``low``/``high`` its 5th/95th percentiles."""

    value: float
    low: float
    high: float

    __slots__ = _FIELDS = ("value", "low", "high")

    def __init__(self, value: float, low: float, high: float) -> None:
        if not (low <= value <= high):
            raise ValueError(f"low {low:g} <= value {value:g} <= high {high:g} does not hold")
        put = object.__setattr__
        put(self, "value", float(value))
        put(self, "low", float(low))
        put(self, "high", float(high))

    @property
    def exact(self) -> bool:
        """True when there is no spread (then the number is used as a plain one)."""
        return self.low == self.value == self.high

    @property
    def logarithmic(self) -> bool:
        """Whether samples are drawn in logarithms (all three positive)."""
        return self.low > 0.0

    def quantile(self, u: np.ndarray) -> np.ndarray:
        """The values at probabilities ``u`` (0 < u < 1) of the split normal through low/value/high."""
        import numpy as np
        from scipy.special import ndtri

        z = ndtri(np.asarray(u, dtype=float))
        if self.logarithmic:
            mid, lo, hi = math.log(self.value), math.log(self.low), math.log(self.high)
            below, above = (mid - lo) / Z90, (hi - mid) / Z90
            return np.exp(mid + z * np.where(z < 0, below, above))
        below, above = (self.value - self.low) / Z90, (self.high - self.value) / Z90
        return np.maximum(0.0, self.value + z * np.where(z < 0, below, above))

    def describe(self, unit: str = "") -> str:
        return f"{self.value:.4g}{unit} ({self.low:.4g}..{self.high:.4g})"

    def narrowed(self, factor: float) -> Uncertain:
        """The same value with both half-widths times ``factor`` (in logarithms when drawn so)."""
        if self.logarithmic:
            return Uncertain(
                self.value,
                self.value * (self.low / self.value) ** factor,
                self.value * (self.high / self.value) ** factor,
            )
        return Uncertain(
            self.value,
            self.value - (self.value - self.low) * factor,
            self.value + (self.high - self.value) * factor,
        )


#: Above this many runs the median's spread is the large-sample formula (within 1% of the exact one).
_MEDIAN_FORMULA_AFTER = 101


@functools.lru_cache(maxsize=64)
def median_spread(runs: int) -> float:
    """The standard deviation of the median of ``runs`` standard normal draws (1 for one run).

    Why: a factor that moves each launch of a program (``[variability] run_to_run``) moves the
    median of several launches less, by this much: 1, 0.71, 0.67, 0.55, 0.54 for 1 to 5 runs
    (the mean of the middle two for an even count).  Computed once per count from 100,000
    seeded draws, so the same count always gives the same number; ``sqrt(pi / (2 runs))``
    beyond :data:`_MEDIAN_FORMULA_AFTER` runs.
    """
    if runs <= 1:
        return 1.0
    if runs > _MEDIAN_FORMULA_AFTER:
        return math.sqrt(math.pi / (2 * runs))
    import numpy as np

    draws = np.random.default_rng(20261127).standard_normal((100_000, runs))
    return float(np.median(draws, axis=1).std())


def is_interval(value: Any) -> bool:
    """True for a table ``{value, low, high}`` (``low``/``high`` may be left out: no spread there)."""
    return isinstance(value, Mapping) and "value" in value and set(value) <= set(INTERVAL_KEYS)


def parse_interval(value: Mapping[str, Any], convert: Callable[[Any], float]) -> Uncertain:
    """An :class:`Uncertain` from an interval table, each number through ``convert`` (units, checks).

    Raises :class:`ValueError` with a sentence for people when the three are not numbers in order.
    """
    numbers = {key: convert(value[key]) for key in INTERVAL_KEYS if key in value}
    for key, number in numbers.items():
        if not isinstance(number, (int, float)) or isinstance(number, bool) or not math.isfinite(number):
            raise ValueError(f"{key} must be a finite number, got {value[key]!r}")
    mid = float(numbers["value"])
    low, high = float(numbers.get("low", mid)), float(numbers.get("high", mid))
    if not (low <= mid <= high):
        raise ValueError(f"needs low <= value <= high, got low {low:g}, value {mid:g}, high {high:g}")
    return Uncertain(mid, low, high)


Path = tuple[str | int, ...]


def split_intervals(
    data: Any, convert: Callable[[Path, Any], float], path: Path = ()
) -> tuple[Any, list[tuple[Path, Uncertain]]]:
    """``data`` with every interval table replaced by its value, and the intervals by path.

    ``convert(path, raw)`` turns one number of an interval into the key's base unit (raising
    :class:`ValueError` for people).  Intervals without spread become plain numbers and are
    not listed.  Tables and lists are copied; the caller's ``data`` is left as it was.
    """
    found: list[tuple[Path, Uncertain]] = []
    if is_interval(data):
        try:
            interval = parse_interval(data, lambda raw: convert(path, raw))
        except ValueError as exc:
            raise ValueError(f"{path_text(path)}: {exc}") from None
        if not interval.exact:
            found.append((path, interval))
        return convert(path, data["value"]), found
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for key, value in data.items():
            out[key], more = split_intervals(value, convert, (*path, key))
            found += more
        return out, found
    if isinstance(data, list):
        items = []
        for index, value in enumerate(data):
            item, more = split_intervals(value, convert, (*path, index))
            items.append(item)
            found += more
        return items, found
    return data, found


def path_text(path: Path) -> str:
    """``network.intra_node.ranges[2].latency``: a path as people read it (lists counted from 1)."""
    text = ""
    for part in path:
        text += f"[{part + 1}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def set_path(data: Any, path: Path, value: Any) -> None:
    """Put ``value`` at ``path`` inside nested tables and lists (which must exist)."""
    for part in path[:-1]:
        data = data[part]
    data[path[-1]] = value


def latin_hypercube(inputs: Sequence[Uncertain], samples: int, seed: int = 0) -> np.ndarray:
    """``samples`` × ``len(inputs)`` values: each input stratified over its distribution, paired at random."""
    import numpy as np

    rng = np.random.default_rng(seed)
    columns = []
    for interval in inputs:
        u = (rng.permutation(samples) + rng.random(samples)) / samples
        columns.append(interval.quantile(np.clip(u, 1e-12, 1 - 1e-12)))
    return np.column_stack(columns) if columns else np.empty((samples, 0))


def percentile_interval(values: Sequence[float], level: float) -> tuple[float, float]:
    """The central ``level`` interval of ``values``: their (1-level)/2 and (1+level)/2 quantiles."""
    import numpy as np

    data = np.asarray(values, dtype=float)
    low, high = np.quantile(data, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def _ranks(values: np.ndarray) -> np.ndarray:
    import numpy as np
    from scipy.stats import rankdata

    return np.asarray(rankdata(values), dtype=float)


def sensitivity(names: Sequence[str], draws: np.ndarray, outputs: Sequence[float]) -> list[dict[str, Any]]:
    """Which inputs make the width: each input's share, most first.

    The share of input *i* is its squared rank correlation (Spearman) with the predicted
    time over the samples, divided by the sum over all inputs.  For independent inputs and a
    time that grows or falls with each, the squared rank correlation is the part of the
    time's (rank) variance that input explains alone, so the shares say how much of the
    spread each input makes.  A correlation that chance alone gives counts as 0, so inputs
    without effect get 0: below ``z/sqrt(n - 1)``, the level of a test of no correlation at
    which, over all ``k`` inputs together, chance passes one in twenty times (``z`` the normal
    quantile of ``1 - 0.05 / (2k)``, Bonferroni's bound).  A 5% test for each input alone let
    one of twenty inputs without effect through, and a machine file has twenty or more.  A
    constant time gives no shares.
    """
    import numpy as np

    y = np.asarray(outputs, dtype=float)
    if len(names) == 0 or len(y) < 3 or float(np.ptp(y)) == 0.0:
        return []
    ry = _ranks(y)
    ry -= ry.mean()
    noise = _chance_level(draws.shape[1]) / math.sqrt(len(y) - 1)
    weights = []
    for column in range(draws.shape[1]):
        x = draws[:, column]
        if float(np.ptp(x)) == 0.0:
            weights.append(0.0)
            continue
        rx = _ranks(x)
        rx -= rx.mean()
        rho = float(rx @ ry / math.sqrt(float(rx @ rx) * float(ry @ ry)))
        # a correlation within chance of 0 (for all inputs together, at the 5% level) is none
        weights.append(rho * rho if abs(rho) >= noise else 0.0)
    total = sum(weights)
    if total <= 0.0:
        return []
    ranked = sorted(zip(names, weights, strict=True), key=lambda item: (-item[1], item[0]))
    return [{"input": name, "share": round(w / total, 4)} for name, w in ranked]


def _chance_level(inputs: int) -> float:
    """The normal quantile beyond which a correlation is not chance, for ``inputs`` tested at once."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(1 - 0.05 / (2 * max(inputs, 1)))


#: Keys whose values are whole numbers: a drawn value is rounded.
_WHOLE = ("eager_limit",)
#: The machine table whose intervals are factors on a whole run's time, not machine numbers.
FACTOR_TABLE = "variability"


class UncertainMachine:
    """A machine file's tables at the values and its intervals by key path; the machine of each sample.

    Every sample is an ordinary machine (the simulator and the analytic path do not know that
    inputs were uncertain): the file's tables with the drawn numbers put in, read and checked by
    ``build`` (``Machine.from_dict``) like any machine file.
    """

    def __init__(
        self,
        data: dict[str, Any],
        inputs: tuple[tuple[Path, Uncertain], ...],
        source: str,
        build: Callable[[dict[str, Any], str], Any],
    ) -> None:
        self.data = data
        self.inputs = inputs
        self.source = source
        self.build = build

    @property
    def names(self) -> list[str]:
        """The inputs as people read them (``network.intra_node.latency``)."""
        return [path_text(path) for path, _ in self.inputs]

    @property
    def intervals(self) -> list[Uncertain]:
        return [interval for _, interval in self.inputs]

    def draw(self, values: Sequence[float]) -> Any:
        """The plain machine whose uncertain inputs take ``values`` (in the order of :attr:`inputs`)."""
        import copy

        data = copy.deepcopy(self.data)
        for (path, _), value in zip(self.inputs, values, strict=True):
            if path[0] == FACTOR_TABLE:  # a factor on the run's time, applied by the caller
                continue
            key = next((p for p in reversed(path) if isinstance(p, str)), "")
            set_path(data, path, int(round(value)) if key in _WHOLE else float(value))
        return self.build(data, self.source)
