"""The safe expression language of cost functions, guards, tags and code fragments (SPEC §5).

Model text is untrusted: it comes from XMI files found anywhere.  It is therefore
never executed, and never pasted into generated code.  Instead it is

1. *normalised at token level* (:mod:`tokenize`, never a blind regular expression):
   OCL and C spellings that UML tools suggest are turned into their Python form
   (``x = 1`` -> ``x == 1`` in expressions, ``<>`` -> ``!=``, ``&&``/``||``/``!``
   -> ``and``/``or``/``not``, ``true``/``false`` -> ``True``/``False``; in code
   fragments ``//`` comments, ``x++`` and C-style ``if (c) { ... } else { ... }``);
2. *parsed* with :func:`ast.parse` under bounds on length and nesting, so hostile
   input ends in an :class:`~uml2perf.errors.ExpressionError`, never in a
   ``RecursionError`` or ``MemoryError``;
3. *validated* against a whitelist of node types, with a message that quotes the
   offending text and says what to write instead;
4. *emitted* from the validated tree only: :func:`to_python` prints it for the
   generated module with every free name renamed by the caller, and
   :func:`compile_expression` compiles it into a plain Python function whose
   globals hold nothing but the function library.

A model of thousands of elements repeats a handful of texts, so parsing is
memoised per text (each caller still gets its own location, in results and in
errors alike), text that is plain Python already skips the tokenizer (step 1
would leave it unchanged), and :func:`to_python` prints each tree once and
only substitutes names afterwards.  None of this changes what is accepted,
refused or emitted; the tests compare the fast paths with the slow one.

Powers are the one construct of the subset that can hang Python (``9**9**9`` is
computed exactly).  Literal exponents beyond :data:`MAX_EXPONENT` and power
towers are rejected here; every other power is normalised into a call of the
runtime's bounded ``pow``, so what remains as ``**`` in a tree always has a small
integer literal exponent.
"""

from __future__ import annotations

import ast
import builtins
import functools
import io
import keyword
import math
import re
import sys
import textwrap
import tokenize
import unicodedata
import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import CodeType, MappingProxyType
from typing import Any, ClassVar, NoReturn

from uml2perf_runtime import functions as _library
from uml2perf_runtime.functions import MAX_EXPONENT, MAX_INT_BITS

from uml2perf.errors import ExpressionError, Location

__all__ = [
    "SYSTEM_PARAMETERS",
    "BUILTIN_FUNCTIONS",
    "CONSTANTS",
    "MAX_EXPONENT",
    "MAX_TEXT_LENGTH",
    "MAX_DEPTH",
    "Expression",
    "CodeFragment",
    "parse_expression",
    "parse_code",
    "parse_function_body",
    "to_python",
    "compile_expression",
    "evaluate",
    "is_constant",
    "constant_value",
    "library_names",
]

# ---------------------------------------------------------------------------
# Vocabulary of the language
# ---------------------------------------------------------------------------

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

#: Longest text accepted, in characters.  Cost functions are short formulas;
#: the bound keeps tokenizing and parsing of hostile input cheap.
MAX_TEXT_LENGTH = 10_000

#: Deepest syntax tree accepted (each operator, call or statement is a level).
MAX_DEPTH = 200

#: Deepest bracket nesting and longest run of prefix operators accepted before
#: the text reaches Python's parser, whose own limits end in MemoryError.
_MAX_BRACKET_DEPTH = 100
_MAX_PREFIX_RUN = 100

