"""Empirical cost models: the performance model normal form (PMNF) fitted to measurements.

A cost function in a model should come from measurements, not be invented.
``uml2perf fit`` reads measurements (CSV, or the text and JSON input formats
of Extra-P) and searches, as Extra-P does, the performance model normal form

    f(x1..xm) = c0 + sum_k c_k * prod_l x_l**i_kl * log2(x_l)**j_kl

with exponents ``i`` from a fixed set of fractions (0..3 in quarters and
thirds, and negative ones for quantities that shrink with the parameter) and
``j`` in {0, 1, 2}.  For one parameter every hypothesis ``c0 + c1*x^i*log2(x)^j``
is fitted by least squares on relative errors (each point weighted by 1/value when
all values are positive: timings scatter in proportion to their size, and a cost
must hold at the small end as well as at the large one, where plain least squares
lets the largest points decide); for several, the best single-parameter terms of
each parameter are combined additively and multiplicatively.  The hypothesis
chosen is the one with the smallest cross-validated SMAPE (leave one
measurement point out, all its repetitions together); a hypothesis with more
terms wins only when it lowers that error clearly, which guards against
over-fitting noise.

The result is an expression of the expression language whose variables are
the parameter names, ready to be pasted into a model or written to a sidecar.
"""

from __future__ import annotations

import csv
import io
import json
import keyword
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InputError, Location

#: Exponents i of x**i searched (the usual Extra-P set plus shrinking quantities).
POSITIVE_EXPONENTS = tuple(sorted({Fraction(n, 4) for n in range(13)} | {Fraction(n, 3) for n in range(10)}))
NEGATIVE_EXPONENTS = tuple(
    -f
    for f in (
        Fraction(1, 4),
        Fraction(1, 3),
        Fraction(1, 2),
        Fraction(2, 3),
        Fraction(3, 4),
        Fraction(1),
        Fraction(3, 2),
        Fraction(2),
    )
)
LOG_EXPONENTS = (0, 1, 2)
#: A hypothesis with more terms must lower the cross-validated SMAPE by this fraction to win.
IMPROVEMENT_NEEDED = 0.10
#: Relative error below which two hypotheses count as equally good (noise floor of timings).
SMAPE_TIE = 0.5  # percent
#: Quality below which a fitted model is reported with a warning.
POOR_R2 = 0.9
POOR_SMAPE = 10.0  # percent
#: Single-parameter terms of each parameter kept for combining several parameters.
CANDIDATES_PER_PARAMETER = 4


# --------------------------------------------------------------------------- data


@dataclass
class Measurements:
    """Measured values of one metric of one element over points of the parameter space."""

    parameters: list[str]
    points: np.ndarray  # (rows, parameters); one row per repetition
    values: np.ndarray  # (rows,)
    source: str = "<data>"
    element: str | None = None
    metric: str = "time"
    lines: list[int] = field(default_factory=list)  # line of every row in the source, when known

    def distinct_points(self) -> np.ndarray:
        return np.unique(self.points, axis=0)


def _error(
    path: str, line: int | None, message: str, column: str | int | None = None, hint: str | None = None
) -> InputError:
    where = message if column is None else f"column {column}: {message}"
    return InputError(where, Location(file=path, line=line), hint=hint)


def read_measurements(
    path: str | Path, metric: str | None = None, text: str | None = None
) -> list[Measurements]:
    """Read a CSV, Extra-P text or Extra-P JSON file into one :class:`Measurements` per element."""
    shown = str(path)
    if text is None:
        text = _read_text(path)
    if "\x00" in text:
        raise InputError(
            "the measurements file holds NUL characters: it is binary, not text",
            Location(file=shown),
            hint="give a CSV, Extra-P text or Extra-P JSON file",
        )
    stripped = text.lstrip()
    suffix = Path(shown).suffix.lower()
    if suffix == ".json" or stripped.startswith(("{", "[")):
        data = _read_extrap_json(shown, text, metric)
    elif suffix in (".txt", ".extrap") or _looks_like_extrap_text(stripped):
        data = _read_extrap_text(shown, text, metric)
    else:
        data = _read_csv(shown, text, metric or "time")
    for item in data:
        _check_varies(item)
    return data


def _read_text(path: str | Path) -> str:
    """The measurements file as text, read by the input rules every command follows.

    The cap on bytes, devices that never end and FIFOs that send nothing for 10 s are handled as
    for models, sidecars and machine files (:func:`uml2perf_runtime.output.files.read_input`).
    """
    from uml2perf_runtime.engine.limits import current
    from uml2perf_runtime.output.files import InputFileError, read_input

    shown = str(path)
    try:
        raw = read_input(
            path,
            max_bytes=current().input_bytes,
            what="measurements file",
            limit_hint="raise the limit with --limit input_bytes=N or UML2PERF_MAX_BYTES",
        )
    except InputFileError as exc:
        raise InputError(exc.message, Location(file=shown), hint=exc.hint) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"measurements are not UTF-8 text (byte 0x{raw[exc.start]:02x})",
            Location(file=shown, line=line),
            hint="save the file as UTF-8 text",
        ) from None


def _count_rows(path: str, rows: int, line: int | None) -> None:
    """Stop reading at the ``measurements`` limit (checked as rows come, before they are all held)."""
    from uml2perf_runtime.engine.limits import LimitExceeded, current

    try:
        current().check("measurements", rows, "the number of measurements")
    except LimitExceeded as exc:
        raise InputError(exc.message, Location(file=path, line=line), hint=exc.hint) from None


