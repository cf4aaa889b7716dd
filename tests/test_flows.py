"""Every flow graph as drawn converts and runs with UML token semantics.

* MagicDraw-style fixtures (``tests/data/flows``) of the shapes real diagrams
  are full of: loops whose body holds a fork and its join (as a decision and
  merge, and as a LoopNode), forks whose branches loop back before the fork,
  joins reached by only some branches, several initial nodes, a flow leaving a
  loop from inside a fork, flow finals inside concurrent branches, actions
  whose guarded outgoing flows are a choice.  ``check``, ``convert`` and
  ``run`` of each exit 0, and the predicted time is the one worked out by hand
  in each file's comment (one process on the default 4-core machine, so
  concurrent branches really overlap).
* A reference token game played on the model graph itself, compared with the
  generated token-flow form on random graphs with forks, joins, loops and
  finals; and the token-flow form compared with the structured form where both
  apply.
* Broken parts of real exports are warnings that name the element.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from collections import Counter, deque
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from builders import ModelBuilder
from conftest import find_corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stubs import IterationLimit, load_module, run_module

from uml2perf import generation
from uml2perf.cli import main as cli_main
from uml2perf.controlflow import Parallel, TokenFlow, recover_model, walk
from uml2perf.controlflow.graph import exclusive
from uml2perf.errors import ModelError, Severity
from uml2perf.handlers.registry import create_handler
from uml2perf.model import Model, NodeKind
from uml2perf.profile import main_activity
from uml2perf.reader import read_bytes, read_model

DATA = Path(__file__).resolve().parent / "data" / "flows"


def _cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = cli_main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


# -------------------------------------------------------------------------- real shapes

#: file, predicted time worked out by hand (see the comment in each file), the form it takes
SHAPES = [
    ("md-loop-fork-join.mdxml", 7.5, "structured"),
    ("md-loopnode-fork-join.mdxml", 7.5, "structured"),
    ("md-fork-loops-back.mdxml", 4.0, "tokens"),
    ("md-join-some-branches.mdxml", 3.0, "tokens"),
    ("md-two-initials.mdxml", 3.0, "structured"),
    ("md-exit-loop-from-fork.mdxml", 8.5, "tokens"),
    # stopped check and convert with an internal error before (Unstructured escaping recovery)
    ("md-loop-fork-data-flow.mdxml", 8.5, "tokens"),
    ("md-flow-final-in-branch.mdxml", 3.0, "structured"),
    ("md-guarded-action-choice.mdxml", 4.0, "structured"),
]


@pytest.mark.parametrize(("name", "seconds", "form"), SHAPES)
def test_each_real_shape_checks_converts_and_runs_with_the_time_worked_out_by_hand(
    name: str, seconds: float, form: str, tmp_path: Path
) -> None:
    path = DATA / name
    status, out, err = _cli("check", "--verbose", path)
    assert status == 0, out + err
    assert "internal error" not in out + err
    assert ("token-flow form" in out) == (form == "tokens"), out
    target = tmp_path / "model.py"
    status, out, err = _cli("convert", path, "-o", target)
    assert status == 0, err
    text = target.read_text()
    assert ("tokens.flow(" in text) == (form == "tokens")
    status, out, err = _cli("run", path, "--json", "--procs", "1")
    assert status == 0, err
    assert json.loads(out)["time"] == pytest.approx(seconds)


@pytest.mark.skipif(
    shutil.which("ruff") is None and not Path(sys.executable).with_name("ruff").exists(), reason="no ruff"
)
def test_token_flow_code_is_formatted_and_names_one_function_per_node(tmp_path: Path) -> None:
    target = tmp_path / "model.py"
    status, _, err = _cli("convert", DATA / "md-exit-loop-from-fork.mdxml", "-o", target)
    assert status == 0, err
    text = target.read_text()
    for name in ("Loop", "Setup", "Split", "Work", "Check", "Done", "Sync", "Report"):
        assert f"    def node_{name}(p, v):" in text
    assert "yield from tokens.flow(p, E_Split, (node_initial,), {node_Sync: 2})" in text
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    done = subprocess.run([ruff, "format", "--check", "--diff", str(target)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("name", "seconds"), [(n, t) for n, t, form in SHAPES if form == "structured"])
def test_the_token_flow_form_predicts_the_same_time_as_the_structured_form(name: str, seconds: float) -> None:
    """On the simulator, with branches as threads on the cores, both forms give the hand-worked time."""
    from uml2perf_runtime import simulate

    model = read_model(DATA / name)
    text = _token_form(model)
    assert "tokens.flow(" in text
    assert simulate(load_module(text).MODEL, procs=1).time == pytest.approx(seconds)


def test_an_activity_final_in_a_token_flow_section_ends_the_whole_loop_node() -> None:
    b = ModelBuilder()
    b.global_var("i", 0)
    main = b.activity("main", main=True)
    loop = main.loop_node("L", decider="i < 3")
    f, j = loop.fork("F"), loop.join("J")
    a, bb, c = loop.action("A", 1, code="i = i + 1"), loop.action("B", 1), loop.action("C", 1)
    stop, done = loop.final(), loop.flow_final()
    loop.chain(f, a, j)
    loop.chain(f, bb, j)
    loop.chain(f, c, stop)
    loop.chain(j, done)
    loop.body.extend([f, j, a, bb, c, stop, done])
    after = main.action("After", 1)
    main.chain(main.initial(), loop.id, after, main.final())
    text = generation.generate(b.build()).text
    assert "_flow_ended = yield from tokens.flow(" in text
    assert run_module(load_module(text)).trace == ["A", "B", "C", "After"]


def test_join_reached_by_only_some_branches_runs_what_follows_it_once() -> None:
    b = ModelBuilder()
    main = b.activity("main", main=True)
    f, j = main.fork("F"), main.join("J")
    a, bb, c, d = (main.action(n, 1) for n in "ABCD")
    main.chain(main.initial(), f)
    main.chain(f, a, j)
    main.chain(f, bb, j)
    main.chain(f, c, main.flow_final())
    main.chain(j, d, main.final())
    model = b.build()
    trace = run_module(load_module(generation.generate(model).text)).trace
    assert Counter(trace) == Counter("ABCD")
    assert reference_run(model, {}) == trace


def test_two_token_flows_in_one_activity_name_their_node_functions_apart() -> None:
    b = ModelBuilder()
    main = b.activity("main", main=True)
    inner = []
    for label in ("S", "T"):
        region = main.structured(label)
        f, j = region.fork("F"), region.join("J")
        a, bb, c, d = (region.action(n, 1) for n in "ABCD")
        region.chain(region.initial(), f)
        region.chain(f, a, j)
        region.chain(f, bb, j)
        region.chain(f, c, region.flow_final())
        region.chain(j, d, region.flow_final())
        inner.append(region.id)
    main.chain(main.initial(), *inner, main.final())
    text = generation.generate(b.build()).text
    assert text.count("    def node_A(p, v):") == 1 and text.count("    def node_A_2(p, v):") == 1
    assert text.count("yield from tokens.flow(") == 2
    assert Counter(run_module(load_module(text)).trace) == Counter("ABCD" * 2)


def test_a_loop_whose_body_holds_a_fork_and_join_stays_structured() -> None:
    b = ModelBuilder()
    b.global_var("i", 0)
    main = b.activity("main", main=True)
    m, d, f, j = main.merge("M"), main.decision("D"), main.fork("F"), main.join("J")
    a, bb, s = main.action("A", 1), main.action("B", 2), main.action("S", 1, code="i = i + 1")
    main.chain(main.initial(), m, f)
    main.chain(f, a, j)
    main.chain(f, bb, j)
    main.chain(j, s, d)
    main.flow(d, m, guard="i < 3")
    main.flow(d, main.final(), guard="else")
    recovered = recover_model(b.build())
    statements = [s for top in recovered.activities[0].body.body for s in walk(top)]
    assert any(isinstance(s, Parallel) for s in statements)
    assert not any(isinstance(s, TokenFlow) for s in statements)
    assert not recovered.diagnostics


def test_token_flow_on_the_simulator_runs_branches_as_threads() -> None:
    from uml2perf_runtime import simulate

    model = read_model(DATA / "md-fork-loops-back.mdxml")
    module = load_module(generation.generate(model).text)
    result = simulate(module.MODEL, procs=1)
    assert result.time == pytest.approx(4.0)


def test_the_analytic_fast_path_refuses_a_token_flow() -> None:
    from uml2perf_runtime.analysis.analytic import NotAnalytic, evaluate

    model = read_model(DATA / "md-join-some-branches.mdxml")
    module = load_module(generation.generate(model).text)
    with pytest.raises(NotAnalytic, match="fork"):
        evaluate(module.MODEL, procs=1)


# -------------------------------------------------------------------------- implicit choice


def test_guarded_action_flows_are_a_choice_and_check_says_so() -> None:
    status, out, _ = _cli("check", "--verbose", DATA / "md-guarded-action-choice.mdxml")
    assert status == 0
    assert "implicit fork" in out and "it is a choice" in out and "xmi:id=w" in out


def test_guards_on_the_flows_of_a_fork_let_a_token_pass_only_where_they_hold() -> None:
    traces = []
    for n in (5, 1):
        b = ModelBuilder()
        b.global_var("n", n)
        main = b.activity("main", main=True)
        f = main.fork("F")
        x, y, z = main.action("X", 1), main.action("Y", 1), main.action("Z", 1)
        main.chain(main.initial(), f)
        main.flow(f, x, guard="n > 2")
        main.flow(f, y)
        main.chain(x, main.flow_final())
        main.chain(y, z, main.final())
        text = generation.generate(b.build()).text
        assert "# F (xmi:id=" in text and "fork, a token on each flow whose guard holds" in text
        traces.append(run_module(load_module(text)).trace)
    assert traces == [["X", "Y", "Z"], ["Y", "Z"]]


def test_guards_that_may_hold_together_give_a_token_to_each_flow_whose_guard_holds() -> None:
    b = ModelBuilder()
    b.global_var("n", 5)
    main = b.activity("main", main=True)
    w, x, y = main.action("W", 1), main.action("X", 1), main.action("Y", 1)
    main.chain(main.initial(), w)
    main.flow(w, x, guard="n > 2")
    main.flow(w, y, guard="n > 3")
    main.chain(x, main.final())
    main.chain(y, main.final())
    model = b.build()
    generated = generation.generate(model)
    (warning,) = [d for d in generated.diagnostics if d.code == "implicit-fork-guards"]
    assert warning.severity is Severity.WARNING and "[n > 2]" in warning.message
    assert "tokens.flow(" in generated.text and "offers.append((node_X, 0))" in generated.text
    for n, ran in [(5, "WXY"), (3, "WX"), (1, "W")]:
        trace = run_module(load_module(generated.text), overrides={"n": n}).trace
        assert trace == list(ran) == reference_run(model, {"n": n})


@pytest.mark.parametrize(
    ("guards", "expected"),
    [
        (["n > 2", "n <= 2"], True),
        (["2 < n", "n <= 2"], True),
        (["x = 1", "x = 2", "x = 3"], True),
        (["ok", "not ok"], True),
        (["x <> 1", "x = 1"], True),
        (["n > 2", "n > 3"], False),
        (["a < 1", "b > 2"], False),
        (["n >= 2", "n <= 2"], False),
        (["n > 2", "no such + + guard"], False),
    ],
)
def test_exclusive_guards_are_proven_not_guessed(guards: list[str], expected: bool) -> None:
    assert exclusive(guards) is expected


# -------------------------------------------------------------------------- broken exports

BROKEN = b"""<?xml version="1.0" encoding="UTF-8"?>
<xmi:XMI xmi:version="20131001" xmlns:xmi="http://www.omg.org/spec/XMI/20131001"
 xmlns:uml="http://www.eclipse.org/uml2/5.0.0/UML" xmlns:uml2perf="http://uml2perf.org/profile/1.0">
  <uml:Model xmi:id="_model" name="broken">
    <packagedElement xmi:type="uml:Activity" xmi:id="_act" name="Main">
      <node xmi:type="uml:InitialNode" xmi:id="_init"/>
      <node xmi:type="uml:OpaqueAction" xmi:id="_a" name="Work"/>
      <node xmi:type="uml:OpaqueAction" xmi:id="_b" name="More"/>
      <node xmi:type="uml:ActivityFinalNode" xmi:id="_fin"/>
      <edge xmi:type="uml:ControlFlow" xmi:id="_e1" source="_init" target="_a"/>
      <edge xmi:type="uml:ControlFlow" xmi:id="_e2" source="_a" target="_b"/>
      <edge xmi:type="uml:ControlFlow" xmi:id="_e3" source="_b" target="_fin"/>
      <edge xmi:type="uml:ControlFlow" xmi:id="_e4" name="dangling" source="_a"/>
      <edge xmi:type="uml:ControlFlow" xmi:id="_e5" target="_b"/>
      <edge xmi:type="uml:ControlFlow" xmi:id="_e6" source="_a" target="_nowhere"/>
    </packagedElement>
    <packagedElement xmi:type="uml:Activity" xmi:id="_empty" name="Empty"/>
    <packagedElement xmi:type="uml:Activity" xmi:id="_dup1" name="Helper">
      <node xmi:type="uml:InitialNode" xmi:id="_i2"/>
      <node xmi:type="uml:OpaqueAction" xmi:id="_h1" name="H1"/>
      <edge xmi:type="uml:ControlFlow" xmi:id="_he1" source="_i2" target="_h1"/>
    </packagedElement>
    <packagedElement xmi:type="uml:Activity" xmi:id="_dup2" name="Helper">
      <node xmi:type="uml:InitialNode" xmi:id="_i3"/>
      <node xmi:type="uml:OpaqueAction" xmi:id="_h2" name="H2"/>
      <edge xmi:type="uml:ControlFlow" xmi:id="_he2" source="_i3" target="_h2"/>
    </packagedElement>
  </uml:Model>
  <uml2perf:main xmi:id="_s0" base_Activity="_act"/>
  <uml2perf:ActionPlus xmi:id="_s1" base_Action="_a" cost="1"/>
  <uml2perf:ActionPlus xmi:id="_s2" base_Action="_b" cost="2"/>
  <uml2perf:ActionPlus xmi:id="_s3" base_Action="_h1" cost="4"/>
  <uml2perf:ActionPlus xmi:id="_s4" base_Action="_h2" cost="8"/>