# (minimum, maximum) number of arguments of each builtin; None = unbounded.
_ARITY: Mapping[str, tuple[int, int | None]] = MappingProxyType(
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

# Python builtins outside the library may not be called: a model function of
# that name would shadow the builtin in generated code, and a call such as
# open(...) or eval(...) must never look like something that could run.
_FORBIDDEN_CALLS: frozenset[str] = frozenset(dir(builtins)) - BUILTIN_FUNCTIONS

_FUNCTION_LIST = "log, log2, log10, sqrt, exp, ceil, floor, min, max, abs, pow, int, float, round"

_LANGUAGE_HINT = (
    "expressions use Python syntax: numbers, names, + - * / // % **, comparisons, and/or/not, "
    f"'a if c else b', and calls to {_FUNCTION_LIST} and the model's cost functions"
)
_EXPONENT_HINT = (
    f"exponents are limited to {MAX_EXPONENT} so that no expression can run for hours; "
    "for huge magnitudes use a float such as 1e300"
)
_CODE_HINT = (
    "code fragments are assignments such as 'x = 2 * y' (or 'x += 1'), separated by newlines or ';', "
    "and 'if c:' / 'elif c:' / 'else:' blocks over them"
)

_KEYWORDS_IN_EXPRESSIONS = frozenset({"and", "or", "not", "if", "else", "True", "False"})
_KEYWORDS_IN_CODE = _KEYWORDS_IN_EXPRESSIONS | {"elif", "pass"}

# Lookalike characters pasted from word processors and UML tools' rich text.
_UNICODE_OPERATORS: Mapping[str, str] = MappingProxyType(
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


# ---------------------------------------------------------------------------
# Parsed forms
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Source text with a map back to what the user wrote
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Source:
    """Rewritten text plus, for each of its characters, the index in the user's text.

    Rewriting (``<>`` -> ``!=``, stripping comments) shifts columns; error
    messages must still point at and quote what the user wrote.
    """

    original: str
    text: str
    origin: tuple[int, ...]  # len(text) + 1 entries

    @classmethod
    def of(cls, text: str) -> _Source:
        return cls(text, text, tuple(range(len(text) + 1)))

    def rewrite(self, edits: Iterable[tuple[int, int, str]]) -> _Source:
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
        return _Source(self.original, "".join(parts), tuple(origin) + (len(self.original),))

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

    def segment(self, node: ast.AST) -> str:
        """What the user wrote for ``node`` (falls back to the unparsed node)."""
        try:
            start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
            end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        except (AttributeError, TypeError):
            return _unparse_safely(node)
        a, b = self.original_offset(start), self.original_offset(max(start, end - 1)) + 1
        text = self.original[a:b].strip()
        return text or _unparse_safely(node)


def _unparse_safely(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError):  # pragma: no cover - validated trees always unparse
        return "?"


def _shorten(text: str, limit: int = 80) -> str:
    """One line of at most ``limit`` characters, with invisible characters made visible."""
    text = " ".join(text.split())
    text = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _q(text: str) -> str:
    """Quote user text for a message, choosing quotes that do not clash with it."""
    return f'"{text}"' if "'" in text and '"' not in text else f"'{text}'"


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


class _Context:
    """Who is parsing what, so every error can say where and in which text."""

    def __init__(self, what: str, text: str, location: Location | None) -> None:
        self.what = what
        self.text = text
        self.location = location

    def error(self, problem: str, hint: str | None = None) -> ExpressionError:
        return ExpressionError(f"{self.what} {_q(_shorten(self.text))}: {problem}", self.location, hint)


# ---------------------------------------------------------------------------
# Normalisation at token level
# ---------------------------------------------------------------------------


def _precheck(text: str, ctx: _Context) -> str:
    """Bound the size and reject characters that have no business in a formula."""
    if not isinstance(text, str):
        raise ctx.error(f"expected text, got {type(text).__name__}")
    if len(text) > MAX_TEXT_LENGTH:
        raise ExpressionError(
            f"{ctx.what} is too long ({len(text)} characters, limit {MAX_TEXT_LENGTH}): "
            f"'{_shorten(text, 60)}'",
            ctx.location,
            "split it into named cost functions",
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


def _strip_c_comments(source: _Source) -> _Source:
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


def _normalise_tokens(source: _Source, ctx: _Context, *, code: bool) -> _Source:
    """Rewrite OCL/C spellings into Python and refuse keywords outside the language."""
    text = source.text
    starts = _line_starts(text)

    def at(pos: tuple[int, int]) -> int:
        return starts[pos[0] - 1] + pos[1] if pos[0] - 1 < len(starts) else len(text)

    tokens = [t for t in _tokens(text) if t.type not in _SKIP]
    allowed_keywords = _KEYWORDS_IN_CODE if code else _KEYWORDS_IN_EXPRESSIONS
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
        if max_depth > _MAX_BRACKET_DEPTH or prefix_run > _MAX_PREFIX_RUN:
            raise ctx.error(
                f"nested too deeply (more than {max(_MAX_BRACKET_DEPTH, _MAX_PREFIX_RUN)} levels)",
                "split it into named cost functions",
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
            elif s in _OCL_INFIX and _ends_operand(prev) and _starts_operand(nxt):
                edits.append((at(tok.start), at(tok.end), _OCL_INFIX[s]))  # OCL: a mod b, a div b
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
            elif s in _UNICODE_OPERATORS:
                edits.append((at(tok.start), at(tok.end), _UNICODE_OPERATORS[s]))
            elif s == "?":
                raise ctx.error(
                    "the C conditional operator '? :' is not part of the expression language",
                    "write a conditional as 'a if c else b'",
                )
    return source.rewrite([_pad(text, edit) for edit in edits]) if edits else source


_OCL_INFIX: Mapping[str, str] = MappingProxyType({"mod": "%", "div": "//"})


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
        return _LANGUAGE_HINT
    return f"if '{word}' is a variable name, rename the variable: Python keywords cannot be names"


# ---------------------------------------------------------------------------
# C-style blocks in code fragments:  if (c) { x = 1; } else { x = 2; }
# ---------------------------------------------------------------------------


class _CBlocks:
    """Translate brace-delimited C ``if``/``else`` into Python's indented form.

    Works on the token list of an already normalised fragment; statement text is
    copied from that fragment with its position map, so later errors still point
    into the user's text.
    """

    def __init__(self, source: _Source, ctx: _Context) -> None:
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

    def run(self) -> _Source:
        self.block(0, top=True)
        origin = self.origin + [len(self.source.original)]
        return _Source(self.source.original, "".join(self.out), tuple(origin))

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
        while self.peek() is not None and self.peek().type == tokenize.NEWLINE:  # type: ignore[union-attr]
            self.i += 1
        start = self.here()
        if self.is_op(self.peek(), "{"):
            self.i += 1
            if self.block(level + 1) == 0:
                self.emit("    " * (level + 1) + "pass\n", start)
            self.expect("}")
        elif self.peek() is not None and self.peek().string == "if":  # type: ignore[union-attr]
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


def _is_c_style(source: _Source) -> bool:
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


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------


def _ast_parse(text: str, mode: str) -> ast.AST:
    """:func:`ast.parse` with Python's syntax warnings turned into errors.

    Python still accepts some sloppy spellings ("1if x else 2") with a warning;
    in model text they are typing mistakes, reported as such.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(text, filename="<uml2perf>", mode=mode)


def _parse(source: _Source, ctx: _Context, mode: str, hint: str) -> ast.AST:
    try:
        return _ast_parse(source.text, mode)
    except SyntaxError as exc:
        problem = (exc.msg or "invalid syntax").replace("<uml2perf>", "").strip()
        if problem.startswith("invalid syntax. Perhaps you forgot a comma"):
            problem = "invalid syntax"
        where = ""
        if exc.lineno is not None:
            index = source.offset(exc.lineno, (exc.offset or 1) - 1)
            line, column = source.where(index)
            where = (
                f" at line {line}, column {column}"
                if "\n" in source.original.strip()
                else f" at column {column}"
            )
        raise ctx.error(f"syntax error{where}: {problem}", hint) from None
    except (MemoryError, RecursionError):
        raise ctx.error(
            f"nested too deeply for the parser (limit {MAX_DEPTH} levels)",
            "split it into named cost functions",
        ) from None
    except ValueError as exc:  # e.g. integer literals beyond Python's digit limit
        raise ctx.error(str(exc), hint) from None


def _expression_text(text: str, ctx: _Context) -> str:
    """The text of an expression as the tokenizer sees it: bounded, unbracketed, on one line."""
    text = _precheck(text, ctx)
    stripped = text.strip()
    # UML diagrams display guards in brackets ("[x > 0]"); people copy them.
    if stripped.startswith("[") and stripped.endswith("]") and _single_bracket_group(stripped):
        stripped = stripped[1:-1].strip()
    # An expression is one logical line: fold line breaks of multi-line tag values.
    folded = stripped.replace("\n", " ").replace("\t", " ")
    if not folded:
        raise ctx.error("empty text", f"write a {ctx.what}, e.g. '2 * n'")
    return folded


def _single_bracket_group(text: str) -> bool:
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "["
        depth -= ch == "]"
        if depth == 0 and i < len(text) - 1:
            return False
    return depth == 0


# ---------------------------------------------------------------------------
# Fast path: text that token-level normalisation would leave alone
# ---------------------------------------------------------------------------
#
# Tokenizing with :mod:`tokenize` costs more than parsing and validating
# together, and most model text (``3e-6 * W``, ``(pid + 1) % nprocs``,
# ``NAT > 40``) is already plain Python that :func:`_normalise_tokens` would
# return unchanged.  :func:`_needs_normalising` recognises such text from its
# characters and words alone; it may say "yes" when the answer is "no" (the
# slow path then runs, as before), never the other way round.  Each rule below
# names the rewrite or refusal of :func:`_normalise_tokens` it rules out.  The
# fast path also requires Python to parse the text as it is: where it does
# not, the slow path runs from scratch, so every syntax error is reported
# exactly as the slow path reports it.

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
_OCL_WORDS = frozenset({"true", "false", "mod", "div", "then", "endif"})
_SPECIAL_IN_EXPRESSIONS = (frozenset(keyword.kwlist) - _KEYWORDS_IN_EXPRESSIONS) | _OCL_WORDS
#: In code fragments ``if``/``elif``/``else`` also count: conditions turn ``=`` into ``==``,
#: and C-style blocks are rebuilt.
_SPECIAL_IN_CODE = (frozenset(keyword.kwlist) - _KEYWORDS_IN_CODE) | _OCL_WORDS | {"if", "elif", "else"}


def _needs_normalising(text: str, *, code: bool) -> bool:
    """Whether :func:`_normalise_tokens` (and, for code, comment and block rewriting) might change or refuse ``text``.

    ``False`` is a promise: the token-level pass would return ``text``
    unchanged and raise nothing, so it can be skipped.
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
    if text.count("(") > _MAX_BRACKET_DEPTH or (
        text.count("+") + text.count("-") + text.count("not") > _MAX_PREFIX_RUN
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


def _parse_plain(text: str, mode: str, *, code: bool) -> ast.AST | None:
    """The syntax tree of ``text`` if it needs no normalisation and Python parses it as it is; else None."""
    if _needs_normalising(text, code=code):
        return None
    try:
        return _ast_parse(text, mode)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None  # the slow path reports it, with the user's columns


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------

_BINARY_OPERATORS: Mapping[type, str] = MappingProxyType(
    {
        ast.Add: "+",
        ast.Sub: "-",
        ast.Mult: "*",
        ast.Div: "/",
        ast.FloorDiv: "//",
        ast.Mod: "%",
        ast.Pow: "**",
    }
)
_REJECTED_OPERATORS: Mapping[type, tuple[str, str]] = MappingProxyType(
    {
        ast.BitXor: ("^", "write powers as x ** y"),
        ast.BitAnd: ("&", "write 'and' (or '&&') for a logical and"),
        ast.BitOr: ("|", "write 'or' (or '||') for a logical or"),
        ast.LShift: ("<<", "write x * 2 ** k"),
        ast.RShift: (">>", "write x // 2 ** k"),
        ast.MatMult: ("@", _LANGUAGE_HINT),
        ast.Invert: ("~", "write -x - 1, or 'not x' for a logical negation"),
    }
)
_COMPARISONS: Mapping[type, str] = MappingProxyType(
    {
        ast.Eq: "==",
        ast.NotEq: "!=",
        ast.Lt: "<",
        ast.LtE: "<=",
        ast.Gt: ">",
        ast.GtE: ">=",
    }
)
_REJECTED_NODES: Mapping[type, str] = MappingProxyType(
    {
        ast.Lambda: "'lambda' is not part of the expression language",
        ast.ListComp: "comprehension {src} is not part of the expression language",
        ast.SetComp: "comprehension {src} is not part of the expression language",
        ast.DictComp: "comprehension {src} is not part of the expression language",
        ast.GeneratorExp: "generator expression {src} is not part of the expression language",
        ast.List: "list {src} is not part of the expression language",
        ast.Tuple: "tuple {src} is not part of the expression language",
        ast.Set: "set {src} is not part of the expression language",
        ast.Dict: "dictionary {src} is not part of the expression language",
        ast.Attribute: "attribute access {src} is not allowed",
        ast.Subscript: "subscript {src} is not allowed",
        ast.Slice: "slice {src} is not allowed",
        ast.Starred: "starred expression {src} is not allowed",
        ast.NamedExpr: "assignment expression {src} (':=') is not allowed",
        ast.JoinedStr: "f-string {src} is not allowed: the expression language has numbers only",
        ast.FormattedValue: "f-string {src} is not allowed: the expression language has numbers only",
        ast.Await: "'await' is not part of the expression language",
        ast.Yield: "'yield' is not part of the expression language",
        ast.YieldFrom: "'yield' is not part of the expression language",
    }
)
_REJECTED_STATEMENTS: Mapping[type, str] = MappingProxyType(
    {
        ast.For: "'for' loops are not part of code fragments",
        ast.AsyncFor: "'for' loops are not part of code fragments",
        ast.While: "'while' loops are not part of code fragments",
        ast.FunctionDef: "function definitions are not part of code fragments",
        ast.AsyncFunctionDef: "function definitions are not part of code fragments",
        ast.ClassDef: "class definitions are not part of code fragments",
        ast.Import: "'import' is not part of code fragments",
        ast.ImportFrom: "'import' is not part of code fragments",
        ast.Return: "'return' is not part of code fragments",
        ast.Delete: "'del' is not part of code fragments",
        ast.With: "'with' is not part of code fragments",
        ast.AsyncWith: "'with' is not part of code fragments",
        ast.Raise: "'raise' is not part of code fragments",
        ast.Try: "'try' is not part of code fragments",
        ast.Assert: "'assert' is not part of code fragments",
        ast.Global: "'global' is not part of code fragments",
        ast.Nonlocal: "'nonlocal' is not part of code fragments",
        ast.Break: "'break' is not part of code fragments",
        ast.Continue: "'continue' is not part of code fragments",
        ast.Match: "'match' is not part of code fragments",
        ast.AnnAssign: "annotated assignment {src} is not allowed: types come from the model",
    }
)
if hasattr(ast, "TryStar"):  # Python 3.11+
    _REJECTED_STATEMENTS = MappingProxyType(
        {**_REJECTED_STATEMENTS, ast.TryStar: "'try' is not part of code fragments"}
    )

#: OCL operations on Real/Integer written as method calls -> number of arguments.
_OCL_METHODS: Mapping[str, int] = MappingProxyType(
    {
        "abs": 0,
        "floor": 0,
        "round": 0,
        "max": 1,
        "min": 1,
        "mod": 1,
        "div": 1,
    }
)

#: Largest literal number accepted: a performance model counts bytes, flops and
#: seconds, never anything near 10**308; bigger literals are typing mistakes.
_MAX_LITERAL = 10**308


class _Validator:
    """Walk a parsed tree, refuse everything outside the language, collect names and calls.

    The walk stops at :data:`MAX_DEPTH`, so its own recursion stays far below
    Python's limit whatever the parser accepted.  Each node costs one lookup of
    its type in :data:`_Validator.HANDLERS`.
    """

    #: Node type -> method validating it (filled in below the class).
    HANDLERS: ClassVar[dict[type, Callable[[_Validator, Any, int, list[str]], ast.expr]]] = {}

    def __init__(self, ctx: _Context, source: _Source) -> None:
        self.ctx = ctx
        self.source = source
        self.calls: set[str] = set()
        #: Whether nodes without source positions were added (pow() calls,
        #: OCL operations); only then must positions be filled in.
        self.synthesised = False

    def fail(self, problem: str, hint: str | None = _LANGUAGE_HINT) -> ExpressionError:
        return self.ctx.error(problem, hint)

    def src(self, node: ast.AST) -> str:
        """The user's text of ``node``, quoted for a message."""
        return _q(_shorten(self.source.segment(node), 60))

    # -- expressions ------------------------------------------------------
    def expr(self, node: ast.expr, depth: int, reads: list[str]) -> ast.expr:
        """Validate ``node``; append free names read to ``reads``; return the normalised node."""
        if depth > MAX_DEPTH:
            raise self.fail(
                f"nested too deeply (more than {MAX_DEPTH} levels)", "split it into named cost functions"
            )
        handler = self.HANDLERS.get(type(node))
        if handler is not None:
            return handler(self, node, depth + 1, reads)
        template = _REJECTED_NODES.get(type(node))
        if template is not None:
            raise self.fail(template.format(src=self.src(node)))
        raise self.fail(f"{self.src(node)} is not part of the expression language")

    def _constant(self, node: ast.Constant, d: int, reads: list[str]) -> ast.expr:
        return self.constant(node)

    def _name(self, node: ast.Name, d: int, reads: list[str]) -> ast.expr:
        self.name(node, reads)
        return node

    def _unary(self, node: ast.UnaryOp, d: int, reads: list[str]) -> ast.expr:
        if type(node.op) is ast.Invert:
            sym, hint = _REJECTED_OPERATORS[ast.Invert]
            raise self.fail(f"operator '{sym}' in {self.src(node)} is not allowed", hint)
        node.operand = self.expr(node.operand, d, reads)
        return node

    def _boolean(self, node: ast.BoolOp, d: int, reads: list[str]) -> ast.expr:
        node.values = [self.expr(v, d, reads) for v in node.values]
        return node

    def _compare(self, node: ast.Compare, d: int, reads: list[str]) -> ast.expr:
        for op in node.ops:
            if type(op) not in _COMPARISONS:
                word = {ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}.get(
                    type(op), "?"
                )
                raise self.fail(
                    f"operator '{word}' in {self.src(node)} is not allowed",
                    "compare numbers with == != < <= > >=",
                )
        node.left = self.expr(node.left, d, reads)
        node.comparators = [self.expr(c, d, reads) for c in node.comparators]
        return node

    def _conditional(self, node: ast.IfExp, d: int, reads: list[str]) -> ast.expr:
        node.test = self.expr(node.test, d, reads)
        node.body = self.expr(node.body, d, reads)
        node.orelse = self.expr(node.orelse, d, reads)
        return node

    def constant(self, node: ast.Constant) -> ast.expr:
        value = node.value
        if isinstance(value, bool):
            return node
        if isinstance(value, int):
            if value >= _MAX_LITERAL:
                raise self.fail(
                    f"number {self.src(node)} is too large (limit 1e308)", "use a float, e.g. 1.5e20"
                )
            return node
        if isinstance(value, float):
            if not math.isfinite(value):
                raise self.fail(f"number {self.src(node)} is out of range for a float", None)
            return node
        if isinstance(value, (str, bytes)):
            kind = "string" if isinstance(value, str) else "bytes literal"
            raise self.fail(
                f"{kind} {self.src(node)} is not allowed: the expression language has numbers only",
                "remove the quotes if you meant a variable or a number",
            )
        if value is None:
            raise self.fail(
                "'None' is not part of the expression language: values are numbers and True/False"
            )
        if isinstance(value, complex):
            raise self.fail(f"imaginary number {self.src(node)} is not allowed")
        raise self.fail(f"{self.src(node)} is not part of the expression language")

    def name(self, node: ast.Name, reads: list[str]) -> None:
        ident = node.id
        if ident.startswith("_"):
            raise self.fail(
                f"name {ident!r} is reserved: names starting with '_' are not allowed", "rename the variable"
            )
        if ident in CONSTANTS:
            return
        if ident in BUILTIN_FUNCTIONS:
            raise self.fail(f"{ident!r} is a function: call it, as in {ident}(x)", None)
        reads.append(ident)

    def binop(self, node: ast.BinOp, d: int, reads: list[str]) -> ast.expr:
        if type(node.op) not in _BINARY_OPERATORS:
            sym, hint = _REJECTED_OPERATORS.get(type(node.op), ("?", _LANGUAGE_HINT))
            raise self.fail(f"operator '{sym}' in {self.src(node)} is not allowed", hint)
        node.left = self.expr(node.left, d, reads)
        node.right = self.expr(node.right, d, reads)
        if isinstance(node.op, ast.Pow):
            return self.power(node)
        return node

    def power(self, node: ast.BinOp) -> ast.expr:
        """Bound ``a ** b``; keep ``**`` only for small integer literal exponents."""
        exponent = node.right
        literal = _literal_int(exponent)
        if literal is None and _is_constant_tree(exponent):
            value = _fold(exponent)
            if value is None or not isinstance(value, (int, float)) or abs(value) > MAX_EXPONENT:
                raise self.fail(
                    f"exponent {self.src(exponent)} too large (limit {MAX_EXPONENT})", _EXPONENT_HINT
                )
        elif literal is not None and abs(literal) > MAX_EXPONENT:
            raise self.fail(f"exponent {self.src(exponent)} too large (limit {MAX_EXPONENT})", _EXPONENT_HINT)
        elif literal is None and _is_power(exponent):
            raise self.fail(
                f"nested power {self.src(node)} is not allowed",
                "power towers grow beyond any machine; write the exponent as a separate expression or use pow()",
            )
        if literal is not None:
            growth = abs(literal) * _power_growth(node.left)
            if growth > MAX_EXPONENT:
                raise self.fail(
                    f"nested power {self.src(node)} raises to the power {growth} (limit {MAX_EXPONENT})",
                    _EXPONENT_HINT,
                )
            if _bits(node) > _MAX_STATIC_BITS:
                raise self.fail(
                    f"power {self.src(node)} is too large: its integer value could need more than "
                    f"{_MAX_STATIC_BITS} bits",
                    "use a float base (e.g. 10.0 instead of 10) or a smaller exponent",
                )
            return node
        self.synthesised = True
        call = ast.Call(func=ast.Name(id="pow", ctx=ast.Load()), args=[node.left, node.right], keywords=[])
        return ast.copy_location(call, node)

    def call(self, node: ast.Call, d: int, reads: list[str]) -> ast.expr:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _OCL_METHODS and not node.keywords:
            return self.expr(self.ocl_method(node, func), d, reads)
        if isinstance(func, ast.Attribute):
            raise self.fail(
                f"method call {self.src(node)} is not allowed",
                f"call functions by name, e.g. {func.attr}(x)"
                if func.attr in BUILTIN_FUNCTIONS
                else _LANGUAGE_HINT,
            )
        if not isinstance(func, ast.Name):
            raise self.fail(
                f"call {self.src(node)} is not allowed: only named functions can be called",
                f"call one of {_FUNCTION_LIST} or a cost function of the model by its name",
            )
        ident = func.id
        if ident.startswith("_") or ident in _FORBIDDEN_CALLS:
            raise self.fail(
                f"call to {ident!r} is not allowed: only {_FUNCTION_LIST} and the model's cost functions can be called",
                "if a cost function of the model has this name, rename it"
                if not ident.startswith("_")
                else None,
            )
        if ident in CONSTANTS or ident in SYSTEM_PARAMETERS:
            kind = "a constant" if ident in CONSTANTS else "a system parameter"
            raise self.fail(f"{ident!r} is {kind}, not a function: {self.src(node)}", None)
        for kw in node.keywords:
            shown = f"{kw.arg}=..." if kw.arg else "**..."
            raise self.fail(
                f"keyword argument {shown!r} in {self.src(node)} is not allowed", "pass arguments by position"
            )
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.fail(
                    f"starred argument {self.src(arg)} is not allowed", "pass arguments by position"
                )
        if ident in BUILTIN_FUNCTIONS:
            low, high = _ARITY[ident]
            n = len(node.args)
            if n < low or (high is not None and n > high):
                expected = f"{low}" if low == high else (f"{low} or {high}" if high else f"at least {low}")
                raise self.fail(
                    f"{ident}() takes {expected} argument{'s' if expected != '1' else ''}, "
                    f"{n} given in {self.src(node)}",
                    None,
                )
        else:
            self.calls.add(ident)
        node.args = [self.expr(a, d, reads) for a in node.args]
        return node

    def ocl_method(self, node: ast.Call, func: ast.Attribute) -> ast.expr:
        """OCL's operations on numbers (``x.abs()``, ``x.max(y)``, ``i.mod(2)``) as plain calls and operators."""
        name, arity = func.attr, _OCL_METHODS[func.attr]
        self.synthesised = True
        if len(node.args) != arity:
            raise self.fail(
                f"{self.src(node)}: the OCL operation '{name}' takes {arity} argument{'s' if arity != 1 else ''}",
                None,
            )
        if name in ("mod", "div"):
            op: ast.operator = ast.Mod() if name == "mod" else ast.FloorDiv()
            return ast.copy_location(ast.BinOp(left=func.value, op=op, right=node.args[0]), node)
        call = ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=[func.value, *node.args], keywords=[])
        return ast.copy_location(call, node)

    # -- statements -------------------------------------------------------
    def statements(self, body: list[ast.stmt], depth: int, state: _Flow) -> list[ast.stmt]:
        if not body:
            return body
        return [self.statement(stmt, depth, state) for stmt in body]

    def statement(self, node: ast.stmt, depth: int, state: _Flow) -> ast.stmt:
        if depth > MAX_DEPTH:
            raise self.fail(f"nested too deeply (more than {MAX_DEPTH} levels)", "split the fragment")
        d = depth + 1
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self.target(target, node)
            reads: list[str] = []
            node.value = self.expr(node.value, d, reads)
            state.read(reads)
            for target in node.targets:
                state.assign(target.id)  # type: ignore[attr-defined]
            return node
        if isinstance(node, ast.AugAssign):
            if type(node.op) not in _BINARY_OPERATORS:
                sym, hint = _REJECTED_OPERATORS.get(type(node.op), ("?", _CODE_HINT))
                raise self.fail(f"operator '{sym}=' in {self.src(node)} is not allowed", hint)
            self.target(node.target, node)
            reads = []
            node.value = self.expr(node.value, d, reads)
            if isinstance(node.op, ast.Pow):
                return self.augmented_power(node, d, reads, state)
            state.read([node.target.id, *reads])  # type: ignore[attr-defined]
            state.assign(node.target.id)  # type: ignore[attr-defined]
            return node
        if isinstance(node, ast.If):
            reads = []
            node.test = self.expr(node.test, d, reads)
            state.read(reads)
            branch_body = state.branch()
            node.body = self.statements(node.body, d, branch_body)
            branch_else = state.branch()
            node.orelse = self.statements(node.orelse, d, branch_else)
            state.join(branch_body, branch_else)
            return node
        if isinstance(node, ast.Pass):
            return node
        if isinstance(node, ast.Expr):
            value = node.value
            problem = f"statement {self.src(node)} has no effect: code fragments assign values to variables"
            hint = _CODE_HINT
            if isinstance(value, ast.Compare) and len(value.ops) == 1 and isinstance(value.ops[0], ast.Eq):
                hint = "write '=' (not '==') to assign a value in a code fragment"
            raise self.fail(problem, hint)
        template = _REJECTED_STATEMENTS.get(type(node))
        if template is not None:
            hint = (
                "model loops with a loop+ node or a 'repeat' tag"
                if isinstance(node, (ast.For, ast.While))
                else _CODE_HINT
            )
            raise self.fail(template.format(src=self.src(node)), hint)
        raise self.fail(f"statement {self.src(node)} is not part of code fragments", _CODE_HINT)

    def augmented_power(self, node: ast.AugAssign, d: int, reads: list[str], state: _Flow) -> ast.stmt:
        """``x **= y`` is ``x = x ** y``: the same bounds apply, and a non-literal exponent uses pow()."""
        target = node.target
        assert isinstance(target, ast.Name)
        power = ast.copy_location(
            ast.BinOp(left=ast.Name(id=target.id, ctx=ast.Load()), op=ast.Pow(), right=node.value), node
        )
        ast.fix_missing_locations(power)
        value = self.power(power)
        state.read([target.id, *reads])
        state.assign(target.id)
        if isinstance(value, ast.BinOp):
            return node  # small literal exponent: keep the augmented form
        self.synthesised = True
        assign = ast.Assign(targets=[ast.Name(id=target.id, ctx=ast.Store())], value=value)
        return ast.copy_location(assign, node)

    def target(self, target: ast.expr, stmt: ast.stmt) -> None:
        if not isinstance(target, ast.Name):
            raise self.fail(
                f"cannot assign to {self.src(target)}: assignment targets must be plain variable names",
                _CODE_HINT,
            )
        ident = target.id
        if ident.startswith("_"):
            raise self.fail(
                f"name {ident!r} is reserved: names starting with '_' are not allowed", "rename the variable"
            )
        if ident in SYSTEM_PARAMETERS:
            raise self.fail(
                f"cannot assign to system parameter {ident!r} in {self.src(stmt)}",
                "system parameters (pid, nprocs, tid, ...) are set by the runtime; use a model variable",
            )
        if ident in BUILTIN_FUNCTIONS or ident in CONSTANTS:
            kind = "function" if ident in BUILTIN_FUNCTIONS else "constant"
            raise self.fail(
                f"cannot assign to built-in {kind} {ident!r} in {self.src(stmt)}", "rename the variable"
            )


_Validator.HANDLERS.update(
    {
        ast.Constant: _Validator._constant,
        ast.Name: _Validator._name,
        ast.BinOp: _Validator.binop,
        ast.UnaryOp: _Validator._unary,
        ast.BoolOp: _Validator._boolean,
        ast.Compare: _Validator._compare,
        ast.IfExp: _Validator._conditional,
        ast.Call: _Validator.call,
    }
)


class _Flow:
    """Definite-assignment bookkeeping: which names a fragment needs from outside."""

    def __init__(self, assigned: dict[str, None], definite: set[str], needed: dict[str, None]) -> None:
        self.assigned = assigned  # every name assigned anywhere, first-assignment order (shared)
        self.definite = definite  # names certainly assigned at this point
        self.needed = needed  # names read before being certainly assigned (shared)

    def read(self, names: Iterable[str]) -> None:
        for name in names:
            if name not in self.definite:
                self.needed.setdefault(name, None)

    def assign(self, name: str) -> None:
        self.assigned.setdefault(name, None)
        self.definite.add(name)

    def branch(self) -> _Flow:
        return _Flow(self.assigned, set(self.definite), self.needed)

    def join(self, a: _Flow, b: _Flow) -> None:
        self.definite = a.definite & b.definite


def _literal_int(node: ast.expr) -> int | None:
    """The value of an integer literal, possibly signed (``3``, ``-2``, ``+1``)."""
    sign = 1
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        if isinstance(node.op, ast.USub):
            sign = -sign
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


def _is_power(node: ast.expr) -> bool:
    while isinstance(node, ast.UnaryOp):
        node = node.operand
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow)) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "pow"
    )


def _power_growth(node: ast.expr) -> int:
    """Product of the literal exponents of a chain ``((x ** a) ** b)``: how much a power multiplies size."""
    while isinstance(node, ast.UnaryOp):
        node = node.operand
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        literal = _literal_int(node.right)
        return max(1, abs(literal or 1)) * _power_growth(node.left)
    return 1


#: Parse-time bound on the size of an integer built with literal exponents;
#: names and calls count as 64 bits (their run-time size is the runtime's
#: business: ``pow`` bounds integer results itself).
_MAX_STATIC_BITS = 1 << 20


def _bits(node: ast.expr) -> int:
    """Upper estimate of the bits of an integer that ``node`` can produce from its literals."""
    if isinstance(node, ast.Constant):
        value = node.value
        return max(1, value.bit_length()) if type(value) is int else 64
    if isinstance(node, ast.UnaryOp):
        return 1 if isinstance(node.op, ast.Not) else _bits(node.operand)
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, (ast.Add, ast.Sub)):
            return max(_bits(node.left), _bits(node.right)) + 1
        if isinstance(node.op, ast.Mult):
            return _bits(node.left) + _bits(node.right)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            return _bits(node.left)
        if isinstance(node.op, ast.Pow):
            literal = _literal_int(node.right)
            if literal is not None and literal > 0:
                return literal * _bits(node.left)
        return 64
    if isinstance(node, ast.IfExp):
        return max(_bits(node.body), _bits(node.orelse))
    if isinstance(node, ast.BoolOp):
        return max(_bits(v) for v in node.values)
    if isinstance(node, ast.Compare):
        return 1
    return 64


