"""Unit tests of the expression language (uml2perf.expressions) and its function library."""

from __future__ import annotations

import ast
import math
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from uml2perf.errors import ExpressionError, Location, ModelError
from uml2perf.expressions import (
    BUILTIN_FUNCTIONS,
    CONSTANTS,
    MAX_DEPTH,
    MAX_TEXT_LENGTH,
    SYSTEM_PARAMETERS,
    CodeFragment,
    Expression,
    compile_expression,
    constant_value,
    evaluate,
    is_constant,
    parse_code,
    parse_expression,
    parse_function_body,
    to_python,
)
from uml2perf_runtime import functions as lib

LOC = Location(file="model.uml", line=42, element_id="_a1", name="A1")
RUNTIME_FUNCTIONS = Path(__file__).resolve().parents[1] / "runtime" / "functions.py"


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Fail instead of hanging: hostile input must be refused quickly."""

    def on_alarm(signum: int, frame: object) -> None:
        raise TimeoutError(f"took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def python_of(text: str) -> str:
    return ast.unparse(parse_expression(text).tree)


def v_rename(node: Expression | CodeFragment) -> dict[str, str]:
    names = set(node.names) | set(getattr(node, "assigned", ()))
    return {n: (f"p.{SYSTEM_PARAMETERS[n]}" if n in SYSTEM_PARAMETERS else f"v.{n}") for n in names}


# ---------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------


def test_vocabulary() -> None:
    assert dict(SYSTEM_PARAMETERS) == {
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
    assert BUILTIN_FUNCTIONS == frozenset(
        {
            "log",
            "log2",
            "log10",
            "sqrt",
            "exp",
            "ceil",
            "floor",
            "min",
            "max",
            "abs",
            "pow",
            "int",
            "float",
            "round",
        }
    )
    assert CONSTANTS == frozenset({"pi", "e"})
    for name in BUILTIN_FUNCTIONS | CONSTANTS:
        assert hasattr(lib, name), name
        assert name in lib.SCALAR and name in lib.VECTOR


def test_expression_error_is_a_model_error() -> None:
    assert issubclass(ExpressionError, ModelError)


# ---------------------------------------------------------------------------
# Parsing expressions
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "names", "calls"),
    [
        ("42", set(), set()),
        ("1.5e-3 * size", {"size"}, set()),
        ("121 / P", {"P"}, set()),
        ("FSA2(pid)", {"pid"}, {"FSA2"}),
        ("FA1() + FA4(P)", {"P"}, {"FA1", "FA4"}),
        ("log2(nprocs) * latency + n / NP", {"nprocs", "latency", "n", "NP"}, set()),
        ("2 * pi * r + e", {"r"}, set()),
        ("max(a, b, 3) if a > b else min(a, b)", {"a", "b"}, set()),
        ("a < b <= c", {"a", "b", "c"}, set()),
        ("not done and (x or y)", {"done", "x", "y"}, set()),
        ("True", set(), set()),
        ("ceil(n / p) * floor(m) + round(x, 2) + int(y) + float(z)", {"n", "p", "m", "x", "y", "z"}, set()),
        ("match + case + type", {"match", "case", "type"}, set()),  # soft keywords are ordinary names
        (
            "mod + div",
            {"mod", "div"},
            set(),
        ),  # OCL operators only between operands  # soft keywords are ordinary names
        ("Größe * 2", {"Größe"}, set()),
    ],
)
def test_names_and_calls(text: str, names: set[str], calls: set[str]) -> None:
    expr = parse_expression(text)
    assert expr.text == text
    assert isinstance(expr.tree, ast.Expression)
    assert expr.names == names
    assert expr.calls == calls


@pytest.mark.parametrize(
    ("text", "python"),
    [
        # OCL, as UML tools suggest for guards
        ("x = 1", "x == 1"),
        ("x <> 1", "x != 1"),
        ("x<>1", "x != 1"),
        ("x >= 1 and y = 2", "x >= 1 and y == 2"),
        ("(x = 1) or (y = 2)", "x == 1 or y == 2"),
        ("GV == 1", "GV == 1"),
        ("x <= 1", "x <= 1"),
        ("true", "True"),
        ("false or flag", "False or flag"),
        ("n mod 2 = 0", "n % 2 == 0"),
        ("n div p + 1", "n // p + 1"),
        ("x.abs() < 1", "abs(x) < 1"),
        ("x.max(y).floor()", "floor(max(x, y))"),
        ("(n + 1).mod(p) <> 0", "(n + 1) % p != 0"),
        ("x.round() + y.min(2)", "round(x) + min(y, 2)"),
        # C / C++, as in the paper's generated code
        ("a && b", "a and b"),
        ("a || b", "a or b"),
        ("!a", "not a"),
        ("!(a != b)", "not a != b"),
        ("a&&!b||c", "a and (not b) or c"),
        ("!!a", "not not a"),
        # layout and lookalikes
        ("[x > 0]", "x > 0"),
        ("  n\n  * 2\t", "n * 2"),
        ("x\u00a0+\u00a01", "x + 1"),
        ("a \u2264 b", "a <= b"),
        ("a \u2260 b", "a != b"),
        ("a \u2212 b", "a - b"),
        ("2 \u00d7 n", "2 * n"),
    ],
)
def test_ocl_and_c_forms(text: str, python: str) -> None:
    assert python_of(text) == python


def test_equal_sign_is_not_converted_inside_strings_or_comparisons() -> None:
    assert python_of("a == b") == "a == b"
    assert python_of("a >= b") == "a >= b"
    assert python_of("a != b") == "a != b"


def test_powers_are_normalised() -> None:
    assert python_of("x ** 2") == "x ** 2"
    assert python_of("x ** -3") == "x ** (-3)"
    assert python_of("x ** y") == "pow(x, y)"
    assert python_of("x ** 0.5") == "pow(x, 0.5)"
    assert python_of("2 ** 2 ** 3") == "pow(2, 2 ** 3)"
    assert python_of("(x ** 2) ** 3") == "(x ** 2) ** 3"
    assert python_of("x ** 1024") == "x ** 1024"


def test_location_is_kept() -> None:
    expr = parse_expression("n * 2", LOC)
    assert expr.location == LOC


# ---------------------------------------------------------------------------
# Rejections
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("__import__('os')", ["call to '__import__' is not allowed", "only log, log2"]),
        ("__import__(x)", ["call to '__import__' is not allowed"]),
        ("open('x')", ["call to 'open' is not allowed"]),
        ("open(x)", ["call to 'open' is not allowed"]),
        ("eval(x)", ["call to 'eval' is not allowed"]),
        ("getattr(x, y)", ["call to 'getattr' is not allowed"]),
        ("().__class__", ["attribute access '().__class__' is not allowed"]),
        ("x.__class__", ["attribute access 'x.__class__' is not allowed"]),
        ("x.y", ["attribute access 'x.y' is not allowed"]),
        ("x[1]", ["subscript 'x[1]' is not allowed"]),
        ("x[1:2]", ["subscript"]),
        ("lambda: 1", ["'lambda' is not part of the expression language"]),
        ("(lambda x: x)(1)", ["'lambda' is not part of the expression language"]),
        ("[x for x in y]", ["'for'"]),
        ("(x for x in y)", ["'for'"]),
        ("'abc'", ["string", "numbers only"]),
        ('"abc" + x', ["string"]),
        ("b'abc'", ["bytes"]),
        ("f'{x}'", ["f-string"]),
        ("(x := 1)", ["':='"]),
        ("f(*x)", ["starred"]),
        ("f(x=1)", ["keyword argument 'x=...'"]),
        ("f(**x)", ["keyword argument"]),
        ("None", ["'None' is not part of the expression language"]),
        ("x if None else 1", ["'None'"]),
        ("1j", ["imaginary"]),
        ("(1, 2)", ["tuple"]),
        ("x + [1, 2]", ["list"]),
        ("[1, 2]", ["tuple"]),  # guard brackets are peeled first
        ("{1: 2}", ["dictionary"]),
        ("{1, 2}", ["set"]),
        ("...", ["not part of the expression language"]),
        (
            "x ^ 2",
            [
                "operator '^'",
            ],
        ),
        ("x & y", ["operator '&'"]),
        ("x | y", ["operator '|'"]),
        ("x << 2", ["operator '<<'"]),
        ("x >> 2", ["operator '>>'"]),
        ("x @ y", ["operator '@'"]),
        ("~x", ["operator '~'"]),
        ("x in y", ["operator 'in'"]),
        ("x is y", ["operator 'is'"]),
        ("x is not y", ["operator 'is'"]),
        ("x not in y", ["operator 'in'"]),
        ("9**9**9", ["exponent '9**9' too large (limit 1024)"]),
        ("10**100000", ["exponent '100000' too large (limit 1024)"]),
        ("2 ** -2000", ["exponent '-2000' too large"]),
        ("x ** 1025", ["exponent '1025' too large"]),
        ("x ** (2 ** 20)", ["exponent '2 ** 20' too large"]),
        ("x ** y ** z", ["nested power 'x ** y ** z'"]),
        ("(x ** 100) ** 100", ["raises to the power 10000"]),
        ("(9**1024 * 9**1024 * 9**1024) ** 1024", ["too large"]),
        ("1e999", ["out of range"]),
        ("1" * 400, ["too large"]),
        ("_x + 1", ["name '_x' is reserved"]),
        ("__builtins__", ["reserved"]),
        ("log + 1", ["'log' is a function: call it"]),
        ("pid(3)", ["'pid' is a system parameter, not a function"]),
        ("pi(2)", ["'pi' is a constant, not a function"]),
        ("f(x)(y)", ["only named functions can be called"]),
        ("sqrt()", ["sqrt() takes 1 argument, 0 given"]),
        ("log(1, 2, 3)", ["log() takes 1 or 2 arguments, 3 given"]),
        ("min(x)", ["min() takes at least 2 arguments, 1 given"]),
        ("pow(2, 3, 5)", ["pow() takes 2 arguments"]),
        ("a ? b : c", ["'? :'"]),
        ("if x > 0 then 1 else 2 endif", ["'if c then a else b endif'"]),
        ("x.abs(1)", ["'abs' takes 0 arguments"]),
        ("x.sqrt()", ["method call 'x.sqrt()' is not allowed"]),
        ("x.__class__()", ["method call"]),
        ("x if y", ["syntax error at column 1"]),
        ("1 +* 2", ["syntax error at column 4"]),
        ("(a + b", ["syntax error", "never closed"]),
        ("a b", ["syntax error"]),
        ("class + 1", ["'class' is not part of the expression language"]),
        ("import os", ["'import' is not part of the expression language"]),
        ("x = = 1", ["syntax error"]),
        ("yield x", ["'yield'"]),
        ("await x", ["'await'"]),
        ("", ["empty"]),
        ("   ", ["empty"]),
        ("a\x00b", ["U+0000"]),
        ("a\x1bb", ["U+001B"]),
        ("a $ b", ["syntax error"]),
        ("1if x else 2", ["syntax error"]),
    ],
)
def test_rejections(text: str, fragments: list[str]) -> None:
    with time_limit(5), pytest.raises(ExpressionError) as info:
        parse_expression(text, LOC, what="guard")
    error = info.value
    assert error.location == LOC
    assert error.message.startswith("guard "), error.message
    for fragment in fragments:
        assert fragment in error.message, (fragment, error.message)
    rendered = str(error)
    assert "model.uml:42" in rendered and "_a1" in rendered and "'A1'" in rendered


def test_syntax_error_column_points_into_the_users_text() -> None:
    # "<>" becomes "!=" and "&&" becomes " and ": the column still counts the original characters.
    with pytest.raises(ExpressionError, match="column 14"):
        parse_expression("a <> b && c +* 2")


def test_rejection_hints_say_what_to_write() -> None:
    with pytest.raises(ExpressionError) as info:
        parse_expression("a ? b : c")
    assert info.value.hint is not None and "a if c else b" in info.value.hint
    with pytest.raises(ExpressionError) as info:
        parse_expression("x ^ 2")
    assert info.value.hint is not None and "**" in info.value.hint


@pytest.mark.parametrize(
    "text",
    [
        "-" * 9999 + "1",
        "not " * 2400 + "x",
        "(" * 5000 + "1" + ")" * 4999,
        "+".join(["1"] * 4000),
        "*".join(["x"] * 4000),
        "f(" * 3000 + ")" * 3000,
        " if ".join(["1"] * 2000),
        "x**" * 3000 + "x",
        "[" * 3000,
    ],
)
def test_deeply_nested_input_is_refused_cleanly(text: str) -> None:
    assert len(text) <= MAX_TEXT_LENGTH
    with time_limit(10), pytest.raises(ExpressionError) as info:
        parse_expression(text)
    assert "RecursionError" not in info.value.message


def test_too_long_input_is_refused() -> None:
    with time_limit(5), pytest.raises(ExpressionError, match="too long"):
        parse_expression("1 + " * 5000 + "1")


def test_nesting_within_the_limits_is_fine() -> None:
    text = "(" * 50 + "x" + ")" * 50
    assert parse_expression(text).names == {"x"}
    text = " + ".join(f"x{i}" for i in range(MAX_DEPTH - 10))
    expr = parse_expression(text)
    assert len(expr.names) == MAX_DEPTH - 10


def test_non_text_input_is_refused() -> None:
    with pytest.raises(ExpressionError):
        parse_expression(None)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Code fragments
# ---------------------------------------------------------------------------


def test_paper_code_fragment() -> None:
    fragment = parse_code("GV = 1; P = 3.14;", LOC)
    assert fragment.assigned == ("GV", "P")
    assert fragment.names == frozenset()
    assert fragment.calls == frozenset()
    assert to_python(fragment, {"GV": "v.GV", "P": "v.P"}, indent="    ") == "    v.GV = 1\n    v.P = 3.14"


def test_code_fragment_names_are_reads_before_assignment() -> None:
    fragment = parse_code(
        "a = b + 1\nc = a * 2\nif c > limit:\n    d = F(a)\nelse:\n    d = 0\nf = d + c\nb += 1"
    )
    assert fragment.assigned == ("a", "c", "d", "f", "b")
    # b is read before it is assigned; a and c are assigned first; d is assigned in both branches.
    assert fragment.names == {"b", "limit"}
    assert fragment.calls == {"F"}


def test_code_fragment_conditional_assignment_is_not_definite() -> None:
    fragment = parse_code("if flag:\n    x = 1\ny = x")
    assert fragment.assigned == ("x", "y")
    assert fragment.names == {"flag", "x"}


def test_augmented_assignment_reads_its_target() -> None:
    fragment = parse_code("count += 1")
    assert fragment.assigned == ("count",)
    assert fragment.names == {"count"}


def test_chained_assignment() -> None:
    fragment = parse_code("a = b = 0")
    assert fragment.assigned == ("a", "b")
    assert to_python(fragment, {"a": "v.a", "b": "v.b"}) == "v.a = v.b = 0"


@pytest.mark.parametrize(
    ("text", "python"),
    [
        ("x = 1", "x = 1"),
        ("x = 1;", "x = 1"),
        ("x = 1;;", "x = 1"),
        ("x = n // p", "x = n // p"),
        ("x = n // p; // comment", "x = n // p"),
        ("x = 1 // one process", "x = 1"),
        ("// header comment\nx = 1", "x = 1"),
        ("x = 1; // it's (unbalanced\ny = 2", "x = 1\ny = 2"),
        ("x = a // b // c", "x = a // b // c"),
        ("x = (a // b)", "x = a // b"),
        ("x = f(a // 2) // 3 // set x", "x = f(a // 2) // 3"),
        ("x = 1  # Python comment // still a comment", "x = 1"),
        ("x++;", "x += 1"),
        ("x--", "x -= 1"),
        ("x = a ++b", "x = a + +b"),
        ("x = y == 1", "x = y == 1"),
        ("x = y <> 1 && !z", "x = y != 1 and (not z)"),
        ("flag = true", "flag = True"),
        ("x **= 2", "x **= 2"),
        ("x **= y", "x = pow(x, y)"),
        ("x = 1\n    y = 2\n  z = 3", "x = 1\ny = 2\nz = 3"),  # uneven indentation pasted from a UML tool
        ("    x = 1\n    y = 2", "x = 1\ny = 2"),
        # '=' in a condition is a comparison, as in a guard
        (
            "if a > 1:\n    x = 1\nelif a = 1:\n    x = 2\nelse:\n    x = 3",
            "if a > 1:\n    x = 1\nelif a == 1:\n    x = 2\nelse:\n    x = 3",
        ),
        ("if (GV = 1) { P = 3.14; }", "if GV == 1:\n    P = 3.14"),
        ("x = a if c = 1 else b", "x = a if c == 1 else b"),
        ("if a > 1: x = 1\nelse: x = 2", "if a > 1:\n    x = 1\nelse:\n    x = 2"),
        ("if (a > 1) { x = 1; } else { x = 2; }", "if a > 1:\n    x = 1\nelse:\n    x = 2"),
        (
            "if (a > 1) {\n  x = 1;\n  y = 2;\n} else if (a == 1) {\n  x = 2;\n} else {\n  x = 3;\n}\nz = x;",
            "if a > 1:\n    x = 1\n    y = 2\nelif a == 1:\n    x = 2\nelse:\n    x = 3\nz = x",
        ),
        ("if (a) x = 1; else x = 2;", "if a:\n    x = 1\nelse:\n    x = 2"),
        ("if (a) { if (b) { x = 1; } }", "if a:\n    if b:\n        x = 1"),
        ("if (a) { }", "if a:\n    pass"),
        ("pass", "pass"),
    ],
)
def test_code_fragment_forms(text: str, python: str) -> None:
    assert ast.unparse(parse_code(text).tree) == python


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("pid = 3", ["cannot assign to system parameter 'pid'"]),
        ("NP = 3", ["cannot assign to system parameter 'NP'"]),
        ("log = 3", ["cannot assign to built-in function 'log'"]),
        ("pi = 3", ["cannot assign to built-in constant 'pi'"]),
        ("_x = 3", ["name '_x' is reserved"]),
        ("x.y = 3", ["cannot assign to 'x.y'"]),
        ("x[0] = 3", ["cannot assign to 'x[0]'"]),
        ("a, b = 1, 2", ["cannot assign to"]),
        ("x: int = 3", ["annotated assignment"]),
        ("x == 1", ["has no effect"]),
        ("f(x)", ["has no effect"]),
        ("for i in range(3): x = i", ["'for' loops are not part"]),
        ("while x: x = 1", ["'while' loops are not part"]),
        ("import os", ["'import' is not part"]),
        ("del x", ["'del' is not part"]),
        ("def f(): pass", ["'def' is not part"]),
        ("x = open('f')", ["call to 'open' is not allowed"]),
        ("x = y.z", ["attribute access 'y.z'"]),
        ("x = 9**9**9", ["exponent '9**9' too large"]),
        ("x <<= 1", ["operator '<<='"]),
        ("if (a) { x = 1;", ["never closed"]),
        ("x = 1; }", ["unmatched '}'"]),
        ("if a { x = 1; }", ["expected '('"]),
        ("x = 1\ny = ", ["syntax error at line 2"]),
        ("x = (a ? 1 : 2)", ["'? :'"]),
        ("x = None", ["'None'"]),
        ("return x", ["'return'"]),
        ("x = lambda: 1", ["'lambda'"]),
    ],
)
def test_code_fragment_rejections(text: str, fragments: list[str]) -> None:
    with time_limit(5), pytest.raises(ExpressionError) as info:
        parse_code(text, LOC)
    assert info.value.location == LOC
    assert info.value.message.startswith("code fragment ")
    for fragment in fragments:
        assert fragment in info.value.message, (fragment, info.value.message)


def test_code_fragment_equality_hint() -> None:
    with pytest.raises(ExpressionError) as info:
        parse_code("x == 1")
    assert info.value.hint is not None and "'='" in info.value.hint


def test_deep_code_fragment_is_refused_cleanly() -> None:
    text = "".join("    " * i + "if a:\n" for i in range(300)) + "    " * 300 + "x = 1"
    with time_limit(10), pytest.raises(ExpressionError):
        parse_code(text[:MAX_TEXT_LENGTH])
    with time_limit(10), pytest.raises(ExpressionError):
        parse_code("if (a) {" * 1000 + "x = 1;" + "}" * 1000)


# ---------------------------------------------------------------------------
# Function bodies
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "32 / (pid + 1)",
        "return 32 / (pid + 1)",
        "return 32 / (pid + 1);",
        "{ return 32 / (pid + 1); }",
        "{\n  return 32 / (pid + 1);\n}\n",
        "  return(32 / (pid + 1));  ",
    ],
)
def test_function_body_forms(text: str) -> None:
    expr = parse_function_body(text, ["pid"], LOC)
    assert ast.unparse(expr.tree) == "32 / (pid + 1)"
    assert expr.names == {"pid"}
    assert expr.location == LOC


def test_function_body_reads_globals_and_parameters() -> None:
    expr = parse_function_body("return n * t_flop / P", ["n"])
    assert expr.names == {"n", "t_flop", "P"}
    assert to_python(expr, {"n": "n", "t_flop": "v.t_flop", "P": "v.P"}) == "n * v.t_flop / v.P"


def test_returnvalue_is_not_a_return_keyword() -> None:
    expr = parse_function_body("returnValue * 2", [])
    assert expr.names == {"returnValue"}


@pytest.mark.parametrize(
    ("body", "parameters", "fragment"),
    [
        ("return", [], "empty function body"),
        ("{ }", [], "empty function body"),
        ("return x", ["log"], "would hide the built-in 'log'"),
        ("return x", ["_x"], "reserved"),
        ("return x", ["class"], "not a valid identifier"),
        ("return x", ["a b"], "not a valid identifier"),
        ("return x", ["x", "x"], "declared more than once"),
        ("return x.y", ["x"], "attribute access"),
        ("x = 1; return x", [], "'return' is only allowed at the start"),
    ],
)
def test_function_body_rejections(body: str, parameters: list[str], fragment: str) -> None:
    with pytest.raises(ExpressionError) as info:
        parse_function_body(body, parameters, LOC)
    assert fragment in info.value.message
    assert info.value.location == LOC


# ---------------------------------------------------------------------------
# to_python
# ---------------------------------------------------------------------------


def test_to_python_exact_strings() -> None:
    expr = parse_expression("FSA2(pid) + 121 / P")
    assert (
        to_python(expr, {"pid": "p.pid", "P": "v.P"}, {"FSA2": ["p", "v"]}) == "FSA2(p, v, p.pid) + 121 / v.P"
    )

    expr = parse_expression("GV = 1")
    assert to_python(expr, {"GV": "v.GV"}) == "v.GV == 1"

    expr = parse_expression("x <> NP && !done")
    assert (
        to_python(expr, {"x": "v.x", "NP": "p.nprocs", "done": "v.done"})
        == "v.x != p.nprocs and (not v.done)"
    )

    expr = parse_expression("log2(NUM_PROCESSES) * (a ** b) + pi")
    assert (
        to_python(expr, {"NUM_PROCESSES": "p.nprocs", "a": "a", "b": "b"})
        == "log2(p.nprocs) * pow(a, b) + pi"
    )

    expr = parse_expression("-(x ** 2) if c else F(G(x), 1)")
    got = to_python(expr, {"x": "v.x", "c": "v.c"}, {"F": ["p", "v"], "G": ["p", "v"]})
    assert got == "-v.x ** 2 if v.c else F(p, v, G(p, v, v.x), 1)"


def test_to_python_code_fragment_with_indent() -> None:
    fragment = parse_code("if (GV = 1) { P = P * 2; } else { P = F(pid); }")
    out = to_python(
        fragment, {"GV": "v.GV", "P": "v.P", "pid": "p.pid"}, {"F": ["p", "v"]}, indent="        "
    )
    assert out == (
        "        if v.GV == 1:\n"
        "            v.P = rt.bounded(v.P * 2)\n"
        "        else:\n"
        "            v.P = rt.bounded(F(p, v, p.pid))"
    )


def test_to_python_renames_functions_when_asked() -> None:
    expr = parse_expression("F(x)")
    assert to_python(expr, {"x": "x"}, function_names={"F": "cf_F"}) == "cf_F(x)"


def test_to_python_needs_every_name() -> None:
    with pytest.raises(KeyError):
        to_python(parse_expression("a + b"), {"a": "v.a"})


@pytest.mark.parametrize("bad", ["v.a + 1", "__import__('os')", "v[0]", "v.class", "", "a;b"])
def test_to_python_refuses_replacements_that_are_not_names(bad: str) -> None:
    with pytest.raises(ValueError):
        to_python(parse_expression("a"), {"a": bad})


def test_to_python_is_deterministic_and_emitted_from_the_tree() -> None:
    texts = ["x <> 1 && y", "x != 1 and y", "x<>1&&y"]
    outputs = {to_python(parse_expression(t), {"x": "v.x", "y": "v.y"}) for t in texts}
    assert outputs == {"v.x != 1 and v.y"}


def test_to_python_leaves_the_parsed_form_unchanged() -> None:
    expr = parse_expression("F(x) + y * 2")
    before = ast.dump(expr.tree)
    to_python(expr, {"x": "v.x", "y": "v.y"}, {"F": ["p", "v"]})
    assert ast.dump(expr.tree) == before
    fragment = parse_code("if x > 1:\n    y = F(x)")
    before = ast.dump(fragment.tree)
    to_python(fragment, {"x": "v.x", "y": "v.y"}, {"F": ["p", "v"]})
    assert ast.dump(fragment.tree) == before
    assert compile_expression(expr, ["x", "y"], functions={"F": abs})(-2, 3) == 8


def test_to_python_output_compiles() -> None:
    expr = parse_expression("FSA2(pid) + (x if x > 0 else -x) ** 2 + max(a, b, c) / 3e-3")
    source = to_python(expr, v_rename(expr), {"FSA2": ["p", "v"]})
    compile(source, "<test>", "eval")


# ---------------------------------------------------------------------------
# compile_expression, evaluate, constants
# ---------------------------------------------------------------------------


def test_compile_expression_scalar() -> None:
    expr = parse_expression("a * 2 + (b if a > 1 else c) ** 2 + min(a, b) + log(8, 2)")
    fn = compile_expression(expr, ["a", "b", "c"])
    for a, b, c in [(2, 3, 4), (0.5, -1.0, 7.0), (1, 1, 1)]:
        reference = a * 2 + (b if a > 1 else c) ** 2 + min(a, b) + math.log(8, 2)
        assert fn(a, b, c) == pytest.approx(reference)


def test_compile_expression_integer_semantics() -> None:
    fn = compile_expression(parse_expression("n // p + n % p + ceil(n / p) + floor(n / p)"), ["n", "p"])
    assert fn(7, 2) == 3 + 1 + 4 + 3
    assert isinstance(fn(7, 2), int)


def test_compile_expression_with_named_functions() -> None:
    expr = parse_expression("FA1() + FSA2(pid)")
    fn = compile_expression(
        expr, ["pid"], functions={"FA1": lambda: 10.0, "FSA2": lambda pid: 32 / (pid + 1)}
    )
    assert fn(3) == pytest.approx(18.0)


def test_compile_expression_argument_names_cannot_shadow_the_library() -> None:
    # A variable may be called like nothing in the library, but the library is
    # reached under reserved names, so even unusual arguments cannot break calls.
    expr = parse_expression("sqrt(x) + e")
    fn = compile_expression(expr, ["x", "sqrt_", "pow_"])
    assert fn(4.0, 0, 0) == pytest.approx(2 + math.e)


def test_compiled_code_has_no_builtins() -> None:
    fn = compile_expression(parse_expression("x + 1"), ["x"])
    assert fn.__globals__["__builtins__"] == {}
    assert not any(k for k in fn.__globals__ if not k.startswith("_"))


def test_compile_expression_errors() -> None:
    expr = parse_expression("a + F(b)", LOC)
    with pytest.raises(ExpressionError, match="unknown name 'b'") as info:
        compile_expression(expr, ["a"], functions={"F": abs})
    assert info.value.location == LOC
    with pytest.raises(ExpressionError, match="unknown function 'F'"):
        compile_expression(expr, ["a", "b"])
    with pytest.raises(ValueError):
        compile_expression(expr, ["a", "b", "_secret"], functions={"F": abs})
    with pytest.raises(ValueError):
        compile_expression(expr, ["a", "b", "a"], functions={"F": abs})


def test_compile_expression_runtime_power_is_bounded() -> None:
    fn = compile_expression(parse_expression("x ** y"), ["x", "y"])
    assert fn(2, 10) == 1024
    assert fn(2.0, 0.5) == pytest.approx(math.sqrt(2))
    with time_limit(5), pytest.raises(ValueError, match="limited"):
        fn(9, 9**9)
    with pytest.raises(ValueError, match="too large for a float"):
        fn(10.0, 400)
    with pytest.raises(ValueError, match="no real value"):
        fn(-8, 1 / 3)


def test_compile_expression_vectorised_agrees_with_scalar() -> None:
    text = (
        "(a * 2 + b ** 2 if a > b and not (b < 0) or a == 0 else min(a, b, 1) - max(a, 2))"
        " + ceil(a) + log(a + 1)"
    )
    expr = parse_expression(text)
    scalar = compile_expression(expr, ["a", "b"])
    vector = compile_expression(expr, ["a", "b"], vectorised=True)
    a = np.array([0.0, 0.5, 1.5, 2.0, 3.0, -0.5])
    b = np.array([1.0, -2.0, 1.0, 2.0, 0.5, -1.0])
    got = vector(a, b)
    expected = [scalar(float(x), float(y)) for x, y in zip(a, b, strict=True)]
    assert np.allclose(got, expected)


def test_compile_expression_vectorised_chained_comparison_and_or() -> None:
    expr = parse_expression("(1 < x <= 3) or (x > 10 and y)")
    vector = compile_expression(expr, ["x", "y"], vectorised=True)
    x = np.array([0, 2, 3, 4, 11, 12])
    y = np.array([1, 1, 1, 1, 0, 5])
    assert list(vector(x, y)) == [0, 1, 1, 0, 0, 5]


def test_compile_expression_vectorised_division_by_zero_gives_inf() -> None:
    vector = compile_expression(parse_expression("1 / x if x != 0 else 0"), ["x"], vectorised=True)
    assert list(vector(np.array([0.0, 2.0]))) == [0.0, 0.5]


def test_evaluate() -> None:
    assert evaluate("2 ** 10 + 1", {}) == 1025
    assert evaluate("x = 1", {"x": 1}) is True
    assert evaluate(parse_expression("a / b"), {"a": 1, "b": 4}) == 0.25
    assert evaluate("F(2)", {}, functions={"F": lambda x: x * 3}) == 6
    with pytest.raises(ExpressionError, match="division by zero"):
        evaluate("a / b", {"a": 1, "b": 0})
    with pytest.raises(ExpressionError, match="unknown name 'b'"):
        evaluate("a / b", {"a": 1})
    with pytest.raises(ExpressionError, match="limited"):
        evaluate("x ** y", {"x": 9, "y": 10**6})
    with pytest.raises(ExpressionError, match="math domain error"):
        evaluate("sqrt(x)", {"x": -1})


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3", 3),
        ("-1", -1),
        ("3.14", 3.14),
        ("1e6", 1e6),
        ("2**10", 1024),
        ("true", True),
        ("false", False),
        ("log2(1024)", 10.0),
        ("pi", math.pi),
        ("-e", -math.e),
        ("(1 + 2) * 3", 9),
        ("min(1, 2)", 1),
    ],
)
def test_constant_value(text: str, value: object) -> None:
    assert is_constant(text)
    assert constant_value(text) == value
    assert type(constant_value(text)) is type(value)


def test_non_constants() -> None:
    assert not is_constant("x + 1")
    assert not is_constant(parse_expression("F()"))
    with pytest.raises(ExpressionError, match="is not a constant: it uses 'x'"):
        constant_value("x + 1")


# ---------------------------------------------------------------------------
# The function library
# ---------------------------------------------------------------------------


def test_library_scalar_functions() -> None:
    assert lib.log(math.e) == pytest.approx(1.0)
    assert lib.log(8, 2) == pytest.approx(3.0)
    assert lib.log2(1024) == 10.0
    assert lib.log10(1000) == pytest.approx(3.0)
    assert lib.sqrt(16) == 4.0
    assert lib.exp(0) == 1.0
    assert lib.ceil(2.1) == 3 and isinstance(lib.ceil(2.1), int)
    assert lib.floor(-2.1) == -3 and isinstance(lib.floor(-2.1), int)
    assert lib.min(3, 1, 2) == 1 and lib.max(3, 1, 2) == 3
    assert lib.abs(-2) == 2
    assert lib.int(3.9) == 3 and lib.float(2) == 2.0 and lib.round(2.5) == 2 and lib.round(1.234, 2) == 1.23
    assert lib.pi == math.pi and lib.e == math.e


def test_library_pow() -> None:
    assert lib.pow(2, 10) == 1024
    assert lib.pow(2, -1) == 0.5
    assert lib.pow(-2, 3) == -8
    assert lib.pow(1, 10**12) == 1
    assert lib.pow(-1, 10**12 + 1) == -1
    assert lib.pow(0, 10**12) == 0
    assert lib.pow(2, 8000) == 2**8000
    with time_limit(5):
        with pytest.raises(ValueError, match="limited to 8192 bits"):
            lib.pow(9, 9**9)
        with pytest.raises(ValueError, match="too large for a float"):
            lib.pow(1.5, 10**6)
    with pytest.raises(ValueError, match="no real value"):
        lib.pow(-8.0, 0.5)
    with pytest.raises(ZeroDivisionError):
        lib.pow(0, -1)


def test_library_vector_functions() -> None:
    v = lib.VECTOR
    x = np.array([1.0, 4.0, 9.0])
    assert np.allclose(v["sqrt"](x), [1, 2, 3])
    assert np.allclose(v["log"](x, 3), np.log(x) / np.log(3))
    assert list(v["min"](x, 5.0, np.array([2.0, 2.0, 10.0]))) == [1.0, 2.0, 5.0]
    assert list(v["max"](x, 5.0)) == [5.0, 5.0, 9.0]
    assert list(v["ceil"](np.array([1.2, -1.2]))) == [2.0, -1.0]
    assert list(v["int"](np.array([1.7, -1.7]))) == [1.0, -1.0]
    assert list(v["pow"](np.array([2, 3]), -1)) == [0.5, 1 / 3]
    assert v["pi"] == math.pi
    assert set(BUILTIN_FUNCTIONS) <= set(v)


def test_library_imports_neither_numpy_eagerly_nor_generator_dependencies() -> None:
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('functions_under_test', {str(RUNTIME_FUNCTIONS)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "assert module.sqrt(4) == 2.0\n"
        "loaded = {'numpy', 'lxml', 'jinja2', 'uml2perf'} & {m.split('.')[0] for m in sys.modules}\n"
        "assert not loaded, loaded\n"
        "module.VECTOR['sqrt']\n"
        "assert 'numpy' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_vectorised_functions_take_booleans_as_numbers() -> None:
    """``-(abs(not 0))`` is -1 in Python; the numpy versions must agree on boolean arrays."""
    import numpy as np

    from uml2perf.expressions import compile_expression, parse_expression

    expr = parse_expression("-(abs(not x)) + max(x > 1, 0)")
    vector = compile_expression(expr, ["x"], vectorised=True)
    scalar = compile_expression(expr, ["x"])
    values = np.array([0.0, 2.0])
    assert list(vector(values)) == [scalar(0.0), scalar(2.0)] == [-1, 1]
