"""Performance properties against hand-computed severities, and replications against analytic means."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from runtime_helpers import elements, machine, spec

from uml2perf_runtime import Element, simulate
from uml2perf_runtime.analysis.properties import compute_properties, load_imbalance
from uml2perf_runtime.analysis.replications import interval

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def _find(results: Any, prop: str, element: str | None) -> dict[str, Any]:
    for entry in results.properties:
        if entry["property"] == prop and entry["element"] == element:
            return entry
    raise AssertionError(f"{prop} on {element} not found in {results.properties}")


def test_load_imbalance_formula() -> None:
    assert load_imbalance(np.array([1.0, 2.0, 3.0, 4.0])) == pytest.approx((1 - 2.5 / 4) / (1 - 1 / 4))
    assert load_imbalance(np.array([2.0, 2.0])) == 0.0
    assert load_imbalance(np.array([0.0, 0.0, 5.0])) == pytest.approx(1.0)
    assert load_imbalance(np.array([7.0])) == 0.0


def test_an_imbalanced_action() -> None:
    (work,) = elements("Work")

    def main(p: Any, v: Any) -> Any:
        yield from p.compute(work, 1.0 + p.pid)

    r = simulate(spec(main, [work]), machine=machine(cores=4), procs=4)
    relative = (1 - 2.5 / 4) / (1 - 1 / 4)
    # the one scale: time the others wait for the slowest, (4 * 4 - 10) s, over T P = 4 s * 4
    expected = (4 * 4 - 10) / (4 * 4)
    entry = _find(r, "load_imbalance", "Work")
    assert entry["severity"] == pytest.approx(expected) and entry["relative"] == pytest.approx(relative)
    whole = _find(r, "load_imbalance", None)
    assert whole["severity"] == pytest.approx(expected) and whole["confidence"] == 1.0
    assert whole["relative"] == pytest.approx(relative)
    assert "process 3 takes 4" in _find(r, "load_imbalance", "Work")["hint"]


def test_a_late_sender() -> None:
    work, send, recv = (
        Element(0, "Work", "action", "_w", 1),
        Element(1, "Send", "send", "_s", 2),
        Element(2, "Recv", "recv", "_r", 3),
    )

    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.compute(work, 3.0)
            yield from p.send(send, 1, 8, 0, 0)
        else:
            yield from p.recv(recv, 0, 8, 0, 0)

    r = simulate(spec(main, [work, send, recv]), machine=machine(cores=2), procs=2)
    assert r.per_process[1]["wait"] == pytest.approx(3.0)
    entry = _find(r, "late_sender", "Recv")
    assert entry["severity"] == pytest.approx(3.0 / (2 * r.time)) and entry["process"] == 1
    assert _find(r, "late_sender", None)["seconds"] == pytest.approx(3.0)


def test_a_late_receiver_under_rendezvous() -> None:
    work, send, recv = (
        Element(0, "Work", "action", "_w", 1),
        Element(1, "Send", "send", "_s", 2),
        Element(2, "Recv", "recv", "_r", 3),
    )

    def main(p: Any, v: Any) -> Any:
        if p.pid == 0:
            yield from p.send(send, 1, 1_000_000, 0, 0)
        else:
            yield from p.compute(work, 2.0)
            yield from p.recv(recv, 0, 1_000_000, 0, 0)

    r = simulate(spec(main, [work, send, recv]), machine=machine(cores=2), procs=2)
    entry = _find(r, "late_receiver", "Send")
    assert entry["severity"] == pytest.approx(2.0 / (2 * r.time)) and entry["process"] == 0


def test_waiting_in_a_collective_is_synchronisation() -> None:
    work, reduce_ = Element(0, "Work", "action", "_w", 1), Element(1, "Sum", "allreduce", "_a", 2)

    def main(p: Any, v: Any) -> Any:
        yield from p.compute(work, float(p.pid))
        yield from p.allreduce(reduce_, 8)

    r = simulate(spec(main, [work, reduce_]), machine=machine(cores=4), procs=4)
    entry = _find(r, "synchronization", "Sum")
    assert entry["seconds"] == pytest.approx(3 + 2 + 1 + 0)
    assert entry["severity"] == pytest.approx(6.0 / (4 * r.time)) and entry["process"] == 0


def test_waiting_for_a_critical_section() -> None:
    work, par, crit = elements("Work", "Par", "Crit")

    def inner(p: Any, v: Any) -> Any:
        yield from p.compute(work, 1.0)

    def body(p: Any, v: Any) -> Any:
        yield from p.critical(crit, "lock", inner)

    def main(p: Any, v: Any) -> Any:
        yield from p.parallel(par, 2, body)

    crit_elem = Element(2, "Crit", "critical", "_Crit", 12)
    r = simulate(spec(main, [work, par, crit_elem]), machine=machine(cores=2), procs=1)
    assert r.time == pytest.approx(2.0)
    entry = _find(r, "critical_section", "Crit")
    assert entry["seconds"] == pytest.approx(1.0) and entry["severity"] == pytest.approx(1.0 / 2.0)


def test_an_oversubscribed_node_says_so() -> None:
    (work,) = elements("Work")

    def main(p: Any, v: Any) -> Any:
        yield from p.compute(work, 1.0)

    r = simulate(spec(main, [work]), machine=machine(cores=4), procs=8)
    assert r.time == pytest.approx(2.0)
    entry = _find(r, "oversubscription", None)
    assert entry["seconds"] == pytest.approx(8.0) and entry["severity"] == pytest.approx(0.5)
    assert "machine is too small" in entry["hint"]
    assert all(row["oversubscribed"] == pytest.approx(1.0) for row in r.per_process)
    assert "oversubscription" in r.report()


def test_a_balanced_run_has_no_findings() -> None:
    (work,) = elements("Work")

    def main(p: Any, v: Any) -> Any:
        yield from p.compute(work, 1.0)

    r = simulate(spec(main, [work]), machine=machine(cores=4), procs=4)
    assert r.properties == [] and "Findings" not in r.report()


def test_the_threshold_is_settable() -> None:
    found = compute_properties(
        time=10.0,
        names=["W"],
        kinds=["action"],
        incl=np.array([[1.0], [1.2]]),
        waits=np.zeros((2, 1)),
        compute=np.array([1.0, 1.2]),
        communication=np.zeros(2),
        oversubscribed=np.zeros(2),
        threshold=0.5,
    )
    assert found == []
    found = compute_properties(
        time=10.0,
        names=["W"],
        kinds=["action"],
        incl=np.array([[1.0], [1.2]]),
        waits=np.zeros((2, 1)),
        compute=np.array([1.0, 1.2]),
        communication=np.zeros(2),
        oversubscribed=np.zeros(2),
        threshold=0.0,
    )
    assert {p["property"] for p in found} == {"load_imbalance"}


def test_interval_matches_students_t() -> None:
    stats = interval([1.0, 2.0, 3.0])
    assert stats["mean"] == 2.0 and stats["std"] == pytest.approx(1.0)
    half = 4.302652729911275 / 3**0.5  # t(0.975, 2) * s / sqrt(n)
    assert stats["ci95"] == pytest.approx([2.0 - half, 2.0 + half])
    assert interval([5.0]) == {"mean": 5.0, "std": 0.0, "ci95": [5.0, 5.0]}


def test_replications_agree_with_the_analytic_mean_of_a_probabilistic_model() -> None:
    """Each process draws once: 1 s with probability 0.3, else 3 s; one process, so E[T] = 0.3 + 2.1 = 2.4."""
    short, long = elements("Short", "Long")

    def main(p: Any, v: Any) -> Any:
        if p.random() < 0.3:
            yield from p.compute(short, 1.0)
        else:
            yield from p.compute(long, 3.0)

    from uml2perf_runtime.analysis.replications import summarise

    runs = [
        simulate(spec(main, [short, long]), machine=machine(cores=1), procs=1, seed=s) for s in range(400)
    ]
    summary = summarise(runs)
    rep = summary.replications
    assert rep["n"] == 400 and summary.time == rep["mean"]
    assert rep["ci95"][0] < 2.4 < rep["ci95"][1]
    assert rep["std"] == pytest.approx((0.3 * 0.7) ** 0.5 * 2.0, rel=0.1)


def test_run_json_has_properties_and_replications(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "lapw0.uml", tmp_path / "lapw0.uml")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "uml2perf",
            "run",
            "lapw0.uml",
            "--machine",
            "gescher",
            "--procs",
            "8",
            "--json",
            "--replications",
            "3",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["replications"]["n"] == 3 and data["time"] == pytest.approx(data["replications"]["mean"])
    top = data["properties"][0]
    assert set(top) >= {"property", "element", "severity", "confidence"}
    assert any(p["property"] == "late_sender" and p["element"] == "Receive_I2" for p in data["properties"])


def _saved(tmp_path: Path, name: str, *args: str) -> Path:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "uml2perf",
            "run",
            str(SAMPLES / "lapw0.uml"),
            "--machine",
            "gescher",
            "--json",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    target = tmp_path / name
    target.write_text(done.stdout)
    return target


def test_compare_two_saved_predictions(tmp_path: Path) -> None:
    from uml2perf.compare import compare, format_comparison, load_result

    a = _saved(tmp_path, "a.json", "--procs", "8")
    b = _saved(tmp_path, "b.json", "--procs", "32")
    result = compare(load_result(a), load_result(b), a_name="a.json", b_name="b.json")
    data_a, data_b = json.loads(a.read_text()), json.loads(b.read_text())
    assert result["difference"] == pytest.approx(data_b["time"] - data_a["time"])
    changes = [abs(row["difference"]) for row in result["elements"]]
    assert changes == sorted(changes, reverse=True)
    sft = next(row for row in result["elements"] if row["element"] == "SFT")
    assert sft["ratio"] == pytest.approx(4.0)  # every process repeats it: 32 / 8
    text = format_comparison(result)
    assert "B/A" in text and "SFT" in text
    done = subprocess.run(
        [sys.executable, "-m", "uml2perf", "compare", str(a), str(b), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and json.loads(done.stdout)["model"] == "LAPW0"


@pytest.mark.parametrize(
    "content, words",
    [
        ("not json", "not a JSON file"),
        ("[1, 2]", "not an object"),
        ('{"time": 1, "model": "LAPW0"}', "missing"),
        ('{"time": "soon", "model": "LAPW0", "elements": [], "processes": 1}', "not a number"),
    ],
)
def test_compare_refuses_what_is_not_a_prediction(tmp_path: Path, content: str, words: str) -> None:
    good = _saved(tmp_path, "a.json", "--procs", "4")
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    done = subprocess.run(
        [sys.executable, "-m", "uml2perf", "compare", str(good), str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and words in done.stderr and "Traceback" not in done.stderr


def test_compare_refuses_two_different_models(tmp_path: Path) -> None:
    a = _saved(tmp_path, "a.json", "--procs", "4")
    done = subprocess.run(
        [sys.executable, "-m", "uml2perf", "run", str(SAMPLES / "prophet.uml"), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    (tmp_path / "p.json").write_text(done.stdout)
    refused = subprocess.run(
        [sys.executable, "-m", "uml2perf", "compare", str(a), str(tmp_path / "p.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 1 and "different models" in refused.stderr


# -- critical path and what-if ------------------------------------------------------------------


def _chain_spec() -> Any:
    """Process p computes 1 s, waits for p-1's message, computes 2 s and sends to p+1; a side task on 0."""
    work, recv, after, send, side = (
        Element(0, "Work", "action", "_w", 1),
        Element(1, "Recv", "recv", "_r", 2),
        Element(2, "After", "action", "_a", 3),
        Element(3, "Send", "send", "_s", 4),
        Element(4, "Side", "action", "_x", 5),
    )

    def main(p: Any, v: Any) -> Any:
        yield from p.compute(work, 1.0)
        if p.pid > 0:
            yield from p.recv(recv, p.pid - 1, 8, 0, 0)
        yield from p.compute(after, 2.0)
        if p.pid < p.nprocs - 1:
            yield from p.send(send, p.pid + 1, 8, 0, 0)
        if p.pid == 0:
            yield from p.compute(side, 0.5)

    return spec(main, [work, recv, after, send, side])