def _is_constant_tree(node: ast.AST) -> bool:
    """Whether ``node`` reads no variable and calls no cost function."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id not in CONSTANTS and sub.id not in BUILTIN_FUNCTIONS:
            return False
        if isinstance(sub, ast.Call) and (
            not isinstance(sub.func, ast.Name) or sub.func.id not in BUILTIN_FUNCTIONS
        ):
            return False
    return True


def _fold(node: ast.expr) -> Any:
    """Value of an already validated constant subtree, or None if it cannot be computed."""
    try:
        fn = _compile_tree(node, (), vectorised=False)
        return _instantiate(fn, {}, vectorised=False)()
    except (ArithmeticError, ValueError, TypeError):
        return None


# ---------------------------------------------------------------------------
# Public parsing API
# ---------------------------------------------------------------------------


# Parsing is memoised on the text (and the role or parameters that appear in
# messages): a model repeats the same costs, guards and tags across thousands
# of elements.  The cache holds results without a location and refusals as
# message and hint; each call attaches its own location, so every error names
# the element that asked, whether or not the text was seen before.  Parsed
# trees are shared between callers and must not be modified (to_python and
# compile_expression build new trees).

#: Distinct texts remembered per kind of text.
_MEMO_SIZE = 4096
#: Longer texts are parsed every time: they are rare, and the memo should not hold megabytes.
_MEMO_MAX_TEXT = 2000


@dataclass(frozen=True, slots=True)
class _Refusal:
    """A remembered :class:`ExpressionError`: the location belongs to each caller, not to the text."""

    message: str
    hint: str | None

    def raise_at(self, location: Location | None) -> NoReturn:
        raise ExpressionError(self.message, location, self.hint)


def _memo_key(text: object) -> str | None:
    """``text`` as a plain ``str`` if it may be memoised, else None.

    Strings read from XML may be ``str`` subclasses that keep their whole
    document alive; the memo keeps plain copies only.
    """
    if not isinstance(text, str) or len(text) > _MEMO_MAX_TEXT:
        return None
    return text if type(text) is str else str(text)


def _expression_from_text(
    text: str, what: str, location: Location | None, *, fast: bool = True
) -> Expression:
    """Parse and validate one expression, without the memo.

    ``fast=False`` always takes the token-level path; the result is the same
    either way (the fast path only skips work that would change nothing).
    """
    ctx = _Context(what, text if isinstance(text, str) else repr(text), location)
    folded = _expression_text(text, ctx)
    source = _Source.of(folded)
    tree = _parse_plain(folded, "eval", code=False) if fast else None
    if tree is None:
        source = _normalise_tokens(source, ctx, code=False)
        tree = _parse(source, ctx, "eval", _LANGUAGE_HINT)
    assert isinstance(tree, ast.Expression)
    validator = _Validator(ctx, source)
    reads: list[str] = []
    tree.body = validator.expr(tree.body, 0, reads)
    if validator.synthesised:
        ast.fix_missing_locations(tree)
    return Expression(
        text=ctx.text,
        tree=tree,
        names=frozenset(reads),
        calls=frozenset(validator.calls),
        location=location,
    )


@functools.lru_cache(maxsize=_MEMO_SIZE)
def _memo_expression(text: str, what: str) -> Expression | _Refusal:
    """The location-free outcome of parsing ``text`` in the role ``what``, computed once."""
    try:
        return _expression_from_text(text, what, None)
    except ExpressionError as exc:
        return _Refusal(exc.message, exc.hint)


def _expression_at(found: Expression | _Refusal, location: Location | None) -> Expression:
    """A remembered outcome as seen from ``location``: the expression placed there, or its error raised there."""
    if type(found) is _Refusal:
        found.raise_at(location)
    assert isinstance(found, Expression)
    if location is None:
        return found
    return Expression(found.text, found.tree, found.names, found.calls, location)


def parse_expression(text: str, location: Location | None = None, *, what: str = "expression") -> Expression:
    """Parse and validate one expression (a cost, guard, tag value or default).

    ``what`` names the role of the text in error messages ("guard", "cost",
    "repeat", ...).  OCL and C spellings are accepted (``x = 1``, ``x <> 1``,
    ``a && !b``, ``true``); the returned tree holds their Python form.
    Results are memoised: parsing a text seen before costs a dictionary lookup.
    """
    key = _memo_key(text)
    if key is None or type(what) is not str:
        return _expression_from_text(text, what, location)
    return _expression_at(_memo_expression(key, what), location)


_RETURN_PREFIX = re.compile(r"return\b")


def parse_function_body(text: str, parameters: Sequence[str], location: Location | None = None) -> Expression:
    """Parse the body of a named cost function: ``expr``, ``return expr;`` or ``{ return expr; }``.

    The parameters must be distinct identifiers that do not shadow the function
    library; the body may read them and any model variable or system parameter
    (all of which appear in :attr:`Expression.names`).
    """
    key = _memo_key(text)
    params = tuple(parameters)
    if key is None or not all(isinstance(p, str) for p in params):
        return _function_body_from_text(text, params, location)
    return _expression_at(_memo_function_body(key, tuple(str(p) for p in params)), location)


@functools.lru_cache(maxsize=_MEMO_SIZE)
def _memo_function_body(text: str, parameters: tuple[str, ...]) -> Expression | _Refusal:
    """The location-free outcome of parsing a cost function body, computed once per text and parameters."""
    try:
        return _function_body_from_text(text, parameters, None)
    except ExpressionError as exc:
        return _Refusal(exc.message, exc.hint)


def _function_body_from_text(
    text: str, parameters: Sequence[str], location: Location | None, *, fast: bool = True
) -> Expression:
    """Parse a cost function body without the memo (``fast`` as in :func:`_expression_from_text`)."""
    ctx = _Context("cost function body", text if isinstance(text, str) else repr(text), location)
    for parameter in parameters:
        _check_parameter_name(parameter, ctx)
    duplicates = sorted({p for p in parameters if list(parameters).count(p) > 1})
    if duplicates:
        raise ctx.error(
            f"parameter {duplicates[0]!r} is declared more than once", "rename one of the parameters"
        )
    body = _precheck(text, ctx).strip()
    while True:  # peel '{ ... }', a trailing ';' and a leading 'return', in any nesting order
        before = body
        if body.startswith("{") and body.endswith("}"):
            body = body[1:-1].strip()
        body = body.rstrip(";").strip()
        match = _RETURN_PREFIX.match(body)
        if match:
            body = body[match.end() :].strip()
        if body == before:
            break
    if not body:
        raise ctx.error(
            "empty function body", "write the cost as an expression over the parameters, e.g. 'return 2 * n'"
        )
    return _expression_from_text(body, "cost function body", location, fast=fast)


def _check_parameter_name(name: str, ctx: _Context) -> None:
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ctx.error(
            f"parameter name {name!r} is not a valid identifier", "rename the parameter in the model"
        )
    if name.startswith("_"):
        raise ctx.error(
            f"parameter name {name!r} is reserved: names starting with '_' are not allowed", "rename it"
        )
    if name in BUILTIN_FUNCTIONS or name in CONSTANTS:
        raise ctx.error(f"parameter name {name!r} would hide the built-in {name!r}", "rename the parameter")


def parse_code(text: str, location: Location | None = None) -> CodeFragment:
    """Parse and validate a code fragment (``GV = 1; P = 3.14;``).

    Statements are assignments (plain, augmented, chained ``a = b = 1``) and
    ``if``/``elif``/``else`` over them, in Python syntax or C syntax
    (``if (c) { x = 1; } else { x = 2; }``), separated by newlines or ``;``.
    ``//`` and ``#`` comments are ignored.  Results are memoised like those of
    :func:`parse_expression`.
    """
    key = _memo_key(text)
    if key is None:
        return _code_from_text(text, location)
    found = _memo_code(key)
    if type(found) is _Refusal:
        found.raise_at(location)
    assert isinstance(found, CodeFragment)
    if location is None:
        return found
    return CodeFragment(found.text, found.tree, found.assigned, found.names, found.calls, location)


@functools.lru_cache(maxsize=_MEMO_SIZE)
def _memo_code(text: str) -> CodeFragment | _Refusal:
    """The location-free outcome of parsing a code fragment, computed once per text."""
    try:
        return _code_from_text(text, None)
    except ExpressionError as exc:
        return _Refusal(exc.message, exc.hint)


def _code_from_text(text: str, location: Location | None, *, fast: bool = True) -> CodeFragment:
    """Parse and validate a code fragment, without the memo (``fast`` as in :func:`_expression_from_text`)."""
    ctx = _Context("code fragment", text if isinstance(text, str) else repr(text), location)
    cleaned = textwrap.dedent(_precheck(text, ctx)).strip("\n")
    try:
        return _parse_code(cleaned, ctx, fast=fast)
    except ExpressionError:
        # Text pasted from a UML tool is often indented unevenly line by line;
        # without block structure, indentation carries no meaning: retry flat.
        flat = "\n".join(line.strip() for line in cleaned.split("\n"))
        if flat == cleaned or any(line.rstrip().endswith(":") for line in flat.split("\n")):
            raise
        try:
            return _parse_code(flat, ctx, fast=fast)
        except ExpressionError:
            pass
        raise


def _parse_code(text: str, ctx: _Context, *, fast: bool) -> CodeFragment:
    source = _Source.of(text)
    tree = _parse_plain(text, "exec", code=True) if fast else None
    if tree is None:
        source = _strip_c_comments(source)
        source = _normalise_tokens(source, ctx, code=True)
        if _is_c_style(source):
            source = _CBlocks(source, ctx).run()
        tree = _parse(source, ctx, "exec", _CODE_HINT)
    assert isinstance(tree, ast.Module)
    validator = _Validator(ctx, source)
    flow = _Flow({}, set(), {})
    tree.body = validator.statements(tree.body, 0, flow)
    if validator.synthesised:
        ast.fix_missing_locations(tree)
    return CodeFragment(
        text=ctx.text,
        tree=tree,
        assigned=tuple(flow.assigned),
        names=frozenset(flow.needed),
        calls=frozenset(validator.calls),
        location=ctx.location,
    )


def _clear_memo() -> None:
    """Forget every memoised parse (for measurements and tests)."""
    _memo_expression.cache_clear()
    _memo_code.cache_clear()
    _memo_function_body.cache_clear()


# ---------------------------------------------------------------------------
# Emitting Python source for generated modules
# ---------------------------------------------------------------------------


# Printing goes through a template made once per parsed tree: the tree is
# printed with every renamable name, every called cost function and the place
# of every call's leading arguments marked by control characters, which no
# validated name can contain; each call of to_python only fills the marks in.
# A replacement is a name or a dotted name, which is atomic wherever a name
# is, so filling in never changes precedence.
#
# The printer below covers exactly the validated language and prints what
# ast.unparse prints (same parentheses, spacing and 'elif' folding; the tests
# compare the two on random trees) at a fraction of its cost: ast.unparse's
# generic machinery costs about 2 us per node, far more than parsing.

_MARKS = re.compile("\x00([^\x00]*)\x00|\x01([^\x01]*)\x01|\x02([^\x02]*)\x02(, )?")


@dataclass(frozen=True, slots=True)
class _Template:
    """Marked source of a validated tree, and the library names it uses as they are."""

    text: str
    library: frozenset[str]


_TEMPLATES: weakref.WeakKeyDictionary[ast.AST, _Template] = weakref.WeakKeyDictionary()


def _template(tree: ast.Expression | ast.Module) -> _Template:
    """The template of a validated tree, made on first use and kept as long as the tree lives."""
    found = _TEMPLATES.get(tree)
    if found is None:
        printer = _Printer()
        text = printer.expression(tree.body) if isinstance(tree, ast.Expression) else printer.module(tree)
        found = _Template(text, frozenset(printer.library))
        _TEMPLATES[tree] = found
    return found


# Binding strength, numbered as in Python's grammar (and ast.unparse): a
# subexpression is put in parentheses when its context binds more tightly.
_TEST, _OR, _AND, _NOT, _CMP, _EXPR = 4, 5, 6, 7, 8, 9
_ARITH, _TERM, _FACTOR, _POWER, _ATOM = 13, 14, 15, 16, 18

_BINARY_FORMS: Mapping[type, tuple[str, int]] = MappingProxyType(
    {
        ast.Add: (" + ", _ARITH),
        ast.Sub: (" - ", _ARITH),
        ast.Mult: (" * ", _TERM),
        ast.Div: (" / ", _TERM),
        ast.FloorDiv: (" // ", _TERM),
        ast.Mod: (" % ", _TERM),
        ast.Pow: (" ** ", _POWER),
    }
)
_UNARY_FORMS: Mapping[type, tuple[str, int]] = MappingProxyType(
    {
        ast.Not: ("not ", _NOT),
        ast.USub: ("-", _FACTOR),
        ast.UAdd: ("+", _FACTOR),
    }
)
_COMPARISON_FORMS: Mapping[type, str] = MappingProxyType({op: f" {sym} " for op, sym in _COMPARISONS.items()})
_BOOLEAN_FORMS: Mapping[type, tuple[str, int]] = MappingProxyType(
    {ast.And: (" and ", _AND), ast.Or: (" or ", _OR)}
)
_INFINITY = "1e" + repr(sys.float_info.max_10_exp + 1)


class _Printer:
    """Source text of validated trees, with names and cost function calls marked for :func:`_fill`."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.library: set[str] = set()  # library functions and constants, printed as they are

    # -- expressions ------------------------------------------------------
    def expression(self, node: ast.expr) -> str:
        self.expr(node, _TEST)
        return "".join(self.out)

    def expr(self, node: ast.expr, context: int) -> None:
        """Write ``node`` where the surrounding text binds with strength ``context``."""
        out = self.out
        kind = type(node)
        if kind is ast.Name:
            assert isinstance(node, ast.Name)
            if node.id in CONSTANTS and isinstance(node.ctx, ast.Load):
                self.library.add(node.id)
                out.append(node.id)
            else:
                out.append(f"\x00{node.id}\x00")
        elif kind is ast.Constant:
            assert isinstance(node, ast.Constant)
            value = node.value
            if isinstance(value, float):
                out.append(repr(value).replace("inf", _INFINITY).replace("nan", f"({_INFINITY}-{_INFINITY})"))
            else:
                out.append(repr(value))
        elif kind is ast.BinOp:
            assert isinstance(node, ast.BinOp)
            symbol, strength = _BINARY_FORMS[type(node.op)]
            # '**' groups to the right, the others to the left
            left, right = (strength + 1, strength) if strength == _POWER else (strength, strength + 1)
            self.open(context > strength)
            self.expr(node.left, left)
            out.append(symbol)
            self.expr(node.right, right)
            self.close(context > strength)
        elif kind is ast.UnaryOp:
            assert isinstance(node, ast.UnaryOp)
            symbol, strength = _UNARY_FORMS[type(node.op)]
            self.open(context > strength)
            out.append(symbol)
            self.expr(node.operand, strength)
            self.close(context > strength)
        elif kind is ast.Compare:
            assert isinstance(node, ast.Compare)
            self.open(context > _CMP)
            self.expr(node.left, _EXPR)
            for op, operand in zip(node.ops, node.comparators):
                out.append(_COMPARISON_FORMS[type(op)])
                self.expr(operand, _EXPR)
            self.close(context > _CMP)
        elif kind is ast.BoolOp:
            assert isinstance(node, ast.BoolOp)
            symbol, strength = _BOOLEAN_FORMS[type(node.op)]
            self.open(context > strength)
            for index, value in enumerate(node.values):
                if index:
                    out.append(symbol)
                # as ast.unparse: each further operand binds one level more tightly
                self.expr(value, min(strength + index + 1, _ATOM))
            self.close(context > strength)
        elif kind is ast.IfExp:
            assert isinstance(node, ast.IfExp)
            self.open(context > _TEST)
            self.expr(node.body, _OR)
            out.append(" if ")
            self.expr(node.test, _OR)
            out.append(" else ")
            self.expr(node.orelse, _TEST)
            self.close(context > _TEST)
        elif kind is ast.Call:
            assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            name = node.func.id
            if name in BUILTIN_FUNCTIONS:
                self.library.add(name)
                out.append(name + "(")
                first = True
            else:
                out.append(f"\x01{name}\x01(\x02{name}\x02")
                first = False
            for arg in node.args:
                if not first:
                    out.append(", ")
                first = False
                self.expr(arg, _TEST)
            out.append(")")
        else:  # pragma: no cover - the validator lets nothing else through
            raise TypeError(f"cannot print {kind.__name__}: not part of the expression language")

    def open(self, needed: bool) -> None:
        if needed:
            self.out.append("(")

    def close(self, needed: bool) -> None:
        if needed:
            self.out.append(")")

    # -- statements -------------------------------------------------------
    def module(self, tree: ast.Module) -> str:
        if not tree.body:
            return "pass"
        self.statements(tree.body, 0)
        return "".join(self.out)

    def bounded(self, value: ast.expr) -> None:
        """A value a fragment assigns: computed ones pass through ``rt.bounded`` at run time.

        A fragment such as ``X = X * X`` run in a loop doubles the size of an
        integer each time and would exhaust memory; ``rt.bounded`` refuses
        integers past :data:`uml2perf_runtime.functions.MAX_INT_BITS` bits.
        Literals and plain copies cannot grow and are printed as they are.
        """
        if isinstance(value, (ast.Constant, ast.Name)) or (
            isinstance(value, ast.UnaryOp) and isinstance(value.operand, ast.Constant)
        ):
            self.expr(value, _TEST)
            return
        self.out.append("rt.bounded(")
        self.expr(value, _TEST)
        self.out.append(")")

    def statements(self, body: list[ast.stmt], level: int) -> None:
        for stmt in body:
            self.statement(stmt, level)

    def line(self, level: int, text: str = "") -> None:
        if self.out:
            self.out.append("\n")
        self.out.append("    " * level + text)

    def statement(self, node: ast.stmt, level: int) -> None:
        kind = type(node)
        if kind is ast.Assign:
            assert isinstance(node, ast.Assign)
            self.line(level)
            for target in node.targets:
                self.expr(target, _ATOM)
                self.out.append(" = ")
            self.bounded(node.value)
        elif kind is ast.AugAssign:
            assert isinstance(node, ast.AugAssign)
            self.line(level)
            self.expr(node.target, _ATOM)
            self.out.append(" = ")
            self.bounded(
                ast.BinOp(
                    left=ast.Name(id=node.target.id, ctx=ast.Load()),
                    op=node.op,  # type: ignore[attr-defined]
                    right=node.value,
                )
            )
        elif kind is ast.If:
            assert isinstance(node, ast.If)
            self.line(level, "if ")
            self.expr(node.test, _TEST)
            self.out.append(":")
            self.statements(node.body, level + 1)
            # an 'else' holding a single 'if' is printed as 'elif'
            while len(node.orelse) == 1 and type(node.orelse[0]) is ast.If:
                node = node.orelse[0]
                assert isinstance(node, ast.If)
                self.line(level, "elif ")
                self.expr(node.test, _TEST)
                self.out.append(":")
                self.statements(node.body, level + 1)
            if node.orelse:
                self.line(level, "else:")
                self.statements(node.orelse, level + 1)
        elif kind is ast.Pass:
            self.line(level, "pass")
        else:  # pragma: no cover - the validator lets nothing else through
            raise TypeError(f"cannot print {kind.__name__}: not part of code fragments")