def _parameter_name(path: str, line: int | None, name: str, column: int | None = None) -> None:
    """Parameter names become variables of the fitted expression: the model's naming rules apply."""
    from .expressions import BUILTIN_FUNCTIONS, CONSTANTS, SYSTEM_PARAMETERS
    from .expressions.vocabulary import FORBIDDEN_CALLS

    problem = None
    if not (name.isidentifier() and name.isascii()) or keyword.iskeyword(name):
        problem = "is not a variable name"
    elif name in SYSTEM_PARAMETERS:
        problem = "is the name of a system parameter"
    elif name in BUILTIN_FUNCTIONS or name in CONSTANTS:
        problem = "is the name of a built-in function or constant of expressions"
    elif name.startswith("_") or name in FORBIDDEN_CALLS:
        problem = "is a name generated models keep for themselves"
    if problem is not None:
        raise _error(
            path,
            line,
            f"parameter name {name!r} {problem}",
            column,
            hint="parameter names become variables of the fitted cost: use letters, digits and '_' "
            "(not starting with '_'), distinct from the functions and system parameters",
        )


def _looks_like_extrap_text(text: str) -> bool:
    for line in text.splitlines():
        word = line.strip().split(" ", 1)[0].upper()
        if not word or word.startswith("#"):
            continue
        return word in ("PARAMETER", "POINTS", "REGION", "METRIC", "DATA", "EXPERIMENT")
    return False


#: A number as measurements write it: digits, an optional fraction and exponent (no ``_``, no words).
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _number(path: str, line: int, column: str | int | None, text: str) -> float:
    try:
        if len(text) > 400 or not _PLAIN_NUMBER.fullmatch(text.strip()):
            raise ValueError(text)
        value = float(text)
    except ValueError:
        raise _error(
            path,
            line,
            f"{_shown_cell(text)} is not a number",
            column,
            hint="every parameter and metric value must be a number",
        ) from None
    if not math.isfinite(value):
        raise _error(path, line, f"{text.strip()!r} is not a finite number", column)
    return value


def _shown_cell(text: str) -> str:
    """A cell for a message: at most 40 characters of it."""
    text = text.strip()
    return repr(text) if len(text) <= 40 else repr(text[:40]) + f" (… {len(text)} characters)"


def _read_csv(path: str, text: str, metric: str) -> list[Measurements]:
    reader = csv.reader(io.StringIO(text))
    rows: list[tuple[int, list[str]]] = []
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                rows.append((reader.line_num, row))
                if len(rows) % 4096 == 0:
                    _count_rows(path, len(rows) - 1, reader.line_num)
    except csv.Error as exc:
        raise _error(path, reader.line_num, f"not a CSV file the reader accepts: {exc}") from None
    _count_rows(path, max(len(rows) - 1, 0), None)
    if not rows:
        raise _error(
            path,
            None,
            "no measurements in the file",
            hint="expected a header line (parameters, 'time') and one line per measurement",
        )
    header_line, header = rows[0]
    header = [cell.strip() for cell in header]
    if metric not in header:
        raise _error(
            path,
            header_line,
            f"no column {metric!r} in the header ({', '.join(header)})",
            hint="name the metric column with --metric NAME",
        )
    for position, name in enumerate(header, start=1):
        if not name:
            raise _error(path, header_line, "a column has no name", position)
        if name not in (metric, "element"):
            _parameter_name(path, header_line, name, position)
        if header.count(name) > 1:
            raise _error(path, header_line, f"column {name!r} appears twice", position)
    element_col = header.index("element") if "element" in header else None
    metric_col = header.index(metric)
    param_cols = [i for i in range(len(header)) if i not in (metric_col, element_col)]
    if not param_cols:
        raise _error(
            path,
            header_line,
            "no parameter column besides the metric",
            hint="add one column per parameter (e.g. n, p)",
        )
    groups: dict[str | None, tuple[list[list[float]], list[float], list[int]]] = {}
    for number, row in rows[1:]:
        if len(row) != len(header):
            raise _error(
                path,
                number,
                f"{len(row)} values for {len(header)} columns",
                hint="every line needs one value per column of the header",
            )
        point = []
        for i in param_cols:
            cell = row[i].strip()
            if not cell:
                raise _error(path, number, f"missing value of {header[i]!r}", i + 1)
            point.append(_number(path, number, f"{i + 1} ({header[i]})", cell))
        cell = row[metric_col].strip()
        if not cell:
            raise _error(path, number, f"missing value of {metric!r}", metric_col + 1)
        value = _number(path, number, f"{metric_col + 1} ({metric})", cell)
        element = row[element_col].strip() if element_col is not None else None
        pts, vals, lines = groups.setdefault(element, ([], [], []))
        pts.append(point)
        vals.append(value)
        lines.append(number)
    if not groups:
        raise _error(path, header_line, "the header is followed by no measurement")
    params = [header[i] for i in param_cols]
    return [
        Measurements(params, np.array(p, dtype=float), np.array(v, dtype=float), path, element, metric, lines)
        for element, (p, v, lines) in groups.items()
    ]