</xmi:XMI>
"""


def test_broken_parts_are_warnings_naming_the_element_and_the_rest_converts_and_runs(tmp_path: Path) -> None:
    path = tmp_path / "broken.uml"
    path.write_bytes(BROKEN)
    status, out, err = _cli("check", "--verbose", path)
    assert status == 0, out + err
    for element, words in [
        ("_e4", "flow has no target"),
        ("_e5", "flow has no source"),
        ("_e6", "'_nowhere'"),
        ("_empty", "activity has no nodes"),
        ("_dup2", "a second activity is named 'Helper'"),
    ]:
        (line,) = [line for line in out.splitlines() if f"xmi:id={element}]" in line]
        assert "warning" in line and words in line, line
    status, out, err = _cli("run", path, "--json", "--procs", "1")
    assert status == 0, err
    assert json.loads(out)["time"] == pytest.approx(3.0)


def test_activity_chosen_by_id_and_a_shared_name_lists_the_ids(tmp_path: Path) -> None:
    model = read_bytes(BROKEN, "broken.uml")
    assert main_activity(model, "_dup2").id == "_dup2"
    assert main_activity(model, "Empty").id == "_empty"
    with pytest.raises(ModelError) as caught:
        main_activity(model, "Helper")
    assert "_dup1" in caught.value.message and "_dup2" in caught.value.message
    path = tmp_path / "broken.uml"
    path.write_bytes(BROKEN)
    status, out, err = _cli("run", path, "--json", "--procs", "1", "--activity", "_dup2")
    assert status == 0, err
    assert json.loads(out)["time"] == pytest.approx(8.0)
    status, _, err = _cli("run", path, "--activity", "Helper")
    assert status == 1 and "_dup1" in err and "_dup2" in err and "Traceback" not in err


# -------------------------------------------------------------------------- the token game


def reference_run(model: Model, values: dict[str, int], limit: int = 5_000) -> list[str]:
    """Play UML's token game on the main activity as drawn; return the executed action names.

    Tokens take turns one node at a time in the order they were offered.  An
    action, merge, fork or initial node offers a token on every outgoing flow
    (an action whose flows carry guards offers one, on the first that holds,
    ``else`` last, as a decision does); a join runs once each of its incoming
    flows (from nodes that can run) holds a token; an activity final ends the
    game, a flow final consumes its token; where the branches of a fork meet at
    another node, that node waits for them too (see :func:`_waits`).  Code
    fragments are ``c = c + 1``.
    """
    activity = next(a for a in model.activities if a.is_main)
    region = activity.region
    nodes = {n.id: n for n in region.nodes}
    outs: dict[str, list] = {n.id: [] for n in region.nodes}
    for edge in region.edges:
        outs[edge.source].append(edge)
    starts = [n.id for n in region.nodes if n.kind is NodeKind.INITIAL]
    reachable = set(starts)
    work = list(starts)
    while work:
        for edge in outs[work.pop()]:
            if edge.target not in reachable:
                reachable.add(edge.target)
                work.append(edge.target)
    inputs = _waits(region, starts, reachable)
    waiting: dict[str, Counter[int]] = {n: Counter() for n in nodes}
    env = dict(values)
    trace: list[str] = []
    queue: deque[str] = deque(starts)
    for _ in range(limit):
        if not queue:
            return trace
        current = queue.popleft()
        node = nodes[current]
        if node.kind is NodeKind.ACTIVITY_FINAL:
            return trace
        if node.kind is NodeKind.ACTION:
            if node.code:
                target, _, expr = node.code.partition("=")
                env[target.strip()] = eval(expr, {}, dict(env))  # noqa: S307 - our own test text
            trace.append(node.name)
        edges = outs[current]
        implicit_fork = (
            node.kind is NodeKind.ACTION
            and len(edges) > 1
            and all(e.guard not in (None, "else") for e in edges)
            and not exclusive([e.guard for e in edges])
        )
        if implicit_fork:  # a token on each flow whose guard holds
            edges = [e for e in edges if eval(e.guard, {}, dict(env))]  # noqa: S307
        elif len(edges) > 1 and (node.kind is NodeKind.DECISION or any(e.guard for e in edges)):
            guarded = [e for e in edges if e.guard not in (None, "else")]
            otherwise = [e for e in edges if e.guard in (None, "else")]
            chosen = next(
                (e for e in guarded + otherwise if e.guard in (None, "else") or eval(e.guard, {}, dict(env))),  # noqa: S307
                None,
            )
            edges = [chosen] if chosen is not None else []
        for edge in edges:
            ports = inputs[edge.target]
            if edge.id in ports:
                counts = waiting[edge.target]
                counts[ports[edge.id]] += 1
                if not all(counts[i] for i in set(ports.values())):
                    continue
                for i in set(ports.values()):
                    counts[i] -= 1
            queue.append(edge.target)
    raise IterationLimit("reference run did not end")


def _waits(region, starts: list[str], reachable: set[str]) -> dict[str, dict[str, int]]:
    """The incoming flows (id → input) each node waits for together: a join's, a fork's branches' end.

    A join waits for a token on each of its flows from nodes that can run.
    A node whose incoming flows come from the branches of a fork (their
    nearest common dominator forks: a fork, an action with several unguarded
    flows, several initial nodes) waits for one token from each branch; flows
    from the branches of a decision, or coming back round a loop, pass.
    """
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(["entry", "exit", *(n.id for n in region.nodes)])
    for start in starts:
        graph.add_edge("entry", start)
    for edge in region.edges:
        if edge.source in reachable:
            graph.add_edge(edge.source, edge.target)
    for node in region.nodes:
        if node.id in reachable and (
            node.kind in (NodeKind.ACTIVITY_FINAL, NodeKind.FLOW_FINAL) or not graph.out_degree(node.id)
        ):
            graph.add_edge(node.id, "exit")
    graph = graph.subgraph(nx.descendants(graph, "entry") | {"entry", "exit"}).copy()
    dominators = nx.immediate_dominators(graph, "entry")

    def dominates(a: str, b: str) -> bool:
        while b != a and dominators.get(b, b) != b:
            b = dominators[b]
        return a == b

    waits: dict[str, dict[str, int]] = {n.id: {} for n in region.nodes}
    kinds = {n.id: n.kind for n in region.nodes}
    flows = [e for e in region.edges if e.source in graph]
    for node in region.nodes:
        incoming = [e.id for e in flows if e.target == node.id]
        if node.kind is NodeKind.JOIN and len(incoming) > 1:
            waits[node.id] = {edge: number for number, edge in enumerate(incoming)}

    def forks(node: str) -> bool:
        outs = [e for e in flows if e.source == node]
        if node == "entry":
            return graph.out_degree("entry") > 1
        kind = kinds[node]
        return len(outs) > 1 and (
            kind is NodeKind.FORK or (kind is not NodeKind.DECISION and not any(e.guard for e in outs))
        )

    def above(node: str) -> list[str]:
        found = [node]
        while dominators.get(found[-1], found[-1]) != found[-1]:
            found.append(dominators[found[-1]])
        return found

    for node in region.nodes:
        meet = node.id
        if meet not in graph or waits[meet]:
            continue
        forward = [e for e in flows if e.target == meet and not dominates(meet, e.source)]
        if len(forward) < 2:
            continue
        common = set.intersection(*(set(above(e.source)) for e in forward))
        fork = next(n for n in above(forward[0].source) if n in common)
        if not forks(fork):
            continue  # alternatives of a decision: a merge
        # one token from each branch of the fork that reaches the meeting node
        starts_of = list(graph.successors(fork))
        inside = graph.copy()
        inside.remove_node(meet)
        branch_of: dict[str, int] = {}
        for edge in forward:
            if edge.source == fork:
                branch_of[edge.id] = starts_of.index(meet)
                continue
            for number, start in enumerate(starts_of):
                if start != meet and (start == edge.source or nx.has_path(inside, start, edge.source)):
                    branch_of[edge.id] = number
                    break
        numbers = sorted(set(branch_of.values()))
        if len(numbers) > 1:
            waits[meet] = {edge: numbers.index(number) for edge, number in branch_of.items()}
    return waits


@st.composite
def concurrent_graphs(draw: st.DrawFn) -> tuple[Model, dict[str, int]]:
    """Random activities with forks, joins, merges, decisions, several starts and flow finals.

    Every action ``A<i>`` counts its runs in ``c<i>``; a flow may go backwards
    only through a decision guarded ``c<i> < k``, so every game ends.  Fork
    branches meet at joins, end in finals, loop back before their fork, or
    leave a loop; joins may be reached by only some branches.
    """
    count = draw(st.integers(min_value=2, max_value=6))
    b = ModelBuilder("concurrent")
    for i in range(count):
        b.global_var(f"c{i}", 0)
    main = b.activity("main", main=True)
    actions = [main.action(f"A{i}", 1, code=f"c{i} = c{i} + 1") for i in range(count)]
    # activity finals race with concurrent branches (what else runs depends on timing): the
    # fixtures above check them; here branches end at flow finals
    finals = [main.flow_final("ff1"), main.flow_final("ff2")]
    joins: list[str] = []
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        main.flow(main.initial(), draw(st.sampled_from(actions)))
    for i, action in enumerate(actions):
        later = actions[i + 1 :]
        forward = later + joins[-1:] + finals
        shape = draw(st.sampled_from(["next", "decision", "fork", "fork", "join", "guarded"]))
        if shape == "decision":
            decision = main.decision(f"D{i}")
            main.flow(action, decision)
            main.flow(
                decision, draw(st.sampled_from(actions[: i + 1])), guard=f"c{i} < {draw(st.integers(1, 3))}"
            )
            main.flow(decision, draw(st.sampled_from(forward)), guard="else")
        elif shape == "fork":
            fork = main.fork(f"F{i}")
            main.flow(action, fork)
            for target in draw(st.lists(st.sampled_from(forward), min_size=2, max_size=3, unique=True)):
                main.flow(fork, target)
        elif shape == "guarded" and len(forward) > 1:
            # guards that may hold together: UML's implicit fork of guarded flows
            first, second = draw(st.lists(st.sampled_from(forward), min_size=2, max_size=2, unique=True))
            main.flow(action, first, guard=f"c{i} < {draw(st.integers(1, 3))}")
            main.flow(action, second, guard=f"c{i} < {draw(st.integers(1, 3))}")
        elif shape == "join" and later:
            join = main.join(f"J{i}")
            joins.append(join)
            main.flow(action, join)
            main.flow(join, draw(st.sampled_from(later + finals)))
        else:
            main.flow(action, draw(st.sampled_from(forward)))
    return b.build(), {f"c{i}": 0 for i in range(count)}


def _token_form(model: Model) -> str:
    return _token_output(model).text


def _token_output(model: Model) -> generation.GeneratedOutput:
    main = next(a for a in model.activities if a.is_main)
    handler = create_handler("python", {})
    return generation._generate(model, handler, main, [], {}, flat=False, tokens=True)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(concurrent_graphs())
def test_token_flow_form_plays_the_reference_token_game(case: tuple[Model, dict[str, int]]) -> None:
    model, values = case
    try:
        expected = reference_run(model, values)
    except IterationLimit:
        return  # tokens multiply faster than the game can end: nothing to compare
    source = _token_form(model)
    assert run_module(load_module(source), limit=100_000).trace == expected, source


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(concurrent_graphs())
def test_structured_and_token_flow_forms_run_the_same_actions_where_both_apply(
    case: tuple[Model, dict[str, int]],
) -> None:
    model, values = case
    try:
        expected = Counter(reference_run(model, values))
    except IterationLimit:
        return
    generated = generation.generate(model)
    token_form = _token_output(model)
    if any(d.code == "ambiguous-merge" for d in (*generated.diagnostics, *token_form.diagnostics)):
        return  # UML and the structured form read that node differently; the warning says so
    structured = "tokens.flow(" not in generated.text
    trace = Counter(run_module(load_module(generated.text), limit=100_000).trace)
    if structured:
        tokens = Counter(run_module(load_module(token_form.text), limit=100_000).trace)
        assert trace == tokens, generated.text
    assert trace == expected, generated.text


# -------------------------------------------------------------------------- the corpus


CORPUS = find_corpus()
CORPUS_FILES = (
    sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*") if p.is_file() and p.suffix != ".md")
    if CORPUS.is_dir()
    else []
)


@pytest.mark.skipif(not CORPUS_FILES, reason="the shared corpus is not here")
@pytest.mark.parametrize("relative", CORPUS_FILES)
def test_every_corpus_file_generates_in_both_forms_and_the_token_form_compiles(relative: str) -> None:
    try:
        model = read_model(CORPUS / relative)
    except ModelError:
        return  # the negative samples: no activity (test_corpus_end_to_end checks their message)
    if not model.activities:
        return
    main = model.activities[0]
    for tokens in (False, True):
        text = generation._generate(
            model, create_handler("python", {}), main, [], {}, flat=False, tokens=tokens
        ).text
        compile(text, relative, "exec")
