"""Navigator and Traverser: the one walk that drives content handlers (see :mod:`.traversal`).

The statement trees the structure navigator walks come from control-flow
recovery (:mod:`uml2perf.controlflow`).
"""

from .traversal import (
    Element,
    GraphElement,
    GraphNavigator,
    Lane,
    Navigator,
    StructureElement,
    StructureNavigator,
    Traverser,
    Visitor,
    traverse,
)

__all__ = [
    "Element",
    "GraphElement",
    "GraphNavigator",
    "Lane",
    "Navigator",
    "StructureElement",
    "StructureNavigator",
    "Traverser",
    "Visitor",
    "traverse",
]
