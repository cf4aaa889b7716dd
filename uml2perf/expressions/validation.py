"""The whitelist of the expression language: every node outside it refused, every power bounded.

A parsed tree is walked once.  Nodes outside the language are refused with a
message that quotes the offending text and says what to write instead;
names read and cost functions called are collected; code fragments get a
definite-assignment pass that finds the names they need from outside.

Powers are the one construct of the language that can hang Python
(``9**9**9`` is computed exactly).  Literal exponents beyond
:data:`~uml2perf.expressions.vocabulary.MAX_EXPONENT` and power towers are
refused; every other power becomes a call of the runtime's bounded ``pow``
(runtime/functions.py), so what remains as ``**`` in a tree always has a
small integer literal exponent.  OCL operations written as methods
(``x.abs()``, ``i.mod(2)``) become calls and operators here as well.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from uml2perf.errors import ExpressionError

from .compilation import compile_tree, instantiate
from .source import Context, Source, quote, shorten
from .vocabulary import (
    ARITY,
    BUILTIN_FUNCTIONS,
    CODE_HINT,
    CONSTANTS,
    EXPONENT_HINT,
    FORBIDDEN_CALLS,
    FUNCTION_LIST,
    LANGUAGE_HINT,
    MAX_DEPTH,
    MAX_EXPONENT,
    MAX_LITERAL,
    MAX_STATIC_BITS,
    OCL_METHODS,
    SPLIT_HINT,
    SYSTEM_PARAMETERS,
)

__all__ = ["Flow", "Validator"]

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
        ast.MatMult: ("@", LANGUAGE_HINT),
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
        ast.TryStar: "'try' is not part of code fragments",
        ast.Assert: "'assert' is not part of code fragments",
        ast.Global: "'global' is not part of code fragments",
        ast.Nonlocal: "'nonlocal' is not part of code fragments",
        ast.Break: "'break' is not part of code fragments",
        ast.Continue: "'continue' is not part of code fragments",
        ast.Match: "'match' is not part of code fragments",
        ast.AnnAssign: "annotated assignment {src} is not allowed: types come from the model",
    }
)


class Validator:
    """Walk a parsed tree, refuse everything outside the language, collect names and calls.

    The walk stops at :data:`MAX_DEPTH`, so its own recursion stays far below
    Python's limit whatever the parser accepted.  Each node costs one lookup of
    its type in :data:`Validator.HANDLERS`.
    """

    def __init__(self, ctx: Context, source: Source) -> None:
        self.ctx = ctx
        self.source = source
        self.calls: set[str] = set()
        #: Whether nodes without source positions were added (pow() calls,
        #: OCL operations); only then must positions be filled in.
        self.synthesised = False

    def fail(self, problem: str, hint: str | None = LANGUAGE_HINT) -> ExpressionError:
        return self.ctx.error(problem, hint)

    def src(self, node: ast.expr | ast.stmt) -> str:
        """The user's text of ``node``, quoted for a message."""
        return quote(shorten(self.source.segment(node), 60))

    # -- expressions ------------------------------------------------------
    def expr(self, node: ast.expr, depth: int, reads: list[str]) -> ast.expr:
        """Validate ``node``; append free names read to ``reads``; return the normalised node."""
        if depth > MAX_DEPTH:
            raise self.fail(
                f"nested too deeply (more than {MAX_DEPTH} levels; each operator of a chain such as "
                "a + b + c counts as one)",
                SPLIT_HINT,
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
            if value >= MAX_LITERAL:
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
            sym, hint = _REJECTED_OPERATORS.get(type(node.op), ("?", LANGUAGE_HINT))
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
                    f"exponent {self.src(exponent)} too large (limit {MAX_EXPONENT})", EXPONENT_HINT
                )
        elif literal is not None and abs(literal) > MAX_EXPONENT:
            raise self.fail(f"exponent {self.src(exponent)} too large (limit {MAX_EXPONENT})", EXPONENT_HINT)
        elif literal is None and _is_power(exponent):
            raise self.fail(
                f"nested power {self.src(node)} is not allowed",
                "power towers grow beyond any machine; "
                "write the exponent as a separate expression or use pow()",
            )
        if literal is not None:
            growth = abs(literal) * _power_growth(node.left)
            if growth > MAX_EXPONENT:
                raise self.fail(
                    f"nested power {self.src(node)} raises to the power {growth} (limit {MAX_EXPONENT})",
                    EXPONENT_HINT,
                )
            if _bits(node) > MAX_STATIC_BITS:
                raise self.fail(
                    f"power {self.src(node)} is too large: its integer value could need more than "
                    f"{MAX_STATIC_BITS} bits",
                    "use a float base (e.g. 10.0 instead of 10) or a smaller exponent",
                )
            return node
        self.synthesised = True
        call = ast.Call(func=ast.Name(id="pow", ctx=ast.Load()), args=[node.left, node.right], keywords=[])
        return ast.copy_location(call, node)

    def call(self, node: ast.Call, d: int, reads: list[str]) -> ast.expr:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in OCL_METHODS and not node.keywords:
            return self.expr(self.ocl_method(node, func), d, reads)
        if isinstance(func, ast.Attribute):
            raise self.fail(
                f"method call {self.src(node)} is not allowed",
                f"call functions by name, e.g. {func.attr}(x)"
                if func.attr in BUILTIN_FUNCTIONS
                else LANGUAGE_HINT,
            )
        if not isinstance(func, ast.Name):
            raise self.fail(
                f"call {self.src(node)} is not allowed: only named functions can be called",
                f"call one of {FUNCTION_LIST} or a cost function of the model by its name",
            )
        ident = func.id
        if ident.startswith("_") or ident in FORBIDDEN_CALLS:
            raise self.fail(
                f"call to {ident!r} is not allowed: "
                f"only {FUNCTION_LIST} and the model's cost functions can be called",
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
            low, high = ARITY[ident]
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
        """OCL's operations on numbers (``x.abs()``, ``x.max(y)``, ``i.mod(2)``) as calls and operators."""
        name, arity = func.attr, OCL_METHODS[func.attr]
        self.synthesised = True
        if len(node.args) != arity:
            raise self.fail(
                f"{self.src(node)}: the OCL operation '{name}' takes "
                f"{arity} argument{'s' if arity != 1 else ''}",
                None,
            )
        if name in ("mod", "div"):
            op: ast.operator = ast.Mod() if name == "mod" else ast.FloorDiv()
            return ast.copy_location(ast.BinOp(left=func.value, op=op, right=node.args[0]), node)
        call = ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=[func.value, *node.args], keywords=[])
        return ast.copy_location(call, node)

    #: Node type -> method validating it: every expression node of the language.
    HANDLERS: ClassVar[Mapping[type, Callable[..., ast.expr]]] = MappingProxyType(
        {
            ast.Constant: _constant,
            ast.Name: _name,
            ast.BinOp: binop,
            ast.UnaryOp: _unary,
            ast.BoolOp: _boolean,
            ast.Compare: _compare,
            ast.IfExp: _conditional,
            ast.Call: call,
        }
    )

    # -- statements -------------------------------------------------------
    def statements(self, body: list[ast.stmt], depth: int, state: Flow) -> list[ast.stmt]:
        if not body:
            return body
        return [self.statement(stmt, depth, state) for stmt in body]

    def statement(self, node: ast.stmt, depth: int, state: Flow) -> ast.stmt:
        if depth > MAX_DEPTH:
            raise self.fail(f"nested too deeply (more than {MAX_DEPTH} levels)", "split the fragment")
        d = depth + 1
        if isinstance(node, ast.Assign):
            targets = [self.target(target, node) for target in node.targets]
            reads: list[str] = []
            node.value = self.expr(node.value, d, reads)
            state.read(reads)
            for name in targets:
                state.assign(name)
            return node
        if isinstance(node, ast.AugAssign):
            if type(node.op) not in _BINARY_OPERATORS:
                sym, hint = _REJECTED_OPERATORS.get(type(node.op), ("?", CODE_HINT))
                raise self.fail(f"operator '{sym}=' in {self.src(node)} is not allowed", hint)
            name = self.target(node.target, node)
            reads = []
            node.value = self.expr(node.value, d, reads)
            if isinstance(node.op, ast.Pow):
                return self.augmented_power(node, d, reads, state)
            state.read([name, *reads])
            state.assign(name)
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
            hint = CODE_HINT
            if isinstance(value, ast.Compare) and len(value.ops) == 1 and isinstance(value.ops[0], ast.Eq):
                hint = "write '=' (not '==') to assign a value in a code fragment"
            raise self.fail(problem, hint)
        template = _REJECTED_STATEMENTS.get(type(node))
        if template is not None:
            hint = (
                "model loops with a loop+ node or a 'repeat' tag"
                if isinstance(node, (ast.For, ast.While))
                else CODE_HINT
            )
            raise self.fail(template.format(src=self.src(node)), hint)
        raise self.fail(f"statement {self.src(node)} is not part of code fragments", CODE_HINT)

    def augmented_power(self, node: ast.AugAssign, d: int, reads: list[str], state: Flow) -> ast.stmt:
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

    def target(self, target: ast.expr, stmt: ast.stmt) -> str:
        """The name an assignment writes, refused unless it is a model variable."""
        if not isinstance(target, ast.Name):
            raise self.fail(
                f"cannot assign to {self.src(target)}: assignment targets must be plain variable names",
                CODE_HINT,
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
        return ident


class Flow:
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

    def branch(self) -> Flow:
        return Flow(self.assigned, set(self.definite), self.needed)

    def join(self, a: Flow, b: Flow) -> None:
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
        fn = compile_tree(node, (), vectorised=False)
        return instantiate(fn, {}, vectorised=False)()
    except (ArithmeticError, ValueError, TypeError):
        return None
