"""Generated statements: the templates own their shape, and their meaning follows UML.

* every statement kind the python handler produces is printed by a section of
  ``templates/_statements.py.jinja``; the handler itself writes no statement text;
* a wait sees the requests of isend/irecv posted anywhere in the process (another
  activity, another thread), not only in its own generated function;
* an activity final in a fork branch ends the whole activity (or the structured node
  it belongs to), every branch with it; a flow final ends its branch only;
* a final node inside a loop node ends the loop node, and its enter/leave bracket holds.

Expected times are computed by hand from the costs in each model.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from builders import ModelBuilder
from stubs import load_module, run_module

from uml2perf.generation import generate
from uml2perf.handlers.python import views as python_views
from uml2perf.model import Model, Role
from uml2perf_runtime import Element, Link, Machine, ModelSpec, simulate

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "templates" / "_statements.py.jinja"
HANDLER = ROOT / "uml2perf" / "handlers" / "python" / "handler.py"

LATENCY, BANDWIDTH = 1e-6, 1e9


def machine(cores: int = 4) -> Machine:
    link = Link(LATENCY, BANDWIDTH)
    return Machine(nodes=1, cores_per_node=cores, intra_node=link, inter_node=link)


def predict(model: Model, procs: int = 1, **kwargs: Any) -> Any:
    module = load_module(generate(model).text)
    return simulate(module.MODEL, machine(), procs=procs, **kwargs)


def element(result: Any, name: str) -> dict[str, Any]:
    return result.element(name)


# ---------------------------------------------------------------------------- templates own the shape


def _view_kinds() -> set[str]:
    kinds = {"break", "continue", "pass", "parallel", "critical", "taskpool"}
    for value in vars(python_views).values():
        if isinstance(value, type) and value.__module__ == python_views.__name__:
            kind = value.__dict__.get("kind")
            if isinstance(kind, str):
                kinds.add(kind)
    return kinds


def test_every_view_kind_has_a_template_section():
    text = TEMPLATE.read_text(encoding="utf-8")
    kinds = _view_kinds()
    assert {
        "compute",
        "comm",
        "call",
        "if",
        "while",
        "for",
        "repeat",
        "block",
        "fork",
        "state_machine",
    } <= kinds
    missing = sorted(kind for kind in kinds if f'k == "{kind}"' not in text)
    assert not missing, f"no section in {TEMPLATE.name} for {missing}"


def test_the_handler_writes_no_statement_text():
    """Statement text lives in templates/: the handler's string literals hold none of it."""
    tree = ast.parse(HANDLER.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    literals = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]
    shapes = (
        "yield from",
        "p.enter(",
        "p.leave(",
        "p.iteration(",
        "p.random(",
        "p.fork(",
        "def ",
        "while ",
        "for _ in",
        "nonlocal",
        "elif ",
    )
    offending = sorted({text for text in literals for shape in shapes if shape in text})
    assert not offending, offending


# ---------------------------------------------------------------------------- requests across activities


def test_wait_in_main_completes_a_receive_posted_in_a_called_activity():
    """Process 0 posts an irecv inside Post and waits for it in main; process 1 sends after 1 s."""
    n = 4000
    b = ModelBuilder()
    post = b.activity("Post")
    irecv = post.comm("Irecv", Role.IRECV, source=1, size=n)
    post.chain(post.initial(), irecv, post.final())
    main = b.activity("main", main=True)
    who = main.decision("Who")
    call = main.call("CallPost", post.id)
    wait = main.comm("Wait", Role.WAIT)
    work = main.action("Work", 1.0)
    send = main.comm("Send", Role.SEND, dest=0, size=n)
    main.chain(main.initial(), who)
    main.flow(who, call, guard="pid == 0")
    main.flow(who, work, guard="else")
    main.chain(call, wait, main.final())
    main.chain(work, send, main.final())
    result = predict(b.build(), procs=2)
    done = 1.0 + LATENCY + n / BANDWIDTH
    assert result.per_process[0]["time"] == pytest.approx(done)
    assert element(result, "Wait")["inclusive"] == pytest.approx(done)


def _hand_written(main: Any, *names: str) -> ModelSpec:
    elems = tuple(Element(i, name, "action") for i, name in enumerate(names))
    return ModelSpec("requests", "requests.uml", elems, main=main)


