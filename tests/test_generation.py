"""Generation of the Python module: shape, determinism, safety, errors, atomic output."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from builders import ModelBuilder, sequence_model
from hypothesis import given
from hypothesis import strategies as st
from stubs import load_module, run_module

from uml2perf.check import (
    check_not_recursive,
    cost_function_name_error,
    ordered_by_defaults,
    variable_name_error,
)
from uml2perf.errors import InputError, Location, ModelError
from uml2perf.generation import GeneratedOutput, generate, write_output
from uml2perf.model import CostFunction, Role, Variable

ROOT = Path(__file__).resolve().parents[1]


def prophet_model():
    """The sample model of the Performance Prophet paper (Fig. 4.1), built in code."""
    b = ModelBuilder("prophet", source="prophet.uml")
    b.function("FA1", "return 121/P;")
    b.function("FA2", "212")
    b.function("FA4", "3.14 + 2.71*P", params=("P",))
    b.function("FSA1", "112")
    b.function("FSA2", "32/(pid+1)", params=("pid",))
    sa = b.activity("SA")
    s1 = sa.action("SA1", "FSA1()")
    s2 = sa.comm("SA2", Role.ALLREDUCE, cost="FSA2(pid)")
    sa.chain(sa.initial(), s1, s2, sa.final())
    main = b.activity("MainActivity", main=True)
    main.attribute("GV", type_name="Integer")
    main.attribute("P", type_name="Real")
    a1 = main.action("A1", "FA1()", code="GV = 1\nP = 3.14")
    d = main.decision()
    call = main.call("SA", sa.id)
    a2 = main.action("A2", "FA2()")
    merge = main.merge()
    a4 = main.action("A4", "FA4(P)")
    main.chain(main.initial(), a1, d)
    main.flow(d, call, guard="GV==1")
    main.flow(d, a2, guard="GV==0")
    main.chain(call, merge)
    main.chain(a2, merge)
    main.chain(merge, a4, main.final())
    return b.build()


def test_module_has_the_contract_shape_and_compiles():
    out = generate(prophet_model())
    assert isinstance(out, GeneratedOutput) and out.filename == "prophet.py"
    text = out.text
    compile(text, "prophet.py", "exec")
    assert text.startswith('"""Performance model \'prophet\'')
    imports = [line for line in text.splitlines() if line.startswith(("import ", "from "))]
    assert imports == ["from uml2perf_runtime import model as rt"]
    for piece in (
        "def init_globals(p, v):",
        'v.GV = p.param("GV", 0)',
        "def FSA2(p, v, pid):",
        "def activity_SA(p, v):",
        "def activity_MainActivity(p, v):",
        "yield from p.compute(E_A1, FA1(p, v))",
        "yield from p.allreduce(E_SA2, cost=FSA2(p, v, p.pid))",
        "if v.GV == 1:",
        "elif v.GV == 0:",
        "main=activity_MainActivity,",
        'if __name__ == "__main__":',
    ):
        assert piece in text, piece
    assert "\n\n\n\n" not in text


def test_prophet_module_runs_in_the_right_order():
    module = load_module(generate(prophet_model()).text)
    p = run_module(module)
    assert p.trace == ["A1", "SA1", "SA2", "A4"]
    assert p.costs[0] == pytest.approx(121 / 3.14)


def test_prophet_prediction_with_the_runtime():
    from uml2perf_runtime import simulate

    module = load_module(generate(prophet_model()).text)
    result = simulate(module.MODEL, procs=1)
    assert result.time == pytest.approx(121 / 3.14 + 112 + 32 + (3.14 + 2.71 * 3.14))


def test_builtins_are_imported_only_when_used():
    b = ModelBuilder()
    b.global_var("n", 8)
    main = b.activity("main", main=True)
    a = main.action("A", "log2(n) * pi")
    main.chain(main.initial(), a, main.final())
    text = generate(b.build()).text
    assert "from uml2perf_runtime.functions import log2, pi" in text
    assert run_module(load_module(text)).costs == [pytest.approx(3 * 3.141592653589793)]


