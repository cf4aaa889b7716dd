"""OCL and C spellings of model text turned into the Python form, at token level.

UML tools suggest OCL guards (``x = 1``, ``x <> 1``, ``a mod b``, ``true``) and
people paste C (``a && !b``, ``x++``, ``// comments``); the language means the
same by them as by their Python form.  The rewriting works on the tokens of
:mod:`tokenize`, never on blind regular expressions, and keeps a map back to
the user's text (:class:`~uml2perf.expressions.source.Source`), so later
errors still quote what was written.  Keywords outside the language and
nesting beyond the bounds are refused here, before Python's parser sees them.

Tokenizing costs more than parsing and validating together, and most model
text (``3e-6 * W``, ``(pid + 1) % nprocs``) is plain Python already:
:func:`needs_normalising` recognises such text from its characters and words,
so that parsing can skip this module for it.

Code fragments may also be written with C's blocks (``if (c) { x = 1; }
else x = 2;``): :func:`normalise_code` rebuilds them in Python's indented
form, copying statement text with its position map.
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import tokenize
import unicodedata
import warnings

from uml2perf.errors import ExpressionError

from .source import Context, Source, shorten
from .vocabulary import (
    KEYWORDS_IN_CODE,
    KEYWORDS_IN_EXPRESSIONS,
    LANGUAGE_HINT,
    MAX_BRACKET_DEPTH,
    MAX_PREFIX_RUN,
    MAX_TEXT_LENGTH,
    OCL_INFIX,
    OCL_WORDS,
    PYTHON_KEYWORDS,
    SPLIT_HINT,
    UNICODE_OPERATORS,
)

__all__ = ["needs_normalising", "normalise_code", "normalise_expression", "precheck"]


def normalise_expression(source: Source, ctx: Context) -> Source:
    """An expression in its Python form: OCL and C operators rewritten, words outside the language refused."""
    return _normalise_tokens(source, ctx, code=False)


def normalise_code(source: Source, ctx: Context) -> Source:
    """A code fragment in its Python form: ``//`` comments removed, spellings rewritten, C blocks rebuilt."""
    source = _normalise_tokens(_strip_c_comments(source), ctx, code=True)
    return _rewrite_c_blocks(source, ctx) if _is_c_style(source) else source


def precheck(text: str, ctx: Context) -> str:
    """Bound the size and reject characters that have no business in a formula."""
    if not isinstance(text, str):
        raise ctx.error(f"expected text, got {type(text).__name__}")
    if len(text) > MAX_TEXT_LENGTH:
        raise ExpressionError(
            f"{ctx.what} is too long ({len(text)} characters, limit {MAX_TEXT_LENGTH}): "
            f"'{shorten(text, 60)}'",
            ctx.location,
            SPLIT_HINT,
        )
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.isascii() and not _ASCII_CONTROL.search(text):
        return text
    chars: list[str] = []
    for ch in text:
        if ch in "\n\t":
            chars.append(ch)
        elif unicodedata.category(ch) == "Zs" or ch == "\ufeff":
            chars.append(" ")  # non-breaking and other Unicode spaces from rich-text editors
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            raise ctx.error(f"character U+{ord(ch):04X} is not allowed")
        else:
            chars.append(ch)
    return "".join(chars)


_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    """Tokens of ``text``; on a tokenizer error, those read so far (the parser reports it)."""
    tokens: list[tokenize.TokenInfo] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            tokens.append(tok)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return tokens


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


_SKIP = frozenset({tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT})
_STATEMENT_BREAKS = frozenset({";", "{", "}", ":"})


def _strip_c_comments(source: Source) -> Source:
    """Remove C++ ``//`` comments from a code fragment, keeping floor divisions.

    ``//`` is a comment where a statement starts (line start, after ``;``,
    ``{``, ``}`` or ``:``) or where the rest of its line is not an operand
    (``x = 1 // one process``); otherwise it is Python's floor division
    (``x = n // p``).  Each physical line is tokenized on its own so that text
    inside a comment (an unbalanced bracket, an apostrophe) cannot disturb the
    rest of the fragment.
    """
    if "//" not in source.text:
        return source
    edits: list[tuple[int, int, str]] = []
    offset = 0
    for line in source.text.split("\n"):
        if "//" not in line:
            offset += len(line) + 1
            continue
        previous: tokenize.TokenInfo | None = None
        depth = 0
        for tok in _tokens(line):
            if tok.type in _SKIP or tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                if tok.type == tokenize.COMMENT:
                    break  # a Python comment hides any '//' after it
                continue
            if tok.type == tokenize.OP and tok.string in "([":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]":
                depth -= 1
            if tok.type == tokenize.OP and tok.string == "//":
                at_start = previous is None or (
                    previous.type == tokenize.OP and previous.string in _STATEMENT_BREAKS
                )
                rest = line[tok.end[1] :]
                # Inside brackets a '//' can only be a division; elsewhere it is a
                # comment unless an operand follows.
                if at_start or (depth <= 0 and not _starts_with_operand(rest.split(";", 1)[0])):
                    edits.append((offset + tok.start[1], offset + len(line), ""))
                    break
            previous = tok
        offset += len(line) + 1
    return source.rewrite(edits) if edits else source


