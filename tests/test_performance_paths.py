"""The fast paths of a large conversion give exactly what the general paths give.

* recovery of a straight chain (one pass) against the general graph walk,
  on random chains, and the shapes that must not take the fast path;
* the traverser driving one handler against the same walk driving several,
  pruning included;
* the private cache of compiled code (:mod:`uml2perf.cache`) and of compiled
  templates: used when safe, ignored when disabled, unsafe or damaged;
* built-in handler names resolve without scanning installed metadata;
* the console entry point leaves the collector as it found it.

No timing is asserted here: the machine is shared, and speed is the
benchmark's business (``benchmarks/run.py``).
"""

from __future__ import annotations

import gc
import sys

import pytest
from builders import ModelBuilder
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic import chain_model, write_model

from uml2perf.cli import main
from uml2perf.controlflow import Block, Exec, Repeat, Run, graph, recover_model, walk
from uml2perf.generation import generate
from uml2perf.handlers.base import ContentHandler
from uml2perf.model import Edge, Model, Node, NodeKind, Region
from uml2perf.navigation import StructureNavigator, Traverser

# ----------------------------------------------------------------------------- chains

#: Node kinds a chain may pass through (each with one flow in and one out).
_PASS_THROUGH = ("action", "merge", "fork", "decision", "join", "object", "repeat", "block")


def _chain(steps: list[str], ending: str, order: list[int]) -> Model:
    """initial → one node per step → ending (final, flow final or nothing), nodes added in ``order``."""
    b = ModelBuilder("chain")
    main = b.activity("main", main=True)
    made: dict[int, str] = {}
    for index in order:
        kind = steps[index]
        name = f"S{index}"
        if kind == "action":
            made[index] = main.action(name, index + 1)
        elif kind == "repeat":
            made[index] = main.action(name, 1, repeat=3)
        elif kind == "block":
            inner = main.structured(name)
            inner.sequence(f"{name}a", f"{name}b")
            made[index] = inner.id  # type: ignore[attr-defined]
        else:
            made[index] = getattr(main, kind)(name)
    ids = [main.initial(), *(made[i] for i in range(len(steps)))]
    if ending == "final":
        ids.append(main.final())
    elif ending == "flow_final":
        ids.append(main.flow_final())
    main.chain(*ids)
    return b.build()


def _shape(model: Model) -> tuple[list[tuple[str, str | None]], list[str]]:
    """Every recovered statement (kind and node id, depth first) and the diagnostics' text.

    A run of plain actions counts as its actions (what it holds, one ``Exec`` each).
    """
    recovered = recover_model(model)
    shape = [
        (type(s).__name__, getattr(getattr(s, "node", None), "id", None))
        for item in recovered.activities
        for s in walk(item.body)
        if not isinstance(s, Run)
    ]
    return shape, [str(d) for d in recovered.diagnostics]


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(st.sampled_from(_PASS_THROUGH), max_size=12),
    ending=st.sampled_from(("final", "flow_final", "none")),
    seed=st.randoms(use_true_random=False),
)
def test_a_chain_recovers_as_the_general_walk_does(steps, ending, seed):
    order = list(range(len(steps)))
    seed.shuffle(order)  # file order differs from flow order
    model = _chain(steps, ending, order)
    assert graph.straight_chain(model.activities[0].region) is not None
    fast = _shape(model)
    general_chain = graph.straight_chain
    try:
        graph.straight_chain = lambda region: None  # every region through the general walk
        general = _shape(model)
    finally:
        graph.straight_chain = general_chain
    assert fast == general
    assert generate(model).text == _generated_without_fast_path(model)


def _generated_without_fast_path(model: Model) -> str:
    saved = graph.straight_chain
    graph.straight_chain = lambda region: None
    try:
        return generate(model).text
    finally:
        graph.straight_chain = saved


def test_chain_statements_keep_their_kinds():
    model = _chain(["action", "repeat", "block", "merge"], "final", [3, 2, 1, 0])
    body = recover_model(model).activities[0].body.body
    assert [type(s) for s in body] == [Exec, Repeat, Block]  # the merge says nothing, the tail return goes