def _read_extrap_text(path: str, text: str, metric: str | None) -> list[Measurements]:
    """Extra-P's text input: PARAMETER, POINTS, then REGION/METRIC and one DATA line per point."""
    params: list[str] = []
    points: list[list[float]] = []
    region: str | None = None
    current_metric = "time"
    series: dict[tuple[str | None, str], tuple[list[list[float]], list[float], list[int]]] = {}
    next_point: dict[tuple[str | None, str], int] = {}
    rows = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        rest = rest.strip()
        if keyword == "PARAMETER":
            for name in rest.split():
                _parameter_name(path, number, name)
                params.append(name)
        elif keyword == "POINTS":
            if not params:
                raise _error(path, number, "POINTS before any PARAMETER line")
            points.extend(_extrap_points(path, number, rest, len(params)))
        elif keyword == "REGION":
            region = rest or None
        elif keyword == "METRIC":
            current_metric = rest or "time"
        elif keyword == "EXPERIMENT":
            continue
        elif keyword == "DATA":
            key = (region, current_metric)
            index = next_point.get(key, 0)
            if index >= len(points):
                raise _error(
                    path,
                    number,
                    f"more DATA lines than the {len(points)} POINTS",
                    hint="write one DATA line (its repetitions) per point, in the order of POINTS",
                )
            next_point[key] = index + 1
            values = [_number(path, number, c + 1, v) for c, v in enumerate(rest.split())]
            if not values:
                raise _error(path, number, "DATA line without values")
            rows += len(values)
            _count_rows(path, rows, number)
            pts, vals, lines = series.setdefault(key, ([], [], []))
            for value in values:
                pts.append(points[index])
                vals.append(value)
                lines.append(number)
        else:
            raise _error(
                path,
                number,
                f"unknown Extra-P keyword {keyword!r}",
                hint="expected PARAMETER, POINTS, REGION, METRIC or DATA",
            )
    if not params or not points:
        raise _error(path, None, "not an Extra-P text file: no PARAMETER or POINTS line")
    if not series:
        raise _error(path, None, "no DATA lines")
    chosen = [(key, value) for key, value in series.items() if metric is None or key[1] == metric]
    if not chosen:
        raise _error(
            path,
            None,
            f"no metric {metric!r} in the file",
            hint="metrics there: " + ", ".join(sorted({k[1] for k in series})),
        )
    for key in next_point:
        if next_point[key] != len(points):
            raise _error(
                path, None, f"region {key[0]!r}: {next_point[key]} DATA lines for {len(points)} POINTS"
            )
    return [
        Measurements(
            list(params), np.array(p, dtype=float), np.array(v, dtype=float), path, key[0], key[1], lines
        )
        for key, (p, v, lines) in chosen
    ]


def _extrap_points(path: str, line: int, text: str, dims: int) -> list[list[float]]:
    if "(" in text:
        out = []
        for chunk in text.replace(")", "").split("(")[1:]:
            values = [_number(path, line, None, v) for v in chunk.split()]
            if len(values) != dims:
                raise _error(
                    path, line, f"point ({chunk.strip()}) has {len(values)} values for {dims} parameters"
                )
            out.append(values)
        return out
    values = [_number(path, line, c + 1, v) for c, v in enumerate(text.split())]
    if dims != 1:
        raise _error(path, line, f"{dims} parameters need points written as ( x y ... )")
    return [[v] for v in values]


def _read_extrap_json(path: str, text: str, metric: str | None) -> list[Measurements]:
    """Extra-P's JSON input: ``parameters`` and ``measurements`` (point, value(s), callpath, metric)."""
    from uml2perf_runtime.output.structured import StructureError, loads_json

    try:
        data = loads_json(text, "measurements file")
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON: {exc.msg}", Location(file=path, line=exc.lineno), hint=f"column {exc.colno}"
        ) from None
    except StructureError as exc:
        raise InputError(exc.message, Location(file=path), hint=exc.hint) from None
    if not isinstance(data, dict) or "parameters" not in data or "measurements" not in data:
        raise _error(path, None, "an Extra-P JSON file needs the keys 'parameters' and 'measurements'")
    params = data["parameters"]
    if not isinstance(params, list) or not all(isinstance(p, str) for p in params):
        raise _error(path, None, "'parameters' must be a list of variable names")
    for name in params:
        _parameter_name(path, None, name)
    entries = _flat_measurements(path, data["measurements"])
    series: dict[tuple[str | None, str], tuple[list[list[float]], list[float], list[int]]] = {}
    rows = 0
    for position, entry in enumerate(entries):
        where = f"measurements[{position}]"
        if not isinstance(entry, dict) or "point" not in entry:
            raise _error(path, None, f"{where} has no 'point'")
        point = entry["point"]
        if not isinstance(point, list):
            point = [point]
        if len(point) != len(params) or not all(_json_number(v) for v in point):
            raise _error(path, None, f"{where}: 'point' needs {len(params)} finite numbers")
        values = entry.get("values", entry.get("value"))
        if not isinstance(values, list):
            values = [values]
        if not values or not all(_json_number(v) for v in values):
            raise _error(path, None, f"{where}: 'value' must be a finite number or a list of finite numbers")
        callpath = entry.get("callpath", entry.get("region"))
        name = entry.get("metric", "time")
        if not (callpath is None or isinstance(callpath, str)) or not isinstance(name, (str, int, float)):
            raise _error(path, None, f"{where}: 'callpath' and 'metric' must be names (strings)")
        key = (callpath, str(name))
        pts, vals, lines = series.setdefault(key, ([], [], []))
        rows += len(values)
        _count_rows(path, rows, None)
        for value in values:
            pts.append([float(v) for v in point])
            vals.append(float(value))
            lines.append(0)
    chosen = [(key, value) for key, value in series.items() if metric is None or key[1] == metric]
    if not chosen:
        raise _error(path, None, f"no measurements of metric {metric!r}" if metric else "no measurements")
    return [
        Measurements(
            list(params), np.array(p, dtype=float), np.array(v, dtype=float), path, key[0], key[1], []
        )
        for key, (p, v, _lines) in chosen
    ]