def test_wait_none_takes_every_pending_request_of_the_process_once():
    n = 1000
    elems: dict[str, Element] = {}

    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.irecv(elems["R"], 1, n, 0, 0)
            yield from p.irecv(elems["R"], 2, n, 0, 0)
            yield from p.wait(elems["W"], None, 0)  # both receives
            yield from p.wait(elems["W2"], None, 0)  # nothing left
        else:
            yield from p.compute(elems["C"], p.pid * 1e-3)
            yield from p.send(elems["S"], 0, n, 0, 0)

    spec = _hand_written(main, "R", "W", "W2", "C", "S")
    elems.update({e.name: e for e in spec.elements})
    result = simulate(spec, machine(), procs=3)
    assert result.per_process[0]["time"] == pytest.approx(2e-3 + LATENCY + n / BANDWIDTH)
    assert result.element("W2")["inclusive"] == 0.0


def test_threads_of_a_process_may_wait_for_the_same_request():
    """Both threads wait for every request of the process: no waiter is forgotten (no deadlock)."""
    n = 1000
    elems: dict[str, Element] = {}

    def body(t: Any, v: Any) -> Any:
        yield from t.irecv(elems["R"], 1, n, t.tid, 0)
        yield from t.wait(elems["W"], None, 0)

    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.parallel(elems["Team"], 2, body)
        else:
            for tag in (0, 1):
                yield from p.compute(elems["C"], 1e-3)
                yield from p.send(elems["S"], 0, n, tag, 0)

    spec = _hand_written(main, "R", "W", "Team", "C", "S")
    elems.update({e.name: e for e in spec.elements})
    result = simulate(spec, machine(), procs=2)
    assert result.per_process[0]["time"] == pytest.approx(2e-3 + LATENCY + n / BANDWIDTH)


def test_requests_never_waited_for_do_not_pile_up():
    from uml2perf_runtime.operations import point_to_point as comm

    pending: list[Any] = []
    for number in range(1000):
        request = comm.Request("recv", 0, 1, 0, 8, 0.0, number)
        request.start = request.done = 0.0  # finished at once
        comm._keep_pending(pending, request, 1.0)
    assert len(pending) < 64
    waiting = comm.Request("recv", 0, 1, 0, 8, 0.0, 0)
    for _ in range(200):
        comm._keep_pending(pending, waiting, 1.0)
    assert pending.count(waiting) == 200  # unfinished requests are kept


# ---------------------------------------------------------------------------- finals in fork branches


def _race(region: Any, *, final_kind: str = "activity") -> None:
    """fork → Quick (1 s) → final | Slow1 (2 s) → Slow2 (5 s) → flow final."""
    split = region.fork("Split")
    quick = region.action("Quick", 1)
    slow1, slow2 = region.action("Slow1", 2), region.action("Slow2", 5)
    end = region.final("Done") if final_kind == "activity" else region.flow_final("Done")
    region.chain(region.initial(), split)
    region.chain(split, quick, end)
    region.chain(split, slow1, slow2, region.flow_final())


def test_activity_final_in_a_fork_branch_ends_the_called_activity_and_every_branch():
    b = ModelBuilder()
    race = b.activity("Race")
    _race(race)
    main = b.activity("main", main=True)
    call = main.call("CallRace", race.id)
    after = main.action("After", 1)
    main.chain(main.initial(), call, after, main.final())
    model = b.build()
    out = generate(model)
    assert "_ended = True" in out.text and "nonlocal _ended" in out.text
    warned = [d for d in out.diagnostics if d.code == "final-ends-branches"]
    assert len(warned) == 1 and warned[0].location.name == "Done" and "flow final" in (warned[0].hint or "")
    result = predict(model)
    # Quick ends the activity at 1 s; Slow1, already running, stops when it finishes at 2 s
    assert result.time == pytest.approx(2 + 1)
    assert element(result, "Slow2")["calls"] == 0
    assert element(result, "After")["calls"] == 1
    assert element(result, "CallRace")["inclusive"] == pytest.approx(2)


def test_flow_final_in_a_fork_branch_ends_only_that_branch():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    _race(main, final_kind="flow")
    model = b.build()
    assert "_ended" not in generate(model).text
    result = predict(model)
    assert result.time == pytest.approx(2 + 5)
    assert element(result, "Slow2")["calls"] == 1


def test_activity_final_in_a_branch_inside_a_structured_node_ends_that_node_only():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    node = main.structured("Node")
    _race(node)
    after = main.action("After", 1)
    main.chain(main.initial(), node.id, after, main.final())
    result = predict(b.build())
    assert result.time == pytest.approx(2 + 1)
    assert element(result, "Node")["inclusive"] == pytest.approx(2)
    assert element(result, "After")["calls"] == 1


