"""Control-flow recovery: structured shapes, the state-machine fallback, and a property test.

The property test builds random activity graphs with decisions, merges and
cycles (counters make every loop finite), generates the Python module, runs it
on a recording stub, and compares the executed actions with a tiny reference
interpreter that plays the token game on the graph itself.
"""

from __future__ import annotations

import pytest
from builders import ModelBuilder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stubs import load_module, run_module

from uml2perf.controlflow import (
    Call,
    CondKind,
    Exec,
    If,
    Parallel,
    Run,
    StateMachine,
    While,
    recover_model,
    spread,
    walk,
)
from uml2perf.errors import ModelError, Severity
from uml2perf.generation import generate
from uml2perf.handlers.base import ContentHandler
from uml2perf.model import Model, NodeKind
from uml2perf.navigation import GraphNavigator, StructureNavigator, traverse


def body_of(model: Model, name: str = "main"):
    recovered = recover_model(model)
    for item in recovered.activities:
        if item.activity.name == name:
            return item.body.body, recovered.diagnostics
    raise AssertionError(name)


def names(statements) -> list[str]:
    """The actions of ``statements`` in order (those of a run of plain actions each)."""
    return [s.node.name for s in spread(statements) if isinstance(s, Exec)]


# -------------------------------------------------------------------------- shapes


def test_sequence_follows_the_flow_not_the_file_order():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    c = main.action("C", 1)
    a = main.action("A", 1)
    bb = main.action("B", 1)
    main.chain(main.initial(), a, bb, c, main.final())
    body, diagnostics = body_of(b.build())
    assert names(body) == ["A", "B", "C"]
    assert not diagnostics


def test_consecutive_plain_actions_are_one_run_and_a_handler_without_runs_sees_each_action():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    a, bb, c = main.action("A", 1), main.action("B", 1), main.action("C", 1)
    main.chain(main.initial(), a, bb, c, main.final())
    model = b.build()
    body, _ = body_of(model)
    assert [type(s) for s in body] == [Run]
    assert [s.node.name for s in body[0].children()] == ["A", "B", "C"]
    seen: list[str] = []

    class Actions(ContentHandler):
        name = "actions"

        def visit_Exec(self, stmt: Exec) -> bool:
            seen.append(stmt.node.name)
            return False

    generate(model, Actions)
    assert seen == ["A", "B", "C"]
    assert not any(d.code == "unhandled-kind" for d in generate(model, Actions).diagnostics)


def test_decision_becomes_if_elif_else_with_else_last():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    d, m = main.decision("D"), main.merge()
    x, y, z, after = (main.action(n, 1) for n in "XYZE")
    main.chain(main.initial(), d)
    main.flow(d, z, guard="else")
    main.flow(d, x, guard="g == 1")
    main.flow(d, y, guard="g == 2")
    for n in (x, y, z):
        main.chain(n, m)
    main.chain(m, after, main.final())
    body, _ = body_of(b.build())
    assert isinstance(body[0], If)
    kinds = [br.cond.kind for br in body[0].branches]
    assert kinds == [CondKind.GUARD, CondKind.GUARD, CondKind.ELSE]
    assert [names(br.body.body) for br in body[0].branches] == [["X"], ["Y"], ["Z"]]
    assert names(body[1:]) == ["E"]


def test_single_unguarded_branch_is_else_and_several_are_random():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    d = main.decision("D")
    x, y = main.action("X", 1), main.action("Y", 1)
    main.chain(main.initial(), d)
    main.flow(d, x, guard="g > 0")
    main.flow(d, y)
    main.chain(x, main.final())
    main.chain(y, main.final())
    body, _ = body_of(b.build())
    assert [br.cond.kind for br in body[0].branches] == [CondKind.GUARD, CondKind.ELSE]

    b = ModelBuilder()
    main = b.activity("main", main=True)
    d = main.decision("D")
    x, y = main.action("X", 1), main.action("Y", 1)
    main.chain(main.initial(), d)
    main.flow(d, x)
    main.flow(d, y)
    body, diagnostics = body_of(b.build())
    assert body[0].is_random
    assert any(diag.code == "unguarded-decision" for diag in diagnostics)


