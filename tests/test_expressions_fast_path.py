"""The fast paths of the expression language give exactly what the slow path gives.

Parsing skips the token-level normaliser for text it would leave unchanged,
remembers results per text, and prints trees through a template made once.
None of that may change a tree, a name, a message or a printed line: each
property here runs the fast and the slow way on the same input and compares
everything, errors included.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_expressions_properties import (
    EXACT_FUNCTIONS,
    TOKENS,
    TRANSCENDENTAL,
    render,
    render_code,
    statements,
    time_limit,
    trees,
)

from uml2perf import expressions as ex
from uml2perf.errors import ExpressionError, Location
from uml2perf.expressions import syntax
from uml2perf.expressions.normalise import needs_normalising

LOC = Location(file="model.uml", line=7, element_id="_g1", name="G1")
OTHER = Location(file="other.uml", line=99, element_id="_x9", name="X9")
PARAMETERS = ("a", "n")

RANDOM = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Pieces of plain formulas, with the spellings next to them that need the slow
# path (OCL words, C operators, keywords, numbers glued to words...), so that
# random text falls on both sides of the fast-path test.
PIECES = st.sampled_from(
    [
        "a",
        "b",
        "x1",
        "pid",
        "NP",
        "n",
        "F",
        "G",
        "log",
        "log2",
        "pow",
        "min",
        "max",
        "pi",
        "e",
        "_x",
        "mod",
        "div",
        "true",
        "false",
        "then",
        "endif",
        "not",
        "and",
        "or",
        "if",
        "else",
        "elif",
        "in",
        "is",
        "None",
        "lambda",
        "for",
        "return",
        "pass",
        "match",
        "note",
        "nothing",
        "inx",
        "iffy",
        "0",
        "1",
        "7",
        "40",
        "1e5",
        "2e",
        "1E-3",
        "1_000",
        "1_",
        "0x1F",
        "1j",
        "3.14",
        ".5",
        "1if",
        "1e5true",
        "2or",
        "+",
        "-",
        "*",
        "/",
        "//",
        "%",
        "**",
        "(",
        ")",
        ",",
        ".",
        "=",
        "==",
        "!=",
        "<",
        ">",
        "<=",
        ">=",
        "<>",
        "!",
        "===",
        "<==",
        "**=",
        "+=",
        ";",
        ";;",
        "++",
        "--",
        ":",
        "{",
        "}",
        "&&",
        "||",
        "?",
        "#",
        "'",
        "~",
        "[",
        "]",
        " ",
        " ",
        " ",
        "  ",
        "\n",
        "\t",
        "\n    ",
    ]
)
plain_soup = st.lists(PIECES, max_size=20).map("".join)
spaced_soup = st.lists(PIECES, max_size=16).map(" ".join)
plain_regex = st.from_regex(r"[A-Za-z0-9_ .+\-*/%()<>,=!;\n]{0,40}", fullmatch=True)
token_soup = st.lists(TOKENS, max_size=20).map("".join)
any_text = st.one_of(plain_soup, spaced_soup, plain_regex, token_soup, st.text(max_size=40))


def outcome(parse: Callable[[], Any]) -> tuple[Any, ...]:
    """Everything observable about a parse: the result's fields with every position, or the error."""
    try:
        with time_limit(10):
            result = parse()
    except ExpressionError as error:
        return ("error", error.message, error.hint, error.location)
    return (
        "ok",
        result.text,
        ast.dump(result.tree, include_attributes=True),
        result.names,
        result.calls,
        getattr(result, "assigned", None),
        result.location,
    )


def check_expression(text: str) -> None:
    fast = outcome(lambda: syntax.expression_from_text(text, "guard", LOC, fast=True))
    slow = outcome(lambda: syntax.expression_from_text(text, "guard", LOC, fast=False))
    assert fast == slow, (text, fast, slow)
    assert outcome(lambda: ex.parse_expression(text, LOC, what="guard")) == slow


def check_code(text: str) -> None:
    fast = outcome(lambda: syntax.code_from_text(text, LOC, fast=True))
    slow = outcome(lambda: syntax.code_from_text(text, LOC, fast=False))
    assert fast == slow, (text, fast, slow)
    assert outcome(lambda: ex.parse_code(text, LOC)) == slow


def check_function_body(text: str) -> None:
    fast = outcome(lambda: syntax.function_body_from_text(text, PARAMETERS, LOC, fast=True))
    slow = outcome(lambda: syntax.function_body_from_text(text, PARAMETERS, LOC, fast=False))
    assert fast == slow, (text, fast, slow)
    assert outcome(lambda: ex.parse_function_body(text, PARAMETERS, LOC)) == slow


