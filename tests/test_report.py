"""The HTML reports (``run --report``, ``sweep --report``, ``Results.write_report``) and the result writers.

What a reader gets without a browser: one self-contained file whose raw HTML already holds the
tables and the static SVG pictures (readable with scripts off), names escaped, sizes bounded.
The page's script is exercised in a real browser by ``test_report_browser.py``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from uml2perf.cli import main
from uml2perf_runtime.output import writers
from uml2perf_runtime.output.charts import BINNED_ROWS, BINS, DETAIL_SLICES, timeline
from uml2perf_runtime.output.diagram import layout_panel
from uml2perf_runtime.output.report import interval_of, render_run_report
from uml2perf_runtime.output.results import Results

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
RUN_SECTIONS = ("summary", "diagram", "elements", "processes", "findings", "critical-path", "timeline")
SWEEP_SECTIONS = ("summary", "scaling", "findings", "points")


def run(*args: object) -> int:
    return main([str(a) for a in args])


def assert_self_contained(html: str) -> None:
    """Nothing is loaded from elsewhere: no external scripts, styles, images, fonts or frames."""
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"<(script|img|iframe|link|object|embed)[^>]*\s(src|href)=", html, re.I)
    assert "@import" not in html and not re.search(r"url\((?!#)", html)  # only links within the page
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    assert "default-src 'none'" in html  # and the page itself forbids fetching anything


def sections(html: str) -> set[str]:
    return set(re.findall(r'<section id="([^"]+)"', html))


def small_results(**changes: object) -> Results:
    """A two-process result built by hand: known figures, a timeline, a finding and a critical path."""
    values: dict = dict(
        model="demo",
        source="demo.uml",
        machine={"name": "box", "cores_per_node": 4},
        time=3.0,
        processes=2,
        nodes=1,
        seed=0,
        placement="block",
        per_process=[
            {"pid": 0, "node": 0, "time": 3.0, "compute": 2.0, "communication": 0.5, "wait": 0.5},
            {"pid": 1, "node": 0, "time": 2.5, "compute": 2.5, "communication": 0.0, "wait": 0.0},
        ],
        elements=[
            {
                "name": "Solve",
                "id": "_solve",
                "kind": "action",
                "line": 7,
                "calls": 2,
                "inclusive": 4.5,
                "exclusive": 4.5,
                "percent": 90.0,
                "processes": 2,
                "mean": 2.25,
                "min": 2.0,
                "max": 2.5,
                "std": 0.25,
            },
            {
                "name": "Swap",
                "id": "_swap",
                "kind": "send",
                "line": 9,
                "calls": 1,
                "inclusive": 1.0,
                "exclusive": 1.0,
                "percent": 10.0,
                "processes": 1,
                "mean": 1.0,
                "min": 1.0,
                "max": 1.0,
                "std": 0.0,
            },
        ],
        events=12,
        wall_time=0.01,
        timeline=[
            (0, 0, "Solve", "compute", 0.0, 2.0),
            (0, 0, "Swap", "comm", 2.0, 2.5),
            (0, 0, "Swap", "wait", 2.5, 3.0),
            (1, 0, "Solve", "compute", 0.0, 2.5),
        ],
        properties=[
            {
                "property": "late_sender",
                "element": "Swap",
                "severity": 0.12,
                "confidence": 1.0,
                "hint": "Swap waits for late senders",
            }
        ],
        critical_path=[
            {"element": "Solve", "process": 0, "time": 2.0},
            {"element": "Swap", "process": 0, "time": 1.0},
        ],
    )
    values.update(changes)
    return Results(**values)


# --------------------------------------------------------------------------- the run report


def test_run_report_of_an_export_has_every_section_the_diagram_and_stays_readable_without_scripts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "prophet.html"
    assert run("run", SAMPLES / "prophet.uml", "--procs", 2, "--report", report) == 0
    out = capsys.readouterr().out
    assert "Predicted time: 194.184433 s" in out  # the terminal output stays as it was
    assert f"report written to {report}" in out
    html = report.read_text(encoding="utf-8")
    assert_self_contained(html)
    assert set(RUN_SECTIONS) <= sections(html)
    # the prediction and the command are on the summary card
    assert "194.2 s" in html and "194.184433 s" in html and "--report" in html
    # the diagram as drawn: both activities, decision guards, every action shaded and labelled
    assert "activity MainActivity (the one run)" in html and "activity SA" in html
    assert "[GV==1]" in html and "[GV==0]" in html
    assert re.search(r'<a href="#el-_sa1" class="node-link"', html)
    assert "74.2%" in html  # SA's share of the run, on its node
    # the static SVG and tables are in the raw HTML, before any script runs
    assert html.count("<svg") >= 3 and html.count("<table") >= 3
    assert 'id="el-_sa1"' in html  # the row a node links to
    # the critical path and findings, most severe first
    assert "load_imbalance" in html and "Critical path" in html


def test_run_report_escapes_names_from_the_model(tmp_path: Path) -> None:
    hostile = '<img src=x onerror="alert(1)">'
    base = small_results()
    base.elements[0]["name"] = hostile
    base.properties[0]["hint"] = hostile
    html = render_run_report(base, command="uml2perf run x")
    assert hostile not in html
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in html


def test_summary_card_shows_an_interval_when_the_results_carry_one() -> None:
    plain = render_run_report(small_results(), command="c")
    assert "interval" not in plain.split('id="summary"')[1].split("</section>")[0]
    results = small_results()
    results.interval = {"low": 2.5, "high": 3.5, "level": 0.9}  # type: ignore[attr-defined]
    shown = render_run_report(results, command="c")
    assert "90% interval 2.5 s to 3.5 s" in shown
    assert interval_of({"interval": (1.0, 2.0)}) == {"low": "1 s", "high": "2 s", "label": "interval"}
    named = small_results()
    named.prediction_interval = {"value": 3.0, "low": 2.0, "high": 4.0, "level": 95}  # type: ignore[attr-defined]
    assert "95% interval 2 s to 4 s" in render_run_report(named, command="c")
    assert interval_of({"interval": "nonsense"}) is None


def test_what_if_section_appears_when_asked_for() -> None:
    results = small_results(
        base_time=4.0,
        speedups={"Solve": 2.0},
        ranked_speedups=[{"element": "Solve", "factor": 2.0, "time": 3.0}],
    )
    html = render_run_report(results, command="c")
    assert "what-if" in sections(html)
    assert "<strong>Solve</strong> 2x faster" in html and "instead of 4 s" in html
    assert "what-if" not in sections(render_run_report(small_results(), command="c"))


def test_tables_carry_exact_values_for_sorting_and_csv() -> None:
    html = render_run_report(small_results(), command="c")
    # the shown text is rounded, the data-v attribute keeps every digit for sorting and the CSV file
    assert '<td class="num" data-v="4.5">4.5 s</td>' in html
    assert 'data-table="elements"' in html and 'data-table="processes"' in html
    assert html.count('aria-sort="none"') >= 14  # every heading is a sort button


def test_a_generated_module_report_shows_its_elements_instead_of_the_diagram(tmp_path: Path) -> None:
    module = tmp_path / "lapw0_model.py"
    assert run("convert", SAMPLES / "lapw0.uml", "-o", module) == 0
    report = tmp_path / "module.html"
    done = subprocess.run(
        [sys.executable, str(module), "--procs", "4", "--report", str(report)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert f"report written to {report}" in done.stderr
    html = report.read_text(encoding="utf-8")
    assert_self_contained(html)
    assert set(RUN_SECTIONS) <= sections(html)
    assert "drawn for a run of an XMI export; this run (of a generated module)" in html
    assert '<a href="#el-_sft" class="node-link"' in html


def test_python_api_writes_the_report_with_the_diagram(tmp_path: Path) -> None:
    import uml2perf

    results = uml2perf.predict(SAMPLES / "lapw0.uml", machine="gescher", procs=8, trace=True)
    path = results.write_report(tmp_path / "api.html")
    html = path.read_text(encoding="utf-8")
    assert "activity LAPW0 (the one run)" in html
    assert "has_predecessor" in html  # a decision of the diagram, named as drawn


def test_report_sizes_of_32_processes_and_of_4096_processes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small = tmp_path / "lapw0-32.html"
    assert run("run", SAMPLES / "lapw0.uml", "--machine", "gescher", "--procs", 32, "--report", small) == 0
    assert small.stat().st_size < 2_000_000
    large = tmp_path / "lapw0-4096.html"
    assert (
        run("run", SAMPLES / "lapw0.uml", "--machine", "cluster-modern", "--procs", 4096, "--report", large)
        == 0
    )
    assert large.stat().st_size < 10_000_000
    html = large.read_text(encoding="utf-8")
    assert "A summary of" in html  # the timeline is binned
    assert "1024 of 4096 rows shown; the CSV file has all of them." in html
    csv = re.search(r'<pre hidden class="csv-data" id="csv-processes">([^<]*)</pre>', html)
    assert csv is not None and len(csv.group(1).strip().splitlines()) == 4097


def test_report_refuses_to_overwrite_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.uml"
    model.write_bytes((SAMPLES / "prophet.uml").read_bytes())
    assert run("run", model, "--report", model) == 1
    assert "would destroy that input" in capsys.readouterr().err
    assert model.read_bytes() == (SAMPLES / "prophet.uml").read_bytes()


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_report_to_standard_output_is_refused_before_any_work(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    extra = ("--grid", "procs=2,4") if command == "sweep" else ()
    with pytest.raises(SystemExit) as stop:
        run(command, SAMPLES / "prophet.uml", *extra, "--report", "-")
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "does not go to standard output" in err and "--report run.html" in err
    assert list(tmp_path.iterdir()) == []  # no file named '-'


# --------------------------------------------------------------------------- the sweep report


def test_sweep_report_draws_scaling_findings_and_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "sweep.html"
    code = run(
        "sweep",
        SAMPLES / "lapw0.uml",
        "--machine",
        "gescher",
        "--grid",
        "nodes:procs=1:4,2:8,4:16",
        "--grid",
        "NAT=32,64",
        "--report",
        report,
    )
    assert code == 0
    html = report.read_text(encoding="utf-8")
    assert_self_contained(html)
    assert set(SWEEP_SECTIONS) <= sections(html)
    for chart in ("time", "speedup", "efficiency", "breakdown"):
        assert f'id="chart-{chart}"' in html
    assert "non_scalability" in html and "efficiency falls to" in html
    assert html.count("<tr>") >= 6 + 1  # every point and the heading
    assert '<polyline class="ideal"' in html
    # each chart has a text alternative naming its values
    assert re.search(r"<desc id=\"chart-time-desc\">predicted time over procs; NAT=32: procs 4, ", html)


def test_sweep_writes_csv_and_json_through_the_registry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "rows.json"
    assert run("sweep", SAMPLES / "prophet.uml", "--grid", "procs=1,2", "--json", target) == 0
    data = json.loads(target.read_text())
    assert data["model"].endswith("prophet.uml") and [r["procs"] for r in data["rows"]] == [1, 2]
    capsys.readouterr()
    assert run("sweep", SAMPLES / "prophet.uml", "--grid", "procs=1,2", "--csv", "-") == 0
    assert capsys.readouterr().out.startswith("procs,time_s,")


# --------------------------------------------------------------------------- writers, layout, timeline


def test_the_registry_knows_every_format_and_renders_what_the_results_say() -> None:
    assert writers.formats("run") == ["json", "plot", "report", "text"]
    assert writers.formats("sweep") == ["csv", "json", "plot", "report", "text"]
    assert writers.formats("simulation") == ["trace"]
    results = small_results()
    assert writers.render("run", "text", results) == results.report()
    assert json.loads(str(writers.render("run", "json", results))) == json.loads(
        json.dumps(results.to_dict())
    )
    with pytest.raises(KeyError, match="formats: json, plot, report, text"):
        writers.writer("run", "pdf")


def test_results_write_goes_through_the_atomic_writer(tmp_path: Path) -> None:
    results = small_results()
    target = tmp_path / "out.json"
    assert results.write("json", target) == target
    assert json.loads(target.read_text())["time"] == 3.0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left
    from uml2perf_runtime.output.files import OutputError

    with pytest.raises(OutputError, match="is a folder"):
        results.write_report(tmp_path)


def test_layered_layout_puts_flows_downwards_and_bends_long_ones_and_loops() -> None:
    panel = {
        "title": "loop",
        "nodes": [
            {"id": "i", "name": "", "kind": "initial"},
            {"id": "m", "name": "", "kind": "merge"},
            {"id": "a", "name": "Work", "kind": "action"},
            {"id": "d", "name": "more?", "kind": "decision"},
            {"id": "f", "name": "", "kind": "activity_final"},
            {"id": "s", "name": "Skip", "kind": "action"},
        ],
        "edges": [
            {"source": "i", "target": "m"},
            {"source": "m", "target": "a"},
            {"source": "a", "target": "d"},
            {"source": "d", "target": "m", "label": "[yes]"},  # the loop's back edge
            {"source": "d", "target": "f", "label": "[no]"},
            {"source": "i", "target": "s"},
            {"source": "s", "target": "f"},
        ],
    }
    laid = layout_panel(panel)
    y = {n["id"]: n["y"] for n in laid["nodes"]}
    assert y["i"] < y["m"] < y["a"] < y["d"] < y["f"]
    back = [e for e in laid["edges"] if e["back"]]
    assert [e["label"] for e in back] == ["[yes]"] and back[0]["path"].count("L") == 7
    # Skip -> final spans three layers: it passes placeholders, a path of several segments
    long_edge = laid["edges"][6]
    assert long_edge["path"].count("L") == 3
    # no two nodes of one layer overlap
    rows: dict[float, list[dict]] = {}
    for n in laid["nodes"]:
        rows.setdefault(n["y"], []).append(n)
    for row in rows.values():
        row.sort(key=lambda n: n["x"])
        for left, right in zip(row, row[1:], strict=False):
            assert left["x"] + left["w"] / 2 < right["x"] - right["w"] / 2


def _segments(path: str) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    points = [tuple(float(v) for v in part.split(",")) for part in path[1:].split(" L")]
    return list(zip(points, points[1:], strict=False))


def _crosses(segment: tuple[tuple[float, float], tuple[float, float]], node: dict) -> bool:
    """Whether an axis-parallel or straight segment passes through a node's box (sampled finely)."""
    (ax, ay), (bx, by) = segment
    left, right = node["x"] - node["w"] / 2 + 0.5, node["x"] + node["w"] / 2 - 0.5
    top, bottom = node["y"] - node["h"] / 2 + 0.5, node["y"] + node["h"] / 2 - 0.5
    for k in range(201):
        t = k / 200
        x, y = ax + (bx - ax) * t, ay + (by - ay) * t
        if left < x < right and top < y < bottom:
            return True
    return False