def _json_number(value: object) -> bool:
    """A finite JSON number that a float holds (an integer of 400 digits does not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _flat_measurements(path: str, entries: object) -> list[object]:
    """``measurements`` as a list: the nested ``{"callpath": {"metric": [items]}}`` form flattened."""
    if isinstance(entries, dict):
        flat: list[object] = []
        for callpath, by_metric in entries.items():
            if not isinstance(by_metric, dict):
                raise _error(path, None, f"measurements[{callpath!r}] must map metric names to lists")
            for name, items in by_metric.items():
                if not isinstance(items, list):
                    raise _error(path, None, f"measurements[{callpath!r}][{name!r}] must be a list")
                for item in items:
                    if not isinstance(item, dict):
                        raise _error(path, None, f"measurements[{callpath!r}][{name!r}] holds a non-object")
                    flat.append({**item, "callpath": callpath, "metric": name})
        return flat
    if not isinstance(entries, list):
        raise _error(path, None, "'measurements' must be a list")
    return entries


def _check_varies(data: Measurements) -> None:
    for index, name in enumerate(data.parameters):
        column = data.points[:, index]
        if np.all(column == column[0]):
            raise _error(
                data.source,
                None,
                f"parameter {name!r} never varies (always {column[0]:g})",
                name,
                hint="drop that column, or measure at several values of it",
            )
        if np.any(column <= 0):
            bad = int(np.argmax(column <= 0))
            line = data.lines[bad] if data.lines else None
            raise _error(
                data.source,
                line,
                f"parameter {name!r} is {column[bad]:g}; PMNF models need positive parameter values",
                name,
            )


# --------------------------------------------------------------------------- hypotheses


@dataclass(frozen=True)
class Factor:
    """``x**exponent * log2(x)**log_exponent`` of one parameter."""

    parameter: int
    exponent: Fraction
    log_exponent: int

    def evaluate(self, points: np.ndarray) -> np.ndarray:
        x = points[:, self.parameter]
        out = np.ones_like(x)
        if self.exponent:
            out = out * x ** float(self.exponent)
        if self.log_exponent:
            out = out * np.log2(x) ** self.log_exponent
        return out

    def text(self, names: Sequence[str]) -> str:
        name = names[self.parameter]
        parts = []
        e = self.exponent
        if e == 1:
            parts.append(name)
        elif e == Fraction(1, 2):
            parts.append(f"sqrt({name})")
        elif e.denominator == 1 and e:
            parts.append(f"{name}**{e.numerator}" if e > 0 else f"{name}**({e.numerator})")
        elif e:
            parts.append(f"{name}**({e.numerator}/{e.denominator})")
        if self.log_exponent == 1:
            parts.append(f"log2({name})")
        elif self.log_exponent:
            parts.append(f"log2({name})**{self.log_exponent}")
        return " * ".join(parts)

    @property
    def degree(self) -> float:
        return float(self.exponent) + 0.01 * self.log_exponent


@dataclass(frozen=True)
class Term:
    """A product of factors (one per parameter it involves)."""

    factors: tuple[Factor, ...]

    def evaluate(self, points: np.ndarray) -> np.ndarray:
        out = np.ones(points.shape[0])
        for factor in self.factors:
            out = out * factor.evaluate(points)
        return out

    def text(self, names: Sequence[str]) -> str:
        return " * ".join(f.text(names) for f in self.factors)


def single_parameter_factors(parameter: int, points: np.ndarray, negative: bool = True) -> list[Factor]:
    """Every x**i * log2(x)**j of the search space except the constant."""
    exponents = POSITIVE_EXPONENTS + (NEGATIVE_EXPONENTS if negative else ())
    out = []
    for i in exponents:
        for j in LOG_EXPONENTS:
            if i == 0 and j == 0:
                continue
            out.append(Factor(parameter, i, j))
    return out


@dataclass
class Fit:
    """One fitted hypothesis and its quality."""

    terms: tuple[Term, ...]
    coefficients: np.ndarray
    rss: float
    smape: float  # percent, on the points fitted
    cv_smape: float  # percent, leave one point out
    r2_adj: float
    sigma: float  # residual standard error
    sigma_rel: float  # residual standard error relative to the prediction (timings scale their noise)
    covariance: np.ndarray  # of the coefficients, for prediction intervals
    dof: int

    @property
    def size(self) -> int:
        return len(self.terms)


def _design(terms: Sequence[Term], points: np.ndarray) -> np.ndarray:
    columns = [np.ones(points.shape[0])] + [t.evaluate(points) for t in terms]
    return np.column_stack(columns)


def _smape(measured: np.ndarray, predicted: np.ndarray) -> float:
    denominator = np.abs(measured) + np.abs(predicted)
    safe = np.where(denominator == 0, 1.0, denominator)
    return float(np.mean(np.where(denominator == 0, 0.0, 2 * np.abs(predicted - measured) / safe)) * 100)


def _weights(values: np.ndarray) -> np.ndarray:
    """1/value for positive values (least squares on relative errors), else 1 (plain least squares)."""
    return 1.0 / values if np.all(values > 0) else np.ones_like(values)


def _solve(design: np.ndarray, values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, int]:
    """Weighted least squares: the coefficients and the rank of the weighted design."""
    coef, _res, rank, _sv = np.linalg.lstsq(design * weights[:, None], values * weights, rcond=None)
    return coef, int(rank)


def fit_hypothesis(terms: Sequence[Term], data: Measurements, groups: np.ndarray) -> Fit | None:
    """Least squares of ``c0 + sum c_k * term_k``; None when the points cannot determine it."""
    X = _design(terms, data.points)
    y = data.values
    if not np.all(np.isfinite(X)):
        return None
    n_groups = int(groups.max()) + 1
    if n_groups < X.shape[1] + 1:  # leave-one-out needs one point to spare
        return None
    scale = np.max(np.abs(X), axis=0)
    scale[scale == 0] = 1.0
    Xs = X / scale
    w = _weights(y)
    coef_s, rank = _solve(Xs, y, w)
    if rank < X.shape[1]:
        return None
    coef = coef_s / scale
    predicted = X @ coef
    residuals = y - predicted
    rss = float(residuals @ residuals)
    n, k = X.shape
    dof = n - k
    tss = float(((y - y.mean()) ** 2).sum())
    r2 = 1 - rss / tss if tss > 0 else 1.0
    r2_adj = 1 - (1 - r2) * (n - 1) / dof if dof > 0 else r2
    sigma = math.sqrt(rss / dof) if dof > 0 else 0.0
    weighted = residuals * w
    sigma_w = math.sqrt(float(weighted @ weighted) / dof) if dof > 0 else 0.0
    try:
        cov_s = np.linalg.inv((Xs * w[:, None]).T @ (Xs * w[:, None])) * sigma_w**2
    except np.linalg.LinAlgError:
        return None
    covariance = cov_s / np.outer(scale, scale)
    # cross-validation: leave out every repetition of one point in turn
    errors = []
    for g in range(n_groups):
        keep = groups != g
        c, _rank = _solve(Xs[keep], y[keep], w[keep])
        out = ~keep
        errors.append(_smape(y[out], Xs[out] @ c))
    safe = np.where(predicted == 0, 1.0, np.abs(predicted))
    sigma_rel = math.sqrt(float(((residuals / safe) ** 2).sum()) / dof) if dof > 0 else 0.0
    if not (np.all(np.isfinite(coef)) and math.isfinite(rss) and math.isfinite(sigma_rel)):
        return None  # overflowed: numbers this large say nothing
    return Fit(
        tuple(terms),
        coef,
        rss,
        _smape(y, predicted),
        float(np.mean(errors)),
        r2_adj,
        sigma,
        sigma_rel,
        covariance,
        dof,
    )


def _better(a: Fit, b: Fit | None) -> bool:
    """Whether ``a`` beats ``b``: clearly lower CV error, or as good and simpler."""
    if b is None:
        return True
    if a.size > b.size:
        return a.cv_smape < b.cv_smape * (1 - IMPROVEMENT_NEEDED) and b.cv_smape - a.cv_smape > SMAPE_TIE / 10
    if a.size < b.size:
        return not (
            b.cv_smape < a.cv_smape * (1 - IMPROVEMENT_NEEDED) and a.cv_smape - b.cv_smape > SMAPE_TIE / 10
        )
    if abs(a.cv_smape - b.cv_smape) <= 1e-9:
        return a.rss < b.rss
    return a.cv_smape < b.cv_smape


@dataclass
class Model:
    """The selected model of one element, with everything ``fit`` reports about it."""

    data: Measurements
    fit: Fit
    considered: int

    @property
    def parameters(self) -> list[str]:
        return self.data.parameters

    def expression(self, digits: int = 6, names: Sequence[str] | None = None) -> str:
        """The model in the expression language; ``names`` renames the parameters (``fit --as``)."""
        names = self.parameters if names is None else names
        parts = [_number_text(self.fit.coefficients[0], digits)]
        for coefficient, term in zip(self.fit.coefficients[1:], self.fit.terms, strict=True):
            sign = "-" if coefficient < 0 else "+"
            parts.append(f"{sign} {_number_text(abs(coefficient), digits)} * {term.text(names)}")
        return " ".join(parts)

    def predict(self, points: np.ndarray) -> np.ndarray:
        return _design(self.fit.terms, np.atleast_2d(points)) @ self.fit.coefficients

    def interval(self, points: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Prediction interval of a new measurement at ``points`` (Student t, OLS)."""
        from scipy import stats

        X = _design(self.fit.terms, np.atleast_2d(points))
        mean = X @ self.fit.coefficients
        if self.fit.dof <= 0:
            return mean, mean
        # measurement noise of timings grows with the time: the larger of the absolute and relative spreads
        noise = np.maximum(self.fit.sigma, self.fit.sigma_rel * np.abs(mean))
        spread = np.sqrt(noise**2 + np.einsum("ij,jk,ik->i", X, self.fit.covariance, X))
        t = float(stats.t.ppf(0.5 + level / 2, self.fit.dof))
        return mean - t * spread, mean + t * spread

    @property
    def poor(self) -> bool:
        return self.fit.r2_adj < POOR_R2 or self.fit.smape > POOR_SMAPE

    def to_dict(self) -> dict[str, Any]:
        names = self.parameters
        top = self.data.points.max(axis=0)
        low, high = self.interval(top[None, :])
        terms = [{"coefficient": float(self.fit.coefficients[0]), "factors": []}]
        for coefficient, term in zip(self.fit.coefficients[1:], self.fit.terms, strict=True):
            terms.append(
                {
                    "coefficient": float(coefficient),
                    "factors": [
                        {
                            "parameter": names[f.parameter],
                            "exponent": str(f.exponent),
                            "log2_exponent": f.log_exponent,
                        }
                        for f in term.factors
                    ],
                    "text": term.text(names),
                }
            )
        return {
            "element": self.data.element,
            "metric": self.data.metric,
            "expression": self.expression(),
            "parameters": list(names),
            "terms": terms,
            "metrics": {
                "rss": self.fit.rss,
                "adjusted_r2": self.fit.r2_adj,
                "smape": self.fit.smape,
                "cv_smape": self.fit.cv_smape,
                "points": len(self.data.distinct_points()),
                "measurements": len(self.data.values),
                "hypotheses": self.considered,
            },
            "prediction_interval": {
                "level": 0.95,
                "at": {name: float(v) for name, v in zip(names, top, strict=True)},
                "predicted": float(self.predict(top[None, :])[0]),
                "low": float(low[0]),
                "high": float(high[0]),
            },
            "ends": self.edge_checks(),
            "warning": self.warning(),
        }

    def edge_checks(self) -> list[dict[str, Any]]:
        """The model refitted without its smallest and without its largest point, predicting it.

        Where strong scaling lives, a cost is used at the ends of the measured range and beyond;
        the average cross-validated error hides a model that misses there.  For each end: the
        point, the mean measured there, the prediction of the model fitted without it, and the
        half-width of the fit's own 95% interval for a measurement there (relative).
        """
        return edge_checks(self)

    def warning(self) -> str | None:
        notes = []
        negative = negative_values_note(self.data)
        if negative is not None:
            notes.append(negative)
        if self.poor:
            notes.append(
                f"poor fit (adjusted R² {self.fit.r2_adj:.3f}, SMAPE {self.fit.smape:.1f}%): the "
                "measurements are noisy or follow no PMNF model; measure more repetitions or more points"
            )
        for check in self.edge_checks():
            if check["outside"]:
                where = ", ".join(f"{k}={v:g}" for k, v in check["at"].items())
                side = "below" if check["end"] == "smallest" else "beyond"
                notes.append(
                    f"fitted without its {check['end']} point ({where}) the model predicts "
                    f"{check['predicted']:.4g}, {100 * check['error']:+.0f}% from the "
                    f"{check['measured']:.4g} measured, more than its own 95% interval there "
                    f"(±{100 * check['interval']:.0f}%): predictions {side} the measured range are not "
                    "to be trusted; measure further points there"
                )
        return "; ".join(notes) or None


