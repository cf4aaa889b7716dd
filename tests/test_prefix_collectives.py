"""``reduce_scatter+``, ``scan+`` and ``exscan+`` from a drawn model to a prediction."""

from __future__ import annotations

from pathlib import Path

import pytest
from command_helpers import converted, predicted

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "stereotype, call",
    [("ReduceScatterPlus", "reduce_scatter"), ("ScanPlus", "scan"), ("ExscanPlus", "exscan")],
)
def test_the_stereotype_reaches_the_generated_call_and_costs_its_rounds(
    tmp_path: Path, stereotype: str, call: str
) -> None:
    """samples/relax.uml with its all-reduce of one double redrawn: a 1 MiB block makes the call
    the largest part of the communication time."""
    text = (ROOT / "samples" / "relax.uml").read_text()
    model = tmp_path / "m.uml"
    model.write_text(
        text.replace(
            '<uml2perf:AllReducePlus xmi:id="_r_st_sum" base_Action="_r_sum" size="8"/>',
            f'<uml2perf:{stereotype} xmi:id="_r_st_sum" base_Action="_r_sum" size="1048576"/>',
        )
    )
    assert f"yield from p.{call}(E_GlobalNorm, size=1048576)" in converted(model, tmp_path / "m.py")
    settings = ("--machine", "cluster-modern", "--set", "ITERS=10", "--set", "CHECK=10", "--set", "N=8")
    four = predicted(model, "--procs", "4", *settings)
    one = predicted(model, "--procs", "1", *settings)
    rows = {row["name"]: row for row in four["elements"]}
    assert rows["GlobalNorm"]["inclusive"] > 0  # 2 rounds (or 3 blocks) of 1 MiB on four processes
    assert {row["name"]: row for row in one["elements"]}["GlobalNorm"]["inclusive"] == 0  # alone: free