def _fill(
    template: str,
    rename: Mapping[str, str],
    leading_args: Mapping[str, Sequence[str]],
    function_names: Mapping[str, str],
) -> str:
    """Replace the marks of a template; every replacement is checked to be a (dotted) name, on every call."""

    def replace(match: re.Match[str]) -> str:
        name, function, caller, comma = match.groups()
        if name is not None:
            return _checked_reference(rename[name], name)
        if function is not None:
            return _checked_reference(function_names.get(function, function), function)
        leading = [_checked_reference(a, caller) for a in leading_args.get(caller, ())]
        return ", ".join(leading) + (comma or "") if leading else ""

    return _MARKS.sub(replace, template)


def library_names(node: Expression | CodeFragment) -> frozenset[str]:
    """Library functions and constants that :func:`to_python` prints for ``node`` (what a module must import).

    Computed once per parsed tree, together with its printed form.
    """
    if not isinstance(node, (Expression, CodeFragment)):
        raise TypeError(f"library_names() needs an Expression or CodeFragment, not {type(node).__name__}")
    return _template(node.tree).library


def _checked_reference(reference: str, name: str) -> str:
    """Refuse replacement text that is not a (dotted) identifier: nothing else may reach generated code."""
    if not isinstance(reference, str) or not all(
        part.isidentifier() and not keyword.iskeyword(part) for part in reference.split(".")
    ):
        raise ValueError(f"replacement {reference!r} for {name!r} is not a name or dotted name")
    return reference


