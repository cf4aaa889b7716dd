"""Navigator and Traverser: the one walk that drives content handlers.

Three parts cooperate to turn a model into any representation:

* a **Navigator** knows the order of the elements: ``children(element)``.
  :class:`StructureNavigator` walks the recovered statement tree (what code
  generators want); :class:`GraphNavigator` walks the raw model in file order:
  activities, their nodes (nested regions inside their owner) and their flows
  (what the Graphviz handler wants);
* a **ContentHandler** (:mod:`uml2perf.handlers.base`) knows what to write for
  each element kind;
* the **Traverser** walks the navigator's tree depth first and calls the
  handlers' ``visit`` on the way down and ``leave`` on the way up.

A handler whose ``visit`` returns ``False`` does not receive that element's
subtree nor its ``leave``; with several handlers the others still get it, and
the walk skips the subtree only when every handler declined it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..controlflow.ir import (
    ActivityBody,
    Branch,
    Break,
    Call,
    Continue,
    Exec,
    If,
    Offer,
    Parallel,
    Pipeline,
    RecoveredModel,
    Return,
    State,
    StateMachine,
    Statement,
    TokenFlow,
    TokenNode,
)
from ..model import Activity, Edge, Model, Node, Region


@dataclass(frozen=True, slots=True)
class Lane:
    """One concurrent part of a :class:`Parallel` (a branch) or of a :class:`Pipeline` (a stage)."""

    owner: Parallel | Pipeline
    index: int
    body: Statement

    @property
    def kind(self) -> str:
        return "Lane"


#: What a structure walk reaches: the recovered model, statements and their parts.
StructureElement = RecoveredModel | Statement | Branch | State | Lane | TokenNode

#: What a graph walk reaches: the model as drawn.
GraphElement = Model | Activity | Node | Edge

#: Anything a navigator hands to a handler.
Element = StructureElement | GraphElement


class Visitor(Protocol):
    """What the traverser needs from a handler (see :class:`uml2perf.handlers.base.ContentHandler`)."""

    def visit(self, element: Element) -> bool | None: ...

    def leave(self, element: Element) -> None: ...


class Navigator(ABC):
    """The order of a walk: the root and, for every element, its children."""

    def __init__(self, root: Element) -> None:
        self.root = root

    @abstractmethod
    def children(self, element: Element) -> Sequence[Element]:
        """The sub-elements of ``element`` in the order a handler should see them."""


class StructureNavigator(Navigator):
    """Walks a :class:`RecoveredModel`: activities, then their statements in execution order.

    ``If`` gives its :class:`Branch` records (condition + body), ``StateMachine``
    its :class:`State` records, ``Parallel``/``Pipeline`` :class:`Lane` records,
    ``TokenFlow`` its :class:`TokenNode` records (one function per node),
    so that handlers can open and close each part.
    """

    def __init__(self, root: RecoveredModel) -> None:
        super().__init__(root)

    def children(self, element: Element) -> Sequence[Element]:
        kind = type(element)
        if kind in _LEAVES:
            return ()  # the common case by far: one statement per action
        if isinstance(element, RecoveredModel):
            return element.activities
        if isinstance(element, If):
            return element.branches
        if isinstance(element, (Branch, State, ActivityBody, TokenNode)):
            return element.body.body
        if isinstance(element, TokenFlow):
            return element.nodes
        if isinstance(element, StateMachine):
            return element.states
        if isinstance(element, Parallel):
            return tuple(Lane(element, i, b) for i, b in enumerate(element.branches))
        if isinstance(element, Pipeline):
            return tuple(Lane(element, i, b) for i, b in enumerate(element.stages))
        if isinstance(element, Lane):
            return element.body.children()
        if isinstance(element, Statement):
            kids: list[Statement] = []
            for child in element.children():
                kids.extend(child.children() if child.kind == "Sequence" else (child,))
            return kids
        return ()


#: Statements without children (exact types: a subclass may add some).
_LEAVES = frozenset({Exec, Call, Break, Continue, Return, Offer})


class GraphNavigator(Navigator):
    """Walks a :class:`Model` as drawn: activities, nodes (nested regions inside), then flows."""

    def __init__(self, root: Model) -> None:
        super().__init__(root)

    def children(self, element: Element) -> Sequence[Element]:
        if isinstance(element, Model):
            return element.activities
        if isinstance(element, Activity):
            return _region_items(element.region)
        if isinstance(element, Node) and element.region is not None:
            return _region_items(element.region)
        return ()


def _region_items(region: Region) -> tuple[Node | Edge, ...]:
    return (*region.nodes, *region.edges)


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
            traverse(self.navigator, self.handlers[0].visit, self.handlers[0].leave)
        else:
            _Fanout(self.handlers).walk(self.navigator)


def traverse(
    navigator: Navigator, visit: Callable[[Element], bool | None], leave: Callable[[Element], None]
) -> None:
    """The walk: depth first, ``visit`` on the way down, ``leave`` on the way up.

    ``visit(element)`` returning False skips the element's children and its
    ``leave``.  An element without children is visited and left at once,
    without going through the stack: a large model is mostly such leaves (one
    statement per action).
    """
    children = navigator.children
    root = navigator.root
    if visit(root) is False:
        return
    stack: list[tuple[Element, Iterator[Element]]] = [(root, iter(children(root)))]
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


class _Fanout:
    """Several handlers in one walk: each element goes to the handlers still listening at its parent."""

    def __init__(self, handlers: Sequence[Visitor]) -> None:
        self.listening: list[tuple[Visitor, ...]] = [tuple(handlers)]

    def walk(self, navigator: Navigator) -> None:
        traverse(navigator, self.visit, self.leave)

    def visit(self, element: Element) -> bool:
        listening = tuple(h for h in self.listening[-1] if h.visit(element) is not False)
        if not listening:
            return False
        self.listening.append(listening)
        return True

    def leave(self, element: Element) -> None:
        for handler in self.listening.pop():
            handler.leave(element)