def test_while_loop_tested_at_the_top():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    m, d = main.merge("M"), main.decision("D")
    work, done = main.action("Work", 1, code="i = i + 1"), main.action("Done", 1)
    main.chain(main.initial(), m, d)
    main.flow(d, work, guard="i < 3")
    main.flow(d, done, guard="else")
    main.chain(work, m)
    main.chain(done, main.final())
    body, _ = body_of(b.build())
    loop = body[0]
    assert isinstance(loop, While) and loop.cond is not None and loop.cond.text == "i < 3"
    assert names(loop.body.body) == ["Work"] and names(body[1:]) == ["Done"]


def test_do_while_loop_tested_at_the_bottom():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    m, d = main.merge("M"), main.decision("D")
    work = main.action("Work", 1)
    main.chain(main.initial(), m, work, d)
    main.flow(d, m, guard="i < 3")
    main.flow(d, main.final(), guard="else")
    body, _ = body_of(b.build())
    loop = body[0]
    assert isinstance(loop, While) and loop.cond is None
    assert names(loop.body.body) == ["Work"]
    test = loop.body.body[-1]
    assert isinstance(test, If) and test.branches[0].cond.negate


def test_fork_join_becomes_parallel_and_the_flow_continues_after_the_join():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    f, j = main.fork(), main.join()
    x, y, after = main.action("X", 1), main.action("Y", 1), main.action("After", 1)
    main.chain(main.initial(), f)
    main.chain(f, x, j)
    main.chain(f, y, j)
    main.chain(j, after, main.final())
    body, _ = body_of(b.build())
    assert isinstance(body[0], Parallel)
    assert [names(br.body) for br in body[0].branches] == [["X"], ["Y"]]
    assert names(body[1:]) == ["After"]


def test_fork_without_join_waits_for_branches_ending_in_flow_finals():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    f = main.fork()
    x, y = main.action("X", 1), main.action("Y", 1)
    main.chain(main.initial(), f)
    main.chain(f, x, main.flow_final())
    main.chain(f, y, main.flow_final())
    body, _ = body_of(b.build())
    assert len(body) == 1 and isinstance(body[0], Parallel)


def test_call_behavior_action_becomes_call_of_the_activity():
    b = ModelBuilder()
    sub = b.activity("Sub")
    sub.sequence("S1")
    main = b.activity("main", main=True)
    call = main.call("RunSub", sub.id)
    main.chain(main.initial(), call, main.final())
    body, _ = body_of(b.build())
    assert isinstance(body[0], Call) and body[0].activity.name == "Sub"


def irreducible_model() -> Model:
    """Two actions that jump into each other's loop: no structured form exists."""
    b = ModelBuilder("irreducible")
    b.global_var("x", 1)
    b.global_var("a", 0)
    b.global_var("b", 0)
    main = b.activity("main", main=True)
    start = main.action("Start", 1)
    d = main.decision("D")
    a = main.action("A", 1, code="a = a + 1")
    bb = main.action("B", 1, code="b = b + 1")
    da, db = main.decision("DA"), main.decision("DB")
    end = main.action("End", 1)
    main.chain(main.initial(), start, d)
    main.flow(d, a, guard="x > 0")
    main.flow(d, bb, guard="else")
    main.chain(a, da)
    main.chain(bb, db)
    main.flow(da, bb, guard="a < 3")
    main.flow(da, end, guard="else")
    main.flow(db, a, guard="b < 2")
    main.flow(db, end, guard="else")
    main.chain(end, main.final())
    return b.build()


def test_irreducible_graph_falls_back_to_a_state_machine_only_where_needed():
    body, diagnostics = body_of(irreducible_model())
    assert isinstance(body[0], Exec) and body[0].node.name == "Start"
    assert isinstance(body[1], StateMachine)
    assert names(body[2:]) == ["End"]
    assert any(d.code == "state-machine" and d.severity is Severity.INFO for d in diagnostics)


def test_irreducible_state_machine_runs_like_the_graph():
    model = irreducible_model()
    module = load_module(generate(model).text)
    for x in (0, 1):
        p = run_module(module, overrides={"x": x})
        assert p.trace == reference_run(model, {"x": x, "a": 0, "b": 0})


def test_unreachable_node_and_missing_initial_are_warnings():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    a, c = main.action("A", 1), main.action("C", 1)
    lonely = main.action("Lonely", 1)
    main.chain(a, c)
    main.chain(lonely, lonely)
    body, diagnostics = body_of(b.build())
    codes = {d.code for d in diagnostics}
    assert "no-initial" in codes
    assert names(body) == ["A", "C"]