def to_python(
    node: Expression | CodeFragment,
    rename: Mapping[str, str],
    leading_args: Mapping[str, Sequence[str]] | None = None,
    indent: str = "",
    *,
    function_names: Mapping[str, str] | None = None,
) -> str:
    """Python source for a validated expression or code fragment, printed from its tree.

    ``rename`` maps every free name (and every assignment target) to what the
    generated code should read, e.g. ``{"GV": "v.GV", "pid": "p.pid"}``; a name
    missing from it raises :class:`KeyError`.  A call of a named function ``F``
    becomes ``F(*leading_args[F], *args)`` (``FSA2(pid)`` -> ``FSA2(p, v, p.pid)``);
    ``function_names`` may rename the function itself.  Built-in functions and
    constants keep their names.  A code fragment comes out as one statement per
    line, each prefixed by ``indent``; an expression as one line.  The tree is
    printed once; later calls with other names only substitute them.
    """
    if not isinstance(node, (Expression, CodeFragment)):
        raise TypeError(f"to_python() needs an Expression or CodeFragment, not {type(node).__name__}")
    source = _fill(_template(node.tree).text, rename, leading_args or {}, function_names or {})
    if isinstance(node, Expression):
        return indent + source
    if not indent:
        return source
    return "\n".join(indent + line for line in source.split("\n"))


