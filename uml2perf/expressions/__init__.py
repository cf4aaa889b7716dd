"""The safe expression language of cost functions, guards, tags and code fragments.

Model text is never executed and never pasted into generated code: it is
normalised (:mod:`.normalise`), parsed (:mod:`.syntax`) and
validated (:mod:`.validation`) into a tree, from which generated code is
printed (:mod:`.printing`) and fast functions are compiled
(:mod:`.compilation`).  :mod:`.vocabulary` holds the words of the language.
The language is described in README.md ("The performance profile in brief"),
its bounds in docs/security.md ("Limits").
"""

from __future__ import annotations

from .compilation import compile_expression
from .evaluation import constant_value, evaluate, is_constant
from .forms import CodeFragment, Expression
from .printing import library_names, to_python
from .syntax import parse_code, parse_expression, parse_function_body
from .vocabulary import (
    BUILTIN_FUNCTIONS,
    CONSTANTS,
    ELSE_GUARDS,
    MAX_DEPTH,
    MAX_EXPONENT,
    MAX_TEXT_LENGTH,
    SYSTEM_PARAMETERS,
    means_else,
)

__all__ = [
    "BUILTIN_FUNCTIONS",
    "CONSTANTS",
    "ELSE_GUARDS",
    "MAX_DEPTH",
    "MAX_EXPONENT",
    "MAX_TEXT_LENGTH",
    "SYSTEM_PARAMETERS",
    "CodeFragment",
    "Expression",
    "compile_expression",
    "constant_value",
    "evaluate",
    "is_constant",
    "library_names",
    "means_else",
    "parse_code",
    "parse_expression",
    "parse_function_body",
    "to_python",
]
