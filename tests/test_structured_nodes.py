"""UML LoopNode and ConditionalNode in predictions, on small hand-written Papyrus files.

Every file in ``tests/data/structured`` is run through the command line
(``uml2perf.cli.main``) on one process, and its predicted time is compared
with a sum worked out by hand from the costs in the file.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from builders import ModelBuilder

from uml2perf.cli import main as cli_main
from uml2perf.controlflow import For, If, While, recover_model, walk
from uml2perf.model import Model
from uml2perf.reader import read_model
from uml2perf.reader.activities import split_condition

DATA = Path(__file__).resolve().parent / "data" / "structured"


def _cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = cli_main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def _run(name: str, *options: str, procs: int = 1) -> dict:
    status, out, err = _cli("run", DATA / name, "--json", "--procs", str(procs), *options)
    assert status == 0, err
    return json.loads(out)


def _calls(result: dict) -> dict[str, int]:
    return {e["name"]: e["calls"] for e in result["elements"] if e["calls"]}


def _check(name: str, *options: str) -> str:
    status, out, err = _cli("check", "--verbose", DATA / name, *options)
    assert status == 0, out + err
    return out


def _node(model: Model, name: str):
    return next(n for a in model.activities for n in a.walk() if n.name == name)


# --------------------------------------------------------------------------- conditional nodes


@pytest.mark.parametrize(
    ("n", "expected", "tests_run", "body"),
    [
        # Prepare 0.5; IsSmall 0.01 holds (n < 10): Small 1; Report 0.25
        (5, 0.5 + 0.01 + 1 + 0.25, {"IsSmall"}, "Small"),
        # IsSmall fails, so IsMedium (0.02) is evaluated and holds: Medium 2
        (50, 0.5 + 0.01 + 0.02 + 2 + 0.25, {"IsSmall", "IsMedium"}, "Medium"),
        # both tests fail: the clause without a test is the else, Large 5
        (500, 0.5 + 0.01 + 0.02 + 5 + 0.25, {"IsSmall", "IsMedium"}, "Large"),
    ],
)
def test_guarded_clauses_and_else_follow_the_variable(
    n: int, expected: float, tests_run: set[str], body: str
) -> None:
    result = _run("conditional-guards.uml", "--set", f"n={n}")
    assert result["time"] == pytest.approx(expected)
    calls = _calls(result)
    assert {name for name in ("IsSmall", "IsMedium") if name in calls} == tests_run
    assert [name for name in ("Small", "Medium", "Large") if name in calls] == [body]
    assert calls["Select"] == 1


def test_clause_order_comes_from_predecessor_links_and_conditions_from_the_tests() -> None:
    model = read_model(DATA / "conditional-guards.uml")
    select = _node(model, "Select")
    bodies = {n.id: n.name for n in select.region.nodes}
    # file order is Large, Medium, Small; the predecessor/successor links say Small, Medium, Large
    assert [bodies[c.body[0]] for c in select.clauses] == ["Small", "Medium", "Large"]
    # Small: no guard read from the file (its condition is a clause+ tag); Medium: the test's
    # python body; Large: the default of an isAssured node
    assert [c.guard for c in select.clauses] == [None, "n < 100", "else"]
    is_small, is_medium = _node(model, "IsSmall"), _node(model, "IsMedium")
    assert is_medium.code is None  # the body is the condition, not a code fragment
    assert (
        is_small.perf.get("guard") == "n < 10" and is_small.perf.get("cost") == "0.01"
    )  # clause+ beside action+
    out = _check("conditional-guards.uml")
    assert "0 error(s), 0 warning(s)" in out and "no initial node" not in out


@pytest.mark.parametrize(("mode", "expected"), [(2, 0.125 + 3), (1, 0.125 + 0.5 + 7)])
def test_value_specification_actions_are_the_clause_tests(mode: int, expected: float) -> None:
    # clause 1 tests mode == 2 (0.125) and runs Fast (3); otherwise the literal-true test (0.5)
    # of the last clause is evaluated too and Slow (7) runs
    result = _run("conditional-value-actions.uml", "--set", f"mode={mode}")
    assert result["time"] == pytest.approx(expected)
    assert ("Fast" in _calls(result)) == (mode == 2)


def test_marte_probabilities_give_a_seeded_choice_within_the_bounds() -> None:
    # Lookup: both tests run (1 ms + 2 ms), then ReadCache (10 ms, prob 0.25) or ReadDisk
    # (100 ms, prob 0.75).  Guess: its tests say nothing, GoLeft (1 s) or GoRight (2 s) at random.
    low, high = 0.003 + 0.01 + 1, 0.003 + 0.1 + 2
    first = _run("conditional-probabilities.uml", "--seed", "7")
    assert low - 1e-9 <= first["time"] <= high + 1e-9
    calls = _calls(first)
    lookup = 0.01 if "ReadCache" in calls else 0.1
    guess = 1 if "GoLeft" in calls else 2
    assert first["time"] == pytest.approx(0.003 + lookup + guess)
    assert calls["InCache"] == calls["NotInCache"] == 1
    assert _run("conditional-probabilities.uml", "--seed", "7")["time"] == first["time"]  # deterministic

    many = _calls(_run("conditional-probabilities.uml", "--seed", "7", procs=40))
    assert many["ReadCache"] + many["ReadDisk"] == 40 and many["ReadCache"] < many["ReadDisk"]
    assert many["GoLeft"] + many["GoRight"] == 40 and many["GoLeft"] > 0 and many["GoRight"] > 0


def test_clauses_without_conditions_are_random_with_a_warning_that_says_what_to_add() -> None:
    out = _check("conditional-probabilities.uml")
    line = next(line for line in out.splitlines() if "conditional node 'Guess'" in line)
    assert ": warning: " in line and "[xmi:id=_guess]" in line
    assert "clauses 1 (test 'LooksLeft'), 2 (test 'LooksRight') have no condition" in line
    assert "probability 1 / 2" in line and "clause+ guard" in line
    assert "conditional node 'Lookup'" not in out  # MARTE prob gives both of its clauses a chance


@pytest.mark.parametrize(("pick", "expected"), [(1, 0.003 + 1), (0, 0.003 + 0.5 + 2)])
def test_sidecar_gives_clause_conditions_and_an_else(pick: int, expected: float) -> None:
    # guess.toml: LooksLeft tests pick == 1; LooksRight (cost 0.5) is the else, run only when
    # LooksLeft failed.  Lookup stays a random choice: its body adds 0.01 or 0.1.
    result = _run(
        "conditional-probabilities.uml", "--sidecar", str(DATA / "guess.toml"), "--set", f"pick={pick}"
    )
    calls = _calls(result)
    lookup = 0.01 if "ReadCache" in calls else 0.1
    assert result["time"] == pytest.approx(expected + lookup)
    assert ("GoLeft" in calls) == (pick == 1) and ("LooksRight" in calls) == (pick == 0)
    assert "random-clause" not in _check(
        "conditional-probabilities.uml", "--sidecar", str(DATA / "guess.toml")
    )


# --------------------------------------------------------------------------- loop nodes


@pytest.mark.parametrize(
    ("options", "expected", "sweeps", "refines"),
    [
        # Sweep: Reset 0.5, Check 0.01 five times (i = 0..4), Relax 0.25 four times;
        # Refine (do-while): Improve 1 and More 0.002 three times (j = 1, 2, 3 < m = 3 ends it)
        ((), 0.5 + 5 * 0.01 + 4 * 0.25 + 3 * (1 + 0.002), 4, 3),
        # n = 0: the while loop's test fails at once; m = 0: the do-while still runs its body once
        (("--set", "n=0", "--set", "m=0"), 0.5 + 0.01 + (1 + 0.002), 0, 1),
    ],
)
def test_loop_node_tests_compute_while_and_do_while_conditions(
    options: tuple[str, ...], expected: float, sweeps: int, refines: int
) -> None:
    result = _run("loop-while.uml", *options)
    assert result["time"] == pytest.approx(expected)
    calls = _calls(result)
    assert calls.get("Relax", 0) == sweeps and calls["Check"] == sweeps + 1 and calls["Reset"] == 1
    assert calls["Improve"] == refines and calls["More"] == refines


def test_loop_test_body_splits_into_code_and_condition_and_sections_need_no_initial_node() -> None:
    model = read_model(DATA / "loop-while.uml")
    sweep, refine = _node(model, "Sweep"), _node(model, "Refine")
    assert sweep.loop.decider == "i < n" and sweep.loop.tested_first
    assert refine.loop.decider == "j < m" and not refine.loop.tested_first
    assert _node(model, "More").code == "j = j + 1" and _node(model, "Check").code is None
    out = _check("loop-while.uml")
    assert "0 warning(s)" in out and "no initial node" not in out


@pytest.mark.parametrize(("k", "blocks"), [(3, 6), (1, 2)])
def test_loop_plus_iterations_marte_rep_and_a_loop_without_count(k: int, blocks: int) -> None:
    # Blocks: Load 0.5 once, then 2*k iterations of Factor 0.125 + Update 0.25;
    # Retries: PaStep rep (3) iterations of Attempt 0.2 (the loop is not repeated as a whole);
    # Bare: no count, runs once: Once 2
    result = _run("loop-counted.uml", "--set", f"k={k}")
    assert result["time"] == pytest.approx(0.5 + blocks * (0.125 + 0.25) + 3 * 0.2 + 2)
    calls = _calls(result)
    assert calls["Load"] == 1 and calls["Factor"] == blocks and calls["Attempt"] == 3 and calls["Once"] == 1
    assert calls["Retries"] == 1 and calls["Bare"] == 1


def test_a_loop_without_count_warns_and_names_the_loop() -> None:
    out = _check("loop-counted.uml")
    warning = next(line for line in out.splitlines() if "no iteration count" in line)
    assert "loop 'Bare' has no iteration count: it runs once; add loop+ iterations=N" in warning
    assert "[xmi:id=_bare]" in warning and "loop-counted.uml:25" in warning
    assert "loop 'Blocks'" not in out and "loop 'Retries'" not in out


# --------------------------------------------------------------------------- recovered statements


def test_random_clauses_run_every_test_first_and_guarded_ones_lazily() -> None:
    b = ModelBuilder()
    b.global_var("x", 0)
    main = b.activity("main", main=True)
    cond = main.conditional("C")
    t1, t2 = cond.action("T1", 0.1), cond.action("T2", 0.2)
    y1, y2, y3 = cond.action("Y1", 1), cond.action("Y2", 2), cond.action("Y3", 3)
    cond.clause("x > 0", y1, test=(t1,))
    cond.clause("x < 0", y2, test=(t2,))
    cond.clause(None, y3)
    main.chain(main.initial(), cond.id, main.final())
    recovered = recover_model(b.build())
    block = recovered.activities[0].body.body[0]
    ifs = [s for s in walk(block) if isinstance(s, If)]
    # T1; if x > 0: Y1 else: (T2; if x < 0: Y2 else: Y3)
    assert len(ifs) == 2 and [b.cond.kind.value for b in ifs[0].branches] == ["guard", "else"]
    assert [b.cond.kind.value for b in ifs[1].branches] == ["guard", "else"]
    assert not any(d.code == "no-initial" for d in recovered.diagnostics)


def test_loop_node_sources_of_the_iteration_count() -> None:
    b = ModelBuilder()
    b.global_var("i", 0)
    main = b.activity("main", main=True)
    decided = main.loop_node("Decided", decider="i < 3")
    step = decided.action("Step", 1, code="i = i + 1")
    decided.body.append(step)
    bare = main.loop_node("Bare")
    once = bare.action("Once", 1)
    bare.body.append(once)
    main.chain(main.initial(), decided.id, bare.id, main.final())
    recovered = recover_model(b.build())
    kinds = [type(s).__name__ for s in recovered.activities[0].body.body]
    assert kinds == ["While", "For"]
    loop = recovered.activities[0].body.body[1]
    assert isinstance(loop, For) and loop.count == "1"
    assert isinstance(recovered.activities[0].body.body[0], While)
    assert [d.code for d in recovered.diagnostics if d.code == "loop-runs-once"] == ["loop-runs-once"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("i < n", (None, "i < n")),
        ("i = i + 1; i < n", ("i = i + 1", "i < n")),
        ("i = i + 1\nk = 2\ni < n", ("i = i + 1\nk = 2", "i < n")),
        ("return i <= n;", (None, "i <= n")),
        ("x != 1", (None, "x != 1")),
        ("x = 1", None),
        ("x += 1", None),
        ("if a:\n    x = 1", None),
        ("", None),
    ],
)
def test_split_condition(body: str, expected: tuple[str | None, str] | None) -> None:
    assert split_condition(body) == expected


def test_structured_node_with_one_start_needs_no_initial_node():
    """UML starts the nodes of a structured node that no flow reaches: one such node is no warning."""
    pool = Path(__file__).resolve().parents[1] / "validation" / "models" / "pool.uml"
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        cli_main(["check", str(pool), "--default-cost", "1e-3"])
    text = out.getvalue() + err.getvalue()
    assert "pool" in text and "no initial node" not in text
