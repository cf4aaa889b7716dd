"""Control-flow recovery, Navigator and Traverser.

:mod:`.structure` turns activity graphs into structured statement trees
(sequences, if/elif/else, loops, fork/join, patterns, and a state-machine
fallback for unstructured flow); :mod:`.traversal` walks models or statement
trees and drives content handlers (Fig. 3.4 of the Performance Prophet paper).
"""

from .structure import (
    ActivityBody,
    Block,
    Branch,
    Break,
    Call,
    Cond,
    CondKind,
    Continue,
    Critical,
    Exec,
    For,
    If,
    Parallel,
    ParallelRegion,
    Pipeline,
    RecoveredModel,
    Repeat,
    Return,
    Sequence,
    State,
    StateMachine,
    Statement,
    TaskPool,
    Transition,
    While,
    recover_model,
    recover_region,
    walk,
)
from .traversal import GraphNavigator, Lane, Navigator, Step, StructureNavigator, Traverser

__all__ = [
    "ActivityBody", "Block", "Branch", "Break", "Call", "Cond", "CondKind", "Continue", "Critical", "Exec",
    "For", "GraphNavigator", "If", "Lane", "Navigator", "Parallel", "ParallelRegion", "Pipeline",
    "RecoveredModel", "Repeat", "Return", "Sequence", "State", "StateMachine", "Statement", "Step",
    "StructureNavigator", "TaskPool", "Transition", "Traverser", "While", "recover_model", "recover_region",
    "walk",
]