# ---------------------------------------------------------------------------
# Fast path == slow path
# ---------------------------------------------------------------------------


@RANDOM
@given(any_text)
def test_expressions_fast_and_slow_agree_on_random_text(text: str) -> None:
    check_expression(text)


@RANDOM
@given(any_text)
def test_code_fast_and_slow_agree_on_random_text(text: str) -> None:
    check_code(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_text)
def test_function_bodies_fast_and_slow_agree_on_random_text(text: str) -> None:
    check_function_body(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=trees({**EXACT_FUNCTIONS, **TRANSCENDENTAL}), style=st.sampled_from(("python", "ocl", "c")))
def test_fast_and_slow_agree_on_valid_expressions(tree: tuple, style: str) -> None:
    text = render(tree, style)
    check_expression(text)
    check_expression(f"[{text}]")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=statements(), style=st.sampled_from(("python", "c")))
def test_fast_and_slow_agree_on_valid_code(body: list[tuple], style: str) -> None:
    check_code(render_code(body, style))


@pytest.mark.parametrize(
    "text",
    [
        "3e-6 * W",
        "5e-6 + pid * 1e-9",
        "(pid + 1) % nprocs",
        "ceil(NAT / nprocs) * 2e-3 * (1 + (pid % 3) / 4)",
        "NAT > 40",
        "a <= b != c",
        "2e-3 if pid == 0 else 1e-3",
        "not done and (x or y)",
        "F(x) + G(a, b)",
        "x ** 2",
        "x ** y",
        "(x ** 100) ** 100",
        "9**9**9",
        "1if x else 2",
        "1 +* 2",
        "a b",
        "(a + b",
        "x.y",
        "f(x=1)",
        "f(x==1)",
        "a === b",
        "a <== b",
        "a **== b",
        "1e5true",
        "_x",
        "log + 1",
        "lambda: 1",
        "x in y",
        "mod + div",
        "n mod 2",
        "true",
        "!a",
        "a != !b",
        "(" * 101 + "x" + ")" * 101,
        "-" * 101 + "1",
        "not " * 101 + "x",
        "(" * 100 + "x" + ")" * 100,
    ],
)
def test_fast_and_slow_agree_on_chosen_expressions(text: str) -> None:
    check_expression(text)


@pytest.mark.parametrize(
    "text",
    [
        "GV = 1; P = 3.14;",
        "x = n / p\ny = x * 2 + 1",
        "a = b = 0",
        "count += 1",
        "x **= y",
        "x = 1;;",
        ";x = 1",
        "x = 1\n;y = 2",
        "x++;",
        "x = n // p",
        "x = 1 // one",
        "if a > 1:\n    x = 1",
        "x = a if c = 1 else b",
        "x = (1,\n2)",
        "x == 1",
        "pid = 3",
        "x = 1\n    y = 2",
        "    x = 1\n    y = 2",
        "x = !y",
        "x = y <> 1",
        "x = f(a=1)",
        "x = 1\ny = ",
    ],
)
def test_fast_and_slow_agree_on_chosen_code(text: str) -> None:
    check_code(text)


def test_plain_text_takes_the_fast_path() -> None:
    """The fast path is no dead code: plain formulas skip the tokenizer, OCL and C spellings do not."""
    for text in (
        "3e-6 * W",
        "(pid + 1) % nprocs",
        "NAT > 40",
        "GV == 1",
        "2e-3 if pid == 0 else 1e-3",
        "ceil(n / p) * log2(nprocs)",
    ):
        assert not needs_normalising(text, code=False), text
        assert syntax.parse_plain(text, "eval", code=False) is not None, text
    for text in ("GV = 1; P = 3.14;", "x = n / p\ny = x * 2"):
        assert not needs_normalising(text, code=True), text
    for text in (
        "x = 1",
        "x <> 1",
        "a && b",
        "!a",
        "true",
        "n mod 2",
        "1e5true",
        "f(x=1)",
        "a ? b : c",
        "x \u2264 1",
    ):
        assert needs_normalising(text, code=False), text
    for text in ("if (a) { x = 1; }", "x = 1 // c", "x++", "x = 1;;", "if a > 1:\n    x = 1"):
        assert needs_normalising(text, code=True), text


