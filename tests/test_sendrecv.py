"""``sendrecv+`` (``MPI_Sendrecv``): a send and a receive in one call that cannot deadlock."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from uml2perf_runtime import Element, Machine, ModelSpec, simulate
from uml2perf_runtime.errors import SimulationError

MACHINE = Machine.from_dict(
    {
        "nodes": 1,
        "cores_per_node": 4,
        "network": {"eager_limit": 65536, "intra_node": {"latency": 1e-6, "bandwidth": 1e9}},
    }
)
#: A one-action export whose action carries ``SendRecvPlus`` (to the right, from the left, S bytes).
RING = (Path(__file__).resolve().parent / "data" / "sendrecv-ring.uml").read_text()


def ring(size: float, recvsize: Any = None, procs: int = 4) -> Any:
    exchange = Element(0, "Exchange", "sendrecv")

    def main(p: Any, v: Any) -> Any:
        right, left = (p.pid + 1) % p.nprocs, (p.pid - 1) % p.nprocs
        yield from p.sendrecv(exchange, dest=right, source=left, size=size, recvsize=recvsize)

    return simulate(ModelSpec("ring", "test", (exchange,), main=main), MACHINE, procs=procs)


@pytest.mark.parametrize("size", [1024.0, float(1 << 20)])  # eager and rendezvous
def test_a_ring_of_exchanges_takes_one_message_time_and_never_deadlocks(size: float) -> None:
    assert ring(size).time == pytest.approx(1e-6 + size / 1e9)


def test_the_received_size_may_differ_from_the_sent_one() -> None:
    # every process sends 1 KiB and waits for 1 KiB: the message time of what arrives
    assert ring(1024.0, recvsize=1024.0).time == pytest.approx(1e-6 + 1024 / 1e9)


def test_a_receive_that_never_matches_is_a_deadlock_named_by_its_element() -> None:
    exchange = Element(0, "Exchange", "sendrecv")

    def main(p: Any, v: Any) -> Any:
        yield from p.sendrecv(exchange, dest=(p.pid + 1) % 2, source=(p.pid + 1) % 2, size=8, tag=p.pid)

    with pytest.raises(SimulationError, match="Exchange"):
        simulate(ModelSpec("bad", "test", (exchange,), main=main), MACHINE, procs=2)


DEST = ' dest="(pid + 1) % nprocs"'


def _run(tmp_path: Path, text: str, *args: str) -> subprocess.CompletedProcess[str]:
    model = tmp_path / "ring.uml"
    model.write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "uml2perf", "run", str(model), "--procs", "4", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_stereotype_runs_from_an_export_on_pairs_and_on_shared_links(tmp_path: Path) -> None:
    done = _run(tmp_path, RING, "--json", "--machine", "laptop")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    rows = [e for e in result["elements"] if e["name"] == "Shift"]
    assert rows and rows[0]["kind"] == "sendrecv" and result["time"] > 0
    topology = Path(__file__).resolve().parents[1] / "samples" / "machines" / "narval.toml"
    shared = _run(tmp_path, RING, "--json", "--machine", str(topology), "--nodes", "2")
    assert shared.returncode == 0, shared.stderr
    assert json.loads(shared.stdout)["time"] > 0


def test_a_missing_destination_is_named(tmp_path: Path) -> None:
    assert DEST in RING
    done = _run(tmp_path, RING.replace(DEST, ""))
    assert done.returncode != 0 and "dest" in done.stderr and "Traceback" not in done.stderr
