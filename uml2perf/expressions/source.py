"""Model text with a map back to what the user wrote, and the errors that quote it.

Normalising text (``<>`` -> ``!=``, stripping comments, rebuilding C blocks)
shifts columns; every error message must still point at, and quote, what the
user wrote.  :class:`Source` carries both texts and the map between them,
:class:`Context` says who is parsing what, so that every error names the
element and the text.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from uml2perf.errors import ExpressionError, Location


class Source:
    """Rewritten text plus, for each of its characters, the index in the user's text.

    Never changed once made: rewriting makes a new one.
    """

    __slots__ = ("original", "text", "origin")

    def __init__(self, original: str, text: str, origin: tuple[int, ...]) -> None:
        self.original = original
        self.text = text
        self.origin = origin  # len(text) + 1 entries

    @classmethod
    def of(cls, text: str) -> Source:
        return cls(text, text, tuple(range(len(text) + 1)))

    def rewrite(self, edits: Iterable[tuple[int, int, str]]) -> Source:
        """Apply non-overlapping ``(start, end, replacement)`` edits to :attr:`text`."""
        parts: list[str] = []
        origin: list[int] = []
        pos = 0
        for start, end, replacement in sorted(edits):
            if start < pos:
                continue  # overlapping edits: the first one wins
            parts.append(self.text[pos:start])
            origin.extend(self.origin[pos:start])
            parts.append(replacement)
            origin.extend([self.origin[start]] * len(replacement))
            pos = end
        parts.append(self.text[pos:])
        origin.extend(self.origin[pos:])
        return Source(self.original, "".join(parts), tuple(origin) + (len(self.original),))

    def original_offset(self, index: int) -> int:
        return self.origin[max(0, min(index, len(self.origin) - 1))]

    def offset(self, lineno: int, col: int) -> int:
        """Index in :attr:`text` of a 1-based line and 0-based column."""
        lines = self.text.split("\n")
        lineno = max(1, min(lineno, len(lines)))
        return sum(len(line) + 1 for line in lines[: lineno - 1]) + max(0, col)

    def where(self, index: int) -> tuple[int, int]:
        """1-based (line, column) in the user's text of an index in :attr:`text`."""
        pos = self.original_offset(index)
        before = self.original[:pos]
        line = before.count("\n") + 1
        column = pos - (before.rfind("\n") + 1) + 1
        return line, column

    def segment(self, node: ast.expr | ast.stmt) -> str:
        """What the user wrote for ``node`` (falls back to the unparsed node)."""
        try:
            lineno, col, end_lineno, end_col = (
                node.lineno,
                node.col_offset,
                node.end_lineno,
                node.end_col_offset,
            )
        except AttributeError:  # a node made by validation, before its positions are filled in
            return _unparse_safely(node)
        if end_lineno is None or end_col is None:
            return _unparse_safely(node)
        start, end = self.offset(lineno, col), self.offset(end_lineno, end_col)
        a, b = self.original_offset(start), self.original_offset(max(start, end - 1)) + 1
        text = self.original[a:b].strip()
        return text or _unparse_safely(node)


def _unparse_safely(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError):  # pragma: no cover - validated trees always unparse
        return "?"


def shorten(text: str, limit: int = 80) -> str:
    """One line of at most ``limit`` characters, with invisible characters made visible."""
    text = " ".join(text.split())
    text = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def quote(text: str) -> str:
    """Quote user text for a message, choosing quotes that do not clash with it."""
    return f'"{text}"' if "'" in text and '"' not in text else f"'{text}'"


class Context:
    """Who is parsing what, so every error can say where and in which text."""

    def __init__(self, what: str, text: str, location: Location | None) -> None:
        self.what = what
        self.text = text
        self.location = location

    def error(self, problem: str, hint: str | None = None) -> ExpressionError:
        return ExpressionError(f"{self.what} {quote(shorten(self.text))}: {problem}", self.location, hint)
