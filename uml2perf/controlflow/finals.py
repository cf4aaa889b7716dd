"""Final nodes that end more than the function they sit in.

UML ends the whole activity at an ActivityFinal (a structured node, when the
final belongs to it), every concurrent branch included.  In generated code a
fork branch, a pipeline stage or a thread body is a function of its own whose
``return`` ends that function alone, so such a final must set its scope's end
flag before it returns; every construct on the way out checks the flag after
its runtime call and returns too, and the sibling branches check it between
their statements (docs/architecture.md, "Final nodes").
"""

from __future__ import annotations

from ..model import NodeKind
from .ir import (
    Block,
    Call,
    Critical,
    Exec,
    Parallel,
    ParallelRegion,
    Pipeline,
    Return,
    Run,
    Statement,
    TaskPool,
)


class Endings:
    """Where an activity final inside a concurrent part must end its whole scope.

    Keys are ``id()`` of statements of the recovered tree, which lives as long as the walk.
    (A plain class, not a dataclass: making a dataclass runs generated code at import, and every
    ``convert`` imports this module.)
    """

    __slots__ = ("owners", "returns", "scopes", "setters")

    def __init__(self) -> None:
        #: Return statements that end their scope
        self.returns: set[int] = set()
        #: constructs whose functions may end the scope
        self.owners: set[int] = set()
        #: (owner, function index) pairs whose function sets the flag
        self.setters: set[tuple[int, int]] = set()
        #: activity bodies and scoped blocks that define the flag
        self.scopes: set[int] = set()


#: (construct, function index) pairs from a statement out to its scope
_Path = tuple[tuple[Statement, int], ...]


def mark_endings(root: Statement, root_scope: Statement, found: Endings) -> None:
    """Record in ``found`` the activity finals of ``root`` that sit inside concurrent parts."""
    stack: list[tuple[Statement, Statement, _Path]] = [(root, root_scope, ())]
    while stack:
        stmt, scope, path = stack.pop()
        if isinstance(stmt, (Run, Exec, Call)):
            continue  # the common leaves first: a large model is mostly these
        if isinstance(stmt, Return):
            node = stmt.node
            if path and node is not None and node.kind is NodeKind.ACTIVITY_FINAL:
                found.returns.add(id(stmt))
                found.scopes.add(id(scope))
                found.setters.add((id(path[-1][0]), path[-1][1]))
                found.owners.update(id(owner) for owner, _ in path)
        elif isinstance(stmt, Block) and stmt.scoped:
            stack.append((stmt.body, stmt, ()))
        elif isinstance(stmt, (Parallel, Pipeline)):
            stack.extend((lane, scope, (*path, (stmt, index))) for index, lane in enumerate(stmt.children()))
        elif isinstance(stmt, (ParallelRegion, Critical, TaskPool)):
            stack.append((stmt.body, scope, (*path, (stmt, 0))))
        else:
            stack.extend((child, scope, path) for child in stmt.children())
