"""The statement of one executable node: actions, calls, structured, loop and conditional nodes.

A UML LoopNode runs its setup once, then iterates: ``loop+ iterations`` (or
``while``) on the node, else the condition its test computes (a ``while``
when ``isTestedFirst``, a do-while otherwise), else MARTE ``rep``; a loop
with none of them runs once, with a warning.  A ConditionalNode becomes an
``if``/``elif``/``else`` over its clauses in ``predecessorClause`` order: a
clause's condition is a ``clause+`` guard on its test (or body) action, else
the condition its test computes, else a ``probability`` (``clause+`` or MARTE
``prob``) for a seeded random choice; a last clause without tests is the
``else``.  Clauses with no condition at all are chosen at random, 1/N each,
with a warning.  Tests cost what their actions cost: a clause's test runs
when every clause before it failed (in a random choice, all tests run
first).  Sections of loop and conditional nodes have no initial node by
design, so they do not get the missing-initial warning.  The thread and
pattern roles (``parallel+``, ``critical+``, ``pipeline+``, ``taskpool+``) and
``repeat`` tags wrap the statement of their node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..errors import Location
from ..model import Clause, Node, NodeKind, Region, Role
from .graph import Shared, is_else, plain_action, repeat_text, tag
from .ir import (
    Block,
    Branch,
    Break,
    Call,
    Cond,
    CondKind,
    Critical,
    Exec,
    For,
    If,
    ParallelRegion,
    Pipeline,
    Repeat,
    Sequence,
    Statement,
    TaskPool,
    While,
    has_return,
    spread,
)
from .recovery import RegionRecovery


def _own_scope(node: Node, stmt: Statement) -> Statement:
    """A region-owning node (loop, conditional) whose flow ends early somewhere gets its own scope.

    A final node inside it ends the node only (UML), and its enter/leave
    bracket must hold on every way out: the returns then leave a nested
    function, and the bracket stays around its call.
    """
    if not has_return(stmt):
        return stmt
    if isinstance(stmt, Block) and stmt.node is node:
        return Block(node, stmt.body, scoped=True)  # a loop node's setup block: scope it, do not nest it
    return Block(node, Sequence((stmt,)), scoped=True)


# --------------------------------------------------------------------------- node statements


def node_statement(node: Node, shared: Shared) -> Statement | None:
    """The statement for one executable node, wrapped in its role and ``repeat``."""
    if plain_action(node):
        return Exec(node)
    stmt = _core_statement(node, shared)
    if stmt is None:
        return None
    repeat = repeat_text(node.perf)
    if repeat is not None and not (node.kind is NodeKind.LOOP and _loop_source(node) == "repeat"):
        stmt = Repeat(node, repeat, Sequence((stmt,)))
    return stmt


def _recover_nested(node: Node, region: Region, shared: Shared) -> tuple[Sequence, bool]:
    body = RegionRecovery(region, node.location, shared).recover()
    return body, has_return(body)


def _subset_region(region: Region, ids: Iterable[str]) -> Region:
    wanted = set(ids)
    return Region(
        tuple(n for n in region.nodes if n.id in wanted),
        tuple(e for e in region.edges if e.source in wanted and e.target in wanted),
    )


def _core_statement(node: Node, shared: Shared) -> Statement | None:
    kind = node.kind
    role = node.perf.role if node.perf is not None else None
    if kind is NodeKind.ACTION and (role is None or role is Role.ACTION):
        return Exec(node)  # an action with a repeat tag (node_statement wraps it)
    if kind in CONTROL_NO_STATEMENT:
        return None
    if kind is NodeKind.CALL:
        stmt = _call_statement(node, shared)
    elif kind is NodeKind.LOOP:
        return _own_scope(node, _loop_node(node, shared))
    elif kind is NodeKind.CONDITIONAL:
        return _own_scope(node, _conditional_node(node, shared))
    elif kind is NodeKind.STRUCTURED and node.region is not None:
        body, scoped = _recover_nested(node, node.region, shared)
        if role is Role.LOOP:
            return _tagged_loop(node, _iteration(node, body))
        if role is Role.PIPELINE:
            stages = spread(body.body)  # one stage per action, those of a run too
            return Pipeline(node, tag(node, "items"), tuple(Sequence((s,)) for s in stages))
        stmt = Block(node, body, scoped)
        if role in WRAPPING_ROLES:
            return _wrap_role(node, role, body if not scoped else Sequence((stmt,)))
        return stmt
    else:
        stmt = Exec(node)
    if role in WRAPPING_ROLES:
        return _wrap_role(node, role, Sequence((stmt,)))
    return stmt


CONTROL_NO_STATEMENT = frozenset(
    {
        NodeKind.INITIAL,
        NodeKind.MERGE,
        NodeKind.JOIN,
        NodeKind.FORK,
        NodeKind.DECISION,
        NodeKind.OBJECT,
        NodeKind.ACTIVITY_FINAL,
        NodeKind.FLOW_FINAL,
    }
)
WRAPPING_ROLES = frozenset({Role.PARALLEL, Role.CRITICAL, Role.PIPELINE, Role.TASKPOOL})


def _wrap_role(node: Node, role: Role | None, body: Sequence) -> Statement:
    if role is Role.PARALLEL:
        return ParallelRegion(node, tag(node, "threads"), body)
    if role is Role.CRITICAL:
        return Critical(node, tag(node, "name") or node.name or node.id, body)
    if role is Role.PIPELINE:
        return Pipeline(node, tag(node, "items"), (body,))
    return TaskPool(node, tag(node, "threads"), tag(node, "items"), body)


def _call_statement(node: Node, shared: Shared) -> Statement:
    target = node.behavior
    if target is not None and target in shared.activities:
        return Call(node, shared.activities[target])
    if target is not None and target in shared.functions:
        return Exec(node, shared.functions[target])
    if target is not None:
        activity = shared.model.activity(target)
        if activity is not None:
            return Call(node, activity)
    shared.warn(
        "call of a behavior that is not in this file; it is treated as a plain action",
        node.location,
        "unknown-behavior",
        hint="export the called activity too, or give the call a cost",
    )
    return Exec(node)


def _tagged_loop(node: Node, body: Sequence) -> Statement:
    iterations = tag(node, "iterations")
    condition = tag(node, "while")
    if iterations is not None:
        return For(node, iterations, body)
    if condition is not None:
        return While(node, Cond(CondKind.GUARD, condition, node.location), body)
    return While(node, None, body)


def _iteration(node: Node, body: Sequence) -> Sequence:
    """The region of a loop whose region is its body: one run of the region is one iteration.

    A final node ends the run of the region it belongs to, so a final before
    the end of the region ends that iteration: the body gets its own scope.
    """
    if has_return(body):
        return Sequence((Block(node, body, scoped=True),))
    return body


def _with_setup(node: Node, setup: Sequence, loop: Statement) -> Statement:
    """A loop node's setup section runs once, before the loop, inside the node's bracket."""
    if not setup.body:
        return loop
    return Block(node, Sequence((*setup.body, loop)))


def _loop_source(node: Node) -> str:
    """Where a LoopNode's iteration count comes from, in the order a modeller would expect.

    ``tagged``: a ``loop+`` stereotype with ``iterations`` or ``while``;
    ``decider``: the condition its test section computes (read by the reader
    from the decider's test action); ``repeat``: a MARTE ``rep`` (a ``repeat``
    tag), which on a loop node counts iterations instead of repeating the
    whole loop; ``once``: nothing says, the loop runs once.
    """
    role = node.perf.role if node.perf is not None else None
    if role is Role.LOOP and (tag(node, "iterations") or tag(node, "while")):
        return "tagged"
    spec = node.loop
    if spec is not None and (spec.setup or spec.test or spec.body) and spec.decider is not None:
        return "decider"
    repeat = tag(node, "repeat")
    if repeat is not None and repeat.strip():
        return "repeat"
    return "once"


def _section(node: Node, region: Region, ids: Iterable[str], shared: Shared, *, keep_final: bool) -> Sequence:
    """One part of a loop or conditional node (setup, test, body), recovered on its own."""
    recovery = RegionRecovery(_subset_region(region, ids), node.location, shared, section=True)
    return recovery.recover(keep_final=keep_final)


def _loop_node(node: Node, shared: Shared) -> Statement:
    region = node.region or Region()
    spec = node.loop
    source = _loop_source(node)
    if spec is None or not (spec.setup or spec.test or spec.body):
        body, _ = _recover_nested(node, region, shared)
        return _counted_loop(node, source, _iteration(node, body), shared)
    # a final node in a section ends the whole loop node (see _own_scope), not just its section
    setup, test, body = (
        _section(node, region, part, shared, keep_final=True)
        for part in _with_control_nodes(region, (spec.setup, spec.test, spec.body))
    )
    if source != "decider":
        return _with_setup(node, setup, _counted_loop(node, source, Sequence(test.body + body.body), shared))
    assert spec.decider is not None
    cond = Cond(CondKind.GUARD, spec.decider, _decider_location(node, region, spec.test))
    if not test.body and spec.tested_first:
        return _with_setup(node, setup, While(node, cond, body))
    leave = If(None, (Branch(cond.negated(), Sequence((Break(),))),))
    if spec.tested_first:
        loop = While(node, None, Sequence((*test.body, leave, *body.body)))
    else:
        loop = While(node, None, Sequence((*body.body, *test.body, leave)))
    return _with_setup(node, setup, loop)


def _counted_loop(node: Node, source: str, body: Sequence, shared: Shared) -> Statement:
    """A loop node iterating by a tag (``loop+``, MARTE ``rep``), or once when nothing gives a count."""
    if source == "tagged":
        return _tagged_loop(node, body)
    if source == "repeat":
        return For(node, tag(node, "repeat") or "1", body)
    shared.warn(
        f"loop {node.name or node.id!r} has no iteration count: it runs once; add loop+ iterations=N",
        node.location,
        "loop-runs-once",
        hint="or loop+ while=<condition>, a test action whose python body is the condition (i < n), "
        "or a MARTE PaStep rep on the loop node",
    )
    return For(node, "1", body)


def _decider_location(node: Node, region: Region, test: tuple[str, ...]) -> Location:
    """Where a loop's condition was written: its last test action, else the loop node."""
    for ident in reversed(test):
        found = region.node(ident)
        if found is not None:
            return found.location
    return node.location


