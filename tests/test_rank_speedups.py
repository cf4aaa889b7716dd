"""What to speed up first: the ranking agrees with trying every element at 2x (brute force).

The ranking tries the elements that do work (actions, communication, critical sections), those on
the critical path first, then any whose whole time halved could still beat the third saving; brute
force predicts the run once per element with ``--speedup X=2``.  On every sample and on random
models with processes, messages, thread regions, locks and more work elements than the ranking
predicts again, the three largest savings agree.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from runtime_helpers import machine, spec

from uml2perf import answers, api
from uml2perf_runtime import Element, simulate
from uml2perf_runtime.operations.registry import WORK_KINDS

SAMPLES = Path(__file__).resolve().parents[1] / "samples"

#: (sample, machine, processes): every sample that finishes (ring_deadlock.uml deadlocks on purpose)
RUNS = [
    ("hybrid.uml", "laptop", 2),
    ("hybrid.uml", "laptop", 4),
    ("lapw0.uml", "gescher", 8),
    ("kernels.uml", "gpu-node", 2),
    ("prophet.uml", None, 2),
    ("prophet-magicdraw.xmi", None, 1),
    ("prophet-ea.xmi", None, 1),
    ("prophet-argouml.xmi", None, 1),
]


def _top_savings(rows: list[tuple[str, float]], count: int = 3) -> list[float]:
    return sorted((round(saving, 9) for _, saving in rows), reverse=True)[:count]


def _brute_force(result: Any, predict: Any) -> list[tuple[str, float]]:
    """Every element that does work and takes time, at 2x: (name, saving)."""
    names = [row["name"] for row in result.elements if row["kind"] in WORK_KINDS and row["inclusive"] > 0]
    return [(name, result.time - predict(name)) for name in names]


@pytest.mark.parametrize("sample, machine_name, procs", RUNS)
def test_the_ranking_of_every_sample_agrees_with_brute_force(
    sample: str, machine_name: Any, procs: int
) -> None:
    path = SAMPLES / sample
    ranked = api.predict(path, machine=machine_name, procs=procs, rank_speedups=True)
    brute = _brute_force(
        ranked, lambda name: api.predict(path, machine=machine_name, procs=procs, speedups={name: 2.0}).time
    )
    assert ranked.ranked_speedups, "the ranking lists the elements that do work"
    assert {row["kind"] for row in ranked.ranked_speedups} <= WORK_KINDS  # no container is ranked
    mine = [(row["element"], row["saves"]) for row in ranked.ranked_speedups]
    assert _top_savings(mine) == _top_savings(brute)
    assert [row["time"] for row in ranked.ranked_speedups] == sorted(
        row["time"] for row in ranked.ranked_speedups
    )


def test_the_thread_model_ranks_the_work_inside_its_threads_first() -> None:
    """Regression: only containers (pipeline, task pool, parallel region) were ranked, each saving 0."""
    result = api.predict(SAMPLES / "hybrid.uml", machine="laptop", procs=2, rank_speedups=True)
    top = [row["element"] for row in result.ranked_speedups[:2]]
    assert top == ["Analyse", "Compress"]
    assert result.ranked_speedups[0]["saves"] == pytest.approx(0.08, rel=1e-6)
    path = {
        entry["element"]
        for entry in api.predict(
            SAMPLES / "hybrid.uml", machine="laptop", procs=2, critical_path=True
        ).critical_path
    }
    assert not path & {"Output", "PostProcess", "Sweep"}  # containers only through their parts
    assert {"Analyse", "Compress"} <= path


def test_a_container_at_2x_is_the_sum_of_its_parts_at_2x() -> None:
    """Regression: --speedup on a pipeline changed nothing (its threads ignored the factor)."""
    path = SAMPLES / "hybrid.uml"
    whole = api.predict(path, machine="laptop", procs=2, speedups={"Output": 2.0})
    parts = api.predict(
        path, machine="laptop", procs=2, speedups={"Render": 2.0, "Compress": 2.0, "Write": 2.0}
    )
    assert whole.time == pytest.approx(parts.time, rel=1e-12)
    assert whole.time < whole.base_time


def test_a_what_if_that_cannot_change_the_time_says_why() -> None:
    """Regression: a what-if that changed nothing printed ``+0 s, +0.0%`` without a word."""
    path = SAMPLES / "hybrid.uml"
    for name, words in (("RecvLeft", "communication"), ("SendRight", "takes no time")):
        notes: list[str] = []
        result = api.predict(path, machine="laptop", procs=2, speedups={name: 2.0}, warnings=notes)
        assert result.time == result.base_time
        assert len(notes) == 1 and name in notes[0] and words in notes[0], notes
    notes = []
    api.predict(path, machine="laptop", procs=2, speedups={"Analyse": 2.0}, warnings=notes)
    assert notes == []  # a what-if that changes the time needs no explanation


# -- random models ---------------------------------------------------------------------------


def _random_spec(seed: int) -> tuple[Any, int]:
    """Processes with per-process work, a thread region with a lock, a message ring segment, an allreduce."""
    rng = random.Random(seed)
    names = ["Pre", "Region", "Body", "Lock", "Locked", "Send", "Recv", "Mid", "Reduce", "Post"]
    kinds = [
        "action",
        "parallel",
        "action",
        "critical",
        "action",
        "send",
        "recv",
        "action",
        "allreduce",
        "action",
    ]
    extra = rng.randint(0, 8)  # more work elements than the ranking predicts again (10)
    names += [f"Step{i}" for i in range(extra)]
    kinds += ["action"] * extra
    elems = [Element(i, n, k, f"_{n}", 10 + i) for i, (n, k) in enumerate(zip(names, kinds, strict=True))]
    pre, region, body, lock, locked, send, recv, mid, reduce, post, *steps = elems
    procs = rng.randint(2, 4)
    threads = rng.randint(1, 3)
    cost = {
        e.name: [rng.choice([0.0, 0.5, 1.0, 2.0, 3.0]) * rng.uniform(0.5, 1.5) for _ in range(procs)]
        for e in elems
    }
    chained = rng.random() < 0.7

    def main(p: Any, v: Any) -> Any:
        yield from p.compute(pre, cost["Pre"][p.pid])
        for step in steps:
            yield from p.compute(step, cost[step.name][p.pid] / 4)

        def inside(t: Any, w: Any) -> Any:
            yield from t.compute(body, cost["Body"][t.pid] * (1 + t.tid))

            def guarded(u: Any, x: Any) -> Any:
                yield from u.compute(locked, cost["Locked"][u.pid])

            yield from t.critical(lock, "L", guarded)

        yield from p.parallel(region, threads, inside)
        if chained and p.pid > 0:
            yield from p.recv(recv, p.pid - 1, 8, 0, 0)
        yield from p.compute(mid, cost["Mid"][p.pid])
        if chained and p.pid < p.nprocs - 1:
            yield from p.send(send, p.pid + 1, 8, 0, 0)
        yield from p.allreduce(reduce, 8)
        yield from p.compute(post, cost["Post"][p.pid])

    return spec(main, elems), procs


@pytest.mark.parametrize("seed", range(40))
def test_the_ranking_of_random_models_agrees_with_brute_force(seed: int) -> None:
    model, procs = _random_spec(seed)
    box = machine(cores=8)
    result = simulate(model, machine=box, procs=procs, critical_path=True)

    def predict(name: str) -> float:
        return simulate(model, machine=box, procs=procs, speedups={name: 2.0}).time

    # predicting only 3 again, plus those whose whole time halved could still beat the third: the
    # order along the critical path and the bound must find the same top three as trying them all
    tried: list[str] = []
    ranked = answers.ranked_speedups(result, lambda name: [tried.append(name) or predict(name)], most=3)
    mine = [(row["element"], row["saves"]) for row in ranked]
    brute = _brute_force(result, predict)
    assert _top_savings(mine) == _top_savings(brute)
    assert len(tried) == len(set(tried)) <= len(brute)