def _region(build) -> Region:
    b = ModelBuilder("m")
    main = b.activity("main", main=True)
    build(main)
    return b.build().activities[0].region


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda m: None, id="empty"),
        pytest.param(lambda m: m.chain(m.action("A", 1), m.final()), id="no initial"),
        pytest.param(
            lambda m: (m.chain(m.initial(), m.action("A", 1)), m.chain(m.initial(), m.action("B", 1))),
            id="two initials",
        ),
        pytest.param(
            lambda m: (m.chain(m.initial(), m.final()), m.action("Orphan", 1)), id="unreachable node"
        ),
        pytest.param(lambda m: _two_ways(m), id="decision"),
        pytest.param(lambda m: _final_then_more(m), id="final inside"),
        pytest.param(lambda m: _loop(m), id="cycle"),
    ],
)
def test_other_shapes_take_the_general_walk(build):
    assert graph.straight_chain(_region(build)) is None


def _two_ways(m) -> None:
    d, a, b, j = m.decision(), m.action("A", 1), m.action("B", 1), m.merge()
    m.chain(m.initial(), d)
    m.flow(d, a, guard="x > 0")
    m.flow(d, b, guard="else")
    m.chain(a, j)
    m.chain(b, j, m.final())


def _final_then_more(m) -> None:
    m.chain(m.initial(), m.action("A", 1), m.final(), m.action("B", 1))


def _loop(m) -> None:
    merge, a = m.merge(), m.action("A", 1)
    m.chain(m.initial(), merge, a, merge)


# ----------------------------------------------------------------------------- walking


