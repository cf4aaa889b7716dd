"""Every sample's report opened in a real browser (headless Chromium): no script errors, every section
rendered, the controls working, readable with scripts off, and a screenshot kept.

Skips when no Chromium is installed (``apt-get install chromium`` on Debian; ``.ci/run`` installs it
when it can).  Screenshots go to the test's temporary folder, and also to ``$UML2PERF_ARTIFACTS``
when that names a folder (CI keeps them there; it is ignored by git).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from uml2perf.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
RUN_SECTIONS = ("summary", "diagram", "elements", "processes", "findings", "critical-path", "timeline")
SWEEP_SECTIONS = ("summary", "scaling", "findings", "points")


def _chromium() -> str | None:
    given = os.environ.get("UML2PERF_CHROMIUM")
    if given:
        return given
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)")

#: Run before the report's own script: collects uncaught errors.
ERRORS_PROBE = (
    "<script>window.__errors = []; window.addEventListener('error', function (e) "
    "{ window.__errors.push(String(e.message)); });</script>"
)

#: Run after the report's script: uses the controls as a reader would and writes what happened.
CONTROLS_PROBE = """<script>
(function () {
  var out = {errors: window.__errors, sections: [], sorted: null, selected: null, zoomed: null, csv: []};
  document.querySelectorAll("main > section").forEach(function (s) { out.sections.push(s.id); });
  var made = [];
  URL.createObjectURL = function (blob) { made.push(blob.size); return "about:blank"; };
  HTMLAnchorElement.prototype.click = function () { out.csv.push(this.download); };
  try {
    var heading = document.querySelector("table.data th:nth-child(1)");
    heading.querySelector("button").click();
    var first = heading.getAttribute("aria-sort");
    heading.querySelector("button").click();
    out.sorted = [first, heading.getAttribute("aria-sort")];
    var node = document.querySelector("a.node-link");
    if (node) {
      node.dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true}));
      var row = document.querySelector("tr.selected");
      out.selected = row ? row.id : "none";
    }
    var plot = document.getElementById("timeline-svg");
    if (plot) {
      var before = plot.getAttribute("viewBox");
      document.querySelector("[data-zoom=in]").click();
      document.querySelector("[data-zoom=right]").click();
      out.zoomed = [before, plot.getAttribute("viewBox")];
      var box = document.querySelector(".timeline");
      function key(name) { box.dispatchEvent(new KeyboardEvent("keydown", {key: name, bubbles: true})); }
      key("ArrowDown"); key("ArrowDown");
      var second = plot.querySelectorAll("rect")[1];
      out.stepped = {
        said: document.getElementById("timeline-details").textContent,
        title: second ? second.querySelector("title").textContent : null,
        marked: second ? second.classList.contains("current") : null
      };
    }
    var tip = document.querySelector(".tip");
    if (tip) {
      /* focus() moves the keyboard focus, but a headless page without window focus may not fire the
         event for it, so the event is also sent by hand: the tip must be focusable and must answer. */
      tip.focus();
      out.focusable = document.activeElement === tip;
      if (!document.getElementById("chart-details").textContent) {
        tip.dispatchEvent(new FocusEvent("focus"));
      }
      out.told = document.getElementById("chart-details").textContent;
    }
    document.querySelectorAll("button.csv").forEach(function (b) { b.click(); });
    out.csv_sizes = made;
  } catch (e) {
    out.errors.push("probe: " + e.message);
  }
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}());
</script>"""


def _browser(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def _script_errors(log: str) -> list[str]:
    """Uncaught script errors and failed loads Chromium logs (its own D-Bus complaints are not ours)."""
    return [
        line
        for line in log.splitlines()
        if ("CONSOLE" in line and ("Uncaught" in line or "Error" in line))
        or "Refused to" in line
        or "net::ERR" in line
    ]


def _keep(screenshot: Path) -> None:
    folder = os.environ.get("UML2PERF_ARTIFACTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(screenshot, Path(folder) / screenshot.name)


def _open(report: Path, tmp_path: Path, sections: tuple[str, ...]) -> dict:
    """Open ``report`` with the probes, check what it shows, take a screenshot; return the probe's record."""
    html = report.read_text(encoding="utf-8")
    probed = tmp_path / f"probed-{report.name}"
    probed.write_text(
        html.replace("<head>", "<head>\n" + ERRORS_PROBE, 1).replace(
            "</body>", CONTROLS_PROBE + "</body>", 1
        ),
        encoding="utf-8",
    )
    done = _browser("--virtual-time-budget=3000", "--dump-dom", probed.as_uri(), profile=tmp_path / "profile")
    assert done.returncode == 0, done.stderr[-2000:]
    assert not _script_errors(done.stderr), _script_errors(done.stderr)
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert found is not None, done.stdout[-2000:]
    record = json.loads(found.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    assert record["errors"] == []
    assert set(sections) <= set(record["sections"])
    assert record["sorted"] == ["descending", "ascending"]
    assert record["csv"] and all(name.endswith(".csv") for name in record["csv"])
    assert all(size > 0 for size in record["csv_sizes"])
    shot = tmp_path / f"{report.stem}.png"
    done = _browser(
        "--window-size=1280,1600", f"--screenshot={shot}", report.as_uri(), profile=tmp_path / "profile"
    )
    assert done.returncode == 0 and shot.is_file() and shot.stat().st_size > 10_000
    assert not _script_errors(done.stderr), _script_errors(done.stderr)
    _keep(shot)
    return record


RUN_SAMPLES = [
    ("prophet.uml", ["--procs", "2"]),
    ("prophet-magicdraw.xmi", ["--procs", "2"]),
    ("prophet-ea.xmi", ["--procs", "2"]),
    ("prophet-argouml.xmi", ["--procs", "2"]),
    ("lapw0.uml", ["--machine", "gescher", "--procs", "32"]),
    ("hybrid.uml", ["--machine", "laptop", "--procs", "2"]),
    ("kernels.uml", ["--machine", "gpu-node"]),
]


@pytest.mark.parametrize(("sample", "options"), RUN_SAMPLES, ids=[s for s, _ in RUN_SAMPLES])
def test_every_sample_report_renders_without_script_errors(
    sample: str, options: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / f"{Path(sample).stem}-{Path(sample).suffix[1:]}.html"
    assert main(["run", str(SAMPLES / sample), *options, "--report", str(report)]) == 0, (
        capsys.readouterr().err
    )
    record = _open(report, tmp_path, RUN_SECTIONS)
    assert record["selected"] is not None and record["selected"].startswith("el-")  # a node shows its row
    before, after = record["zoomed"]
    assert before != after  # the timeline zoomed and panned
    stepped = record["stepped"]  # the keyboard reaches a bar: its details said, the bar marked
    assert stepped["title"] and stepped["said"] == stepped["title"] and stepped["marked"] is True


def test_sweep_report_renders_without_script_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "lapw0-sweep.html"
    grid = ["--grid", "nodes:procs=1:4,2:8,4:16,8:32", "--grid", "NAT=32,64"]
    assert (
        main(["sweep", str(SAMPLES / "lapw0.uml"), "--machine", "gescher", *grid, "--report", str(report)])
        == 0
    )
    record = _open(report, tmp_path, SWEEP_SECTIONS)
    assert record["focusable"] is True  # a point takes the keyboard focus
    assert record["told"].startswith("NAT=32: procs 4, predicted time")  # a focused point says its value


def test_generated_module_report_renders_without_script_errors(tmp_path: Path) -> None:
    module = tmp_path / "lapw0_model.py"
    assert main(["convert", str(SAMPLES / "lapw0.uml"), "-o", str(module)]) == 0
    report = tmp_path / "lapw0-module.html"
    subprocess.run(
        [sys.executable, str(module), "--procs", "4", "--report", str(report)],
        check=True,
        capture_output=True,
    )
    record = _open(report, tmp_path, RUN_SECTIONS)
    assert record["selected"].startswith("el-")  # an element bar shows its row


def test_report_stays_readable_with_scripts_off(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The page without its script (headless Chromium has no switch that turns scripts off for
    ``--dump-dom``, which runs one itself): every section, table and picture is still rendered."""
    report = tmp_path / "lapw0.html"
    options = ["--machine", "gescher", "--procs", "8", "--report", str(report)]
    assert main(["run", str(SAMPLES / "lapw0.uml"), *options]) == 0
    html = report.read_text(encoding="utf-8")
    assert html.count("<script>") == 1
    bare = tmp_path / "lapw0-without-script.html"
    bare.write_text(re.sub(r"<script>.*?</script>", "", html, flags=re.S), encoding="utf-8")
    done = _browser("--dump-dom", bare.as_uri(), profile=tmp_path / "profile")
    assert done.returncode == 0
    dom = done.stdout
    for section in RUN_SECTIONS:
        assert f'<section id="{section}"' in dom
    assert dom.count("<table") >= 3 and dom.count("<svg") >= 3
    assert "Calculate_Multipolmoments" in dom and "late_sender" in dom
    shot = tmp_path / "lapw0-without-script.png"
    done = _browser(
        "--window-size=1280,1600", f"--screenshot={shot}", bare.as_uri(), profile=tmp_path / "profile"
    )
    assert done.returncode == 0 and shot.stat().st_size > 10_000
    _keep(shot)
