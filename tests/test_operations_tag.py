"""Array operations named by an action (``operations``), priced by the machine's ``[operations]``.

A model that names ``where: n`` is priced at each calibrated machine's own seconds per element,
at the size of the arrays, on top of the action's counted bytes; the tag and the table are
checked with messages that say what to write.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from command_helpers import predicted, uml2perf
from runtime_helpers import machine, one_roofline_action, spec

from uml2perf_runtime import Machine, simulate
from uml2perf_runtime.errors import MachineError
from uml2perf_runtime.platform.array_operations import (
    OPERATION_NAMES,
    operation_seconds,
    parse_operations_tag,
)

ROOT = Path(__file__).resolve().parents[1]
TABLE = {"where": ((524_288.0, 1e-9), (math.inf, 4e-9)), "gather": ((math.inf, 2e-9),)}


def priced(operations: tuple[tuple[str, float, float], ...], **kwargs: object) -> float:
    main, elems = one_roofline_action(bytes=1e6, operations=operations)
    m = machine(cores=1, peak_flops=1e10, memory_bandwidth=1e10, operations=TABLE, **kwargs)
    return simulate(spec(main, elems), machine=m, procs=1).time


@pytest.mark.parametrize(
    "operations, extra",
    [
        ((("where", 1000, 1),), 1000 * 1e-9),  # 8 KB of arrays: the cached range
        ((("where", 1_000_000, 1),), 1_000_000 * 4e-9),  # 8 MB: beyond 512 KiB
        ((("where", 1000, 1), ("gather", 500, 1)), 1000 * 1e-9 + 500 * 2e-9),
        # 1,000 runs over 1,000 elements each: the cached range, not that of a million elements
        ((("where", 1000, 1000),), 1000 * 1000 * 1e-9),
        ((("where", 0, 1),), 0.0),
        ((("where", 1000, 0),), 0.0),
    ],
)
def test_named_operations_add_their_seconds_per_element_by_size(
    operations: tuple[tuple[str, float, float], ...], extra: float
) -> None:
    assert priced(operations) - priced(()) == pytest.approx(extra)


def test_named_operations_are_counted_work() -> None:
    """The machine's counting_factor multiplies them, as it does every counted cost."""
    ops = (("gather", 10_000, 1),)
    plain = priced(ops) - priced(())
    doubled = priced(ops, counting_factor=2.0) - priced((), counting_factor=2.0)
    assert doubled == pytest.approx(2 * plain)


def test_a_machine_without_the_operation_says_what_to_add() -> None:
    main, elems = one_roofline_action(bytes=1e6, operations=(("cumsum", 10, 1),))
    m = machine(cores=1, peak_flops=1e10, memory_bandwidth=1e10, operations=TABLE)
    with pytest.raises(MachineError, match=r"has no 'cumsum' in \[operations\]") as info:
        simulate(spec(main, elems), machine=m, procs=1)
    assert "uml2perf calibrate" in (info.value.hint or "")


def test_the_table_reads_numbers_units_intervals_and_ranges_and_writes_them_back() -> None:
    data = {
        "name": "m",
        "nodes": 1,
        "cores_per_node": 2,
        "operations": {
            "where": [{"up_to": "512 KiB", "seconds": "0.7 ns"}, {"seconds": 3.8e-9}],
            "x[mask]": 1.8e-9,
            "floor": 0,
        },
    }
    m = Machine.from_dict(data)
    assert m.operations == {
        "where": ((524_288.0, 7e-10), (math.inf, 3.8e-9)),
        "x[mask]": ((math.inf, 1.8e-9),),
        "floor": ((math.inf, 0.0),),
    }
    assert Machine.from_dict(m.to_dict()).operations == m.operations
    assert operation_seconds(m.operations, "where", 65_536) == pytest.approx(65_536 * 7e-10)
    assert operation_seconds(m.operations, "where", 65_537) == pytest.approx(65_537 * 3.8e-9)


@pytest.mark.parametrize(
    "table, message",
    [
        ({"wher": 1e-9}, "has no operation 'wher'"),
        ({"where": -1e-9}, "operations.where must be a number of seconds"),
        ({"where": "fast"}, "operations.where must be a number of seconds"),
        ({"where": [{"seconds": 1e-9}, {"seconds": 2e-9}]}, "needs 'up_to'"),
        ({"where": [{"up_to": 100, "seconds": -1}, {"seconds": 2e-9}]}, r"where\[1\] seconds"),
        ([1], "operations must be a table"),
    ],
)
def test_a_bad_table_is_refused_with_the_key(table: object, message: str) -> None:
    with pytest.raises(MachineError, match=message):
        Machine.from_dict({"name": "m", "nodes": 1, "cores_per_node": 2, "operations": table})