def edge_checks(model: Model) -> list[dict[str, Any]]:
    """Leave-one-out at the smallest and the largest point (by the product of the parameters)."""
    data = model.data
    groups = _groups(data.points)
    distinct, first = np.unique(data.points, axis=0, return_index=True)
    if len(distinct) < len(model.fit.terms) + 3:
        return []  # too few points to leave one out and still determine the model
    size = np.prod(np.abs(distinct), axis=1)
    ends = (("smallest", int(np.argmin(size))), ("largest", int(np.argmax(size))))
    spread = _relative_interval(model, groups)
    checks = []
    X = _design(model.fit.terms, data.points)
    scale = np.max(np.abs(X), axis=0)
    scale[scale == 0] = 1.0
    for end, index in ends:
        group = groups[first[index]]
        keep = groups != group
        coef, rank = _solve(X[keep] / scale, data.values[keep], _weights(data.values[keep]))
        if rank < X.shape[1]:
            continue
        point = distinct[index][None, :]
        predicted = float((_design(model.fit.terms, point) / scale @ coef)[0])
        measured = float(np.mean(data.values[~keep]))
        if measured == 0:
            continue
        half = spread * abs(measured)
        error = (predicted - measured) / abs(measured)
        checks.append(
            {
                "end": end,
                "at": {name: float(v) for name, v in zip(data.parameters, distinct[index], strict=True)},
                "measured": measured,
                "predicted": predicted,
                "error": error,
                "interval": half / abs(measured),
                "outside": abs(predicted - measured) > half,
            }
        )
    return checks


