"""The built wheel carries the generator, the templates and the runtime.

An editable checkout can hide packaging mistakes (templates or the runtime
left out of the wheel); this test builds the wheel, installs it without its
dependencies into a fresh virtual environment that borrows the current
environment's third-party packages, and runs a sample from outside the
checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    wheels = sorted(out.glob("uml2perf-*.whl"))
    assert len(wheels) == 1
    return wheels[0]


def test_wheel_contains_templates_and_runtime(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("uml2perf_templates/") and n.endswith(".jinja") for n in names)
    for part in ("run.html.jinja", "sweep.html.jinja", "report.css", "report.js"):  # the HTML report
        assert f"uml2perf_templates/report/{part}" in names
    assert "uml2perf_runtime/__init__.py" in names
    assert "uml2perf_runtime/engine/simulation.py" in names
    assert "uml2perf/cli.py" in names
    assert any(n.endswith("entry_points.txt") for n in names)


def test_wheel_installs_and_runs_a_sample(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    # Borrow lxml, jinja2, simpy... from the environment running the tests, but not
    # its (possibly editable) uml2perf: a plain path entry does not run its .pth hooks.
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site) / "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    sample = ROOT / "samples" / "prophet.uml"
    run = subprocess.run(
        [
            str(python),
            "-c",
            "import sys, uml2perf, uml2perf_runtime; print(uml2perf.__file__);"
            "from uml2perf.cli import main; "
            "sys.exit(main(['run', sys.argv[1], '--procs', '1', '--json', '--report', 'r.html']))",
            str(sample),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    first, _, payload = run.stdout.partition("\n")
    assert str(env_dir) in first, "the wheel's uml2perf must be the one imported"
    import json

    result = json.loads(payload)
    assert result["time"] == pytest.approx(121 / 3.14 + 112 + 32 + 3.14 + 2.71 * 3.14)
    assert "activity MainActivity" in (tmp_path / "r.html").read_text(encoding="utf-8")