def test_endless_cycle_is_reported_and_still_generated():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    a = main.action("A", 1)
    main.chain(main.initial(), a, a)
    body, diagnostics = body_of(b.build())
    assert isinstance(body[0], While)
    assert any(d.code == "endless-loop" for d in diagnostics)


def test_two_else_flows_are_an_error():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    d = main.decision("D")
    main.chain(main.initial(), d)
    main.flow(d, main.final(), guard="else")
    main.flow(d, main.final(), guard="else")
    with pytest.raises(ModelError, match="else"):
        recover_model(b.build())


def test_structured_loop_and_conditional_nodes():
    b = ModelBuilder()
    b.global_var("i", 0)
    main = b.activity("main", main=True)
    loop = main.loop_node("L", decider="i < 4")
    body_action = loop.action("Step", 1, code="i = i + 1")
    loop.body.append(body_action)
    cond = main.conditional("C")
    yes, no = cond.action("Yes", 1), cond.action("No", 1)
    cond.clause("i == 4", yes)
    cond.clause(None, no)
    main.chain(main.initial(), loop.id, cond.id, main.final())
    module = load_module(generate(b.build()).text)
    assert run_module(module).trace == ["Step"] * 4 + ["Yes"]


def test_navigators_walk_statements_and_graph():
    model = irreducible_model()
    entered, left = [], []
    traverse(StructureNavigator(recover_model(model)), entered.append, left.append)
    kinds = [type(element).__name__ for element in entered]
    assert kinds[:2] == ["RecoveredModel", "ActivityBody"]
    assert "StateMachine" in kinds and kinds.count("State") >= 2
    assert sorted(map(id, entered)) == sorted(map(id, left))
    graph_steps: list = []
    traverse(GraphNavigator(model), graph_steps.append, lambda element: None)
    assert graph_steps[0] is model
    assert sum(1 for e in graph_steps if getattr(e, "kind", None) is NodeKind.DECISION) == 3


def test_every_statement_is_reached_by_walk():
    body, _ = body_of(irreducible_model())
    found = [s for top in body for s in walk(top)]
    assert any(isinstance(s, StateMachine) for s in found)


# -------------------------------------------------------------------------- reference interpreter


def reference_run(model: Model, values: dict[str, int], limit: int = 10_000) -> list[str]:
    """Play the token game for one token on the main activity; return the executed action names.

    Guards are evaluated in flow order with ``else`` last, as the generated code does.
    Code fragments are ``name = name + 1`` increments.
    """
    activity = next(a for a in model.activities if a.is_main)
    region = activity.region
    nodes = {n.id: n for n in region.nodes}
    outs: dict[str, list] = {n.id: [] for n in region.nodes}
    for edge in region.edges:
        outs[edge.source].append(edge)
    env = dict(values)
    trace: list[str] = []
    current = next(n.id for n in region.nodes if n.kind is NodeKind.INITIAL)
    for _ in range(limit):
        node = nodes[current]
        if node.kind in (NodeKind.ACTIVITY_FINAL, NodeKind.FLOW_FINAL):
            return trace
        if node.kind is NodeKind.ACTION:
            if node.code:
                target, _, expr = node.code.partition("=")
                env[target.strip()] = eval(expr, {}, dict(env))  # noqa: S307 - our own test text
            trace.append(node.name)
        edges = outs[current]
        if not edges:
            return trace
        if len(edges) == 1:
            current = edges[0].target
            continue
        guarded = [e for e in edges if e.guard not in (None, "else")]
        otherwise = [e for e in edges if e.guard == "else"]
        for edge in guarded + otherwise:
            if edge.guard == "else" or eval(edge.guard, {}, dict(env)):  # noqa: S307
                current = edge.target
                break
        else:
            return trace
    raise AssertionError("reference run did not end")