def _with_control_nodes(region: Region, parts: tuple[tuple[str, ...], ...]) -> list[tuple[str, ...]]:
    """Loop node sections with the control nodes their flows reach.

    UML sections list executable nodes only; the decisions, merges and final
    nodes between them belong to the loop node's region and to no section.
    Each section takes the ones connected to it through control nodes alone.
    """
    listed = {node_id for part in parts for node_id in part}
    free = {n.id for n in region.nodes if n.id not in listed and n.kind in CONTROL_NO_STATEMENT}
    if not free:
        return list(parts)
    links: dict[str, list[str]] = {}
    for edge in region.edges:
        links.setdefault(edge.source, []).append(edge.target)
        links.setdefault(edge.target, []).append(edge.source)
    out = []
    for part in parts:
        wanted = set(part)
        stack = list(part)
        while stack:
            for other in links.get(stack.pop(), ()):
                if other in free and other not in wanted:
                    wanted.add(other)
                    stack.append(other)
        out.append((*part, *sorted(wanted - set(part))))
    return out


def _conditional_node(node: Node, shared: Shared) -> Statement:
    """A ConditionalNode as ``if``/``elif``/``else`` over its clauses (see the module docstring)."""
    region = node.region or Region()
    if not node.clauses:
        shared.warn(
            f"conditional node {node.name or node.id!r} has no clauses: nothing in it runs",
            node.location,
            "empty-conditional",
            hint="add clauses (test and body) to the conditional node in the UML tool",
        )
        return Block(node, Sequence(()))
    items: list[tuple[Cond, Sequence, Sequence]] = []
    for number, (clause, cond) in enumerate(zip(node.clauses, _clause_conditions(node, shared), strict=True)):
        tests = _section(node, region, clause.test, shared, keep_final=False) if clause.test else Sequence(())
        body = _section(node, region, clause.body, shared, keep_final=False)
        items.append((cond, tests, body))
        if cond.kind is CondKind.ELSE:
            if number != len(node.clauses) - 1:
                shared.warn(
                    f"clause {number + 1} has no guard, so the clauses after it are never chosen",
                    node.location,
                    "unguarded-clause",
                    hint="give the clause a guard, or make it the last one",
                )
            break
    if any(cond.kind is CondKind.PROBABILITY for cond, _, _ in items):
        # one draw decides among the clauses, so every test is evaluated first
        statements = [s for _, tests, _ in items for s in tests.body]
        statements.append(If(node, tuple(Branch(cond, body) for cond, _, body in items)))
    else:
        statements = _clause_chain(node, items, 0)
    if len(statements) == 1:
        return statements[0]
    return Block(node, Sequence(tuple(statements)))


