"""The function library of the expression language, as generated models call it.

Cost functions, guards and code fragments may call ``log log2 log10 sqrt exp
ceil floor min max abs pow int float round`` and read the constants ``pi`` and
``e`` (the expression language of ``README.md``).  Generated modules import these
names from here, so this module is the single definition of what each of them
means at run time.

Two flavours exist because they serve two different jobs:

* the module-level names are the *scalar* versions.  A simulation evaluates cost
  functions millions of times on Python ints and floats, so they are the
  :mod:`math` functions or the builtins themselves wherever those already mean
  the right thing, and thin wrappers only where the language needs a different
  meaning (``log`` with a base, ``pow`` with a bound);
* :data:`VECTOR` maps the same names to elementwise :mod:`numpy` versions, so a
  compiled expression can be evaluated over a whole grid of parameter values at
  once (``min``/``max`` then mean elementwise minimum/maximum of their
  arguments, not a reduction over an array).

``pow`` (and therefore every ``**`` whose exponent is not a small integer
literal) is bounded: Python computes ``9 ** 9 ** 9`` exactly and would spend
hours and gigabytes on it, so an integer power whose result would exceed
:data:`MAX_INT_POWER_BITS` bits raises :class:`ValueError` instead, and a float
power that overflows says so in words.

Only :mod:`math` is imported eagerly; :mod:`numpy` is imported the first time
:data:`VECTOR` is used, to keep the start-up of a generated model short.
"""

from __future__ import annotations

import builtins as _builtins
import math as _math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = [
    "log",
    "log2",
    "log10",
    "sqrt",
    "exp",
    "ceil",
    "floor",
    "min",
    "max",
    "abs",
    "pow",
    "int",
    "float",
    "round",
    "pi",
    "e",
    "MAX_EXPONENT",
    "MAX_INT_POWER_BITS",
    "SCALAR",
    "VECTOR",
    "count",
    "bounded",
    "MAX_INT_BITS",
    "MAX_ROUND_DIGITS",
]

#: Largest literal exponent accepted by the expression parser; also the largest
#: exponent for which generated code may use Python's own ``**``.
MAX_EXPONENT = 1024

#: An integer power whose result would need more bits than this is refused
#: (about 2,500 decimal digits: far beyond any count a performance model needs,
#: still computed in microseconds, and small enough that raising it once more to
#: a literal exponent of at most MAX_EXPONENT stays fast).
MAX_INT_POWER_BITS = 8192

pi: float = _math.pi
e: float = _math.e

# The builtins already have exactly the meaning the language gives them, and
# calling them directly is the fastest possible path.
min = _builtins.min
max = _builtins.max
abs = _builtins.abs
int = _builtins.int
float = _builtins.float

log2 = _math.log2
log10 = _math.log10
sqrt = _math.sqrt
exp = _math.exp
# math.ceil/floor return int, like the C functions a performance model is
# usually transcribed from (a loop count of ceil(n/p) must be an integer).
ceil = _math.ceil
floor = _math.floor

_Int = _builtins.int
_Float = _builtins.float


def log(x: Any, base: Any = None) -> float:
    """Natural logarithm, or the logarithm to ``base`` when one is given (``log(x, 2)``)."""
    if base is None:
        return _math.log(x)
    return _math.log(x, base)


def pow(base: Any, exponent: Any) -> Any:  # noqa: A001 - the language's own name
    """``base ** exponent`` that never hangs and never returns a complex number.

    Integer powers are computed exactly (as in Python) unless the result would
    exceed :data:`MAX_INT_POWER_BITS` bits; float powers that overflow, and a
    negative base with a fractional exponent, raise :class:`ValueError` with a
    message a model author can act on.
    """
    if type(base) is _Int and type(exponent) is _Int:
        if exponent > 0 and base not in (0, 1, -1):
            bits = exponent * (base.bit_length() - 1)
            if bits > MAX_INT_POWER_BITS:
                raise ValueError(
                    f"pow({base}, {exponent}): the result would have more than {bits} bits "
                    f"(about {_Int(bits * 0.30103)} digits); integer powers are limited to "
                    f"{MAX_INT_POWER_BITS} bits, use a float base (e.g. {base}.0) for huge magnitudes"
                )
        return base**exponent
    try:
        result = base**exponent
    except OverflowError:
        raise ValueError(f"pow({base!r}, {exponent!r}): the result is too large for a float") from None
    if type(result) is complex:
        raise ValueError(
            f"pow({base!r}, {exponent!r}): a negative base with a fractional exponent has no real value"
        )
    return result


#: Integers a code fragment assigns may have at most this many bits (about 2,500 decimal digits).
MAX_INT_BITS = MAX_INT_POWER_BITS

#: ``round(x, n)`` with ``|n|`` beyond this many digits means the same as at this many (no value
#: a model can hold has more digits), so Python never computes ``10 ** n`` for a huge ``n``.
MAX_ROUND_DIGITS = 4000

_round = _builtins.round


def round(number: Any, ndigits: Any = None) -> Any:  # noqa: A001 - the language's own name
    """Python's ``round``, except that a huge ``ndigits`` cannot make it hang."""
    if ndigits is None:
        return _round(number)
    if type(ndigits) is _Int and not -MAX_ROUND_DIGITS <= ndigits <= MAX_ROUND_DIGITS:
        if ndigits > 0:
            return _round(number, MAX_ROUND_DIGITS)
        return type(number)(0) if type(number) in (_Int, _Float) else _round(number, -MAX_ROUND_DIGITS)
    return _round(number, ndigits)