def test_the_tag_reads_pairs_and_refuses_what_is_not_one() -> None:
    assert parse_operations_tag("where: n; x[mask]: 2 * n ;") == [
        ("where", "n", "1"),
        ("x[mask]", "2 * n", "1"),
    ]
    assert parse_operations_tag("sum(axis=1): R * 8") == [("sum(axis=1)", "R * 8", "1")]
    # runs after the last comma outside parentheses; a name may come back (another size)
    assert parse_operations_tag("block: max(R, 2) * W, K + 1; block: W") == [
        ("block", "max(R, 2) * W", "K + 1"),
        ("block", "W", "1"),
    ]
    assert parse_operations_tag("gather: max(a, b)") == [("gather", "max(a, b)", "1")]
    for text, message in [
        ("where n", "is not 'name: elements'"),
        ("wherever: n", "is not an operation"),
        ("where:", "has no count"),
        ("where: n,", "has no runs"),
        (" ; ", "names no operation"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_operations_tag(text)
    assert len(set(OPERATION_NAMES)) == len(OPERATION_NAMES)


def _model(tmp_path: Path, operations: str) -> Path:
    text = (ROOT / "samples" / "pairs.uml").read_text()
    path = tmp_path / "pairs_ops.uml"
    path.write_text(text.replace('calls="4"/>', f'calls="4" operations="{operations}"/>'))
    return path


MACHINE = (
    'name = "m"\nnodes = 1\ncores_per_node = 2\npeak_flops = 1e10\nmemory_bandwidth = 1e10\n'
    "call_cost = 4e-7\nfirst_touch = 2e9\n"
)


def test_a_model_that_names_operations_is_priced_by_the_machine_file(tmp_path: Path) -> None:
    model = _model(tmp_path, "where: N // nprocs; x[mask]: N // nprocs, 2")
    exact = tmp_path / "m.toml"
    exact.write_text(MACHINE + '[operations]\nwhere = 3e-10\n"x[mask]" = 1e-9\n')
    done = uml2perf("check", model)
    assert done.returncode == 0 and "0 error(s)" in done.stdout, done.stdout + done.stderr
    base = predicted(ROOT / "samples" / "pairs.uml", "--machine", exact, "--procs", "2", "--set", "N=1024")
    named = predicted(model, "--machine", exact, "--procs", "2", "--set", "N=1024")
    steps = 20  # STEPS of samples/pairs.uml
    assert named["time"] - base["time"] == pytest.approx(steps * 512 * (3e-10 + 2e-9), rel=1e-6)
    assert "interval" not in named
    unsure = tmp_path / "unsure.toml"
    unsure.write_text(
        MACHINE + '[operations]\nwhere = 3e-10\n"x[mask]" = { value = 1e-9, low = 1e-10, high = 1e-7 }\n'
    )
    wide = predicted(model, "--machine", unsure, "--procs", "2", "--set", "N=1024", "--samples", "40")
    assert wide["time"] == named["time"]
    # up to 20 steps x 1,024 selected elements x 1e-7 s: about 2 ms above the prediction
    assert wide["interval"]["high"] - wide["time"] > 1e-3
    assert wide["sensitivity"][0]["input"] == "machine operations.x[mask]"


@pytest.mark.parametrize(
    "operations, message",
    [
        ("wherever: n", "is not an operation"),
        ("where: n +", "syntax error"),
        ("where", "is not 'name: elements'"),
    ],
)
def test_a_bad_tag_is_an_error_with_the_element_and_no_output(
    tmp_path: Path, operations: str, message: str
) -> None:
    model = _model(tmp_path, operations)
    checked = uml2perf("check", model)
    assert checked.returncode != 0 and message in checked.stdout + checked.stderr
    assert "_p_update" in checked.stdout + checked.stderr
    out = tmp_path / "out.py"
    converted = uml2perf("convert", model, "-o", out)
    assert converted.returncode != 0 and "Traceback" not in converted.stderr
    assert message in converted.stderr and not out.exists()


def test_only_the_operations_a_model_names_are_drawn(tmp_path: Path) -> None:
    """A calibrated file prices every operation; a model's interval and sensitivity see only its own."""
    model = _model(tmp_path, "where: N // nprocs")
    out = tmp_path / "model.py"
    assert uml2perf("convert", model, "-o", out).returncode == 0
    assert '    operations=("where",),' in out.read_text()
    wide = "{ value = 1e-9, low = 1e-10, high = 1e-7 }"
    machine_file = tmp_path / "m.toml"
    machine_file.write_text(MACHINE + f'[operations]\nwhere = {wide}\n"x[mask]" = {wide}\ngather = {wide}\n')
    found = predicted(model, "--machine", machine_file, "--procs", "2", "--samples", "40")
    assert [row["input"] for row in found["sensitivity"]] == ["machine operations.where"]
