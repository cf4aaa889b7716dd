"""Property-based tests of the expression language.

Random valid expressions are built from the grammar as small trees, rendered as
text (in Python, OCL or C spelling), and evaluated three ways: by an independent
reference interpreter written here, by the Python source :func:`to_python`
emits, and by :func:`compile_expression`.  Random text must either parse or be
refused with an :class:`ExpressionError`, promptly.
"""

from __future__ import annotations

import ast
import builtins
import functools
import math
import signal
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from uml2perf.errors import ExpressionError
from uml2perf.expressions import (
    BUILTIN_FUNCTIONS,
    MAX_EXPONENT,
    compile_expression,
    parse_code,
    parse_expression,
    parse_function_body,
    to_python,
)
from uml2perf_runtime import functions as lib

VARIABLES = ("a", "b", "c", "n")
NAMED: dict[str, Callable[..., Any]] = {"F": lambda x: 2 * x + 1, "G": lambda x, y: x - y}
EVALUATION_ERRORS = (ArithmeticError, ValueError)

COMMON = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    def on_alarm(signum: int, frame: object) -> None:
        raise TimeoutError(f"took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# ---------------------------------------------------------------------------
# A small independent model of the language: trees, rendering, evaluation
# ---------------------------------------------------------------------------
# Trees are tuples:
#   ("num", value) ("var", name) ("const", "pi"|"e")
#   ("bin", op, left, right)   op in + - * / // % **   (** only with a small literal exponent)
#   ("neg", x) ("pos", x) ("not", x)
#   ("cmp", (ops...), (operands...))    chained comparison
#   ("and", (values...)) ("or", (values...))
#   ("ifexp", test, body, orelse)
#   ("call", name, (args...))

ARITH = ("+", "-", "*", "/", "//", "%")
COMPARE = ("==", "!=", "<", "<=", ">", ">=")
EXACT_FUNCTIONS = {"abs": 1, "min": 2, "max": 2, "ceil": 1, "floor": 1, "int": 1, "float": 1, "round": 1}
TRANSCENDENTAL = {"sqrt": 1, "exp": 1, "log": 1, "log2": 1, "log10": 1}


def trees(functions: dict[str, int], named: bool = True, max_leaves: int = 12) -> st.SearchStrategy[tuple]:
    numbers = st.one_of(
        st.integers(-50, 50),
        st.floats(-100, 100, allow_nan=False, allow_infinity=False).map(lambda f: round(f, 3)),
    ).map(lambda v: ("num", v))
    leaves = st.one_of(
        numbers,
        st.sampled_from(VARIABLES).map(lambda v: ("var", v)),
        st.sampled_from(("pi", "e")).map(lambda c: ("const", c)),
    )

    def extend(inner: st.SearchStrategy[tuple]) -> st.SearchStrategy[tuple]:
        options = [
            st.tuples(st.just("bin"), st.sampled_from(ARITH), inner, inner),
            st.tuples(st.just("bin"), st.just("**"), inner, st.integers(0, 3).map(lambda k: ("num", k))),
            st.tuples(st.sampled_from(("neg", "pos", "not")), inner),
            st.integers(1, 3).flatmap(
                lambda k: st.tuples(
                    st.just("cmp"),
                    st.lists(st.sampled_from(COMPARE), min_size=k, max_size=k).map(tuple),
                    st.lists(inner, min_size=k + 1, max_size=k + 1).map(tuple),
                )
            ),
            st.tuples(st.sampled_from(("and", "or")), st.lists(inner, min_size=2, max_size=3).map(tuple)),
            st.tuples(st.just("ifexp"), inner, inner, inner),
        ]
        calls = dict(functions)
        if named:
            calls.update({"F": 1, "G": 2})
        for name, arity in sorted(calls.items()):
            options.append(
                st.tuples(
                    st.just("call"), st.just(name), st.lists(inner, min_size=arity, max_size=arity).map(tuple)
                )
            )
        return st.one_of(*options)

    return st.recursive(leaves, extend, max_leaves=max_leaves)


def render(tree: tuple, style: str) -> str:
    """Text of ``tree``, fully parenthesised, in 'python', 'ocl' or 'c' spelling."""
    kind = tree[0]
    if kind == "num":
        text = repr(tree[1])
        return f"({text})" if text.startswith("-") else text
    if kind in ("var", "const"):
        return tree[1]
    if kind == "bin":
        return f"({render(tree[2], style)} {tree[1]} {render(tree[3], style)})"
    if kind == "neg":
        return f"(-{render(tree[1], style)})"
    if kind == "pos":
        return f"(+{render(tree[1], style)})"
    if kind == "not":
        word = "!" if style == "c" else "not "
        return f"({word}{render(tree[1], style)})"
    if kind == "cmp":
        spell = {"==": "=", "!=": "<>"} if style == "ocl" else {}
        parts = [render(tree[2][0], style)]
        for op, operand in zip(tree[1], tree[2][1:], strict=True):
            parts += [spell.get(op, op), render(operand, style)]
        return "(" + " ".join(parts) + ")"
    if kind in ("and", "or"):
        word = {"and": " && ", "or": " || "}[kind] if style == "c" else f" {kind} "
        return "(" + word.join(render(v, style) for v in tree[1]) + ")"
    if kind == "ifexp":
        return f"({render(tree[2], style)} if {render(tree[1], style)} else {render(tree[3], style)})"
    if kind == "call":
        return f"{tree[1]}(" + ", ".join(render(a, style) for a in tree[2]) + ")"
    raise AssertionError(kind)


def reference_pow(x: Any, y: Any) -> Any:
    result = x**y
    if isinstance(result, complex):
        raise ValueError("no real value")
    return result


REFERENCE_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "min": min,
    "max": max,
    "ceil": math.ceil,
    "floor": math.floor,
    "int": int,
    "float": float,
    "round": round,
    "sqrt": math.sqrt,
    "exp": math.exp,
    "log": math.log,
    "log2": math.log2,
    "log10": math.log10,
    **NAMED,
}
BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda x, y: x + y,
    "-": lambda x, y: x - y,
    "*": lambda x, y: x * y,
    "/": lambda x, y: x / y,
    "//": lambda x, y: x // y,
    "%": lambda x, y: x % y,
    "**": reference_pow,
}
COMPARISON: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda x, y: x == y,
    "!=": lambda x, y: x != y,
    "<": lambda x, y: x < y,
    "<=": lambda x, y: x <= y,
    ">": lambda x, y: x > y,
    ">=": lambda x, y: x >= y,
}