@st.composite
def random_graphs(draw: st.DrawFn) -> tuple[Model, dict[str, int]]:
    """Random single-token activities: actions, decisions, forward flows and guarded back edges.

    Every action ``A<i>`` counts its runs in ``c<i>``; only the guarded branch of
    a decision (``c<i> < k``) may jump backwards, so every cycle ends.
    """
    count = draw(st.integers(min_value=2, max_value=7))
    b = ModelBuilder("random")
    for i in range(count):
        b.global_var(f"c{i}", 0)
    main = b.activity("main", main=True)
    initial = main.initial()
    actions = [main.action(f"A{i}", 1, code=f"c{i} = c{i} + 1") for i in range(count)]
    final = main.final()
    main.flow(initial, actions[0])
    use_merge = draw(st.booleans())
    for i, action in enumerate(actions):
        forward = actions[i + 1 :] + [final]
        if draw(st.booleans()):
            decision = main.decision(f"D{i}")
            main.flow(action, decision)
            back = draw(st.sampled_from(actions))
            limit = draw(st.integers(min_value=1, max_value=3))
            target = back
            if use_merge and back != action:
                merge = main.merge(f"M{i}")
                main.flow(merge, back)
                target = merge
            main.flow(decision, target, guard=f"c{i} < {limit}")
            main.flow(decision, draw(st.sampled_from(forward)), guard="else")
        else:
            main.flow(action, draw(st.sampled_from(forward)))
    return b.build(), {f"c{i}": 0 for i in range(count)}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs())
def test_generated_code_matches_reference_interpreter(case: tuple[Model, dict[str, int]]) -> None:
    model, values = case
    expected = reference_run(model, values)
    source = generate(model).text
    module = load_module(source)
    p = run_module(module)
    assert p.trace == expected, source


def test_reference_interpreter_agrees_on_a_hand_written_loop():
    b = ModelBuilder()
    b.global_var("i", 0)
    main = b.activity("main", main=True)
    m, d = main.merge(), main.decision()
    work = main.action("Work", 1, code="i = i + 1")
    main.chain(main.initial(), m, work, d)
    main.flow(d, m, guard="i < 3")
    main.flow(d, main.final(), guard="else")
    model = b.build()
    assert reference_run(model, {"i": 0}) == ["Work"] * 3
    assert run_module(load_module(generate(model).text)).trace == ["Work"] * 3


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs())
def test_the_flat_state_machine_form_matches_the_reference_interpreter(
    case: tuple[Model, dict[str, int]],
) -> None:
    """The form used for diagrams nested too deeply behaves like the structured one on every graph."""
    from uml2perf import generation
    from uml2perf.handlers.registry import create_handler

    model, values = case
    expected = reference_run(model, values)
    main = next(a for a in model.activities if a.is_main)
    flat = generation._generate(model, create_handler("python", {}), main, (), {}, flat=True).text
    if any(n.kind is NodeKind.DECISION for n in main.region.nodes):
        assert "_state" in flat  # a straight chain needs no state machine
    assert run_module(load_module(flat)).trace == expected, flat


def test_statements_print_their_fields_as_dataclasses_do():
    """The records of the statement IR share one ``__repr__`` (``Name(field=value, ...)``, fields in the
    order ``__init__`` takes them) and refuse assignment as frozen dataclasses do."""
    import dataclasses
    import inspect

    from uml2perf.controlflow import ir
    from uml2perf.model import Node, NodeKind

    node = Node("_a", "A", NodeKind.ACTION, "OpaqueAction")
    cond = ir.Cond(ir.CondKind.GUARD, "x > 0")
    body = ir.Sequence((ir.Exec(node), ir.Break()))
    assert repr(ir.Exec(node)) == f"Exec(node={node!r}, function=None)"
    assert repr(ir.Break()) == "Break()"
    assert repr(body) == f"Sequence(body=(Exec(node={node!r}, function=None), Break()))"
    assert repr(cond) == (
        f"Cond(kind={ir.CondKind.GUARD!r}, text='x > 0', location={cond.location!r}, edge=None, negate=False)"
    )
    assert repr(ir.Branch(cond, body)) == f"Branch(cond={cond!r}, body={body!r})"
    assert repr(ir.Transition(None, -1)) == "Transition(cond=None, target=-1)"
    records = [
        cls
        for cls in vars(ir).values()
        if isinstance(cls, type) and issubclass(cls, ir._Printed) and cls is not ir._Printed
    ]
    assert len(records) > 20
    for cls in records:
        assert "__repr__" not in vars(cls) and "__setattr__" not in vars(cls)
        if cls is not ir.Statement:
            parameters = list(inspect.signature(cls).parameters)
            assert parameters == list(cls.__slots__), cls  # every field, in order, set by __init__
    assert not hasattr(body, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        body.body = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del cond.text  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        cond.other = 1  # type: ignore[attr-defined]
