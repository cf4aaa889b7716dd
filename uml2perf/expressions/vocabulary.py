"""The words of the expression language: names, functions, constants, bounds and messages.

Everything the other modules of the language check text against is defined
here once: the system parameters a model may read, the function library it
may call, the words that mean ``else`` on a guard, the OCL spellings that
are accepted, and the bounds that keep hostile text cheap.  The language
itself is described in README.md ("The performance profile in brief"), its
bounds in docs/security.md ("Limits").
"""

from __future__ import annotations

import builtins
import keyword
from collections.abc import Mapping
from types import MappingProxyType

from uml2perf_runtime.functions import MAX_EXPONENT

__all__ = [
    "BUILTIN_FUNCTIONS",
    "CONSTANTS",
    "ELSE_GUARDS",
    "MAX_DEPTH",
    "MAX_EXPONENT",
    "MAX_TEXT_LENGTH",
    "SYSTEM_PARAMETERS",
    "means_else",
]

SYSTEM_PARAMETERS: Mapping[str, str] = MappingProxyType(
    {
        "pid": "pid",
        "nprocs": "nprocs",
        "NUM_PROCESSES": "nprocs",
        "NP": "nprocs",
        "tid": "tid",
        "nthreads": "nthreads",
        "uid": "uid",
        "node": "node",
        "nnodes": "nnodes",
        "ppn": "ppn",
    }
)
"""Name used in models -> attribute of the runtime's process context ``p``."""

BUILTIN_FUNCTIONS: frozenset[str] = frozenset(
    "log log2 log10 sqrt exp ceil floor min max abs pow int float round".split()
)
"""Functions every expression may call; generated modules import them from ``uml2perf_runtime.functions``."""

CONSTANTS: frozenset[str] = frozenset({"pi", "e"})
"""Named constants; they are not free names of an expression."""

ELSE_GUARDS: frozenset[str] = frozenset({"else", "[else]", "otherwise"})
"""Guard texts (stripped, in lower case) that mean "when no other guard holds"."""


def means_else(guard: str | None) -> bool:
    """Whether a guard text is one of :data:`ELSE_GUARDS`, ignoring case and surrounding space."""
    return guard is not None and guard.strip().lower() in ELSE_GUARDS


#: Longest text accepted, in characters.  Cost functions are short formulas;
#: the bound keeps tokenizing and parsing of hostile input cheap.
MAX_TEXT_LENGTH = 10_000

#: Deepest syntax tree accepted (each operator, call or statement is a level).
MAX_DEPTH = 200

#: Deepest bracket nesting and longest run of prefix operators accepted before
#: the text reaches Python's parser, whose own limits end in MemoryError.
MAX_BRACKET_DEPTH = 100
MAX_PREFIX_RUN = 100

#: Largest literal number accepted: a performance model counts bytes, flops and
#: seconds, never anything near 10**308; bigger literals are typing mistakes.
MAX_LITERAL = 10**308

#: Parse-time bound on the size of an integer built with literal exponents;
#: names and calls count as 64 bits (their run-time size is the runtime's
#: business: ``pow`` bounds integer results itself).
MAX_STATIC_BITS = 1 << 20

#: (minimum, maximum) number of arguments of each library function; None = unbounded.
ARITY: Mapping[str, tuple[int, int | None]] = MappingProxyType(
    {
        "log": (1, 2),
        "log2": (1, 1),
        "log10": (1, 1),
        "sqrt": (1, 1),
        "exp": (1, 1),
        "ceil": (1, 1),
        "floor": (1, 1),
        "min": (2, None),
        "max": (2, None),
        "abs": (1, 1),
        "pow": (2, 2),
        "int": (1, 1),
        "float": (1, 1),
        "round": (1, 2),
    }
)

#: Python builtins outside the library may not be called: a model function of
#: that name would shadow the builtin in generated code, and a call such as
#: open(...) or eval(...) must never look like something that could run.
FORBIDDEN_CALLS: frozenset[str] = frozenset(dir(builtins)) - BUILTIN_FUNCTIONS

FUNCTION_LIST = "log, log2, log10, sqrt, exp, ceil, floor, min, max, abs, pow, int, float, round"

LANGUAGE_HINT = (
    "expressions use Python syntax: numbers, names, + - * / // % **, comparisons, and/or/not, "
    f"'a if c else b', and calls to {FUNCTION_LIST} and the model's cost functions"
)
EXPONENT_HINT = (
    f"exponents are limited to {MAX_EXPONENT} so that no expression can run for hours; "
    "for huge magnitudes use a float such as 1e300"
)
CODE_HINT = (
    "code fragments are assignments such as 'x = 2 * y' (or 'x += 1'), separated by newlines or ';', "
    "and 'if c:' / 'elif c:' / 'else:' blocks over them"
)
SPLIT_HINT = "split it into named cost functions"

#: Python keywords that expressions, and code fragments, may use.
KEYWORDS_IN_EXPRESSIONS = frozenset({"and", "or", "not", "if", "else", "True", "False"})
KEYWORDS_IN_CODE = KEYWORDS_IN_EXPRESSIONS | {"elif", "pass"}

#: Lookalike characters pasted from word processors and UML tools' rich text.
UNICODE_OPERATORS: Mapping[str, str] = MappingProxyType(
    {
        "\u2264": "<=",
        "\u2265": ">=",
        "\u2260": "!=",
        "\u2212": "-",
        "\u00d7": "*",
        "\u00f7": "/",
        "\u2227": " and ",
        "\u2228": " or ",
        "\u00ac": " not ",
    }
)

#: OCL's infix operators on integers, written as words (``a mod b``).
OCL_INFIX: Mapping[str, str] = MappingProxyType({"mod": "%", "div": "//"})

#: OCL operations on Real/Integer written as method calls -> number of arguments.
OCL_METHODS: Mapping[str, int] = MappingProxyType(
    {"abs": 0, "floor": 0, "round": 0, "max": 1, "min": 1, "mod": 1, "div": 1}
)

#: Words the normaliser rewrites (``true``, ``mod``...) or refuses (OCL's ``then``/``endif``).
OCL_WORDS = frozenset({"true", "false", "mod", "div", "then", "endif"})

#: Every Python keyword, for telling which words of a text are outside the language.
PYTHON_KEYWORDS = frozenset(keyword.kwlist)
