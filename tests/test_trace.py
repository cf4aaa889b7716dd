"""Chrome/Perfetto trace output and plots."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from runtime_helpers import elements, machine, spec

from uml2perf_runtime import ModelRuntimeError, simulate


def _model():
    a, b, par, s = elements("A", "B", "PAR", "S")
    s.kind = "activity"

    def body(p, v):
        yield from p.compute(b, 0.5 * (p.tid + 1))

    def main(p, v):
        p.enter(s)
        yield from p.compute(a, 1.0 + p.pid)
        p.leave(s)
        yield from p.parallel(par, 2, body)
        if p.pid == 0:
            p.record_message(0, 1, 8, 3, p.env.now, p.env.now + 0.5)

    return spec(main, [a, b, par, s])


def _trace(tmp_path, name="t.json", **kwargs):
    path = tmp_path / name
    simulate(
        _model(), machine=machine(nodes=2, cores=4), procs=2, placement="round_robin", trace=path, **kwargs
    )
    return path, json.loads(path.read_text())


def test_trace_is_valid_json_with_tracks_per_process_and_thread(tmp_path):
    _, data = _trace(tmp_path)
    events = data["traceEvents"]
    names = {(e["pid"], e["args"]["name"]) for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {(0, "rank 0 (node 0)"), (1, "rank 1 (node 1)")}
    threads = {
        (e["pid"], e["tid"], e["args"]["name"])
        for e in events
        if e["ph"] == "M" and e["name"] == "thread_name"
    }
    assert threads == {
        (0, 0, "main"),
        (1, 0, "main"),
        (0, 1, "thread 0 of 2"),
        (0, 2, "thread 1 of 2"),
        (1, 1, "thread 0 of 2"),
        (1, 2, "thread 1 of 2"),
    }
    slices = [e for e in events if e["ph"] == "X"]
    # per process: A, S (composite), PAR region, 2 × B
    assert len(slices) == 2 * 5
    by_name = defaultdict(list)
    for e in slices:
        by_name[e["name"]].append(e)
    assert {e["cat"] for e in by_name["A"]} == {"compute"}
    assert {e["cat"] for e in by_name["S"]} == {"composite"}
    a1 = next(e for e in by_name["A"] if e["pid"] == 1)
    assert a1["ts"] == 0 and a1["dur"] == pytest.approx(2e6)  # microseconds
    assert a1["args"] == {"kind": "action", "id": "_A", "line": 10}
    b_thread = next(e for e in by_name["B"] if e["pid"] == 1 and e["tid"] == 2)
    assert b_thread["ts"] == pytest.approx(2e6) and b_thread["dur"] == pytest.approx(1e6)
    assert data["otherData"]["processes"] == 2


def test_timestamps_are_monotonic_per_track(tmp_path):
    _, data = _trace(tmp_path)
    last = {}
    for e in data["traceEvents"]:
        if e["ph"] != "X":
            continue
        key = (e["pid"], e["tid"])
        assert e["ts"] >= last.get(key, 0.0)
        last[key] = e["ts"]


def test_flow_arrows_for_messages(tmp_path):
    _, data = _trace(tmp_path)
    flows = [e for e in data["traceEvents"] if e["ph"] in ("s", "f")]
    assert [(e["ph"], e["pid"], e["id"]) for e in flows] == [("s", 0, 0), ("f", 1, 0)]
    assert flows[1]["ts"] - flows[0]["ts"] == pytest.approx(0.5e6)
    assert flows[0]["args"]["size"] == 8 and flows[0]["args"]["tag"] == 3


def test_trace_is_deterministic(tmp_path):
    first, _ = _trace(tmp_path, "one.json")
    second, _ = _trace(tmp_path, "two.json")
    assert first.read_bytes() == second.read_bytes()


def test_trace_write_leaves_no_temporary_files(tmp_path):
    _trace(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


def test_failed_run_writes_no_trace(tmp_path):
    (a,) = elements("A")

    def main(p, v):
        yield from p.compute(a, 1 / 0)

    with pytest.raises(ModelRuntimeError):
        simulate(spec(main, [a]), machine=machine(), procs=1, trace=tmp_path / "bad.json")
    assert not list(tmp_path.iterdir())


def test_tracing_does_not_change_the_numbers(tmp_path):
    traced = simulate(_model(), machine=machine(nodes=2, cores=4), procs=2, trace=tmp_path / "x.json")
    plain = simulate(_model(), machine=machine(nodes=2, cores=4), procs=2)
    a, b = traced.to_dict(), plain.to_dict()
    for d in (a, b):
        d.pop("wall_time")
        d.pop("critical_path")  # only a run that keeps its timeline has one
        d.pop("critical_path_note", None)
        d.pop("events")
    assert a == b
    assert plain.timeline is None and traced.timeline


def test_trace_with_communication(tmp_path):
    a, snd, rcv = elements("A", "SEND", "RECV")

    def main(p, v):
        yield from p.compute(a, 1.0)
        if p.pid == 0:
            yield from p.send(snd, 1, 1000, 0)
        else:
            yield from p.recv(rcv, 0, 1000, 0)

    path = tmp_path / "comm.json"
    simulate(spec(main, [a, snd, rcv]), machine=machine(nodes=2, cores=1), procs=2, trace=path)
    events = json.loads(path.read_text())["traceEvents"]
    cats = {e["name"]: e["cat"] for e in events if e["ph"] == "X"}
    assert cats["A"] == "compute"
    assert {"SEND", "RECV"} <= set(cats)
    assert [e["ph"] for e in events if e["ph"] in ("s", "f")] == ["s", "f"]


def test_trace_true_keeps_timeline_without_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = simulate(_model(), machine=machine(nodes=2, cores=4), procs=2, trace=True)
    assert not list(tmp_path.iterdir())
    assert ("A", "compute") in {(name, cat) for _, _, name, cat, _, _ in res.timeline}


def test_plots_are_written(tmp_path):
    pytest.importorskip("matplotlib")
    from uml2perf_runtime.output.plot import plot_elements, plot_results, plot_timeline

    traced = simulate(_model(), machine=machine(nodes=2, cores=4), procs=2, trace=True)
    plain = simulate(_model(), machine=machine(nodes=2, cores=4), procs=2)
    for func, res, name in (
        (plot_results, traced, "r1.png"),
        (plot_results, plain, "r2.png"),
        (plot_timeline, traced, "t.png"),
        (plot_elements, plain, "e.png"),
    ):
        out = func(res, tmp_path / name)
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.png", "r1.png", "r2.png", "t.png"]


def test_timeline_plot_needs_a_timeline(tmp_path):
    from uml2perf_runtime import SimulationError
    from uml2perf_runtime.output.plot import plot_timeline

    plain = simulate(_model(), machine=machine(nodes=2, cores=4), procs=2)
    with pytest.raises(SimulationError, match="no timeline"):
        plot_timeline(plain, tmp_path / "t.png")


def test_trace_into_missing_folder_is_a_clear_error(tmp_path):
    from uml2perf_runtime import SimulationError

    with pytest.raises(SimulationError, match="cannot write the trace file"):
        simulate(_model(), machine=machine(nodes=2, cores=4), procs=2, trace=tmp_path / "no" / "t.json")
