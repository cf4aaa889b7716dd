"""The parsed forms of model text: a validated expression and a validated code fragment.

Both hold the user's text and the syntax tree that parsing
(:mod:`uml2perf.expressions.syntax`) produced and validation
(:mod:`uml2perf.expressions.validation`) checked.  Trees are shared between
every element that wrote the same text: nothing may modify them (printing and
compilation build new trees).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from uml2perf.errors import Location

__all__ = ["CodeFragment", "Expression"]


@dataclass(frozen=True)
class Expression:
    """A validated expression: the user's text and its normalised syntax tree."""

    text: str
    tree: ast.Expression
    names: frozenset[str]
    calls: frozenset[str]
    location: Location | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class CodeFragment:
    """A validated code fragment (assignments and ``if`` over them)."""

    text: str
    tree: ast.Module
    assigned: tuple[str, ...]
    names: frozenset[str]
    calls: frozenset[str]
    location: Location | None = field(default=None, compare=False, repr=False)