def test_global_defaults_in_dependency_order_and_cycles_rejected():
    b = ModelBuilder()
    b.global_var("B", "A * 2")
    b.global_var("A", "nprocs + 1")
    main = b.activity("main", main=True)
    main.sequence("X")
    text = generate(b.build()).text
    assert text.index("v.A = ") < text.index("v.B = ")
    assert 'v.B = p.param("B", v.A * 2)' in text

    b = ModelBuilder()
    b.global_var("A", "B + 1")
    b.global_var("B", "A + 1")
    b.activity("main", main=True).sequence("X")
    with pytest.raises(ModelError, match="cycle"):
        generate(b.build())


@pytest.mark.parametrize("name", ["my var", "class", "pid", "_hidden"])
def test_bad_variable_names_are_model_errors(name):
    b = ModelBuilder()
    b.global_var(name, 0)
    b.activity("main", main=True).sequence("X")
    with pytest.raises(ModelError) as info:
        generate(b.build())
    assert info.value.location.element_id and info.value.hint


def test_unknown_names_and_functions_name_the_element():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    d = main.decision("Check")
    main.chain(main.initial(), d)
    main.flow(d, main.final(), guard="mystery > 1")
    main.flow(d, main.final(), guard="else")
    with pytest.raises(ModelError, match="mystery") as info:
        generate(b.build())
    assert info.value.location.element_id.startswith("_e")

    b = ModelBuilder()
    main = b.activity("main", main=True)
    a = main.action("A", "Missing(2)")
    main.chain(main.initial(), a, main.final())
    with pytest.raises(ModelError, match="Missing") as info:
        generate(b.build())
    assert info.value.location.name == "A"


def test_recursive_cost_functions_are_rejected():
    b = ModelBuilder()
    b.function("F", "G() + 1")
    b.function("G", "F() + 1")
    b.activity("main", main=True).sequence("X")
    with pytest.raises(ModelError, match="cycle"):
        generate(b.build())


def test_send_without_dest_names_element_and_tag():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    s = main.comm("Send", Role.SEND, size=8)
    main.chain(main.initial(), s, main.final())
    with pytest.raises(ModelError, match="dest") as info:
        generate(b.build())
    assert info.value.location.name == "Send"


def test_communication_defaults_and_requests():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    r = main.comm("Recv", Role.RECV)
    i = main.comm("ISend", Role.ISEND, dest="(pid + 1) % nprocs", size=1024)
    w = main.comm("Wait", Role.WAIT)
    main.chain(main.initial(), r, i, w, main.final())
    text = generate(b.build()).text
    assert "yield from p.recv(E_Recv)" in text  # every argument at its default: left out
    assert "yield from p.isend(E_ISend, dest=(p.pid + 1) % p.nprocs, size=1024)" in text
    assert "yield from p.wait(E_Wait, requests=None)" in text  # None: every pending request of the process
    assert "_reqs" not in text
    assert run_module(load_module(text)).trace == ["Recv", "ISend", "Wait"]


def _ruff() -> list[str] | None:
    """The ruff command of the dev extra, when it is installed."""
    try:
        import ruff  # noqa: F401
    except ImportError:
        return None
    return [sys.executable, "-m", "ruff"]