def _relative_interval(model: Model, groups: np.ndarray) -> float:
    """The half-width of the fit's 95% interval for one measurement, relative to the time.

    Timings scatter in proportion to their size, so the interval is relative: from the
    scatter of repeated measurements at one point where there are repetitions (the noise
    the model cannot explain, whatever it is), else from the residuals relative to the model.
    """
    from scipy import stats

    values = model.data.values
    squares, freedom = 0.0, 0
    for group in np.unique(groups):
        repeated = values[groups == group]
        mean = float(np.mean(repeated))
        if len(repeated) > 1 and mean != 0:
            squares += float(np.sum(((repeated - mean) / mean) ** 2))
            freedom += len(repeated) - 1
    if freedom > 0:
        return float(stats.t.ppf(0.975, freedom)) * math.sqrt(squares / freedom)
    if model.fit.dof <= 0:
        return 0.0
    return float(stats.t.ppf(0.975, model.fit.dof)) * model.fit.sigma_rel


def negative_values_note(data: Measurements) -> str | None:
    """A warning when measured values are negative (a time or a count cannot be)."""
    negative = int(np.count_nonzero(data.values < 0))
    if not negative:
        return None
    return (
        f"{negative} of {len(data.values)} measured {data.metric} values are negative "
        f"(as low as {float(np.min(data.values)):.4g}): the model fitted to them is likely meaningless"
    )


def _number_text(value: float, digits: int) -> str:
    text = f"{value:.{digits}g}"
    return text


def _groups(points: np.ndarray) -> np.ndarray:
    _unique, inverse = np.unique(points, axis=0, return_inverse=True)
    return np.asarray(inverse).reshape(-1)


def fit_model(data: Measurements, *, negative: bool = True) -> Model:
    """Search the PMNF hypotheses for ``data`` and return the best by cross-validated SMAPE.

    Overflow stays inside: numpy's warnings are silenced and a hypothesis whose numbers are not
    finite is not a candidate; data no hypothesis fits with finite numbers is refused.
    """
    from uml2perf_runtime.engine.limits import LimitExceeded, current

    groups = _groups(data.points)
    n_points = int(groups.max()) + 1
    try:
        current().check(
            "measured_points", n_points, f"the number of distinct measurement points{_element_text(data)}"
        )
    except LimitExceeded as exc:
        raise InputError(exc.message, Location(file=data.source), hint=exc.hint) from None
    with np.errstate(all="ignore"):
        # least squares sums squares: values whose squares overflow cannot be fitted at all
        fits = math.isfinite(float(np.sum(np.square(data.values))))
        model = _search(data, groups, n_points, negative) if fits else None
        interval = np.concatenate(model.interval(data.points.max(axis=0)[None, :])) if model else None
    if model is None or interval is None or not _finite_fit(model.fit) or not np.all(np.isfinite(interval)):
        raise _error(
            data.source,
            None,
            f"the measured values{_element_text(data)} are too large to fit with finite numbers "
            f"(up to {float(np.max(np.abs(data.values))):.3g})",
            hint="give the values in a larger unit (ms to s, bytes to GB)",
        )
    return model


def _finite_fit(fit: Fit) -> bool:
    numbers = (fit.rss, fit.smape, fit.cv_smape, fit.r2_adj, fit.sigma, fit.sigma_rel)
    return bool(np.all(np.isfinite(fit.coefficients))) and all(math.isfinite(v) for v in numbers)


