"""``loop+ counter = "K"``: each iteration of a counted loop sets a model variable to its index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from command_helpers import converted, predicted, uml2perf

ROOT = Path(__file__).resolve().parents[1]
_BCAST = '<uml2perf:BcastPlus xmi:id="_r_st_sum" base_Action="_r_sum" size="8" root="K % nprocs"/>'


def _model(
    tmp_path: Path, counter: str = 'counter="K"', declared: bool = True, loop: str | None = None
) -> Path:
    """samples/relax.uml with a counter on its outer loop, a cost and a broadcast root that read it."""
    text = (ROOT / "samples" / "relax.uml").read_text()
    if declared:
        text = text.replace(
            '      <node xmi:type="uml:InitialNode" xmi:id="_r_init"',
            '      <ownedAttribute xmi:id="_r_k" name="K">\n'
            '        <defaultValue xmi:type="uml:LiteralInteger" xmi:id="_r_k_dv" value="0"/>\n'
            "      </ownedAttribute>\n"
            '      <node xmi:type="uml:InitialNode" xmi:id="_r_init"',
            1,
        )
    text = text.replace('iterations="ITERS // CHECK"/>', loop or f'iterations="ITERS // CHECK" {counter}/>')
    text = text.replace('flops="2 * N" bytes="8 * N" footprint="16 * N"', 'cost="0.001 * K"')
    text = text.replace(
        '<uml2perf:AllReducePlus xmi:id="_r_st_sum" base_Action="_r_sum" size="8"/>',
        _BCAST,
    )
    path = tmp_path / "counted.uml"
    path.write_text(text)
    return path


def _run(model: Path, procs: int) -> dict[str, Any]:
    return predicted(
        model, "--machine", "cluster-modern", "--procs", str(procs),
        "--set", "ITERS=40", "--set", "CHECK=10", "--set", "N=1",
    )  # fmt: skip


def test_the_counter_is_the_loop_variable_of_the_generated_code(tmp_path: Path) -> None:
    model = _model(tmp_path)
    code = converted(model, tmp_path / "counted.py")
    assert "for v.K in range(rt.count(v.ITERS // v.CHECK)):" in code
    assert "for _ in range(rt.count(v.CHECK)):" in code  # the inner loop has no counter


def test_each_iteration_sees_its_index(tmp_path: Path) -> None:
    """LocalNorm costs 1 ms x K over K = 0..3: 6 ms on one process, whatever the sweeps cost."""
    counted = _run(_model(tmp_path), 1)
    norms = [row for row in counted["elements"] if row["name"] == "LocalNorm"]
    assert norms and norms[0]["inclusive"] == pytest.approx(0.006 / _speed("cluster-modern"))


def test_the_root_moves_round_the_processes(tmp_path: Path) -> None:
    """A broadcast whose root is K % nprocs: every process is the root once in four iterations."""
    result = _run(_model(tmp_path), 4)
    assert result["time"] > 0
    plain = _run(_model(tmp_path, loop='iterations="ITERS // CHECK"/>'), 4)
    assert result["time"] != plain["time"]  # the costs read K: without the counter K stays 0


@pytest.mark.parametrize(
    "counter, declared, loop, words",
    [
        ('counter="J"', True, None, "counter 'J' of loop 'Sweeps' is not a model variable"),
        ('counter="K"', False, None, "counter 'K' of loop 'Sweeps' is not a model variable"),
        ("", True, 'while="K &lt; 3" counter="K"/>', "has a counter but no iterations tag"),
    ],
)
def test_a_bad_counter_is_an_error_with_what_to_do(
    tmp_path: Path, counter: str, declared: bool, loop: str | None, words: str
) -> None:
    done = uml2perf("convert", _model(tmp_path, counter, declared, loop), "-o", tmp_path / "x.py")
    assert done.returncode != 0
    assert words in done.stderr and "Traceback" not in done.stderr
    assert "hint:" in done.stderr
    assert not (tmp_path / "x.py").exists()


def _speed(name: str) -> float:
    from uml2perf_runtime import Machine

    return Machine.load(name).speed


def test_a_send_that_reads_the_counter_is_not_made_once(tmp_path: Path) -> None:
    """A send whose destination is the counter changes every iteration: no call site made at the
    function's start (the same send with a variable nothing assigns gets one)."""
    send = '<uml2perf:SendPlus xmi:id="_r_st_sum" base_Action="_r_sum" size="8" dest="K"/>'
    model = _model(tmp_path)
    model.write_text(model.read_text().replace(_BCAST, send))
    assert "p.send_site(" not in converted(model, tmp_path / "counted.py")
    fixed = tmp_path / "fixed.uml"
    fixed.write_text(model.read_text().replace(' counter="K"', ""))
    assert "p.send_site(E_GlobalNorm, dest=v.K, size=8)" in converted(fixed, tmp_path / "fixed.py")
