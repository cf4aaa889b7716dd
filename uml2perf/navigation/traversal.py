"""Navigator and Traverser (Fig. 3.4 of the Performance Prophet paper).

Three parts cooperate to turn a model into any representation:

* a **Navigator** knows the order of the elements.  :class:`StructureNavigator`
  walks the recovered statement tree (what code generators want);
  :class:`GraphNavigator` walks the raw model in file order: activities, their
  nodes (nested regions inside their owner) and their flows (what the Graphviz
  handler wants);
* a **ContentHandler** (:mod:`uml2perf.handlers.base`) knows what to write for
  each element kind;
* the **Traverser** asks the navigator for the next step and the handlers to
  visit it.

The three only meet through :class:`Step` and the handler methods ``visit``
and ``leave``, so any navigator combines with any handler, and one traverser
can drive several handlers in a single walk: a handler that returns ``False``
from ``visit`` stops receiving that element's subtree, the others still get it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from ..model import Activity, Edge, Model, Node, Region
from .structure import (
    ActivityBody,
    Branch,
    Break,
    Call,
    Continue,
    Exec,
    If,
    Parallel,
    Pipeline,
    RecoveredModel,
    Return,
    State,
    StateMachine,
    Statement,
)


@dataclass(frozen=True, slots=True)
class Lane:
    """One concurrent part of a :class:`Parallel` (a branch) or of a :class:`Pipeline` (a stage)."""

    owner: Statement
    index: int
    body: Statement

    @property
    def kind(self) -> str:
        return "Lane"


class Step(NamedTuple):
    """One navigation step: ``entering`` an element (visit) or leaving it after its children."""

    element: Any
    entering: bool
    depth: int
    parent: Any = None


class Navigator(ABC):
    """Yields the steps of one walk; ``prune()`` skips the children of the element just entered."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self._stack: list[tuple[Any, Iterator[Any], Any]] = []
        self._started = False
        self._prune = False

    @abstractmethod
    def children(self, element: Any) -> Iterable[Any]:
        """The sub-elements of ``element`` in the order a handler should see them."""

    def prune(self) -> None:
        """Do not descend into the element of the last entering step."""
        self._prune = True

    def next(self) -> Step | None:
        """The next step, or None when the walk is over."""
        if not self._started:
            self._started = True
            self._stack.append((self.root, iter(self.children(self.root)), None))
            return Step(self.root, True, 0, None)
        if self._prune and self._stack:
            self._prune = False
            element, _, parent = self._stack[-1]
            self._stack[-1] = (element, iter(()), parent)
        while self._stack:
            element, it, parent = self._stack[-1]
            child = next(it, _DONE)
            if child is _DONE:
                self._stack.pop()
                return Step(element, False, len(self._stack), parent)
            self._stack.append((child, iter(self.children(child)), element))
            return Step(child, True, len(self._stack) - 1, element)
        return None

    def __iter__(self) -> Iterator[Step]:
        next_step = self.next
        while (step := next_step()) is not None:
            yield step

    def walk(self, visit: Callable[[Any], bool | None], leave: Callable[[Any], None]) -> None:
        """Drive one visitor through the same walk as the steps, without building them.

        ``visit(element)`` returning False skips the element's children and its
        ``leave``, like :meth:`prune`.  A large model is mostly leaves (one
        statement per action), so an element without children is visited and
        left at once instead of going through the stack: this is the
        traverser's path for a single handler.
        """
        children = self.children
        root = self.root
        if visit(root) is False:
            return
        stack: list[tuple[Any, Iterator[Any]]] = [(root, iter(children(root)))]
        while stack:
            element, pending = stack[-1]
            for child in pending:
                if visit(child) is False:
                    continue
                kids = children(child)
                if kids:
                    stack.append((child, iter(kids)))
                    break
                leave(child)
            else:
                stack.pop()
                leave(element)


_DONE = object()


class StructureNavigator(Navigator):
    """Walks a :class:`RecoveredModel`: activities, then their statements in execution order.

    ``If`` gives its :class:`Branch` records (condition + body), ``StateMachine``
    its :class:`State` records, ``Parallel``/``Pipeline`` :class:`Lane` records,
    so that handlers can open and close each part.
    """

    def children(self, element: Any) -> Iterable[Any]:
        kind = type(element)
        if kind in _LEAVES:
            return ()  # the common case by far: one statement per action
        if isinstance(element, RecoveredModel):
            return element.activities
        if isinstance(element, If):
            return element.branches
        if isinstance(element, Branch):
            return element.body.body
        if isinstance(element, StateMachine):
            return element.states
        if isinstance(element, State):
            return element.body.body
        if isinstance(element, Parallel):
            return tuple(Lane(element, i, b) for i, b in enumerate(element.branches))
        if isinstance(element, Pipeline):
            return tuple(Lane(element, i, b) for i, b in enumerate(element.stages))
        if isinstance(element, Lane):
            return element.body.children()
        if isinstance(element, ActivityBody):
            return element.body.body
        if isinstance(element, Statement):
            kids: list[Any] = []
            for child in element.children():
                kids.extend(child.children() if child.kind == "Sequence" else (child,))
            return kids
        return ()


#: Statements without children (exact types: a subclass may add some).
_LEAVES = frozenset({Exec, Call, Break, Continue, Return})


class GraphNavigator(Navigator):
    """Walks a :class:`Model` as drawn: activities, nodes (nested regions inside), then flows."""

    def children(self, element: Any) -> Iterable[Any]:
        if isinstance(element, Model):
            return element.activities
        if isinstance(element, Activity):
            return _region_items(element.region)
        if isinstance(element, Node) and element.region is not None:
            return _region_items(element.region)
        return ()


def _region_items(region: Region) -> tuple[Node | Edge, ...]:
    return (*region.nodes, *region.edges)


class Visitor(Protocol):
    """What the traverser needs from a handler (see :class:`uml2perf.handlers.base.ContentHandler`)."""

    def visit(self, element: Any) -> bool | None: ...

    def leave(self, element: Any) -> None: ...


class Traverser:
    """Drives one navigator and any number of handlers through a single walk."""

    def __init__(self, navigator: Navigator, *handlers: Visitor) -> None:
        if not handlers:
            raise ValueError("a Traverser needs at least one handler")
        self.navigator = navigator
        self.handlers = handlers

    def run(self) -> None:
        """Walk to the end.  A handler whose ``visit`` returns False misses that subtree."""
        if len(self.handlers) == 1:
            self._run_one()
            return
        muted: dict[int, int] = {}  # handler index -> depth at which it pruned
        for step in self.navigator:
            if step.entering:
                listening = 0
                for index, handler in enumerate(self.handlers):
                    if index in muted:
                        continue
                    if handler.visit(step.element) is False:
                        muted[index] = step.depth
                    else:
                        listening += 1
                if listening == 0:
                    self.navigator.prune()
            else:
                for index, handler in enumerate(self.handlers):
                    depth = muted.get(index)
                    if depth is None:
                        handler.leave(step.element)
                    elif depth == step.depth:
                        del muted[index]

    def _run_one(self) -> None:
        """The same walk for a single handler, without the bookkeeping for several."""
        handler = self.handlers[0]
        self.navigator.walk(handler.visit, handler.leave)
