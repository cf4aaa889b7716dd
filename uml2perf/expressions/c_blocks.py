"""C-style ``if``/``else`` blocks of code fragments rebuilt in Python's indented form.

``if (c) { x = 1; } else if (d) { x = 2; } else x = 3;`` is what a C
programmer writes into an OpaqueAction; it becomes ``if``/``elif``/``else``
with indented bodies.  The rewriting works on the tokens of an already
normalised fragment and copies statement text with its position map
(:class:`~uml2perf.expressions.source.Source`), so later errors still point
into the user's text.
"""

from __future__ import annotations

import re
import tokenize

from .normalise import SKIP, line_starts, tokens_of
from .source import Context, Source

__all__ = ["is_c_style", "rewrite_c_blocks"]


def rewrite_c_blocks(source: Source, ctx: Context) -> Source:
    """``source`` with its brace-delimited C blocks written as indented Python."""
    return _CBlocks(source, ctx).run()


class _CBlocks:
    """Translate brace-delimited C ``if``/``else`` into Python's indented form.

    Works on the token list of an already normalised fragment; statement text is
    copied from that fragment with its position map, so later errors still point
    into the user's text.
    """

    def __init__(self, source: Source, ctx: Context) -> None:
        self.source = source
        self.ctx = ctx
        text = source.text
        starts = line_starts(text)
        self.tokens = [t for t in tokens_of(text) if t.type not in SKIP and t.type != tokenize.ENDMARKER]
        self.pos = [
            (starts[t.start[0] - 1] + t.start[1], starts[t.end[0] - 1] + t.end[1]) for t in self.tokens
        ]
        self.i = 0
        self.out: list[str] = []
        self.origin: list[int] = []

    def run(self) -> Source:
        self.block(0, top=True)
        origin = self.origin + [len(self.source.original)]
        return Source(self.source.original, "".join(self.out), tuple(origin))

    # -- output ---------------------------------------------------------
    def emit(self, text: str, at: int) -> None:
        self.out.append(text)
        self.origin.extend([self.source.original_offset(at)] * len(text))

    def emit_span(self, first: int, last: int) -> None:
        start, end = self.pos[first][0], self.pos[last][1]
        self.out.append(self.source.text[start:end])
        self.origin.extend(self.source.origin[start:end])

    # -- parsing --------------------------------------------------------
    def peek(self, offset: int = 0) -> tokenize.TokenInfo | None:
        j = self.i + offset
        return self.tokens[j] if j < len(self.tokens) else None

    def is_op(self, tok: tokenize.TokenInfo | None, s: str) -> bool:
        return tok is not None and tok.type == tokenize.OP and tok.string == s

    def here(self) -> int:
        return self.pos[self.i][0] if self.i < len(self.pos) else len(self.source.text)

    def block(self, level: int, top: bool = False) -> int:
        """Statements up to a closing brace (or the end); returns how many were emitted."""
        count = 0
        while self.i < len(self.tokens):
            tok = self.tokens[self.i]
            if self.is_op(tok, "}"):
                if top:
                    raise self.ctx.error("unmatched '}'")
                return count
            if tok.type == tokenize.NEWLINE or self.is_op(tok, ";"):
                self.i += 1
                continue
            if self.is_op(tok, "{"):
                self.i += 1
                count += self.block(level)
                self.expect("}")
                continue
            if tok.type == tokenize.NAME and tok.string == "if":
                self.if_statement(level)
            else:
                self.simple(level)
            count += 1
        if not top:
            raise self.ctx.error("'{' was never closed")
        return count

    def expect(self, s: str) -> None:
        if not self.is_op(self.peek(), s):
            raise self.ctx.error(f"expected '{s}' in C-style block")
        self.i += 1

    def simple(self, level: int) -> None:
        first = self.i
        depth = 0
        while self.i < len(self.tokens):
            tok = self.tokens[self.i]
            if tok.type == tokenize.OP and tok.string in "([":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]":
                depth -= 1
            if depth <= 0 and (
                tok.type == tokenize.NEWLINE or (tok.type == tokenize.OP and tok.string in ";{}")
            ):
                break
            self.i += 1
        if self.i == first:
            raise self.ctx.error("expected a statement in C-style block")
        self.emit("    " * level, self.pos[first][0])
        self.emit_span(first, self.i - 1)
        self.emit("\n", self.pos[self.i - 1][1])

    def condition(self) -> tuple[int, int]:
        if not self.is_op(self.peek(), "("):
            raise self.ctx.error("expected '(' after 'if' in C-style block", "write 'if (condition) { ... }'")
        first = self.i
        depth = 0
        while self.i < len(self.tokens):
            tok = self.tokens[self.i]
            if self.is_op(tok, "("):
                depth += 1
            elif self.is_op(tok, ")"):
                depth -= 1
                if depth == 0:
                    self.i += 1
                    return first, self.i - 1
            self.i += 1
        raise self.ctx.error("'(' was never closed")

    def body(self, level: int) -> None:
        while (tok := self.peek()) is not None and tok.type == tokenize.NEWLINE:
            self.i += 1
        start = self.here()
        if self.is_op(self.peek(), "{"):
            self.i += 1
            if self.block(level + 1) == 0:
                self.emit("    " * (level + 1) + "pass\n", start)
            self.expect("}")
        elif (tok := self.peek()) is not None and tok.string == "if":
            self.if_statement(level + 1)
        else:
            self.simple(level + 1)

    def if_statement(self, level: int) -> None:
        keyword_word = "if"
        while True:
            at = self.here()
            self.i += 1  # 'if'
            first, last = self.condition()
            self.emit("    " * level + keyword_word + " ", at)
            self.emit_span(first, last)
            self.emit(":\n", self.pos[last][1])
            self.body(level)
            j = self.i
            while j < len(self.tokens) and (
                self.tokens[j].type == tokenize.NEWLINE or self.is_op(self.tokens[j], ";")
            ):
                j += 1
            if j >= len(self.tokens) or self.tokens[j].string != "else":
                return
            self.i = j + 1
            nxt = self.peek()
            if nxt is not None and nxt.type == tokenize.NAME and nxt.string == "if":
                keyword_word = "elif"
                continue
            self.emit("    " * level + "else:\n", self.pos[j][0])
            self.body(level)
            return


_C_STYLE_HINTS = re.compile(r"[{}]|\bif\s*\(|\belse\b")


def is_c_style(source: Source) -> bool:
    """Whether a fragment uses C block syntax: braces, ``if (c)`` or ``else`` without a colon."""
    if not _C_STYLE_HINTS.search(source.text):
        return False  # cheap pre-filter; the decision itself is made on tokens below
    tokens = [t for t in tokens_of(source.text) if t.type not in SKIP]
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.OP and tok.string in "{}":
            return True
        prev = tokens[i - 1] if i > 0 else None
        # Only an 'if'/'else' that starts a statement: 'a if c else b' is an expression.
        starts = prev is None or prev.type == tokenize.NEWLINE or prev.string in (";", "else")
        if starts and tok.type == tokenize.NAME and tok.string == "else":
            if i + 1 < len(tokens) and tokens[i + 1].string != ":":
                return True
        if (
            starts
            and tok.type == tokenize.NAME
            and tok.string == "if"
            and i + 1 < len(tokens)
            and tokens[i + 1].string == "("
        ):
            depth = 0
            for j in range(i + 1, len(tokens)):
                if tokens[j].string == "(":
                    depth += 1
                elif tokens[j].string == ")":
                    depth -= 1
                    if depth == 0:
                        if j + 1 < len(tokens) and tokens[j + 1].string != ":":
                            return True
                        break
    return False