def test_the_critical_path_of_a_message_chain_crosses_processes() -> None:
    r = simulate(_chain_spec(), machine=machine(cores=4), procs=4, critical_path=True)
    path = {(e["element"], e["process"]): e["time"] for e in r.critical_path}
    # the last process ends the run; its wait leads back through 2, 1 to process 0's work
    for pid in range(4):
        assert path[("After", pid)] == pytest.approx(2.0)
    assert path[("Work", 0)] == pytest.approx(1.0)
    assert not any(element == "Work" and pid > 0 for element, pid in path)
    assert ("Side", 0) not in path
    assert path[("Recv", 3)] < 1e-5  # only the transfer: the wait itself is the sender's work
    on_path = sum(path.values())
    assert on_path == pytest.approx(r.time, rel=1e-6)


def test_speeding_up_an_element_off_the_critical_path_changes_nothing() -> None:
    base = simulate(_chain_spec(), machine=machine(cores=4), procs=4)
    side = simulate(_chain_spec(), machine=machine(cores=4), procs=4, speedups={"Side": 4.0})
    assert side.time == pytest.approx(base.time)
    after = simulate(_chain_spec(), machine=machine(cores=4), procs=4, speedups={"After": 2.0})
    assert after.time == pytest.approx(base.time - 4 * 1.0)  # 2 s -> 1 s on each of the 4 chained processes
    by_id = simulate(_chain_spec(), machine=machine(cores=4), procs=4, speedups={"_a": 2.0})
    assert by_id.time == pytest.approx(after.time)


