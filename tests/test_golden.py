"""Golden tests: every case under tests/golden/ regenerates byte-identical outputs.

Refresh after an intended change with ``UML2PERF_REFRESH_GOLDEN=1 python -m pytest tests/test_golden.py``
(see tests/golden/README.md) and review the diff.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from stubs import load_module

from uml2perf.generation import generate
from uml2perf.model import Model

GOLDEN = Path(__file__).parent / "golden"
REFRESH = os.environ.get("UML2PERF_REFRESH_GOLDEN") == "1"
OUTPUTS = (("python", "expected.py"), ("dot", "expected.dot"), ("json", "expected.json"))
CASES = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


def load_case(case: str) -> Model:
    folder = GOLDEN / case
    builder = folder / "model.py"
    if builder.exists():
        spec = importlib.util.spec_from_file_location(f"golden_{case}", builder)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.build()
    inputs = sorted(p for p in folder.iterdir() if p.name.startswith("input."))
    assert inputs, f"golden case {case} has neither model.py nor input.*"
    from uml2perf.reader import read_model

    return read_model(inputs[0])


def compare(path: Path, text: str) -> None:
    if REFRESH:
        path.write_text(text, encoding="utf-8", newline="\n")
        return
    if not path.exists():
        pytest.fail(f"{path} is missing; create it with UML2PERF_REFRESH_GOLDEN=1")
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{path.relative_to(GOLDEN.parent)} differs; refresh if intended"


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("handler, filename", OUTPUTS)
def test_golden_output(case: str, handler: str, filename: str) -> None:
    model = load_case(case)
    compare(GOLDEN / case / filename, generate(model, handler).text)


@pytest.mark.parametrize("case", CASES)
def test_golden_module_runs(case: str) -> None:
    """The expected module compiles, and its one-process prediction matches when recorded."""
    from uml2perf_runtime import Machine, simulate

    text = generate(load_case(case)).text
    module = load_module(text, f"golden_{case}")
    named = GOLDEN / case / "machine.txt"  # a bundled machine the case needs (e.g. one with devices)
    own = GOLDEN / case / "machine.toml"  # or a machine file of its own (keys no bundled machine has)
    machine = None
    if own.exists():
        machine = Machine.load(own)
    elif named.exists():
        machine = Machine.load(named.read_text().strip())
    result = simulate(module.MODEL, machine=machine, procs=1)
    recorded = GOLDEN / case / "expected_time.txt"
    if REFRESH:
        recorded.write_text(f"{result.time!r}\n", encoding="utf-8")
        return
    if recorded.exists():
        assert result.time == pytest.approx(float(recorded.read_text()), rel=1e-12)


def test_every_sample_has_a_golden_case() -> None:
    """Each bundled sample's generated code is pinned by a golden case holding an exact copy of it."""
    samples = Path(__file__).resolve().parents[1] / "samples"
    inputs = {p.read_bytes() for p in GOLDEN.glob("*/input.*")}
    missing = [
        p.name
        for p in sorted(samples.iterdir())
        if p.is_file() and p.suffix in (".uml", ".xmi") and p.read_bytes() not in inputs
    ]
    assert not missing, f"samples without an up-to-date golden case: {missing}"