# ---------------------------------------------------------------------------
# The memo: shared results, the caller's location every time
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parse", "text"),
    [
        (lambda text, loc: ex.parse_expression(text, loc, what="guard"), "x ^ 2"),
        (lambda text, loc: ex.parse_expression(text, loc, what="guard"), "1 +* 2"),
        (lambda text, loc: ex.parse_code(text, loc), "pid = 3"),
        (lambda text, loc: ex.parse_function_body(text, PARAMETERS, loc), "return x.y"),
        (lambda text, loc: ex.parse_function_body(text, ["a", "a"], loc), "a"),
    ],
)
def test_remembered_errors_name_each_callers_location(
    parse: Callable[[str, Location | None], Any], text: str
) -> None:
    errors = []
    for location in (LOC, OTHER, LOC, None):
        with pytest.raises(ExpressionError) as info:
            parse(text, location)
        errors.append(info.value)
    assert [e.location for e in errors] == [LOC, OTHER, LOC, Location()]
    assert len({(e.message, e.hint) for e in errors}) == 1
    assert "other.uml:99" in str(errors[1]) and "_x9" in str(errors[1])


def test_remembered_results_carry_each_callers_location() -> None:
    first = ex.parse_expression("n * 2 + pid", LOC, what="cost")
    second = ex.parse_expression("n * 2 + pid", OTHER, what="cost")
    assert first.location == LOC and second.location == OTHER
    assert first.tree is second.tree  # parsed once
    assert ex.parse_expression("n * 2 + pid", what="cost").location is None
    code_a, code_b = ex.parse_code("x = y + 1", LOC), ex.parse_code("x = y + 1", OTHER)
    assert (code_a.location, code_b.location) == (LOC, OTHER) and code_a.tree is code_b.tree
    body = ex.parse_function_body("return 2 * n", ["n"], OTHER)
    assert body.location == OTHER and body.names == {"n"}


def test_the_role_of_the_text_is_part_of_the_memo() -> None:
    for what in ("guard", "cost", "guard"):
        with pytest.raises(ExpressionError) as info:
            ex.parse_expression("x ^ 2", LOC, what=what)
        assert info.value.message.startswith(f"{what} 'x ^ 2'")


def test_the_memo_keeps_plain_strings_only() -> None:
    class Smart(str):
        """Like lxml's attribute strings, which keep their document alive."""

    expr = ex.parse_expression(Smart("w * 3 + 1"))
    assert type(expr.text) is str and expr.names == {"w"}
    assert ex.parse_expression("w * 3 + 1").tree is expr.tree


def test_long_texts_are_not_remembered_but_parse_the_same() -> None:
    text = "max(" + ", ".join(f"x{i}" for i in range(500)) + ")"
    assert len(text) > syntax.MEMO_MAX_TEXT
    first, second = ex.parse_expression(text, LOC), ex.parse_expression(text, OTHER)
    assert first.tree is not second.tree
    assert ast.dump(first.tree) == ast.dump(second.tree) and second.location == OTHER


# ---------------------------------------------------------------------------
# Printing through templates == printing a renamed copy
# ---------------------------------------------------------------------------


class ReferenceRenamer(ast.NodeTransformer):
    """The straightforward printer: rename a deep copy of the tree node by node, then unparse it."""

    def __init__(
        self,
        rename: Mapping[str, str],
        leading: Mapping[str, Sequence[str]],
        function_names: Mapping[str, str],
    ) -> None:
        self.rename, self.leading, self.function_names = rename, leading, function_names

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in ex.CONSTANTS and isinstance(node.ctx, ast.Load):
            return node
        return ast.Name(id=self.rename[node.id], ctx=node.ctx)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        assert isinstance(node.func, ast.Name)
        args = [self.visit(a) for a in node.args]
        name = node.func.id
        if name in ex.BUILTIN_FUNCTIONS:
            return ast.Call(func=node.func, args=args, keywords=[])
        leading = [ast.Name(id=a, ctx=ast.Load()) for a in self.leading.get(name, ())]
        func = ast.Name(id=self.function_names.get(name, name), ctx=ast.Load())
        return ast.Call(func=func, args=leading + args, keywords=[])

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        """Computed values pass through ``rt.bounded`` (integers cannot grow without bound)."""
        targets = [self.visit(t) for t in node.targets]
        value = self.visit(node.value)
        if not (
            isinstance(node.value, (ast.Constant, ast.Name))
            or (isinstance(node.value, ast.UnaryOp) and isinstance(node.value.operand, ast.Constant))
        ):
            value = ast.Call(func=ast.Name(id="rt.bounded", ctx=ast.Load()), args=[value], keywords=[])
        return ast.Assign(targets=targets, value=value, lineno=0)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        """``x += e`` is printed as ``x = rt.bounded(x + e)``."""
        assert isinstance(node.target, ast.Name)
        value = ast.BinOp(left=ast.Name(id=node.target.id, ctx=ast.Load()), op=node.op, right=node.value)
        return self.visit(ast.Assign(targets=[node.target], value=value, lineno=0))