def bounded(value: Any) -> Any:
    """A value a code fragment assigns, refused when it is an integer past :data:`MAX_INT_BITS` bits."""
    if type(value) is _Int and value.bit_length() > MAX_INT_BITS:
        raise ValueError(
            f"a code fragment computed an integer of {value.bit_length():,} bits, more than the limit of "
            f"{MAX_INT_BITS:,} bits (about {_Int(MAX_INT_BITS * 0.30103):,} digits); "
            "use floats (e.g. 2.0 instead of 2) for huge magnitudes"
        )
    return value


def count(value: Any) -> Any:
    """A repeat or loop count as generated code uses it: a whole number from 0 to the iteration limit.

    ``repeat = -2`` or ``iterations = 2.5`` used to become 0 or 2 without a
    word; ``repeat = 1e18`` would run until the machine gave up.  Each is an
    error that says what is wrong (the engine adds the element and process).
    """
    if type(value) is _Int:
        number = value
    else:
        as_float = _Float(value)  # an analytic grid value declines here, as int() would
        if not _math.isfinite(as_float) or as_float != _math.floor(as_float):
            raise ValueError(
                f"a repeat or loop count is {value!r}: counts must be whole numbers (0, 1, 2, ...)"
            )
        number = _Int(as_float)
    if number < 0:
        raise ValueError(f"a repeat or loop count is {number}: counts cannot be negative")
    from .engine.limits import ENVIRONMENT, current

    bound = current().iterations
    if number > bound:
        shown = f"{number:,}" if number.bit_length() < 200 else "astronomically large"
        raise ValueError(
            f"a repeat or loop count is {shown}, more than the limit of {bound:,} "
            f"(iterations: raise it with --limit iterations=N or {ENVIRONMENT['iterations']})"
        )
    return number


SCALAR: Mapping[str, Any] = {
    "log": log,
    "log2": log2,
    "log10": log10,
    "sqrt": sqrt,
    "exp": exp,
    "ceil": ceil,
    "floor": floor,
    "min": min,
    "max": max,
    "abs": abs,
    "pow": pow,
    "int": int,
    "float": float,
    "round": round,
    "pi": pi,
    "e": e,
}
"""Name -> scalar implementation, for evaluators that look functions up by name."""


def _vector_functions() -> dict[str, Any]:
    """Build the numpy versions; called once, on first use of :data:`VECTOR`."""
    import functools

    import numpy as np

    def numeric(function: Any) -> Any:
        """Treat booleans as numbers, as Python does (numpy refuses e.g. ``-abs(True)`` on bool arrays)."""

        def call(*args: Any) -> Any:
            converted = []
            for arg in args:
                if isinstance(arg, (bool, np.bool_)) or getattr(arg, "dtype", None) == np.bool_:
                    arg = np.asarray(arg, dtype=np.float64)
                converted.append(arg)
            return function(*converted)

        call.__name__ = getattr(function, "__name__", "function")
        return call

    def v_log(x: Any, base: Any = None) -> Any:
        if base is None:
            return np.log(x)
        return np.log(x) / np.log(base)

    def v_min(*args: Any) -> Any:
        return functools.reduce(np.minimum, args)

    def v_max(*args: Any) -> Any:
        return functools.reduce(np.maximum, args)

    def v_pow(base: Any, exponent: Any) -> Any:
        # Floats throughout: numpy integer powers wrap around silently on
        # overflow and refuse negative exponents, both worse than inf/NaN.
        return np.power(np.asarray(base, dtype=np.float64), exponent)

    def v_int(x: Any) -> Any:
        return np.trunc(x)

    def v_float(x: Any) -> Any:
        return np.asarray(x, dtype=np.float64)

    def v_round(x: Any, ndigits: Any = None) -> Any:
        return np.round(x) if ndigits is None else np.round(x, ndigits)

    arithmetic = {
        "log": v_log,
        "log2": np.log2,
        "log10": np.log10,
        "sqrt": np.sqrt,
        "exp": np.exp,
        "ceil": np.ceil,
        "floor": np.floor,
        "min": v_min,
        "max": v_max,
        "abs": np.abs,
        "pow": v_pow,
        "int": v_int,
        "float": v_float,
        "round": v_round,
    }
    return {
        **{name: numeric(function) for name, function in arithmetic.items()},
        "pi": pi,
        "e": e,
        # Used by vectorised compiled expressions for conditionals and logic,
        # where Python's `if`/`and`/`or`/`not` would need one truth value.
        "where": np.where,
        "logical_and": np.logical_and,
        "logical_not": np.logical_not,
        "errstate": np.errstate,
        "float64": np.float64,
        "asfloat": v_float,
    }


class _LazyNamespace(Mapping[str, Any]):
    """A read-only mapping filled by ``factory`` the first time it is read."""

    def __init__(self, factory: Callable[[], dict[str, Any]]) -> None:
        self._factory = factory
        self._data: dict[str, Any] | None = None

    def _load(self) -> dict[str, Any]:
        if self._data is None:
            self._data = self._factory()
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self._load()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> _Int:
        return len(self._load())

    def __repr__(self) -> str:
        return "VECTOR(" + ", ".join(sorted(self._load())) + ")"


VECTOR: Mapping[str, Any] = _LazyNamespace(_vector_functions)
"""Name -> numpy implementation working elementwise on arrays (numpy imported lazily)."""