def test_activity_final_in_a_nested_fork_stops_the_outer_branches_too():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    outer, inner = main.fork("Outer"), main.fork("Inner")
    first = main.action("First", 1)
    quick = main.action("Quick", 1)
    busy = main.action("Busy", 1)
    later = main.action("Later", 10)
    long1, long2 = main.action("Long1", 3), main.action("Long2", 10)
    main.chain(main.initial(), outer)
    main.chain(outer, first, inner)
    main.chain(inner, quick, main.final())
    main.chain(inner, busy, later, main.flow_final())
    main.chain(outer, long1, long2, main.flow_final())
    result = predict(b.build())
    # Quick ends everything at 2 s; Busy stops at 2 s, Long1 when it finishes at 3 s
    assert result.time == pytest.approx(3)
    assert element(result, "Later")["calls"] == 0 and element(result, "Long2")["calls"] == 0


# ---------------------------------------------------------------------------- finals in loop nodes


def _search_model(*, setup: bool = True) -> Model:
    """A loop node: Step (1 s) counts i; at i >= 3 a final node ends the loop node, else Tick (0.5 s)."""
    b = ModelBuilder()
    b.global_var("i", 0)
    main = b.activity("main", main=True)
    loop = main.loop_node("Search", decider="i < 10")
    init = loop.action("Init", 0, code="i = 0")
    step = loop.action("Step", 1, code="i = i + 1")
    done = loop.decision("Done")
    tick = loop.action("Tick", 0.5)
    loop.chain(step, done)
    loop.flow(done, loop.final("Found"), guard="i >= 3")
    loop.flow(done, tick, guard="else")
    loop.setup = [init] if setup else []
    loop.body = [step, done, tick]
    after = main.action("After", 2)
    main.chain(main.initial(), loop.id, after, main.final())
    return b.build()


@pytest.mark.parametrize("setup", [True, False])
def test_final_node_in_a_loop_node_ends_the_loop_node_and_leaves_it(setup: bool):
    model = _search_model(setup=setup)
    stub = run_module(load_module(generate(model).text))
    assert stub.entered == []  # every enter had its leave
    assert stub.trace == ["Init"] * setup + ["Step", "Tick", "Step", "Tick", "Step", "After"]
    result = predict(model)
    assert result.time == pytest.approx(3 * 1 + 2 * 0.5 + 2)
    search = element(result, "Search")
    assert search["calls"] == 1 and search["inclusive"] == pytest.approx(4)


def test_loop_node_with_setup_enters_its_element_once():
    b = ModelBuilder()
    b.global_var("k", 0)
    main = b.activity("main", main=True)
    loop = main.loop_node("Scan", decider="k < 3")
    zero = loop.action("Zero", 0, code="k = 0")
    inc = loop.action("Inc", 1, code="k = k + 1")
    loop.setup = [zero]
    loop.body = [inc]
    main.chain(main.initial(), loop.id, main.final())
    model = b.build()
    text = generate(model).text
    assert text.count("p.enter(E_Scan)") == 1 and text.count("p.leave(E_Scan)") == 1
    scan = element(predict(model), "Scan")
    assert scan["calls"] == 1 and scan["inclusive"] == pytest.approx(3)


def test_final_node_in_the_region_of_a_counted_loop_ends_one_iteration():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    loop = main.structured("Rounds", role=Role.LOOP, iterations=3)
    _race(loop)
    after = main.action("After", 1)
    main.chain(main.initial(), loop.id, after, main.final())
    model = b.build()
    result = predict(model)
    assert result.time == pytest.approx(3 * 2 + 1)
    rounds = element(result, "Rounds")
    assert rounds["calls"] == 1 and rounds["inclusive"] == pytest.approx(6)
    assert element(result, "Quick")["calls"] == 3 and element(result, "Slow2")["calls"] == 0


def test_final_node_no_flow_reaches_does_not_start_a_branch():
    """Without an initial node the flow starts at nodes no flow reaches, but a final node never runs."""
    b = ModelBuilder()
    main = b.activity("main", main=True)
    first, second = main.action("First", 1), main.action("Second", 2)
    main.chain(first, second)
    main.final("Orphan")
    out = generate(b.build())
    assert "p.fork(" not in out.text and "_ended" not in out.text
    assert run_module(load_module(out.text)).trace == ["First", "Second"]
    assert any(d.code == "unreachable" and d.location.name == "Orphan" for d in out.diagnostics)