def test_loops_run_round_every_node_even_past_wider_layers() -> None:
    """A loop whose body has a wide layer (a fork of three actions) closes round it, crossing no node."""
    nodes = [
        {"id": "i", "name": "", "kind": "initial"},
        {"id": "m", "name": "", "kind": "merge"},
        {"id": "f", "name": "", "kind": "fork"},
        {"id": "a", "name": "A rather long action name", "kind": "action"},
        {"id": "b", "name": "Another long action name", "kind": "action"},
        {"id": "c", "name": "A third long action name", "kind": "action"},
        {"id": "j", "name": "", "kind": "join"},
        {"id": "d", "name": "again?", "kind": "decision"},
        {"id": "e", "name": "", "kind": "activity_final"},
        {"id": "s", "name": "Self", "kind": "action"},
    ]
    edges = [("i", "m"), ("m", "f"), ("f", "a"), ("f", "b"), ("f", "c"), ("a", "j"), ("b", "j")]
    edges += [("c", "j"), ("j", "d"), ("d", "m"), ("d", "s"), ("s", "s"), ("s", "e")]
    laid = layout_panel(
        {"title": "t", "nodes": nodes, "edges": [{"source": u, "target": v} for u, v in edges]}
    )
    placed = {n["id"]: n for n in laid["nodes"]}
    back = [(e, edges[i]) for i, e in enumerate(laid["edges"]) if e["back"]]
    assert {pair for _, pair in back} == {("d", "m"), ("s", "s")}
    for edge, (u, v) in back:
        for segment in _segments(edge["path"]):
            for node in laid["nodes"]:
                assert not _crosses(segment, node), (u, v, node["id"], segment)
        xs = [x for seg in _segments(edge["path"]) for x, _ in seg]
        assert max(xs) <= laid["width"]
    # the loop's closing flow ends at the merge's right edge
    (loop, _) = next(item for item in back if item[1] == ("d", "m"))
    end = _segments(loop["path"])[-1][1]
    assert end == pytest.approx((placed["m"]["x"] + placed["m"]["w"] / 2, placed["m"]["y"]), abs=0.1)