def reference_python(
    node: Any,
    rename: Mapping[str, str],
    leading: Mapping[str, Sequence[str]],
    function_names: Mapping[str, str],
    indent: str = "",
) -> str:
    renamer = ReferenceRenamer(rename, leading, function_names)
    if isinstance(node, ex.Expression):
        return indent + ast.unparse(renamer.visit(copy.deepcopy(node.tree.body)))
    body = [renamer.visit(stmt) for stmt in copy.deepcopy(node.tree.body)]
    source = ast.unparse(ast.Module(body=body, type_ignores=[])) if body else "pass"
    return "\n".join(indent + line for line in source.split("\n"))


def reference_library(parsed: Any) -> set[str]:
    """Library names in a tree: what a generated module imports."""
    return {
        node.id
        for node in ast.walk(parsed.tree)
        if isinstance(node, ast.Name) and (node.id in ex.CONSTANTS or node.id in ex.BUILTIN_FUNCTIONS)
    }


def renames(parsed: Any) -> list[tuple[dict[str, str], dict[str, tuple[str, ...]], dict[str, str]]]:
    names = sorted(set(parsed.names) | set(getattr(parsed, "assigned", ())))
    calls = sorted(parsed.calls)
    return [
        ({n: n for n in names}, {}, {}),
        ({n: f"v.{n}" for n in names}, {c: ("p", "v") for c in calls}, {}),
        ({n: f"p.q.{n}_" for n in names}, {c: ("p",) for c in calls}, {c: f"cf_{c}" for c in calls}),
    ]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=trees({**EXACT_FUNCTIONS, **TRANSCENDENTAL}), style=st.sampled_from(("python", "ocl", "c")))
def test_printing_expressions_matches_the_reference(tree: tuple, style: str) -> None:
    expr = ex.parse_expression(render(tree, style))
    assert ex.library_names(expr) == reference_library(expr)
    for rename, leading, function_names in renames(expr):
        for indent in ("", "    "):
            got = ex.to_python(expr, rename, leading, indent, function_names=function_names)
            assert got == reference_python(expr, rename, leading, function_names, indent)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=statements(), style=st.sampled_from(("python", "c")))
def test_printing_code_matches_the_reference(body: list[tuple], style: str) -> None:
    fragment = ex.parse_code(render_code(body, style))
    assert ex.library_names(fragment) == reference_library(fragment)
    for rename, leading, function_names in renames(fragment):
        for indent in ("", "        "):
            got = ex.to_python(fragment, rename, leading, indent, function_names=function_names)
            assert got == reference_python(fragment, rename, leading, function_names, indent)


@pytest.mark.parametrize(
    "text",
    [
        "F() + G(x) * H(F(y), 2)",
        "-(x ** 2) if c else F(G(x), 1)",
        "x ** y + 2 ** -1 + pi * e",
        "x.max(y).floor()",
        "not (a < b < c) or a and b",
        "F(x) if F(x) > 0 else -F(-x)",
        "min(a, b, F()) // 2 % 3",
        "(a if b else c) if (d if e else f) else (g if h else k)",
        "-(-x) + +(+x) - (not not a)",
        "(a < b) < c",
        "(x ** 2) ** 3",
        "-x ** 2 + (-x) ** 2",
        "a - (b - c) - d",
        "a / (b * c) // (d % f)",
        "(a and b) or c",
        "a and (b or c) and (not d) and e",
        "not (a and b) == (not a)",
        "pow(x, y ** 2) ** 2",
        "2 ** -1 * 1.5e-300",
        "true or false",
        "1e308 * 10.0",
        "round(x, 2) + abs(-3) + int(1.0) + float(True)",
    ],
)
def test_printing_chosen_expressions_matches_the_reference(text: str) -> None:
    expr = ex.parse_expression(text)
    assert ex.library_names(expr) == reference_library(expr)
    for rename, leading, function_names in renames(expr):
        assert ex.to_python(expr, rename, leading, function_names=function_names) == reference_python(
            expr, rename, leading, function_names
        )


def test_printing_checks_every_replacement_every_time() -> None:
    expr = ex.parse_expression("F(a) + b")
    assert ex.to_python(expr, {"a": "v.a", "b": "v.b"}, {"F": ["p"]}) == "F(p, v.a) + v.b"
    with pytest.raises(KeyError):
        ex.to_python(expr, {"a": "v.a"})
    with pytest.raises(ValueError):
        ex.to_python(expr, {"a": "v.a", "b": "v b"})
    with pytest.raises(ValueError):
        ex.to_python(expr, {"a": "v.a", "b": "v.b"}, {"F": ["p)"]})
    with pytest.raises(ValueError):
        ex.to_python(expr, {"a": "v.a", "b": "v.b"}, function_names={"F": "os.system("})
    empty = ex.parse_code("pass")
    assert ex.to_python(empty, {}, indent="  ") == "  pass"
