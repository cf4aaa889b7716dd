"""Adding a collective touches its own unit (its schedule), one registry entry and tests.

A fresh interpreter registers a toy collective ``shift`` (every rank passes ``size`` bytes to the
next one, in one round) before anything else is imported, then reads a model whose action has the
stereotype ``ShiftPlus``: the profile, the neutral model's roles, the generator, the simulated
contexts (per pair and on shared links), the analytic path, the machine's ``[collectives]`` keys
and the findings all take it from the table, with no other file changed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"

SCRIPT = r"""
import json, sys
from uml2perf_runtime.operations import registry

def shift(p, n):
    from uml2perf_runtime.platform.network import Step
    return [Step(list(range(p)), [(r + 1) % p for r in range(p)], n)]

registry.register(registry.collective("shift", registry.parameter("size", "0"), schedules=(("ring", shift),)))

import uml2perf
from uml2perf.model import Role
from uml2perf_runtime.engine.context import Context
from uml2perf_runtime.platform.machine import COLLECTIVE_OPERATIONS

model, topology = sys.argv[1], sys.argv[2]
laptop = uml2perf.Machine.load("laptop")
simulated = uml2perf.predict(model, machine=laptop, procs=4)
analytic = uml2perf.sweep(model, {"procs": [4]}, machine=laptop, workers=1).rows[0]
forced = uml2perf.sweep(model, {"procs": [4]}, machine=laptop, workers=1, analytic=False).rows[0]
links = uml2perf.predict(model, machine=topology, procs=4, nodes=2, placement="round_robin")
link = laptop.link(0, 0)
print(json.dumps({
    "role": Role("shift").name,
    "method": "shift" in vars(Context),
    "machine_key": "shift" in COLLECTIVE_OPERATIONS,
    "simulated": simulated.time,
    "analytic": [analytic["method"], analytic["time"]],
    "forced": [forced["method"], forced["time"]],
    "expected": 1.0 + link.latency + 1e6 / link.bandwidth,
    "links": [links.time, len(links.links or [])],
    "shift_time": [e["inclusive"] for e in simulated.to_dict()["elements"] if e["kind"] == "shift"],
}))
"""


def test_a_toy_collective_runs_end_to_end_simulated_and_analytic(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = {**os.environ, "UML2PERF_CACHE_DIR": str(cache), "XDG_CACHE_HOME": str(cache)}
    machine = Path(__file__).resolve().parent.parent / "samples" / "machines" / "narval.toml"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(DATA / "toy-collective.uml"), str(machine)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["role"] == "SHIFT" and out["method"] and out["machine_key"]
    # one round of 1 MB inside a node after 1 s of work: latency + size / bandwidth
    assert abs(out["simulated"] - out["expected"]) < 1e-12
    assert out["analytic"][0] == "analytic" and out["analytic"][1] == out["simulated"]
    assert out["forced"][0] == "simulation" and abs(out["forced"][1] - out["simulated"]) < 1e-12
    # round robin on two nodes of a fat tree: two flows share each direction of a node's
    # 100 Gbit/s link, after the route's two hops of 0.5 us
    assert abs(out["links"][0] - (1.0 + 2 * 1e6 / 12.5e9 + 1e-6)) < 1e-12 and out["links"][1] > 0
    assert out["shift_time"] and out["shift_time"][0] > 0.0