@pytest.mark.parametrize("width", [8, 30, 45])
def test_long_statements_are_laid_out_as_the_formatter_lays_them_out(width):
    """Calls that do not fit in 110 columns break as ``ruff format`` breaks them, comments included.

    (An argument longer than a line by itself would be broken inside by the
    formatter; generated code leaves it whole.)
    """
    ruff = _ruff()
    if ruff is None:
        pytest.skip("ruff (the dev extra) is not installed")
    b = ModelBuilder("long")
    b.global_var("N", 4)
    main = b.activity("main", main=True)
    term = " + ".join(["N * N"] * (width // 8 + 1))
    a = main.action("A" * width, term)
    s = main.comm("S" * width, Role.SEND, dest=f"(pid + 1 + {term}) % nprocs", size=term, tag=3, cost=term)
    r = main.comm("R" * width, Role.RECV, source="-1", size=term, cost="1e-06")
    main.chain(main.initial(), a, s, r, main.final())
    text = generate(b.build()).text
    check = subprocess.run(
        [*ruff, "format", "--check", "--diff", "--line-length", "110", "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "size=" in text and "cost=" in text and "source=-1" not in text


def test_runs_of_actions_keep_short_lines_and_break_long_ones():
    """A run of plain actions and the ``ELEMENTS`` rows are printed by the handler, lines that fit as
    they are and each longer one broken by the template as ``ruff format`` breaks it, in order."""
    ruff = _ruff()
    if ruff is None:
        pytest.skip("ruff (the dev extra) is not installed")
    b = ModelBuilder("runs")
    main = b.activity("main", main=True)
    names = ["A1", "B" * 70, "A2", "A3", "C" * 80, "A4"]
    actions = [main.action(name, 2e-06) for name in names]
    main.chain(main.initial(), *actions, main.final())
    text = generate(b.build()).text
    check = subprocess.run(
        [*ruff, "format", "--check", "--diff", "--line-length", "110", "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert text.count("yield from p.compute(\n") == 2  # the two long names' lines, broken
    assert text.count(" = rt.Element(\n") == 2
    assert "    yield from p.compute(E_A2, 2e-06)  # xmi:id=" in text
    module = load_module(text)
    assert [e.name for e in module.ELEMENTS] == names
    assert run_module(module).trace == names


def test_names_are_sanitised_and_strings_escaped():
    b = ModelBuilder("evil", source="evil.uml")
    main = b.activity('x"); import os; ("', main=True)
    a = main.action('A1"""\n__import__("os")', 1)
    c = main.action("A1", 2)
    main.chain(main.initial(), a, c, main.final())
    text = generate(b.build()).text
    compile(text, "evil.py", "exec")
    assert "\nimport os" not in text and '__import__("os")' not in text.replace('\\"', "")
    module = load_module(text)
    names = [e.name for e in module.ELEMENTS]
    assert names == ['A1"""\n__import__("os")', "A1"]
    assert len({id(e) for e in module.ELEMENTS}) == 2


def test_activity_without_yield_stays_a_generator_and_repeat_counts():
    b = ModelBuilder()
    b.global_var("k", 0)
    empty = b.activity("Empty")
    empty.chain(empty.initial(), empty.final())
    main = b.activity("main", main=True)
    a = main.action("A", 1, repeat="3")
    main.chain(main.initial(), a, main.final())
    module = load_module(generate(b.build()).text)
    import inspect

    assert inspect.isgeneratorfunction(module.activity_Empty)
    assert run_module(module).trace == ["A", "A", "A"]


def test_fork_and_thread_roles_generate_runnable_code():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    f, j = main.fork(), main.join()
    x, y = main.action("X", 1), main.action("Y", 1)
    region = main.structured("Par", role=Role.PARALLEL, threads=2)
    inner = region.action("Inner", 1)
    region.chain(region.initial(), inner, region.final())
    pipe = main.structured("Pipe", role=Role.PIPELINE, items=2)
    s1, s2 = pipe.action("S1", 1), pipe.action("S2", 1)
    pipe.chain(pipe.initial(), s1, s2, pipe.final())
    main.chain(main.initial(), f)
    main.chain(f, x, j)
    main.chain(f, y, j)
    main.chain(j, region.id, pipe.id, main.final())
    text = generate(b.build()).text
    assert "yield from p.fork(E_fork, (_fork_1_1, _fork_1_2))" in text
    assert "yield from p.parallel(E_Par, 2, _parallel_1)" in text
    assert run_module(load_module(text)).trace == ["X", "Y", "Inner", "Inner", "S1", "S2", "S1", "S2"]


def test_probabilities_draw_once_and_compare_cumulatively():
    b = ModelBuilder()
    main = b.activity("main", main=True)
    d = main.decision("D")
    x, y = main.action("X", 1), main.action("Y", 1)
    main.chain(main.initial(), d)
    main.flow(d, x, probability="0.25")
    main.flow(d, y, probability="0.75")
    main.chain(x, main.final())
    main.chain(y, main.final())
    text = generate(b.build()).text
    assert "_u = p.random()" in text and "if _u < 0.25:" in text
    counts = {"X": 0, "Y": 0}
    module = load_module(text)
    for seed in range(200):
        counts[run_module(module, seed=seed).trace[0]] += 1
    assert 20 < counts["X"] < 90


def test_large_model_generates():
    model = sequence_model(*([1.0] * 20_000))
    out = generate(model)
    assert out.text.count("yield from p.compute(") == 20_000


_DETERMINISM = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    from test_generation import prophet_model
    from test_navigation import irreducible_model
    from uml2perf.generation import generate
    for model in (prophet_model(), irreducible_model()):
        for handler in ("python", "dot", "json"):
            sys.stdout.write(generate(model, handler).text)
    """
)


def test_output_is_byte_identical_across_hash_seeds():
    script = _DETERMINISM.format(tests=str(Path(__file__).parent))
    outputs = []
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, check=True)
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] and len(outputs[0]) > 1000


def test_write_output_is_atomic(tmp_path, monkeypatch):
    target = tmp_path / "model.py"
    write_output("first\n", target)
    assert target.read_text() == "first\n"

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(InputError, match="cannot write"):
        write_output("second\n", target)
    assert target.read_text() == "first\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.py"]


def test_write_output_into_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="folder"):
        write_output("x", tmp_path / "missing" / "model.py")


def test_convert_requires_main_only_when_asked():
    b = ModelBuilder()
    b.activity("One").sequence("A")
    b.activity("Two").sequence("B")
    out = generate(b.build())
    assert "main=None," in out.text
    assert any(d.code == "no-main" for d in out.diagnostics)
    with pytest.raises(ModelError, match="candidates"):
        generate(b.build(), options={"require_main": True})


def test_samples_prophet_predicts_the_paper_value():
    sample = ROOT / "samples" / "prophet.uml"
    if not sample.exists():
        pytest.skip("samples/prophet.uml is not there")
    from uml2perf.reader import read_model
    from uml2perf_runtime import simulate

    module = load_module(generate(read_model(sample)).text)
    assert simulate(module.MODEL, procs=1).time == pytest.approx(194.18443184713, rel=1e-12)


# ---------------------------------------------------------------------------- the checker's rules


def _var(name: str, default: str | None = None) -> Variable:
    return Variable(name, Location(name=name), None, default)


@given(st.permutations(["a", "b", "c", "d", "e"]), st.data())
def test_defaults_come_after_what_they_read(names, data):
    """Any acyclic dependency (each name reads only names later in a random order) gets a valid order."""
    later = {n: names[i + 1 :] for i, n in enumerate(names)}
    reads = {
        n: data.draw(st.lists(st.sampled_from(later[n]), unique=True)) if later[n] else [] for n in names
    }
    variables = [_var(n, " + ".join(reads[n]) or "1") for n in sorted(names)]
    ordered = ordered_by_defaults(variables, lambda v: reads[v.name])
    position = {v.name: i for i, v in enumerate(ordered)}
    assert sorted(position) == sorted(names)
    assert all(position[r] < position[n] for n in names for r in reads[n])


def test_default_cycles_and_recursion_are_refused_with_the_path():
    variables = [_var("a", "b"), _var("b", "a")]
    with pytest.raises(ModelError, match="a -> b -> a"):
        ordered_by_defaults(variables, lambda v: [v.default or ""])
    with pytest.raises(ModelError, match="refers to itself"):
        ordered_by_defaults([_var("x", "x + 1")], lambda v: ["x"])
    functions = {n: CostFunction(n, (), "1", Location(name=n)) for n in "FGH"}
    check_not_recursive({"F": {"G"}, "G": set(), "H": set()}, functions)
    with pytest.raises(ModelError, match="G -> H -> G"):
        check_not_recursive({"F": {"G"}, "G": {"H"}, "H": {"G"}}, functions)


@pytest.mark.parametrize(
    "name, problem",
    [("pid", "system parameter"), ("sqrt", "built-in"), ("_x", "starts with '_'"), ("2x", "not a valid")],
)
def test_variable_name_rules(name, problem):
    found = variable_name_error(_var(name), "variable")
    assert found is not None and problem in found.message
    assert variable_name_error(_var("num_atoms"), "variable") is None


def test_cost_function_name_rules():
    first = CostFunction("F", (), "1", Location())
    assert cost_function_name_error(first, {}) is None
    assert "defined twice" in cost_function_name_error(first, {"F": first}).message
    assert "reserved" in cost_function_name_error(CostFunction("range", (), "1", Location()), {}).message
