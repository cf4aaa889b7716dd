"""Python source for generated modules, printed from validated trees.

Printing goes through a template made once per parsed tree: the tree is
printed with every renamable name, every called cost function and the place
of every call's leading arguments marked by control characters, which no
validated name can contain; each call of :func:`to_python` only fills the
marks in.  A replacement is a name or a dotted name, which is atomic wherever
a name is, so filling in never changes precedence.

The printer covers exactly the validated language and prints what
:func:`ast.unparse` prints (same parentheses, spacing and ``elif`` folding;
tests/test_expressions_fast_path.py compares the two on random trees) at a
fraction of its cost.  Values a code fragment assigns are wrapped in the
runtime's ``rt.bounded`` so that no fragment can grow an integer without
bound.
"""

from __future__ import annotations

import ast
import keyword
import re
import sys
import weakref
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from .forms import CodeFragment, Expression
from .vocabulary import BUILTIN_FUNCTIONS, CONSTANTS

__all__ = ["Printer", "fill", "library_names", "to_python"]


_MARKS = re.compile("\x00([^\x00]*)\x00|\x01([^\x01]*)\x01|\x02([^\x02]*)\x02(, )?")


class _Template:
    """Marked source of a validated tree, and the library names it uses as they are."""

    __slots__ = ("text", "library")

    def __init__(self, text: str, library: frozenset[str]) -> None:
        self.text = text
        self.library = library


_TEMPLATES: weakref.WeakKeyDictionary[ast.AST, _Template] = weakref.WeakKeyDictionary()


def _template(tree: ast.Expression | ast.Module) -> _Template:
    """The template of a validated tree, made on first use and kept as long as the tree lives."""
    found = _TEMPLATES.get(tree)
    if found is None:
        printer = Printer()
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
_COMPARISON_FORMS: Mapping[type, str] = MappingProxyType(
    {
        ast.Eq: " == ",
        ast.NotEq: " != ",
        ast.Lt: " < ",
        ast.LtE: " <= ",
        ast.Gt: " > ",
        ast.GtE: " >= ",
    }
)
_BOOLEAN_FORMS: Mapping[type, tuple[str, int]] = MappingProxyType(
    {ast.And: (" and ", _AND), ast.Or: (" or ", _OR)}
)
_INFINITY = "1e" + repr(sys.float_info.max_10_exp + 1)


class Printer:
    """Source text of validated trees, with names and cost function calls marked for :func:`fill`."""

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
            for op, operand in zip(node.ops, node.comparators, strict=True):
                out.append(_COMPARISON_FORMS[type(op)])
                self.expr(operand, _EXPR)
            self.close(context > _CMP)
        elif kind is ast.BoolOp:
            assert isinstance(node, ast.BoolOp)
            symbol, strength = _BOOLEAN_FORMS[type(node.op)]
            self.open(context > strength)
            for index, operand in enumerate(node.values):
                if index:
                    out.append(symbol)
                # as ast.unparse: each further operand binds one level more tightly
                self.expr(operand, min(strength + index + 1, _ATOM))
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
            assert isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name)
            self.line(level)
            self.expr(node.target, _ATOM)
            self.out.append(" = ")
            self.bounded(
                ast.BinOp(left=ast.Name(id=node.target.id, ctx=ast.Load()), op=node.op, right=node.value)
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


def fill(
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
    source = fill(_template(node.tree).text, rename, leading_args or {}, function_names or {})
    if isinstance(node, Expression):
        return indent + source
    if not indent:
        return source
    return "\n".join(indent + line for line in source.split("\n"))
