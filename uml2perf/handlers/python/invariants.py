"""Which printed call arguments are the same at every call in one run of a generated function.

A send or receive whose arguments all are becomes a call site made once at the start of the
function (``p.send_site(...)``, ``runtime/engine/sites.py``).  Making the site evaluates the
arguments there, before any statement of the function, so an argument qualifies only when
evaluating it earlier can change nothing: it has the same value, and it cannot raise.  That
holds for

* whole-number literals and the system parameters (``p.pid``, ``p.nprocs``, ...), which a
  context keeps for its whole life, combined with ``+``, ``-``, unary minus and ``*`` (on whole
  numbers these never raise) and with ``%`` or ``//`` by a positive system parameter or a
  non-zero literal (``(p.pid + 1) % p.nprocs``);
* a model variable alone (``v.SIZE``) that no statement of the model assigns after
  ``init_globals``: neither a code fragment nor an activity's local variables.  A variable is
  never combined with anything: its type is the model's (a ``--set`` value), so arithmetic on
  it could raise where the call would have.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from functools import lru_cache

#: attributes of ``p`` that are the same for the whole run of a function (its context's identity)
SYSTEM_ATTRIBUTES = frozenset({"pid", "nprocs", "tid", "nthreads", "uid", "node", "nnodes", "ppn"})
#: those of them that are at least 1, so dividing by them cannot fail
POSITIVE_ATTRIBUTES = frozenset({"nprocs", "nthreads", "nnodes", "ppn"})


def invariant(text: str, constants: Collection[str]) -> bool:
    """True when the printed argument ``text`` qualifies (see the module docstring); ``constants``
    are the model variables nothing assigns after ``init_globals``."""
    tree = _parse(text)
    if tree is None:
        return False
    name = _variable(tree)
    if name is not None:
        return name in constants
    return _arithmetic(tree)


@lru_cache(maxsize=4096)
def _parse(text: str) -> ast.expr | None:
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError:  # pragma: no cover - the printer writes valid Python
        return None


def _variable(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "v":
        return node.attr
    return None


def _system(node: ast.expr, allowed: frozenset[str] = SYSTEM_ATTRIBUTES) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "p"
        and node.attr in allowed
    )


def _number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _arithmetic(node: ast.expr) -> bool:
    if _number(node) or _system(node):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _arithmetic(node.operand)
    if not isinstance(node, ast.BinOp):
        return False
    if isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
        return _arithmetic(node.left) and _arithmetic(node.right)
    if isinstance(node.op, (ast.Mod, ast.FloorDiv)):
        right = node.right
        divisor = _system(right, POSITIVE_ATTRIBUTES) or (_number(right) and right.value != 0)  # type: ignore[attr-defined]
        return divisor and _arithmetic(node.left)
    return False