def _clause_chain(node: Node, items: list[tuple[Cond, Sequence, Sequence]], start: int) -> list[Statement]:
    """Clauses from ``start`` on: a clause's test runs only once every clause before it failed.

    Clauses without test statements join the same ``if``/``elif``; one with
    tests opens an ``else`` holding its tests and the rest of the chain.
    """
    out: list[Statement] = list(items[start][1].body)
    branches: list[Branch] = []
    for index in range(start, len(items)):
        cond, tests, body = items[index]
        if index > start and tests.body:
            rest = Sequence(tuple(_clause_chain(node, items, index)))
            branches.append(Branch(Cond(CondKind.ELSE, None, node.location), rest))
            break
        branches.append(Branch(cond, body))
    out.append(If(node, tuple(branches)))
    return out


def _clause_conditions(node: Node, shared: Shared) -> list[Cond]:
    """The condition of every clause, in clause order; clauses saying nothing share a random choice."""
    region = node.region or Region()
    members = {n.id: n for n in region.nodes}
    clauses = node.clauses
    last = len(clauses) - 1
    conds: list[Cond | None] = [_clause_condition(node, clause, members) for clause in clauses]
    final = conds[last]
    if final is None and (not clauses[last].test or is_else(clauses[last].guard)):
        conds[last] = Cond(CondKind.ELSE, None, node.location)  # the default clause (or isAssured)
    elif final is not None and final.kind is CondKind.GUARD and (final.text or "").strip() == "True":
        conds[last] = Cond(CondKind.ELSE, None, final.location)  # an always-true last test: the default
    unknown = [i for i, cond in enumerate(conds) if cond is None]
    if unknown:
        share = _unknown_share(conds, len(unknown))
        _warn_random_clauses(node, unknown, members, share, shared)
        for i in unknown:
            conds[i] = Cond(CondKind.PROBABILITY, share, node.location)
    return [cond for cond in conds if cond is not None]