# ---------------------------------------------------------------------------
# Compiling expressions into Python functions
# ---------------------------------------------------------------------------

_FUNCTION_NAME = "_uml2perf_expression"


class _CompileTransformer(ast.NodeTransformer):
    """Rewrite a validated tree for compilation in a namespace with nothing but the library.

    Library functions are reached as ``_b_<name>``, cost functions as
    ``_u_<name>``: user names cannot start with ``_``, so no argument can shadow
    them.  Constants are inlined.  The vectorised form also replaces Python's
    control flow (``if``/``and``/``or``/``not``, chained comparisons), which
    needs a single truth value, with elementwise numpy operations.
    """

    def __init__(self, vectorised: bool) -> None:
        self.vectorised = vectorised

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in CONSTANTS:
            return self.visit_Constant(ast.Constant(value=float(_library.SCALAR[node.id])))
        return ast.Name(id=node.id, ctx=ast.Load())

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if self.vectorised and type(node.value) in (int, float):
            # numpy scalars, so that constant parts also give inf/nan instead of raising
            return _call("_b_float64", [ast.Constant(value=float(node.value))])
        return ast.Constant(value=node.value)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        assert isinstance(node.func, ast.Name)
        name = node.func.id
        prefix = "_b_" if name in BUILTIN_FUNCTIONS else "_u_"
        return _call(prefix + name, [self.visit(a) for a in node.args])

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        left, right = self.operand(node.left), self.operand(node.right)
        if self.vectorised and isinstance(node.op, ast.Pow):
            return _call("_b_pow", [left, right])
        return ast.BinOp(left=left, op=node.op, right=right)

    def operand(self, node: ast.expr) -> ast.expr:
        """An operand of arithmetic; in vectorised form, truth values become numbers.

        Python counts ``True + True`` as 2, numpy's boolean arrays as a logical
        or (and refuse ``-``), so comparisons and logic feeding arithmetic are
        converted to floats first.
        """
        visited = self.visit(node)
        if self.vectorised and (
            isinstance(node, (ast.Compare, ast.BoolOp, ast.IfExp))
            or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not))
        ):
            return _call("_b_asfloat", [visited])
        return visited

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        test, body, orelse = self.visit(node.test), self.visit(node.body), self.visit(node.orelse)
        if self.vectorised:
            return _call("_b_where", [test, body, orelse])
        return ast.IfExp(test=test, body=body, orelse=orelse)

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        values = [self.visit(v) for v in node.values]
        if not self.vectorised:
            return ast.BoolOp(op=node.op, values=values)
        # Python's a and b is (b if a else a); a or b is (a if a else b).
        result = values[-1]
        for value in reversed(values[:-1]):
            if isinstance(node.op, ast.And):
                result = _call("_b_where", [value, result, value])
            else:
                result = _call("_b_where", [value, value, result])
        return result

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        if isinstance(node.op, ast.Not):
            operand = self.visit(node.operand)
            if self.vectorised:
                return _call("_b_logical_not", [operand])
            return ast.UnaryOp(op=node.op, operand=operand)
        return ast.UnaryOp(op=node.op, operand=self.operand(node.operand))

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        left = self.visit(node.left)
        comparators = [self.visit(c) for c in node.comparators]
        if not self.vectorised or len(node.ops) == 1:
            return ast.Compare(left=left, ops=node.ops, comparators=comparators)
        operands = [left, *comparators]
        pairs = [
            ast.Compare(left=operands[i], ops=[op], comparators=[operands[i + 1]])
            for i, op in enumerate(node.ops)
        ]
        result: ast.expr = pairs[0]
        for pair in pairs[1:]:
            result = _call("_b_logical_and", [result, pair])
        return result


