"""Composition operators for performance models of parallel design patterns.

A *performance model* here is a function of the problem size ``n`` that returns the average
time one data element spends in a block (the inverse throughput).  Models of sequential blocks
are usually measured and fitted (:func:`fit_pmnf`); models of whole programs built from
patterns are then *composed* instead of measured:

* ``tpool(T, task)`` -- a task pool of ``T`` worker threads: ``M(task) / T``;
* ``pipe(stage1, stage2, ...)`` -- a pipeline: the model of its slowest stage.  For PMNF models
  "slowest" is decided asymptotically (the model that dominates for large ``n``), exactly as the
  pipeline operator of the compositional-modelling paper; for arbitrary callables it is the
  pointwise maximum.

Both operators work on :class:`PerfModel` (sums of PMNF terms ``c * n**i * log2(n)**j``, which
print readably and compose symbolically) and on any numpy-vectorised callable.

The operators obey the paper's algebra: ``pipe`` is associative and commutative, and layering
is performance-neutral: ``pipe(tpool(T, a), tpool(T, b)) == tpool(T, pipe(a, b))``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Union

import numpy as np

__all__ = [
    "Term",
    "PerfModel",
    "ComposedModel",
    "PmnfFit",
    "tpool",
    "pipe",
    "fit_pmnf",
    "DEFAULT_POLY_EXPONENTS",
    "DEFAULT_LOG_EXPONENTS",
]

#: The polynomial exponents ``i`` searched by :func:`fit_pmnf` (Extra-P's default set).
DEFAULT_POLY_EXPONENTS: tuple[Fraction, ...] = tuple(
    Fraction(x) for x in ("0", "1/4", "1/3", "1/2", "2/3", "3/4", "1", "5/4", "4/3", "3/2", "2", "3")
)
#: The logarithm exponents ``j`` searched by :func:`fit_pmnf`.
DEFAULT_LOG_EXPONENTS: tuple[int, ...] = (0, 1, 2)

Number = int | float
ModelLike = Union["PerfModel", "ComposedModel", Callable[[Any], Any]]  # noqa: UP007 - names defined below


def _exponent(value: Number | Fraction | str) -> Fraction:
    """Exponents are kept as fractions so ``n^(1/3)`` stays exact and prints as such."""
    return Fraction(value).limit_denominator(100) if not isinstance(value, Fraction) else value


@dataclass(frozen=True, slots=True, order=False)
class Term:
    """One PMNF term ``coefficient * n**poly * log2(n)**log``."""

    coefficient: float
    poly: Fraction = Fraction(0)
    log: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "coefficient", float(self.coefficient))
        object.__setattr__(self, "poly", _exponent(self.poly))
        if int(self.log) != self.log or self.log < 0:
            raise ValueError(f"the log2 exponent of a PMNF term must be a natural number, got {self.log!r}")
        object.__setattr__(self, "log", int(self.log))

    @property
    def order(self) -> tuple[Fraction, int]:
        """Asymptotic class: ``n^i log^j`` grows faster than ``n^i' log^j'`` iff (i, j) > (i', j')."""
        return (self.poly, self.log)

    def basis(self, n: Any) -> Any:
        """``n**poly * log2(n)**log`` for a number or a numpy array."""
        x = np.asarray(n, dtype=float)
        value = np.ones_like(x) if self.poly == 0 else x ** float(self.poly)
        if self.log:
            value = value * np.log2(x) ** self.log
        return value if isinstance(n, np.ndarray) else float(value)

    def __call__(self, n: Any) -> Any:
        return self.coefficient * self.basis(n)

    def factor_text(self) -> str:
        """``n^(3/2)·log2(n)^2`` without the coefficient; empty for a constant."""
        parts = []
        if self.poly == 1:
            parts.append("n")
        elif self.poly != 0:
            exp = str(self.poly)
            parts.append(f"n^({exp})" if "/" in exp or self.poly < 0 else f"n^{exp}")
        if self.log == 1:
            parts.append("log2(n)")
        elif self.log > 1:
            parts.append(f"log2(n)^{self.log}")
        return "·".join(parts)


def _fmt(value: float, digits: int) -> str:
    text = f"{value:.{digits}g}"
    if "e" in text:
        mantissa, exp = text.split("e")
        text = f"{mantissa}e{int(exp)}"
    return text


class PerfModel:
    """A performance model in performance-model normal form: ``c0 + sum_k c_k n^i_k log2(n)^j_k``.

    Terms of the same class ``(i, j)`` are merged and zero terms dropped, so two models are equal
    exactly when they are the same function.  Models add (sequential composition), scale by
    numbers, evaluate on numbers or numpy arrays, and print readably::

        >>> qsort = PerfModel.term(0.03899, 1, 1)
        >>> print(tpool(8, qsort))
        0.004874·n·log2(n)
    """

    __slots__ = ("terms", "name")

    def __init__(
        self,
        terms: Iterable[Term | tuple[Number, Number | Fraction, int]] = (),
        constant: Number = 0.0,
        name: str | None = None,
    ):
        merged: dict[tuple[Fraction, int], float] = {}
        all_terms = [t if isinstance(t, Term) else Term(t[0], _exponent(t[1]), t[2]) for t in terms]
        if constant:
            all_terms.append(Term(constant))
        for t in all_terms:
            merged[t.order] = merged.get(t.order, 0.0) + t.coefficient
        ordered = sorted(merged.items(), reverse=True)
        self.terms: tuple[Term, ...] = tuple(Term(c, i, j) for (i, j), c in ordered if c != 0.0)
        self.name = name

    # construction ------------------------------------------------------------------------
    @classmethod
    def term(
        cls, coefficient: Number, poly: Number | Fraction | str = 0, log: int = 0, name: str | None = None
    ) -> PerfModel:
        """A single-term model ``coefficient * n**poly * log2(n)**log``."""
        return cls([Term(coefficient, _exponent(poly), log)], name=name)

    @classmethod
    def constant(cls, value: Number, name: str | None = None) -> PerfModel:
        """A model that does not depend on ``n``."""
        return cls([], constant=value, name=name)

    def named(self, name: str) -> PerfModel:
        """The same function under a display name (used by ``repr`` only)."""
        return PerfModel(self.terms, name=name)

    # evaluation and inspection -------------------------------------------------------------
    def __call__(self, n: Any) -> Any:
        if not self.terms:
            return np.zeros_like(np.asarray(n, dtype=float)) if isinstance(n, np.ndarray) else 0.0
        total = self.terms[0](n)
        for t in self.terms[1:]:
            total = total + t(n)
        return total

    @property
    def leading(self) -> Term | None:
        """The asymptotically dominant term (None for the zero model)."""
        return self.terms[0] if self.terms else None

    @property
    def order(self) -> tuple[Fraction, int]:
        """The complexity class ``(i, j)`` of the dominant term; (0, 0) for constants and zero."""
        return self.terms[0].order if self.terms else (Fraction(0), 0)

    def dominates(self, other: PerfModel) -> bool:
        """True if ``self >= other`` for all sufficiently large ``n`` (asymptotic comparison).

        The sign of the dominant term of ``self - other`` decides; equal models dominate each
        other.  This is a total order on PMNF models, which is what makes ``pipe`` associative
        and commutative.
        """
        diff = self - other
        return diff.leading is None or diff.leading.coefficient > 0

    # arithmetic ------------------------------------------------------------------------------
    def __add__(self, other: PerfModel | Number) -> PerfModel:
        if isinstance(other, PerfModel):
            return PerfModel(self.terms + other.terms)
        if isinstance(other, (int, float)):
            return PerfModel(self.terms, constant=other)
        return NotImplemented

    __radd__ = __add__

    def __neg__(self) -> PerfModel:
        return self * -1.0

    def __sub__(self, other: PerfModel | Number) -> PerfModel:
        return self + (-other)

    def __mul__(self, factor: Number) -> PerfModel:
        if not isinstance(factor, (int, float)):
            return NotImplemented
        return PerfModel(Term(t.coefficient * factor, t.poly, t.log) for t in self.terms)

    __rmul__ = __mul__

    def __truediv__(self, divisor: Number) -> PerfModel:
        if not isinstance(divisor, (int, float)):
            return NotImplemented
        return PerfModel(Term(t.coefficient / divisor, t.poly, t.log) for t in self.terms)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PerfModel) and self.terms == other.terms

    def __hash__(self) -> int:
        return hash(self.terms)

    def isclose(self, other: PerfModel, rel_tol: float = 1e-9) -> bool:
        """Same classes and coefficients equal up to ``rel_tol``."""
        return len(self.terms) == len(other.terms) and all(
            a.order == b.order and math.isclose(a.coefficient, b.coefficient, rel_tol=rel_tol)
            for a, b in zip(self.terms, other.terms, strict=False)
        )

    # display ---------------------------------------------------------------------------------
    def format(self, digits: int = 4) -> str:
        """The model as text with ``digits`` significant digits: ``0.1 + 0.03899·n·log2(n)``.

        Terms are listed from the constant up to the dominant term, the way PMNF models are
        usually written.
        """
        if not self.terms:
            return "0"
        text = ""
        for t in reversed(self.terms):
            factor = t.factor_text()
            magnitude = _fmt(abs(t.coefficient), digits)
            body = f"{magnitude}·{factor}" if factor else magnitude
            if not text:
                text = body if t.coefficient > 0 else f"-{body}"
            else:
                text += f" + {body}" if t.coefficient > 0 else f" - {body}"
        return text

    def __str__(self) -> str:
        return self.format()

    def __repr__(self) -> str:
        label = f"{self.name}: " if self.name else ""
        return f"<PerfModel {label}{self.format(6)}>"


class ComposedModel:
    """A composed model of arbitrary callables, kept as a readable expression tree.

    Built by :func:`tpool` and :func:`pipe` when a stage is not a :class:`PerfModel` (for
    instance a measured lookup table or an interpolating function).  Evaluation works on numbers
    and numpy arrays; the pipeline maximum is taken pointwise.
    """

    __slots__ = ("_fn", "_text")

    def __init__(self, fn: Callable[[Any], Any], text: str):
        self._fn = fn
        self._text = text

    def __call__(self, n: Any) -> Any:
        return self._fn(n)

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"<ComposedModel {self._text}>"


def _label(model: ModelLike) -> str:
    if isinstance(model, (PerfModel, ComposedModel)):
        return str(model)
    return getattr(model, "__name__", None) or repr(model)


def tpool(threads: Number, task: ModelLike) -> PerfModel | ComposedModel:
    """Task pool of ``threads`` workers executing ``task`` per data element: ``M(task) / T``.

    ``threads`` must be a positive number (the paper's ``T``); the pool adds no overhead of its
    own, so the result is exact for a ``PerfModel`` (all coefficients divided by ``T``).
    """
    if isinstance(threads, bool) or not isinstance(threads, (int, float)) or not threads > 0:
        raise ValueError(f"tpool needs a positive number of threads, got {threads!r}")
    if isinstance(task, PerfModel):
        return task / threads
    if not callable(task):
        raise TypeError(f"tpool needs a performance model (a callable of n), got {task!r}")
    return ComposedModel(
        lambda n: np.asarray(task(n)) / threads if isinstance(n, np.ndarray) else task(n) / threads,
        f"tpool_{_fmt(threads, 6)}({_label(task)})",
    )


def _pipe2(a: ModelLike, b: ModelLike, pointwise: bool) -> PerfModel | ComposedModel:
    if not pointwise and isinstance(a, PerfModel) and isinstance(b, PerfModel):
        return a if a.dominates(b) else b

    def slowest(n: Any) -> Any:
        return np.maximum(a(n), b(n)) if isinstance(n, np.ndarray) else max(a(n), b(n))

    return ComposedModel(slowest, f"max({_label(a)}, {_label(b)})")


def pipe(
    stage1: ModelLike, stage2: ModelLike, *more: ModelLike, pointwise: bool = False
) -> PerfModel | ComposedModel:
    """Pipeline of two or more stages: the model of the slowest stage.

    With :class:`PerfModel` stages and ``pointwise=False`` (default) the dominant model in the
    asymptotic order is returned, as the paper's operator does (eq. 3); ties in the complexity
    class go to the larger coefficient, so the result never depends on the stage order.  With
    other callables, or ``pointwise=True``, the result is ``max`` of the stages at each ``n``,
    which is right when the bottleneck stage changes inside the range of interest.  More than two
    stages compose as nested binary pipelines ``pipe(pipe(s1, s2), s3)``.
    """
    for stage in (stage1, stage2, *more):
        if not callable(stage):
            raise TypeError(f"pipe needs performance models (callables of n), got {stage!r}")
    result = _pipe2(stage1, stage2, pointwise)
    for stage in more:
        result = _pipe2(result, stage, pointwise)
    return result


# ---------------------------------------------------------------------------------------------
# Fitting
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PmnfFit:
    """The result of :func:`fit_pmnf`: the chosen model and how well it explains the data.

    ``cv_error`` is the leave-one-out cross-validated (relative, if ``relative=True``) root mean
    squared error the hypothesis was chosen by; ``r2`` and ``adjusted_r2`` are the usual
    coefficients of determination of the final fit on all points; ``ranking`` lists the best
    hypotheses with their cross-validated errors for inspection.
    """

    model: PerfModel
    cv_error: float
    r2: float
    adjusted_r2: float
    ranking: tuple[tuple[str, float], ...] = field(default=())

    def __call__(self, n: Any) -> Any:
        return self.model(n)

    def __str__(self) -> str:
        return str(self.model)


def _loo_rmse(design: np.ndarray, y: np.ndarray, weights: np.ndarray) -> tuple[float, np.ndarray] | None:
    """Weighted least squares with its closed-form leave-one-out error (hat-matrix formula).

    Returns ``(rmse, coefficients)`` or None when the design is rank-deficient.
    """
    sw = np.sqrt(weights)
    a = design * sw[:, None]
    b = y * sw
    scale = np.linalg.norm(a, axis=0)
    if np.any(scale == 0):
        return None
    a_scaled = a / scale
    q, r = np.linalg.qr(a_scaled)
    if np.min(np.abs(np.diag(r))) < 1e-10 * np.max(np.abs(np.diag(r))):
        return None
    coef_scaled = np.linalg.solve(r, q.T @ b)
    residual = b - a_scaled @ coef_scaled
    leverage = np.sum(q * q, axis=1)
    if np.any(leverage >= 1 - 1e-12):
        return None
    loo = residual / (1 - leverage)
    return float(np.sqrt(np.mean(loo**2))), coef_scaled / scale


def _hypotheses(
    polys: Sequence[Fraction], logs: Sequence[int], terms: int
) -> list[tuple[tuple[Fraction, int], ...]]:
    """All sets of up to ``terms`` non-constant classes, as Extra-P's PMNF search space."""
    classes = [(i, j) for i in polys for j in logs if (i, j) != (0, 0)]
    out: list[tuple[tuple[Fraction, int], ...]] = [()]
    for k in range(1, terms + 1):
        out += list(itertools.combinations(classes, k))
    return out


def fit_pmnf(
    n_values: Sequence[Number] | np.ndarray,
    times: Sequence[Number] | np.ndarray,
    *,
    poly_exponents: Sequence[Number | Fraction | str] = DEFAULT_POLY_EXPONENTS,
    log_exponents: Sequence[int] = DEFAULT_LOG_EXPONENTS,
    terms: int = 1,
    constant: bool = True,
    relative: bool = True,
    name: str | None = None,
) -> PmnfFit:
    """Fit a PMNF model ``c0 + sum c_k n^i_k log2(n)^j_k`` to measured ``times`` at sizes ``n``.

    Every hypothesis of up to ``terms`` non-constant classes from ``poly_exponents`` x
    ``log_exponents``, with and (if ``constant=True``) without the constant ``c0``, is fitted by
    linear least squares; the one with the smallest leave-one-out cross-validated error wins, which penalises
    over-fitting without a tuning knob.  ``relative=True`` weighs each point by ``1/time**2``, so
    that a 5 % error at small ``n`` counts as much as a 5 % error at large ``n`` (run-time noise
    is usually proportional to the run time).  Hypotheses with a negative coefficient on their
    dominant term are discarded because they predict negative times for large ``n``.

    Needs at least ``terms + 3`` distinct sizes, all positive (``log2 n`` is used).
    """
    n = np.asarray(n_values, dtype=float).ravel()
    y = np.asarray(times, dtype=float).ravel()
    if n.shape != y.shape:
        raise ValueError(f"fit_pmnf needs as many times as sizes, got {n.size} sizes and {y.size} times")
    if not np.all(np.isfinite(n)) or not np.all(np.isfinite(y)):
        raise ValueError("fit_pmnf needs finite sizes and times")
    if np.any(n <= 0):
        raise ValueError("fit_pmnf needs positive sizes n (the model uses log2 n)")
    if len(np.unique(n)) < terms + 3:
        raise ValueError(
            f"fit_pmnf needs at least {terms + 3} distinct sizes for {terms} term(s), got {len(np.unique(n))}"
        )
    if relative and np.any(y <= 0):
        raise ValueError("relative fitting needs positive times; pass relative=False for other data")
    weights = 1.0 / y**2 if relative else np.ones_like(y)
    polys = [_exponent(i) for i in poly_exponents]
    scored: list[tuple[float, int, int, PerfModel]] = []
    for idx, hyp in enumerate(_hypotheses(polys, log_exponents, terms)):
        for with_constant in (False, True) if constant else (False,):
            if not hyp and not with_constant:
                continue
            columns = [Term(1.0, i, j).basis(n) for i, j in hyp]
            if with_constant:
                columns.append(np.ones_like(n))
            fitted = _loo_rmse(np.column_stack(columns), y, weights)
            if fitted is None:
                continue
            error, coef = fitted
            if hyp and _dominant_coefficient(hyp, coef) <= 0:
                continue
            candidate = PerfModel(
                [Term(c, i, j) for (i, j), c in zip(hyp, coef, strict=False)],
                constant=coef[-1] if with_constant else 0.0,
                name=name,
            )
            scored.append((error, len(columns), idx, candidate))
    if not scored:
        raise ValueError("no PMNF hypothesis could be fitted to these points")
    scored.sort(key=lambda s: (s[0], s[1], s[2]))
    error, parameters, _, model = scored[0]
    prediction = model(n)
    ss_res = float(np.sum(weights * (y - prediction) ** 2))
    mean = float(np.sum(weights * y) / np.sum(weights))
    ss_tot = float(np.sum(weights * (y - mean) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    dof = len(n) - parameters
    adjusted = 1.0 - (1.0 - r2) * (len(n) - 1) / dof if dof > 0 else r2
    ranking = tuple((str(m), e) for e, _, _, m in scored[:5])
    return PmnfFit(model, error, r2, adjusted, ranking)


def _dominant_coefficient(hyp: tuple[tuple[Fraction, int], ...], coef: np.ndarray) -> float:
    """The coefficient of the fastest-growing class of a hypothesis."""
    best = max(range(len(hyp)), key=lambda k: hyp[k])
    return float(coef[best])