def reference(tree: tuple, env: dict[str, Any]) -> Any:
    """Evaluate ``tree`` with Python's semantics, spelled out operation by operation."""
    kind = tree[0]
    if kind == "num":
        return tree[1]
    if kind == "var":
        return env[tree[1]]
    if kind == "const":
        return {"pi": math.pi, "e": math.e}[tree[1]]
    if kind == "bin":
        return BINARY[tree[1]](reference(tree[2], env), reference(tree[3], env))
    if kind == "neg":
        return -reference(tree[1], env)
    if kind == "pos":
        return +reference(tree[1], env)
    if kind == "not":
        return not reference(tree[1], env)
    if kind == "cmp":
        left = reference(tree[2][0], env)
        for op, operand in zip(tree[1], tree[2][1:], strict=True):
            right = reference(operand, env)
            if not COMPARISON[op](left, right):
                return False
            left = right
        return True
    if kind == "and":
        value: Any = True
        for item in tree[1]:
            value = reference(item, env)
            if not value:
                return value
        return value
    if kind == "or":
        value = False
        for item in tree[1]:
            value = reference(item, env)
            if value:
                return value
        return value
    if kind == "ifexp":
        return reference(tree[2], env) if reference(tree[1], env) else reference(tree[3], env)
    if kind == "call":
        return REFERENCE_FUNCTIONS[tree[1]](*(reference(a, env) for a in tree[2]))
    raise AssertionError(kind)


def outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "value", fn()
    except EVALUATION_ERRORS as exc:
        return "error", type(exc).__name__


def same(x: Any, y: Any) -> bool:
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    return type(x) is type(y) and x == y


