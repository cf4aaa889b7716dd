"""Model text parsed into validated trees: the entry points of the expression language.

Model text is untrusted: it comes from XMI files found anywhere.  It is never
executed and never pasted into generated code.  Parsing

1. bounds the text and, where it is not plain Python already
   (:func:`~uml2perf.expressions.normalise.needs_normalising`), rewrites its
   OCL and C spellings at token level (:mod:`uml2perf.expressions.normalise`);
2. parses it with :func:`ast.parse`, so that hostile input ends in an
   :class:`~uml2perf.errors.ExpressionError`, never in a ``RecursionError``
   or ``MemoryError``;
3. validates the tree against the whitelist
   (:mod:`uml2perf.expressions.validation`).

A model of thousands of elements repeats a handful of texts, so the outcome
is remembered per text, refusals included; each caller still gets its own
location, in results and in errors alike.
"""

from __future__ import annotations

import ast
import functools
import keyword
import re
import textwrap
import warnings
from collections.abc import Sequence
from typing import NoReturn

from uml2perf.errors import ExpressionError, Location

from .forms import CodeFragment, Expression
from .normalise import needs_normalising, normalise_code, normalise_expression, precheck
from .source import Context, Source
from .validation import Flow, Validator
from .vocabulary import BUILTIN_FUNCTIONS, CODE_HINT, CONSTANTS, LANGUAGE_HINT, MAX_DEPTH, SPLIT_HINT

__all__ = [
    "clear_memo",
    "code_from_text",
    "expression_from_text",
    "function_body_from_text",
    "parse_code",
    "parse_expression",
    "parse_function_body",
]


def _ast_parse(text: str, mode: str) -> ast.AST:
    """:func:`ast.parse` with Python's syntax warnings turned into errors.

    Python still accepts some sloppy spellings ("1if x else 2") with a warning;
    in model text they are typing mistakes, reported as such.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(text, filename="<uml2perf>", mode=mode)


def _parse(source: Source, ctx: Context, mode: str, hint: str) -> ast.AST:
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
            f"nested too deeply for the parser (limit {MAX_DEPTH} levels; each operator of a chain "
            "such as a + b + c counts as one)",
            SPLIT_HINT,
        ) from None
    except ValueError as exc:  # e.g. integer literals beyond Python's digit limit
        raise ctx.error(str(exc), hint) from None


def _expression_text(text: str, ctx: Context) -> str:
    """The text of an expression as the tokenizer sees it: bounded, unbracketed, on one line."""
    text = precheck(text, ctx)
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


def parse_plain(text: str, mode: str, *, code: bool) -> ast.AST | None:
    """The syntax tree of ``text`` if it needs no normalisation and Python parses it as it is; else None."""
    if needs_normalising(text, code=code):
        return None
    try:
        return _ast_parse(text, mode)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None  # the slow path reports it, with the user's columns


# ---------------------------------------------------------------------------
# Parsing, remembered per text
# ---------------------------------------------------------------------------
#
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
MEMO_MAX_TEXT = 2000


class _Refusal:
    """A remembered :class:`ExpressionError`: the location belongs to each caller, not to the text."""

    __slots__ = ("message", "hint")

    def __init__(self, message: str, hint: str | None) -> None:
        self.message = message
        self.hint = hint

    def raise_at(self, location: Location | None) -> NoReturn:
        raise ExpressionError(self.message, location, self.hint)


def _memo_key(text: object) -> str | None:
    """``text`` as a plain ``str`` if it may be memoised, else None.

    Strings read from XML may be ``str`` subclasses that keep their whole
    document alive; the memo keeps plain copies only.
    """
    if not isinstance(text, str) or len(text) > MEMO_MAX_TEXT:
        return None
    return text if type(text) is str else str(text)


def expression_from_text(text: str, what: str, location: Location | None, *, fast: bool = True) -> Expression:
    """Parse and validate one expression, without the memo.

    ``fast=False`` always takes the token-level path; the result is the same
    either way (the fast path only skips work that would change nothing).
    """
    ctx = Context(what, text if isinstance(text, str) else repr(text), location)
    folded = _expression_text(text, ctx)
    source = Source.of(folded)
    tree = parse_plain(folded, "eval", code=False) if fast else None
    if tree is None:
        source = normalise_expression(source, ctx)
        tree = _parse(source, ctx, "eval", LANGUAGE_HINT)
    assert isinstance(tree, ast.Expression)
    validator = Validator(ctx, source)
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
        return expression_from_text(text, what, None)
    except ExpressionError as exc:
        return _Refusal(exc.message, exc.hint)


def _expression_at(found: Expression | _Refusal, location: Location | None) -> Expression:
    """A remembered outcome seen from ``location``: the expression placed there, or its error raised there."""
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
        return expression_from_text(text, what, location)
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
        return function_body_from_text(text, params, location)
    return _expression_at(_memo_function_body(key, tuple(str(p) for p in params)), location)


@functools.lru_cache(maxsize=_MEMO_SIZE)
def _memo_function_body(text: str, parameters: tuple[str, ...]) -> Expression | _Refusal:
    """The location-free outcome of parsing a cost function body, computed once per text and parameters."""
    try:
        return function_body_from_text(text, parameters, None)
    except ExpressionError as exc:
        return _Refusal(exc.message, exc.hint)


def function_body_from_text(
    text: str, parameters: Sequence[str], location: Location | None, *, fast: bool = True
) -> Expression:
    """Parse a cost function body without the memo (``fast`` as in :func:`expression_from_text`)."""
    ctx = Context("cost function body", text if isinstance(text, str) else repr(text), location)
    for parameter in parameters:
        _check_parameter_name(parameter, ctx)
    duplicates = sorted({p for p in parameters if list(parameters).count(p) > 1})
    if duplicates:
        raise ctx.error(
            f"parameter {duplicates[0]!r} is declared more than once", "rename one of the parameters"
        )
    body = precheck(text, ctx).strip()
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
    return expression_from_text(body, "cost function body", location, fast=fast)


def _check_parameter_name(name: str, ctx: Context) -> None:
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
        return code_from_text(text, location)
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
        return code_from_text(text, None)
    except ExpressionError as exc:
        return _Refusal(exc.message, exc.hint)


def code_from_text(text: str, location: Location | None, *, fast: bool = True) -> CodeFragment:
    """Parse and validate a code fragment, without the memo (``fast`` as in :func:`expression_from_text`)."""
    ctx = Context("code fragment", text if isinstance(text, str) else repr(text), location)
    cleaned = textwrap.dedent(precheck(text, ctx)).strip("\n")
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


def _parse_code(text: str, ctx: Context, *, fast: bool) -> CodeFragment:
    source = Source.of(text)
    tree = parse_plain(text, "exec", code=True) if fast else None
    if tree is None:
        source = normalise_code(source, ctx)
        tree = _parse(source, ctx, "exec", CODE_HINT)
    assert isinstance(tree, ast.Module)
    validator = Validator(ctx, source)
    flow = Flow({}, set(), {})
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


def clear_memo() -> None:
    """Forget every memoised parse (for measurements and tests)."""
    _memo_expression.cache_clear()
    _memo_code.cache_clear()
    _memo_function_body.cache_clear()