def test_timeline_is_binned_for_large_runs() -> None:
    slices = [
        (p, 0, "E", "compute" if i % 2 else "wait", i * 1.0, i + 0.9) for p in range(300) for i in range(30)
    ]
    assert len(slices) > DETAIL_SLICES
    chart = timeline(slices, 30.0)
    assert chart is not None and chart["binned"]
    assert chart["bands"] <= BINNED_ROWS and len(chart["bars"]) <= BINNED_ROWS * BINS
    assert chart["labels"][0]["text"] == "ranks 0-4"
    few = timeline(slices[:30], 30.0)
    assert few is not None and not few["binned"] and len(few["bars"]) == 30
    assert "E (wait), rank 0: starts 0, takes 900 ms" == few["bars"][0]["title"]


def test_sweep_result_writes_its_report_from_python(tmp_path: Path) -> None:
    import uml2perf

    table = uml2perf.sweep(SAMPLES / "prophet.uml", {"procs": [1, 2, 4]})
    html = table.write_report(tmp_path / "sweep.html").read_text(encoding="utf-8")
    assert set(SWEEP_SECTIONS) <= sections(html) and 'id="chart-speedup"' in html
    assert table.write("csv", tmp_path / "rows.csv").read_text().startswith("procs,time_s,")


def test_binned_timeline_adds_up_each_category_per_bin(monkeypatch: pytest.MonkeyPatch) -> None:
    """The binned cells against a plain overlap count, slice by slice and bin by bin."""
    import random

    from uml2perf_runtime.output import charts

    monkeypatch.setattr(charts, "DETAIL_SLICES", 0)
    monkeypatch.setattr(charts, "BINS", 7)
    chooser = random.Random(3)
    slices = []
    for pid in range(5):
        at = 0.0
        for _ in range(9):
            length = chooser.uniform(0.0, 2.0)
            slices.append((pid, 0, "E", chooser.choice(["compute", "comm", "wait"]), at, at + length))
            at += length + chooser.uniform(0.0, 0.5)
    span = max(row[5] for row in slices)
    chart = timeline(slices, span)
    assert chart is not None and chart["binned"] and chart["group"] == 1
    width = span / 7
    for bar in chart["bars"]:
        band, b = int(bar["y"] // chart["row_height"]), round(bar["x"] / (width * chart["width"] / span))
        expected = {c: 0.0 for c in ("compute", "comm", "wait")}
        for pid, _, _, category, start, stop in slices:
            if pid == band:
                expected[category] += max(0.0, min(stop, (b + 1) * width) - max(start, b * width))
        shares = dict(re.findall(r"(compute|communication|wait) (\d+)%", bar["title"]))
        assert int(shares["compute"]) == round(100 * expected["compute"] / width)
        assert int(shares["wait"]) == round(100 * expected["wait"] / width)


def test_figures_a_newer_result_carries_are_listed_not_lost() -> None:
    class Newer(Results):
        def to_dict(self) -> dict:
            return {**super().to_dict(), "links": [{"link": "node0-switch", "busy": 0.25}]}

    plain = small_results()
    newer = Newer(**{name: getattr(plain, name) for name in Results._FIELDS})
    html = render_run_report(newer, command="c")
    assert "more" in sections(html) and "node0-switch" in html
    assert "more" not in sections(render_run_report(plain, command="c"))


def test_report_draws_the_model_that_ran_even_when_the_export_changed_since(tmp_path: Path) -> None:
    import uml2perf

    model = tmp_path / "prophet.uml"
    model.write_bytes((SAMPLES / "prophet.uml").read_bytes())
    results = uml2perf.predict(model, procs=2, trace=True)
    before = results.write_report(tmp_path / "before.html").read_text(encoding="utf-8")
    model.write_text("<not xmi", encoding="utf-8")  # changed since the run
    changed = results.write_report(tmp_path / "changed.html").read_text(encoding="utf-8")
    model.unlink()
    gone = results.write_report(tmp_path / "gone.html").read_text(encoding="utf-8")
    for html in (before, changed, gone):  # the diagram of the bytes the run read, never the file again
        assert "drawn for a run of an XMI export" not in html
        assert 'class="node-link"' in html and "SA2" in html

    def diagram(html: str) -> str:
        return html[html.index('id="diagram"') : html.index('id="elements"')]

    assert diagram(changed) == diagram(before) == diagram(gone)


def test_report_of_a_fifo_export_draws_its_diagram(tmp_path: Path) -> None:
    import threading

    import uml2perf

    fifo = tmp_path / "prophet.uml"
    os.mkfifo(fifo)
    data = (SAMPLES / "prophet.uml").read_bytes()

    def feed() -> None:
        with open(fifo, "wb") as out:  # one writer: the model can be read once only
            out.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    results = uml2perf.predict(fifo, procs=2, trace=True)
    writer.join(timeout=10)
    html = results.write_report(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "drawn for a run of an XMI export" not in html and 'class="node-link"' in html


def test_a_diagram_too_large_to_draw_is_named_and_its_elements_shown(tmp_path: Path) -> None:
    import synthetic

    import uml2perf
    from uml2perf.report import MAX_PANEL_NODES

    model = synthetic.write_model(tmp_path / "chain.uml", synthetic.chain_model(MAX_PANEL_NODES + 10))
    results = uml2perf.predict(model, procs=1)
    html = results.write_report(tmp_path / "chain.html").read_text(encoding="utf-8")
    assert "too large to draw here" in html and f"({MAX_PANEL_NODES + 12} nodes)" in html
    assert '<svg role="img" aria-label="Elements by share of the run"' in html


def test_sweep_points_with_an_interval_get_error_bars() -> None:
    from uml2perf_runtime.output.report import render_sweep_report

    rows = [
        {"procs": p, "time": 8.0 / p, "time_low": 7.0 / p, "time_high": 9.5 / p, "compute": 1.0, "comm": 0.1}
        | {"wait": 0.0, "speedup": float(p), "efficiency": 1.0, "method": "simulation"}
        for p in (1, 2, 4)
    ]
    data = {
        "model": "m",
        "parameters": ["procs"],
        "columns": ["procs", "time", "time_low", "time_high", "compute", "comm", "wait"]
        + ["speedup", "efficiency", "method"],
        "rows": rows,
    }
    html = render_sweep_report(data, command="c")
    assert html.count('class="range"') == 3
    assert "procs 2, predicted time 4 s (3.5 s to 4.75 s)" in html