def _call(name: str, args: list[ast.expr]) -> ast.Call:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args, keywords=[])


_CODE_CACHE: dict[tuple[str, tuple[str, ...], bool], CodeType] = {}
_CODE_CACHE_LIMIT = 2048


def _compile_tree(node: ast.expr, argnames: tuple[str, ...], *, vectorised: bool) -> CodeType:
    """Compile a validated expression tree into the code of a module defining one function."""
    key = (ast.dump(node), argnames, vectorised)
    code = _CODE_CACHE.get(key)
    if code is not None:
        return code
    body_expr = _CompileTransformer(vectorised).visit(node)
    body: list[ast.stmt] = [ast.Return(value=body_expr)]
    if vectorised:
        # Arguments become float arrays: numpy integer arithmetic would wrap
        # around silently and refuse negative powers.
        conversions: list[ast.stmt] = [
            ast.Assign(
                targets=[ast.Name(id=a, ctx=ast.Store())],
                value=_call("_b_asfloat", [ast.Name(id=a, ctx=ast.Load())]),
            )
            for a in argnames
        ]
        body = conversions + body
        # Both branches of where() are evaluated: silence the warnings of the
        # branch that is not taken (it shows up as inf/nan and is discarded).
        errstate = ast.Call(
            func=ast.Name(id="_b_errstate", ctx=ast.Load()),
            args=[],
            keywords=[ast.keyword(arg="all", value=ast.Constant(value="ignore"))],
        )
        body = [ast.With(items=[ast.withitem(context_expr=errstate)], body=body)]
    function = ast.FunctionDef(
        name=_FUNCTION_NAME,
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=a) for a in argnames],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        body=body,
        decorator_list=[],
        returns=None,
    )
    module = ast.Module(body=[function], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, "<uml2perf expression>", "exec")
    if len(_CODE_CACHE) >= _CODE_CACHE_LIMIT:
        _CODE_CACHE.clear()
    _CODE_CACHE[key] = code
    return code