def _clause_condition(node: Node, clause: Clause, members: Mapping[str, Node]) -> Cond | None:
    """One clause's condition: a guard tag, the computed test, a probability, or None."""
    annotated = [members[i] for i in (*clause.test, *clause.body) if i in members]
    for member in annotated:
        guard = tag(member, "guard")
        if guard is not None and guard.strip():
            if is_else(guard):
                return Cond(CondKind.ELSE, None, member.location)
            return Cond(CondKind.GUARD, guard, member.location)
    if clause.guard is not None and not is_else(clause.guard):
        tests = [members[i] for i in clause.test if i in members]
        return Cond(CondKind.GUARD, clause.guard, tests[-1].location if tests else node.location)
    for member in annotated:
        probability = tag(member, "probability")
        if probability is not None and probability.strip():
            return Cond(CondKind.PROBABILITY, probability, member.location)
    return None


def _unknown_share(conds: list[Cond | None], unknown: int) -> str:
    """Probability of each clause without a condition: 1/N, or an equal part of what the given ones leave."""
    given = [c.text or "0" for c in conds if c is not None and c.kind is CondKind.PROBABILITY]
    if not given:
        return f"1 / {len(conds)}"
    rest = "1 - " + " - ".join(f"({text})" for text in given)
    return rest if unknown == 1 else f"({rest}) / {unknown}"


def _warn_random_clauses(
    node: Node, unknown: list[int], members: Mapping[str, Node], share: str, shared: Shared
) -> None:
    """Name the clauses chosen at random and what to add; point at test bodies in unread languages."""
    labels = []
    foreign: list[Node] = []
    for i in unknown:
        tests = [members[t] for t in node.clauses[i].test if t in members]
        names = ", ".join(repr(t.name or t.id) for t in tests)
        labels.append(f"{i + 1} (test {names})" if names else str(i + 1))
        foreign.extend(t for t in tests if t.body_text and t.code is None)
    many = len(unknown) > 1
    message = (
        f"conditional node {node.name or node.id!r}: clause{'s' if many else ''} {', '.join(labels)} "
        f"{'have' if many else 'has'} no condition uml2perf can read, so {'each is' if many else 'it is'} "
        f"chosen at random with probability {share}"
    )
    if foreign:
        first = foreign[0]
        message += (
            f"; the body of test {first.name or first.id!r} is in {first.body_language or 'no language'!s}, "
            "not python"
        )
    shared.warn(
        message,
        node.location,
        "random-clause",
        hint="give each clause a condition: a clause+ guard tag on its test action,"
        " a test OpaqueAction whose python body is an expression (x > 0),"
        " a ValueSpecificationAction on the clause's decider, or a "
        "probability (clause+ probability or MARTE prob); a last clause without tests is the else",
    )