envs = st.fixed_dictionaries(
    {
        "a": st.integers(-20, 20),
        "b": st.floats(-50, 50, allow_nan=False, allow_infinity=False),
        "c": st.integers(0, 5),
        "n": st.one_of(st.integers(-1000, 1000), st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)),
    }
)


def generated_namespace() -> dict[str, Any]:
    """What a generated module sees: the library imported by name, the cost functions, no builtins."""
    namespace: dict[str, Any] = {"__builtins__": {}}
    namespace.update(lib.SCALAR)
    namespace["rt"] = types.SimpleNamespace(bounded=lib.bounded)
    namespace.update({name: as_generated(fn) for name, fn in NAMED.items()})
    return namespace


def as_generated(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A cost function as generated code calls it: with the context ``p`` and namespace ``v`` first."""
    return lambda p, v, *args: fn(*args)


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------


@COMMON
@given(
    tree=trees({**EXACT_FUNCTIONS, **TRANSCENDENTAL}), style=st.sampled_from(("python", "ocl", "c")), env=envs
)
def test_generated_and_compiled_code_agree_with_the_reference(
    tree: tuple, style: str, env: dict[str, Any]
) -> None:
    text = render(tree, style)
    expr = parse_expression(text)
    assert expr.names <= set(VARIABLES)
    assert expr.calls <= set(NAMED)

    expected = outcome(lambda: reference(tree, env))

    # The Python source a generated module would contain.
    rename = {name: f"v.{name}" for name in expr.names}
    source = to_python(expr, rename, {name: ["p", "v"] for name in expr.calls})
    code = compile(source, "<generated>", "eval")
    namespace = generated_namespace()
    namespace.update(p=None, v=types.SimpleNamespace(**env))
    generated = outcome(lambda: eval(code, namespace))  # noqa: S307 - the test runs emitted code as a module would

    # The compiled function.
    argnames = sorted(env)
    fn = compile_expression(expr, argnames, functions=NAMED)
    compiled = outcome(lambda: fn(*(env[k] for k in argnames)))

    for got in (generated, compiled):
        assert got[0] == expected[0], (text, env, expected, got)
        if expected[0] == "value":
            assert same(got[1], expected[1]), (text, env, expected, got)


@COMMON
@given(tree=trees({**EXACT_FUNCTIONS, **TRANSCENDENTAL}), style=st.sampled_from(("python", "ocl", "c")))
def test_to_python_is_a_fixed_point(tree: tuple, style: str) -> None:
    expr = parse_expression(render(tree, style))
    identity = {name: name for name in expr.names}
    once = to_python(expr, identity)
    again = parse_expression(once)
    assert ast.dump(again.tree) == ast.dump(expr.tree)
    assert to_python(again, identity) == once
    assert again.names == expr.names and again.calls == expr.calls


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tree=trees(EXACT_FUNCTIONS, named=False),
    rows=st.lists(
        st.tuples(*(st.floats(-50, 50, allow_nan=False, allow_infinity=False) for _ in VARIABLES)),
        min_size=1,
        max_size=8,
    ),
)
def test_vectorised_agrees_with_scalar(tree: tuple, rows: list[tuple[float, ...]]) -> None:
    expr = parse_expression(render(tree, "python"))
    argnames = list(VARIABLES)
    scalar = compile_expression(expr, argnames)
    vector = compile_expression(expr, argnames, vectorised=True)
    columns = [np.array([row[i] for row in rows], dtype=float) for i in range(len(VARIABLES))]
    result = np.broadcast_to(np.asarray(vector(*columns), dtype=float), (len(rows),))
    compared = 0
    for i, row in enumerate(rows):
        kind, value = outcome(functools.partial(scalar, *row))
        if kind != "value" or not math.isfinite(float(value)):
            continue  # scalar code raises where numpy gives inf/nan
        assert math.isclose(result[i], float(value), rel_tol=1e-9, abs_tol=1e-9), (
            render(tree, "python"),
            row,
            result[i],
            value,
        )
        compared += 1
    assume(compared > 0)


# -- code fragments ---------------------------------------------------------

TARGETS = ("x", "y", "z")


def statements(depth: int = 0) -> st.SearchStrategy[list[tuple]]:
    expression = trees(EXACT_FUNCTIONS, named=False, max_leaves=6)
    assign = st.tuples(st.just("set"), st.sampled_from(TARGETS), expression)
    augment = st.tuples(
        st.just("aug"), st.sampled_from(TARGETS), st.sampled_from(("+", "-", "*")), expression
    )
    simple = st.one_of(assign, augment)
    if depth >= 2:
        return st.lists(simple, min_size=1, max_size=2)
    branch = st.tuples(
        st.just("if"),
        expression,
        st.deferred(lambda: statements(depth + 1)),
        st.one_of(st.just([]), st.deferred(lambda: statements(depth + 1))),
    )
    return st.lists(st.one_of(simple, simple, branch), min_size=1, max_size=3)


def render_code(body: list[tuple], style: str, level: int = 0) -> str:
    pad = "    " * level
    lines: list[str] = []
    for stmt in body:
        if stmt[0] == "set":
            lines.append(f"{pad}{stmt[1]} = {render(stmt[2], 'python')}" + (";" if style == "c" else ""))
        elif stmt[0] == "aug":
            lines.append(
                f"{pad}{stmt[1]} {stmt[2]}= {render(stmt[3], 'python')}" + (";" if style == "c" else "")
            )
        elif style == "c":
            lines.append(f"{pad}if ({render(stmt[1], 'c')}) {{")
            lines.append(render_code(stmt[2], style, level + 1))
            lines.append(pad + "}" + (" else {" if stmt[3] else ""))
            if stmt[3]:
                lines.append(render_code(stmt[3], style, level + 1))
                lines.append(pad + "}")
        else:
            lines.append(f"{pad}if {render(stmt[1], 'python')}:")
            lines.append(render_code(stmt[2], style, level + 1))
            if stmt[3]:
                lines.append(f"{pad}else:")
                lines.append(render_code(stmt[3], style, level + 1))
    return "\n".join(lines)


def run_reference(body: list[tuple], env: dict[str, Any]) -> None:
    for stmt in body:
        if stmt[0] == "set":
            env[stmt[1]] = reference(stmt[2], env)
        elif stmt[0] == "aug":
            env[stmt[1]] = BINARY[stmt[2]](env[stmt[1]], reference(stmt[3], env))
        elif reference(stmt[1], env):
            run_reference(stmt[2], env)
        else:
            run_reference(stmt[3], env)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=statements(), style=st.sampled_from(("python", "c")), env=envs)
def test_code_fragments_run_like_the_reference(body: list[tuple], style: str, env: dict[str, Any]) -> None:
    text = render_code(body, style)
    fragment = parse_code(text)
    start = {**env, "x": 1, "y": 2.5, "z": -3}
    assert fragment.names <= set(start)
    assert set(fragment.assigned) <= set(TARGETS)

    expected_env = dict(start)
    expected = outcome(lambda: run_reference(body, expected_env))

    rename = {name: f"v.{name}" for name in set(fragment.names) | set(fragment.assigned)}
    source = to_python(fragment, rename, indent="    ")
    namespace = generated_namespace()
    v = types.SimpleNamespace(**start)
    function_source = "def run(v):\n" + source + "\n"
    exec(compile(function_source, "<generated>", "exec"), namespace)  # noqa: S102 - emitted code under test
    got = outcome(lambda: namespace["run"](v))
    assert got[0] == expected[0], (text, expected, got)
    if expected[0] == "value":
        for name in TARGETS:
            assert same(getattr(v, name), expected_env[name]), (
                text,
                name,
                getattr(v, name),
                expected_env[name],
            )


# -- hostile and random text ------------------------------------------------

TOKENS = st.sampled_from(
    [
        "a",
        "b",
        "x",
        "pid",
        "NP",
        "log",
        "pow",
        "F",
        "_",
        "__class__",
        "__import__",
        "os",
        "open",
        "lambda",
        "None",
        "True",
        "true",
        "not",
        "and",
        "or",
        "if",
        "else",
        "elif",
        "return",
        "for",
        "in",
        "is",
        "import",
        "0",
        "1",
        "9",
        "1e5",
        "1e999",
        "0x1F",
        "1j",
        "3.14",
        ".5",
        "'",
        '"',
        "'s'",
        "f'",
        "b'",
        "+",
        "-",
        "*",
        "/",
        "//",
        "%",
        "**",
        "@",
        "^",
        "~",
        "&",
        "|",
        "&&",
        "||",
        "!",
        "?",
        ":",
        ";",
        ",",
        ".",
        "=",
        "==",
        "<>",
        "!=",
        "<",
        ">",
        "<=",
        ">=",
        ":=",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "\\",
        "#",
        "$",
        " ",
        "  ",
        "\n",
        "\t",
        "\r\n",
        "    ",
        "\u00a0",
        "\u2264",
        "\x00",
        "\ufeff",
    ]
)
ALL_PARSERS: tuple[Callable[[str], Any], ...] = (
    parse_expression,
    parse_code,
    lambda text: parse_function_body(text, ["a", "b"]),
)


#: Every node type an accepted tree may hold: the language, and nothing else.
LANGUAGE_NODES = (
    ast.Expression,
    ast.Module,
    ast.Assign,
    ast.AugAssign,
    ast.If,
    ast.Pass,
    ast.Name,
    ast.Load,
    ast.Store,
    ast.Constant,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Call,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.USub,
    ast.UAdd,
    ast.Not,
    ast.And,
    ast.Or,
    ast.Eq,
    ast.NotEq,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
)


def signed_int(node: ast.expr) -> int | None:
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def assert_inside_the_language(tree: ast.AST) -> None:
    """An accepted tree: whitelisted nodes, numbers only, named calls, ``**`` only with a small literal."""
    for node in ast.walk(tree):
        assert type(node) in LANGUAGE_NODES, ast.dump(node)
        if isinstance(node, ast.Constant):
            assert type(node.value) in (int, float, bool), ast.dump(node)
        if isinstance(node, ast.Name):
            assert not node.id.startswith("_"), node.id
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name) and not node.keywords
            name = node.func.id
            assert name in BUILTIN_FUNCTIONS or not hasattr(builtins, name), name
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            exponent = signed_int(node.right)
            assert exponent is not None and abs(exponent) <= MAX_EXPONENT, ast.dump(node)


def check_parses_or_refuses(text: str) -> None:
    for parser in ALL_PARSERS:
        with time_limit(10):
            try:
                result = parser(text)
            except ExpressionError as error:
                assert error.message and isinstance(error.message, str)
                continue
            assert_inside_the_language(result.tree)
            # Whatever is accepted can be emitted and compiled.
            names = set(result.names) | set(getattr(result, "assigned", ()))
            source = to_python(result, {n: f"v.{n}" for n in names}, {f: ["p", "v"] for f in result.calls})
            compile(source, "<generated>", "exec")
            if hasattr(result, "assigned"):
                continue
            compile_expression(result, sorted(result.names), functions={f: abs for f in result.calls})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=60))
def test_random_text_parses_or_raises_expression_error(text: str) -> None:
    check_parses_or_refuses(text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TOKENS, max_size=25).map("".join))
def test_random_token_soup_parses_or_raises_expression_error(text: str) -> None:
    check_parses_or_refuses(text)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TOKENS, min_size=1, max_size=8).map("".join), st.integers(100, 3000))
def test_repeated_fragments_never_hang(unit: str, times: int) -> None:
    check_parses_or_refuses((unit * times)[:12_000])


@COMMON
@given(tree=trees({**EXACT_FUNCTIONS, **TRANSCENDENTAL}))
def test_names_and_calls_match_the_tree(tree: tuple) -> None:
    expr = parse_expression(render(tree, "python"))

    kinds = {"num", "var", "const", "bin", "neg", "pos", "not", "cmp", "and", "or", "ifexp", "call"}

    def collect(root: tuple, kind: str) -> set[str]:
        found: set[str] = set()
        stack: list[Any] = [root]
        while stack:
            item = stack.pop()
            if not isinstance(item, tuple):
                continue
            if item and isinstance(item[0], str) and item[0] in kinds:
                if item[0] == kind:
                    found.add(item[1])
                stack.extend(item[1:])
            else:
                stack.extend(item)
        return found

    assert expr.names == collect(tree, "var")
    assert expr.calls == {name for name in collect(tree, "call") if name in NAMED}