@pytest.mark.parametrize(
    "speedups, words",
    [
        ({"Aftr": 2.0}, "did you mean 'After'"),
        ({"After": 0.0}, "positive, finite"),
        ({"After": float("inf")}, "positive, finite"),
        ({"After": -2.0}, "positive, finite"),
    ],
)
def test_bad_speedups_are_clear_errors(speedups: dict[str, float], words: str) -> None:
    from uml2perf_runtime.errors import SimulationError

    with pytest.raises(SimulationError, match=words):
        simulate(_chain_spec(), machine=machine(cores=4), procs=4, speedups=speedups)


def test_what_if_and_ranking_through_the_command_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "uml2perf",
            "run",
            str(SAMPLES / "lapw0.uml"),
            "--machine",
            "gescher",
            "--procs",
            "8",
            "--json",
            "--speedup",
            "SFT=2",
            "--rank-speedups",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["base_time"] - data["time"] == pytest.approx(31.4 / 2, rel=1e-6)  # SFT is on the path once
    ranked = data["speedups"]
    assert data["what_if"] == {"SFT": 2.0}
    assert ranked[0]["element"] == "Calculate_Multipolmoments" and ranked[0]["factor"] == 2.0
    assert [row["time"] for row in ranked] == sorted(row["time"] for row in ranked)
    assert {"element", "process", "time"} <= set(data["critical_path"][0])
    bad = subprocess.run(
        [sys.executable, "-m", "uml2perf", "run", str(SAMPLES / "lapw0.uml"), "--speedup", "SFX=2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 1 and "did you mean 'SFT'" in bad.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "uml2perf", "run", str(SAMPLES / "lapw0.uml"), "--speedup", "SFT=fast"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 1 and "not a number" in bad.stderr