class _Recorder(ContentHandler):
    """Records every visit and leave; prunes the kinds it is told to."""

    def __init__(self, prune: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.events: list[tuple[str, str]] = []
        self.prune = prune

    def visit(self, element):
        kind = type(element).__name__
        self.events.append(("visit", kind))
        return False if kind in self.prune else None

    def leave(self, element):
        self.events.append(("leave", type(element).__name__))


def _branchy_model() -> Model:
    b = ModelBuilder("branchy")
    b.global_var("x", 1)
    main = b.activity("main", main=True)
    d, a, bb, m = main.decision(), main.action("A", 1), main.action("B", 1), main.merge()
    f, c, e, j = main.fork(), main.action("C", 1), main.action("E", 1), main.join()
    main.chain(main.initial(), d)
    main.flow(d, a, guard="x > 0")
    main.flow(d, bb, guard="else")
    main.chain(a, m)
    main.chain(bb, m, f)
    main.chain(f, c, j)
    main.chain(f, e, j, main.final())
    return b.build()


@pytest.mark.parametrize("prune", [(), ("Branch",), ("Lane", "Exec"), ("ActivityBody",), ("RecoveredModel",)])
def test_walk_visits_and_leaves_as_the_steps_do(prune):
    recovered = recover_model(_branchy_model())
    single, reference = _Recorder(prune), _Recorder(prune)
    Traverser(StructureNavigator(recovered), single).run()
    Traverser(StructureNavigator(recovered), reference, _Recorder()).run()  # one walk, two handlers
    assert single.events == reference.events
    assert ("visit", "If") in single.events or "RecoveredModel" in prune or "ActivityBody" in prune


# ----------------------------------------------------------------------------- start-up and exit


def test_builtin_handler_names_need_no_metadata_scan(monkeypatch):
    import importlib.metadata

    from uml2perf.handlers.registry import load_handler

    def no_scan(**kwargs):
        raise AssertionError("entry points scanned for a built-in handler")

    monkeypatch.setattr(importlib.metadata, "entry_points", no_scan)
    assert load_handler("python").__name__ == "PythonHandler"
    assert load_handler("dot").name == "dot"


def test_console_entry_restores_the_collector(tmp_path, monkeypatch, capsys):
    model = write_model(tmp_path / "chain.uml", chain_model(30))
    out_console, out_call = tmp_path / "console.py", tmp_path / "call.py"
    monkeypatch.setattr(sys, "argv", ["uml2perf", "convert", str(model), "-o", str(out_console)])
    was_enabled = gc.isenabled()
    try:
        assert main() == 0
        assert gc.isenabled() == was_enabled
    finally:
        gc.unfreeze()  # the console entry freezes what is left for the exit; this process goes on
    assert main(["convert", str(model), "-o", str(out_call)]) == 0
    assert out_console.read_text() == out_call.read_text()
    assert "error" not in capsys.readouterr().err


def test_the_synthetic_chain_takes_the_fast_path():
    from uml2perf.reader import read_bytes

    region = read_bytes(chain_model(50).encode(), "chain.uml").activities[0].region
    chain = graph.straight_chain(region)
    assert chain is not None and chain[0].kind is NodeKind.INITIAL and len(chain) == len(region.nodes)


# ----------------------------------------------------------------------------- chains in file order

#: Kinds of the nodes of the random regions below (several initial and final nodes may be drawn).
_REGION_KINDS = (NodeKind.INITIAL, NodeKind.ACTION, NodeKind.ACTION, NodeKind.MERGE, NodeKind.ACTIVITY_FINAL)


def _raw_region(kinds: list[NodeKind], flows: list[tuple[int, int]], repeated_id: bool = False) -> Region:
    nodes = tuple(Node(f"n{i}", f"N{i}", kind, "OpaqueAction") for i, kind in enumerate(kinds))
    if repeated_id and len(nodes) > 1:
        nodes = (*nodes[:-1], Node("n0", "again", kinds[-1], "OpaqueAction"))
    edges = tuple(Edge(f"e{j}", f"n{s}", f"n{t}") for j, (s, t) in enumerate(flows))
    return Region(nodes, edges)


def _general_chain(region: Region, monkeypatch: pytest.MonkeyPatch) -> list[Node] | None:
    with monkeypatch.context() as patch:
        patch.setattr(graph, "_chain_in_file_order", lambda region: False)
        return graph.straight_chain(region)


@settings(max_examples=200, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(_REGION_KINDS), min_size=1, max_size=8),
    change=st.sampled_from(("none", "drop", "repeat", "reverse", "skip", "self", "extra", "repeated id")),
    at=st.integers(min_value=0, max_value=10),
)
def test_the_file_order_test_agrees_with_the_general_one(kinds, change, at):
    """Flows linking each node to the next in the file, as exporters write chains, then one change."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        flows = [(i, i + 1) for i in range(len(kinds) - 1)]
        if flows:
            k = at % len(flows)
            s, t = flows[k]
            if change == "drop":
                del flows[k]
            elif change == "repeat":
                flows.append(flows[k])
            elif change == "reverse":
                flows[k] = (t, s)
            elif change == "skip" and t + 1 < len(kinds):
                flows[k] = (s, t + 1)
            elif change == "self":
                flows[k] = (s, s)
            elif change == "extra":
                flows.append((t, s))
        region = _raw_region(kinds, flows, repeated_id=change == "repeated id")
        fast = graph.straight_chain(region)
        assert fast == _general_chain(region, monkeypatch)
        if graph._chain_in_file_order(region):
            assert fast == list(region.nodes)


def test_a_chain_in_file_order_takes_the_file_order_test(monkeypatch):
    region = _raw_region(
        [NodeKind.INITIAL, NodeKind.ACTION, NodeKind.ACTION, NodeKind.ACTIVITY_FINAL],
        [(0, 1), (1, 2), (2, 3)],
    )
    assert graph._chain_in_file_order(region)
    assert graph.straight_chain(region) == list(region.nodes) == _general_chain(region, monkeypatch)
    shuffled = Region((region.nodes[2], region.nodes[0], region.nodes[1], region.nodes[3]), region.edges)
    assert not graph._chain_in_file_order(shuffled)  # the general test takes it
    assert graph.straight_chain(shuffled) == list(region.nodes)


def test_actions_sharing_an_annotation_are_recovered_as_each_alone():
    """Recovery asks once per annotation whether an action is plain: shared ones, repeated or not."""
    b = ModelBuilder("shared")
    main = b.activity("main", main=True)
    start = main.initial()
    ids = [main.action(f"R{i}", 1, repeat=3) if i % 3 == 0 else main.action(f"A{i}", 2) for i in range(9)]
    main.chain(start, *ids, main.final())
    model = b.build()
    region = model.activities[0].region
    assert graph._chain_in_file_order(region)
    body = recover_model(model).activities[0].body.body
    assert [type(s).__name__ for s in body] == ["Repeat", "Run", "Repeat", "Run", "Repeat", "Run"]
    assert generate(model).text == _generated_without_fast_path(model)
