"""Validated expressions compiled into plain Python functions, for tools and the analytic path.

A compiled expression costs what the same formula written in Python costs.
It is compiled from the validated tree, never from text, into a function
whose globals hold nothing but the function library of
runtime/functions.py (no builtins).  The vectorised form works elementwise
on numpy arrays of parameter values.
"""

from __future__ import annotations

import ast
import keyword
from collections.abc import Callable, Mapping, Sequence
from types import CodeType
from typing import Any

from uml2perf_runtime import functions as _library

from .forms import Expression
from .source import Context
from .vocabulary import BUILTIN_FUNCTIONS, CONSTANTS

__all__ = ["compile_expression", "compile_tree", "instantiate"]


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
        value = node.value
        if self.vectorised and isinstance(value, (int, float)) and not isinstance(value, bool):
            # numpy scalars, so that constant parts also give inf/nan instead of raising
            return _call("_b_float64", [ast.Constant(value=float(value))])
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


def compile_tree(node: ast.expr, argnames: tuple[str, ...], *, vectorised: bool) -> CodeType:
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


def instantiate(
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
    ctx = Context("expression", expr.text, expr.location)
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
    code = compile_tree(expr.tree.body, argnames, vectorised=vectorised)
    fn = instantiate(code, {name: functions[name] for name in expr.calls}, vectorised=vectorised)
    fn.__doc__ = expr.text
    return fn
