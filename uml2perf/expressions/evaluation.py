"""Values of expressions for defaults, static checks and tools.

Not for inner loops: those compile an expression once
(:func:`~uml2perf.expressions.compilation.compile_expression`) and call it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from uml2perf_runtime.functions import MAX_INT_BITS

from .compilation import compile_expression
from .forms import Expression
from .source import Context
from .syntax import parse_expression

__all__ = ["constant_value", "evaluate", "is_constant"]


def evaluate(
    expr: Expression | str,
    env: Mapping[str, Any],
    *,
    functions: Mapping[str, Callable[..., Any]] | None = None,
) -> Any:
    """Value of ``expr`` with its free names taken from ``env``.

    Meant for defaults, static checks and tools, not for inner loops (use
    :func:`compile_expression`).  Any failure, including a division by zero or
    an overflowing power, is reported as an :class:`ExpressionError`.
    """
    if isinstance(expr, str):
        expr = parse_expression(expr)
    ctx = Context("expression", expr.text, expr.location)
    missing = sorted(name for name in expr.names if name not in env)
    if missing:
        raise ctx.error(
            f"unknown name{'s' if len(missing) > 1 else ''} {', '.join(repr(m) for m in missing)}",
            "define the variable in the model, or pass it with --set NAME=VALUE",
        )
    argnames = tuple(sorted(expr.names))
    fn = compile_expression(expr, argnames, functions=functions)
    try:
        return fn(*(env[name] for name in argnames))
    except (ArithmeticError, ValueError, TypeError) as exc:
        raise ctx.error(f"cannot be evaluated: {exc}", "check the values of the variables it uses") from exc


def is_constant(expr: Expression | str) -> bool:
    """Whether ``expr`` reads no variable and calls no cost function (``2**10``, ``log2(1024)``, ``true``)."""
    if isinstance(expr, str):
        expr = parse_expression(expr)
    return not expr.names and not expr.calls


def constant_value(expr: Expression | str) -> int | float | bool:
    """The value of a constant expression, e.g. a variable's default.

    Raises :class:`~uml2perf.errors.ExpressionError` if it is not constant.
    """
    if isinstance(expr, str):
        expr = parse_expression(expr)
    if not is_constant(expr):
        used = sorted(expr.names | expr.calls)
        raise Context("expression", expr.text, expr.location).error(
            f"is not a constant: it uses {', '.join(repr(u) for u in used)}", "write a number"
        )
    value = evaluate(expr, {})
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        raise Context("expression", expr.text, expr.location).error(
            f"evaluates to {value}, not a finite number", "write a finite value"
        )
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise Context("expression", expr.text, expr.location).error(
            f"evaluates to an integer of {value.bit_length():,} bits, "
            f"more than the limit of {MAX_INT_BITS:,}",
            "use a float (e.g. 1e300) for huge magnitudes",
        )
    if isinstance(value, (int, float)):
        return value
    return float(value)  # pragma: no cover - the language only produces numbers and booleans