def _instantiate(
    code: CodeType, functions: Mapping[str, Callable[..., Any]], *, vectorised: bool
) -> Callable[..., Any]:
    """Run the module code (it only defines the function) in a namespace without builtins."""
    library = _library.VECTOR if vectorised else _library.SCALAR
    namespace: dict[str, Any] = {"__builtins__": {}}
    namespace.update({"_b_" + name: value for name, value in library.items()})
    namespace.update({"_u_" + name: fn for name, fn in functions.items()})
    exec(code, namespace)  # noqa: S102 - code compiled above from a validated tree, not from text
    return namespace[_FUNCTION_NAME]


def compile_expression(
    expr: Expression,
    argnames: Sequence[str],
    *,
    functions: Mapping[str, Callable[..., Any]] | None = None,
    vectorised: bool = False,
) -> Callable[..., Any]:
    """A fast Python function of ``argnames`` computing ``expr``.

    Compiled once from the validated tree; a call costs what the same formula
    written in Python costs.  Named cost functions are looked up in
    ``functions`` (called with the expression's arguments only).  With
    ``vectorised=True`` the numpy library is used and conditionals and logic
    work elementwise, so arrays of parameter values can be passed in; division
    by zero then gives inf/nan instead of raising.
    """
    argnames = tuple(argnames)
    ctx = _Context("expression", expr.text, expr.location)
    for name in argnames:
        if (
            not isinstance(name, str)
            or not name.isidentifier()
            or keyword.iskeyword(name)
            or name.startswith("_")
        ):
            raise ValueError(f"argument name {name!r} is not usable: identifiers not starting with '_' only")
    if len(set(argnames)) != len(argnames):
        raise ValueError(f"duplicate argument names in {argnames!r}")
    missing = sorted(expr.names - set(argnames))
    if missing:
        raise ctx.error(
            f"unknown name{'s' if len(missing) > 1 else ''} {', '.join(repr(m) for m in missing)}",
            "define the variable in the model, or pass it with --set NAME=VALUE",
        )
    functions = dict(functions or {})
    unknown = sorted(expr.calls - set(functions))
    if unknown:
        raise ctx.error(
            f"unknown function{'s' if len(unknown) > 1 else ''} {', '.join(repr(u) for u in unknown)}",
            "define it as an OpaqueBehavior or FunctionBehavior of the model whose body is an expression",
        )
    code = _compile_tree(expr.tree.body, argnames, vectorised=vectorised)
    fn = _instantiate(code, {name: functions[name] for name in expr.calls}, vectorised=vectorised)
    fn.__doc__ = expr.text
    return fn


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
    ctx = _Context("expression", expr.text, expr.location)
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
    """The value of a constant expression, e.g. a variable's default; ExpressionError if it is not constant."""
    if isinstance(expr, str):
        expr = parse_expression(expr)
    if not is_constant(expr):
        used = sorted(expr.names | expr.calls)
        raise _Context("expression", expr.text, expr.location).error(
            f"is not a constant: it uses {', '.join(repr(u) for u in used)}", "write a number"
        )
    value = evaluate(expr, {})
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        raise _Context("expression", expr.text, expr.location).error(
            f"evaluates to {value}, not a finite number", "write a finite value"
        )
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise _Context("expression", expr.text, expr.location).error(
            f"evaluates to an integer of {value.bit_length():,} bits, more than the limit of {MAX_INT_BITS:,}",
            "use a float (e.g. 1e300) for huge magnitudes",
        )
    if isinstance(value, (int, float)):
        return value
    return float(value)  # pragma: no cover - the language only produces numbers and booleans