def _search(data: Measurements, groups: np.ndarray, n_points: int, negative: bool) -> Model:
    dims = len(data.parameters)
    if n_points < 3:
        raise _error(
            data.source,
            None,
            f"only {n_points} distinct measurement point"
            f"{'s' if n_points != 1 else ''}{_element_text(data)}: a model needs at least 3 "
            "(one constant, one term, one left out for validation)",
            hint="measure at more parameter values (Extra-P asks for 5 per parameter)",
        )
    considered = 0
    constant = fit_hypothesis((), data, groups)
    best = constant
    considered += 1
    per_parameter: list[list[Fit]] = []
    for p in range(dims):
        if dims == 1:
            fits = []
            for factor in single_parameter_factors(p, data.points, negative):
                fit = fit_hypothesis((Term((factor,)),), data, groups)
                considered += 1
                if fit is not None:
                    fits.append(fit)
                    if _better(fit, best):
                        best = fit
            per_parameter.append(fits)
        else:
            ranked, count = _rank_on_slices(data, p, negative)
            considered += count
            candidates = [fit_hypothesis((Term((f,)),), data, groups) for f in ranked]
            per_parameter.append([f for f in candidates if f is not None])
    if dims > 1:
        tops = [fits[:CANDIDATES_PER_PARAMETER] for fits in per_parameter]
        if any(not t for t in tops):
            raise _error(
                data.source,
                None,
                f"too few distinct points{_element_text(data)} for the terms searched",
                hint="measure more values of every parameter",
            )
        import itertools

        for fit in (f for t in tops for f in t):
            if _better(fit, best):
                best = fit
        for combo in itertools.product(*tops):
            factors = [c.terms[0].factors[0] for c in combo]
            hypotheses: list[tuple[Term, ...]] = [
                (Term(tuple(factors)),),  # multiplicative
                tuple(Term((f,)) for f in factors),  # additive
            ]
            if dims == 2:
                hypotheses.append((Term((factors[0],)), Term((factors[1],)), Term(tuple(factors))))
                hypotheses.append((Term((factors[0],)), Term(tuple(factors))))
                hypotheses.append((Term((factors[1],)), Term(tuple(factors))))
            for terms in hypotheses:
                fit = fit_hypothesis(terms, data, groups)
                considered += 1
                if fit is not None and _better(fit, best):
                    best = fit
    if best is None:
        raise _error(
            data.source,
            None,
            f"too few distinct points{_element_text(data)} for the terms searched",
            hint="measure at more parameter values",
        )
    return Model(data, best, considered)


def _rank_on_slices(data: Measurements, parameter: int, negative: bool) -> tuple[list[Factor], int]:
    """The best single-parameter factors of ``parameter``, judged where only it varies.

    As Extra-P does, each parameter is modelled first on lines of the
    measurement space along which the other parameters stay fixed; the
    factors with the lowest mean cross-validated SMAPE over those lines are
    the candidates combined into multi-parameter hypotheses.
    """
    others = [i for i in range(len(data.parameters)) if i != parameter]
    keys = data.points[:, others]
    scores: dict[Factor, list[float]] = {}
    count = 0
    factors = single_parameter_factors(parameter, data.points, negative)
    for key in np.unique(keys, axis=0):
        mask = np.all(keys == key, axis=1)
        sub = Measurements(data.parameters, data.points[mask], data.values[mask], data.source)
        sub_groups = _groups(sub.points)
        if int(sub_groups.max()) + 1 < 3:
            continue
        constant = fit_hypothesis((), sub, sub_groups)
        for factor in factors:
            fit = fit_hypothesis((Term((factor,)),), sub, sub_groups)
            count += 1
            if fit is None:
                continue
            # a factor no better than a constant on this line says nothing
            if constant is None or fit.cv_smape < constant.cv_smape:
                score = fit.cv_smape
            else:
                score = constant.cv_smape + 1e-6 * abs(factor.degree)
            scores.setdefault(factor, []).append(score)
    if not scores:
        raise _error(
            data.source,
            None,
            f"parameter {data.parameters[parameter]!r} has fewer than 3 distinct values "
            f"on every line where the other parameters stay fixed{_element_text(data)}",
            hint="measure a grid: at least 3 (better 5) values of each parameter for fixed others",
        )
    ranked = sorted(scores, key=lambda f: (float(np.mean(scores[f])), abs(f.degree)))
    return ranked[:CANDIDATES_PER_PARAMETER], count


def _element_text(data: Measurements) -> str:
    return f" of element {data.element!r}" if data.element else ""


