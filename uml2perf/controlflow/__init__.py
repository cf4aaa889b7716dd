"""Control-flow recovery: from activity graphs to trees of structured statements.

UML activities are graphs; generated code wants ``if``/``while``/``for``.  The
modules, each with one job:

* :mod:`.ir` the statements (the IR handlers print);
* :mod:`.graph` the facts of one region's graph (dominators, loop headers, conditions);
* :mod:`.recovery` structured regions (sequences, branches, fork/join);
* :mod:`.loops` natural loops and their ``while`` shape;
* :mod:`.state_machine` the fallback for sequential flow with no structured form;
* :mod:`.token_flow` the form of any flow graph with concurrency (one function per node);
* :mod:`.nodes` the statement of each executable node (loop, conditional, structured nodes, roles);
* :mod:`.activity` whole activities and models (:func:`recover_model`);
* :mod:`.finals` where an activity final must end more than its own function.
"""

from .activity import recover_activity, recover_model, recover_region
from .ir import (
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
    Offer,
    Parallel,
    ParallelRegion,
    Pipeline,
    RecoveredModel,
    Repeat,
    Return,
    Run,
    Sequence,
    State,
    StateMachine,
    Statement,
    TaskPool,
    TokenFlow,
    TokenNode,
    Transition,
    While,
    spread,
    walk,
)

__all__ = [
    "ActivityBody",
    "Block",
    "Branch",
    "Break",
    "Call",
    "Cond",
    "CondKind",
    "Continue",
    "Critical",
    "Exec",
    "For",
    "If",
    "Offer",
    "Parallel",
    "ParallelRegion",
    "Pipeline",
    "RecoveredModel",
    "Repeat",
    "Return",
    "Run",
    "Sequence",
    "State",
    "StateMachine",
    "Statement",
    "TaskPool",
    "TokenFlow",
    "TokenNode",
    "Transition",
    "While",
    "recover_activity",
    "recover_model",
    "recover_region",
    "spread",
    "walk",
]