def _starts_with_operand(rest: str) -> bool:
    """Whether ``rest`` (the line after a ``//``) is an operand, maybe followed by a later ``//`` comment."""
    if _is_operand(rest):
        return True
    cut = rest.find("//")
    while cut > 0:
        if _is_operand(rest[:cut]):
            return True
        cut = rest.find("//", cut + 2)
    return False


def _is_operand(text: str) -> bool:
    """Whether ``text`` can follow a ``//`` operator (i.e. is an expression)."""
    if not text.strip():
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            ast.parse("0 // " + text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


def _normalise_tokens(source: Source, ctx: Context, *, code: bool) -> Source:
    """Rewrite OCL/C spellings into Python and refuse keywords outside the language."""
    text = source.text
    starts = _line_starts(text)

    def at(pos: tuple[int, int]) -> int:
        return starts[pos[0] - 1] + pos[1] if pos[0] - 1 < len(starts) else len(text)

    tokens = [t for t in _tokens(text) if t.type not in _SKIP]
    allowed_keywords = KEYWORDS_IN_CODE if code else KEYWORDS_IN_EXPRESSIONS
    edits: list[tuple[int, int, str]] = []
    depth = max_depth = prefix_run = 0
    in_call: list[bool] = []  # for each open bracket: is it the argument list of a call?
    condition = False  # in a code fragment: inside the condition of an 'if'/'elif'
    condition_depth: int | None = None  # bracket depth outside the condition's parenthesis
    for i, tok in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        prev = tokens[i - 1] if i > 0 else None
        adjacent = nxt is not None and nxt.start == tok.end
        kind, s = tok.type, tok.string
        if kind == tokenize.OP and s in "([{":
            depth += 1
            max_depth = max(max_depth, depth)
            in_call.append(
                s == "("
                and prev is not None
                and (
                    (prev.type == tokenize.NAME and not keyword.iskeyword(prev.string)) or prev.string == ")"
                )
            )
        elif kind == tokenize.OP and s in ")]}":
            depth -= 1
            if in_call:
                in_call.pop()
        if (kind == tokenize.OP and s in ("-", "+", "~")) or s in ("not", "!"):
            prefix_run += 1
        elif kind not in (tokenize.ERRORTOKEN,) or s.strip():
            prefix_run = 0
        if max_depth > MAX_BRACKET_DEPTH or prefix_run > MAX_PREFIX_RUN:
            raise ctx.error(
                f"nested too deeply (more than {max(MAX_BRACKET_DEPTH, MAX_PREFIX_RUN)} levels)",
                SPLIT_HINT,
            )
        if kind == tokenize.NEWLINE or (kind == tokenize.OP and (s in ";{}" or (s == ":" and depth == 0))):
            condition = False
        elif kind == tokenize.NAME and s in ("if", "elif"):
            condition = True
            condition_depth = depth if nxt is not None and nxt.string == "(" else None
        elif condition and kind == tokenize.OP and s == ")" and depth == condition_depth:
            # C style without braces, "if (c) x = 1;": the condition ends with its parenthesis
            # when a statement follows rather than more of the condition.
            if (
                nxt is not None
                and nxt.type == tokenize.NAME
                and nxt.string not in ("and", "or", "if", "else", "not")
            ):
                condition = False
        if (
            code
            and kind == tokenize.OP
            and s == ";"
            and (
                prev is None
                or prev.type == tokenize.NEWLINE
                or (prev.type == tokenize.OP and prev.string in ";:{")
            )
        ):
            edits.append((at(tok.start), at(tok.end), ""))  # empty statement, as in C: "x = 1;;"
        if kind == tokenize.NAME:
            if s == "true" or s == "false":
                edits.append((at(tok.start), at(tok.end), s.capitalize()))
            elif s in OCL_INFIX and _ends_operand(prev) and _starts_operand(nxt):
                edits.append((at(tok.start), at(tok.end), OCL_INFIX[s]))  # OCL: a mod b, a div b
            elif s in ("then", "endif") and _ends_operand(prev):
                raise ctx.error(
                    "the OCL form 'if c then a else b endif' is not supported",
                    "write a conditional as 'a if c else b'",
                )
            elif keyword.iskeyword(s) and s not in allowed_keywords:
                raise ctx.error(_keyword_problem(s, code), _keyword_hint(s, code))
        elif kind == tokenize.OP:
            if s == "<" and adjacent and nxt is not None and nxt.string == ">":
                edits.append((at(tok.start), at(nxt.end), "!="))
            elif s == "&" and adjacent and nxt is not None and nxt.string == "&":
                edits.append((at(tok.start), at(nxt.end), " and "))
            elif s == "|" and adjacent and nxt is not None and nxt.string == "|":
                edits.append((at(tok.start), at(nxt.end), " or "))
            elif s == "=" and (condition or not code) and not _is_keyword_argument(tokens, i, in_call):
                edits.append((at(tok.start), at(tok.end), "=="))
            elif code and s in ("+", "-") and adjacent and nxt is not None and nxt.string == s:
                following = tokens[i + 2] if i + 2 < len(tokens) else None
                prev = tokens[i - 1] if i > 0 else None
                ends = (
                    following is None
                    or following.type in (tokenize.NEWLINE, tokenize.ENDMARKER)
                    or (following.type == tokenize.OP and following.string in (";", "}"))
                )
                if ends and prev is not None and prev.type == tokenize.NAME:
                    edits.append((at(tok.start), at(nxt.end), f" {s}= 1"))  # C increment: x++ -> x += 1
        elif kind == tokenize.ERRORTOKEN:
            if s == "!":
                edits.append((at(tok.start), at(tok.end), " not "))
            elif s in UNICODE_OPERATORS:
                edits.append((at(tok.start), at(tok.end), UNICODE_OPERATORS[s]))
            elif s == "?":
                raise ctx.error(
                    "the C conditional operator '? :' is not part of the expression language",
                    "write a conditional as 'a if c else b'",
                )
    return source.rewrite([_pad(text, edit) for edit in edits]) if edits else source


def _ends_operand(tok: tokenize.TokenInfo | None) -> bool:
    if tok is None:
        return False
    if tok.type == tokenize.NAME:
        return not keyword.iskeyword(tok.string) or tok.string in ("True", "False")
    return tok.type == tokenize.NUMBER or tok.string in (")", "]")


def _starts_operand(tok: tokenize.TokenInfo | None) -> bool:
    if tok is None:
        return False
    if tok.type == tokenize.NAME:
        return not keyword.iskeyword(tok.string) or tok.string in ("True", "False", "not")
    return tok.type == tokenize.NUMBER or tok.string in ("(", "-", "+")


def _pad(text: str, edit: tuple[int, int, str]) -> tuple[int, int, str]:
    """Surround a word replacement (``!`` -> ``not``) with spaces only where it touches other text.

    A leading space at the very start would be an "unexpected indent" to Python.
    """
    start, end, replacement = edit
    word = replacement.strip()
    if not word or not (word[0].isalpha() or word[-1].isalpha()):
        return edit
    left = " " if start > 0 and not text[start - 1].isspace() else ""
    right = " " if end < len(text) and not text[end].isspace() else ""
    return start, end, left + word + right


def _is_keyword_argument(tokens: list[tokenize.TokenInfo], i: int, in_call: list[bool]) -> bool:
    """Whether the ``=`` at ``tokens[i]`` reads ``f(..., name=value)``: left alone, to be refused as such."""
    if not in_call or not in_call[-1] or i < 2:
        return False
    return tokens[i - 1].type == tokenize.NAME and tokens[i - 2].string in ("(", ",")


def _keyword_problem(word: str, code: bool) -> str:
    if word in ("in", "is"):
        return f"operator '{word}' is not allowed: compare numbers with == != < <= > >="
    if word == "None":
        return "'None' is not part of the expression language: values are numbers and True/False"
    if word in ("for", "while"):
        return f"'{word}' loops are not part of the {'code fragment' if code else 'expression'} language"
    if word == "return":
        return "'return' is only allowed at the start of a cost function body"
    return f"'{word}' is not part of the expression language"


def _keyword_hint(word: str, code: bool) -> str:
    if word in ("for", "while"):
        return "model loops with a loop+ node or a 'repeat' tag"
    if word in ("lambda", "def", "import", "from", "class"):
        return LANGUAGE_HINT
    return f"if '{word}' is a variable name, rename the variable: Python keywords cannot be names"


# ---------------------------------------------------------------------------
# Text that needs no normalising
# ---------------------------------------------------------------------------
#
# needs_normalising() may say "yes" when the answer is "no" (the token-level
# pass then runs and changes nothing), never the other way round.  Each rule
# names the rewrite or refusal of _normalise_tokens() it rules out.

#: ASCII letters, digits, ``_``, spaces and the operators of plain formulas.
#: Anything else (quotes, ``#``, brackets other than ``()``, ``&``, ``|``,
#: ``?``, ``~``, non-ASCII lookalikes...) takes the slow path.
_PLAIN_EXPRESSION = re.compile(r"[A-Za-z0-9_ .+\-*/%()<>,=!]*")
#: Code fragments may also span lines and end statements with ``;``.
_PLAIN_CODE = re.compile(r"[A-Za-z0-9_ \t\n.+\-*/%()<>,=!;]*")
#: Comparison operators holding ``=`` or ``!``, matched left to right as the tokenizer does.
_PAIRED_EQUALS = re.compile(r"[=!<>]=")
#: An empty statement (``;`` at the start, after a line break or after ``;``), which code fragments drop.
_EMPTY_STATEMENT = re.compile(r"(?:^|[;\n])[ \t]*;")
_WORD = re.compile(r"\w+")
#: A run of word characters starting with a digit that is one number token and hides no word.
_PLAIN_NUMBER = re.compile(r"[0-9_]+(?:[eE][0-9_]*)?")
#: Words the normaliser rewrites (``true``, ``mod``...) or refuses (keywords outside the language).
_SPECIAL_IN_EXPRESSIONS = (PYTHON_KEYWORDS - KEYWORDS_IN_EXPRESSIONS) | OCL_WORDS
#: In code fragments ``if``/``elif``/``else`` also count: conditions turn ``=`` into ``==``,
#: and C-style blocks are rebuilt.
_SPECIAL_IN_CODE = (PYTHON_KEYWORDS - KEYWORDS_IN_CODE) | OCL_WORDS | {"if", "elif", "else"}


def needs_normalising(text: str, *, code: bool) -> bool:
    """Whether :func:`normalise_code` (or, for ``code=False``, :func:`normalise_expression`) might act.

    ``False`` is a promise: normalising would return ``text`` unchanged and
    raise nothing, so it can be skipped.
    """
    # Characters: no lookalikes, strings, comments, braces, '&&', '||', '?'.
    if not (_PLAIN_CODE if code else _PLAIN_EXPRESSION).fullmatch(text):
        return True
    # OCL inequality.
    if "<>" in text:
        return True
    # A '!' that is not part of '!=' (C negation); in expressions, an '=' that
    # is not part of a comparison (OCL equality, or a keyword argument).
    if "!" in text or (not code and "=" in text):
        rest = _PAIRED_EQUALS.sub("", text)
        if "!" in rest or (not code and "=" in rest):
            return True
    # Code: C++ comments, increments, empty statements.
    if code and ("//" in text or "++" in text or "--" in text or _EMPTY_STATEMENT.search(text)):
        return True
    # Bounds on bracket nesting and on runs of prefix operators: counting every
    # occurrence overestimates both.
    if text.count("(") > MAX_BRACKET_DEPTH or (
        text.count("+") + text.count("-") + text.count("not") > MAX_PREFIX_RUN
    ):
        return True
    # Words: OCL spellings, keywords outside the language, and (in code)
    # conditions.  A run that starts with a digit is a number; unless it is a
    # plain decimal one, a word might hide in it ("1e5true").
    special = _SPECIAL_IN_CODE if code else _SPECIAL_IN_EXPRESSIONS
    for word in _WORD.findall(text):
        if word in special or (word[0].isdigit() and not _PLAIN_NUMBER.fullmatch(word)):
            return True
    return False


# ---------------------------------------------------------------------------
# C-style blocks in code fragments:  if (c) { x = 1; } else { x = 2; }
# ---------------------------------------------------------------------------


def _rewrite_c_blocks(source: Source, ctx: Context) -> Source:
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
        starts = _line_starts(text)
        self.tokens = [t for t in _tokens(text) if t.type not in _SKIP and t.type != tokenize.ENDMARKER]
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


def _is_c_style(source: Source) -> bool:
    """Whether a fragment uses C block syntax: braces, ``if (c)`` or ``else`` without a colon."""
    if not _C_STYLE_HINTS.search(source.text):
        return False  # cheap pre-filter; the decision itself is made on tokens below
    tokens = [t for t in _tokens(source.text) if t.type not in _SKIP]
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