# --------------------------------------------------------------------------- output


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string: quotes, backslashes and every control character escaped.

    Whatever a name holds (a newline, a quote, NUL, DEL, a lone surrogate), the result is one
    string on one line that a TOML reader gives back exactly (lone surrogates, which no TOML
    file can hold, become U+FFFD). It is the one way text written by uml2perf gets into TOML:
    table keys, values and comments alike.
    """
    out = ['"']
    for char in text:
        code = ord(char)
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif code < 0x20 or code == 0x7F:
            out.append(_TOML_SHORT.get(char) or f"\\u{code:04X}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\\uFFFD")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


_TOML_SHORT = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def sidecar_text(models: Sequence[tuple[str, Model]], mapping: Mapping[str, str] | None = None) -> str:
    """``[elements."NAME"] cost = "..."`` entries for ``run --sidecar``, ready to run.

    ``mapping`` (``fit --as n=NAT``) writes a parameter as the model variable it stands for;
    every parameter not mapped is declared under ``[variables]`` (at its largest measured value,
    with a comment saying so), so the cost has a value to work with in any model.
    """
    mapping = dict(mapping or {})
    lines = ["# Cost functions fitted by 'uml2perf fit' from measurements (PMNF model search).", ""]
    declared: dict[str, float] = {}
    for name, model in models:
        m = model.fit
        names = [mapping.get(parameter, parameter) for parameter in model.parameters]
        for index, parameter in enumerate(model.parameters):
            if parameter not in mapping:
                declared[parameter] = max(
                    declared.get(parameter, -math.inf), float(model.data.points[:, index].max())
                )
        lines.append(
            f"# {toml_string(name)}: {len(model.data.values)} measurements at "
            f"{len(model.data.distinct_points())} points of {toml_string(model.data.source)}; "
            f"adjusted R² {m.r2_adj:.4f}, SMAPE {m.smape:.2f}%, cross-validated SMAPE {m.cv_smape:.2f}%"
        )
        low, high = relative_interval(model)
        lines.append(
            f"# cost interval: the 90% prediction interval of a new measurement, {low:.3g}x..{high:.3g}x "
            "of the fitted cost (the median ratio over the measured points)"
        )
        lines.append(f"[elements.{toml_string(name)}]")
        expression = model.expression(names=names)
        if f"{low:.4g}" == f"{high:.4g}" == "1":  # no spread worth writing
            lines.append(f"cost = {toml_string(expression)}")
        else:
            low_text = toml_string(f"{low:.4g} * ({expression})")
            high_text = toml_string(f"{high:.4g} * ({expression})")
            lines.append(
                f"cost = {{ value = {toml_string(expression)}, low = {low_text}, high = {high_text} }}"
            )
        lines.append("")
    if declared:
        lines.append("[variables]")
        for parameter, value in declared.items():
            lines.append(
                f"# {parameter}: a parameter of the measurements, here at its largest measured value; set it "
                f"with --set {parameter}=VALUE, or write the costs in a model variable with 'fit --as "
                f"{parameter}=VARIABLE'"
            )
            lines.append(f"{parameter} = {toml_string(f'{value:g}')}")
        lines.append("")
    return "\n".join(lines)


def relative_interval(model: Model, level: float = 0.90) -> tuple[float, float]:
    """The fit's prediction interval as factors of the fitted cost: ``(low, high)``, around 1.

    The ``level`` prediction interval of a new measurement (:meth:`Model.interval`) at every
    measured point, divided by the fitted value there; the median factor over the points
    (a cost is written once for all its variables' values).  Never below 0.
    """
    points = model.data.distinct_points()
    mean = model.predict(points)
    low, high = model.interval(points, level)
    usable = mean > 0
    if not usable.any():
        return 1.0, 1.0
    lows = np.maximum(0.0, low[usable] / mean[usable])
    highs = high[usable] / mean[usable]
    return float(np.median(lows)), float(np.median(highs))


def report_text(model: Model) -> str:
    """The human-readable summary of one fitted model."""
    d = model.to_dict()
    m = d["metrics"]
    pi = d["prediction_interval"]
    title = f"{model.data.element}: " if model.data.element else ""
    at = ", ".join(f"{k}={v:g}" for k, v in pi["at"].items())
    lines = [
        f"{title}{model.data.metric} = {d['expression']}",
        f"  {m['measurements']} measurements at {m['points']} points, {m['hypotheses']} hypotheses searched",
        f"  RSS {m['rss']:.4g}   adjusted R² {m['adjusted_r2']:.4f}   SMAPE {m['smape']:.2f}%   "
        f"cross-validated SMAPE {m['cv_smape']:.2f}%",
        f"  95% prediction interval at {at}: {pi['predicted']:.4g} [{pi['low']:.4g}, {pi['high']:.4g}]",
    ]
    return "\n".join(lines) + "\n"


def log_axes(x: np.ndarray, y: np.ndarray) -> tuple[bool, bool]:
    """Whether to draw x and y on log scales: positive values spanning at least a factor of 10.

    Sizes measured for scaling studies grow geometrically; on linear axes the small sizes, where
    a model's constant and low-order terms show, are squashed into one corner.
    """
    return _spans_decade(x), _spans_decade(y)


def _spans_decade(values: np.ndarray) -> bool:
    return (
        bool(len(values))
        and float(np.min(values)) > 0
        and float(np.max(values)) >= 10 * float(np.min(values))
    )


def _powers_of_two(values: np.ndarray) -> bool:
    exponents = np.log2(np.unique(values))
    return bool(np.allclose(exponents, np.round(exponents)))


def plot_models(models: Sequence[Model], path: str) -> None:
    """Measurements, model and 95% prediction interval over the first parameter, one panel per model."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("--plot needs matplotlib", hint="pip install 'uml2perf[plot]'") from None
    from uml2perf_runtime.output.files import write_output

    fig, axes = plt.subplots(1, len(models), figsize=(5 * len(models), 4), squeeze=False)
    for ax, model in zip(axes[0], models, strict=True):
        data = model.data
        x = data.points[:, 0]
        ax.plot(x, data.values, "o", ms=3, label="measured")
        # the other parameters at their most frequent values (a slice through the space)
        base = np.array([np.median(data.points[:, i]) for i in range(len(data.parameters))])
        log_x, log_y = log_axes(x, data.values)
        grid = np.geomspace(x.min(), x.max(), 200) if log_x else np.linspace(x.min(), x.max(), 200)
        pts = np.tile(base, (len(grid), 1))
        pts[:, 0] = grid
        low, high = model.interval(pts)
        ax.plot(grid, model.predict(pts), "-", label="model")
        if log_y:  # a band below zero has no place on a log axis: clip it to the smallest measured value
            low = np.maximum(low, float(np.min(data.values)) / 10)
        ax.fill_between(grid, low, high, alpha=0.2, label="95% prediction interval")
        if log_x:
            ax.set_xscale("log", base=2 if _powers_of_two(x) else 10)
        if log_y:
            ax.set_yscale("log")
        ax.set_xlabel(data.parameters[0])
        ax.set_ylabel(data.metric)
        ax.set_title(data.element or model.expression(3), fontsize=9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    write_output(
        path, lambda tmp: fig.savefig(tmp, format=Path(path).suffix.lstrip(".") or "png"), what="plot"
    )
    plt.close(fig)
