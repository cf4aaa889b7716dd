"""A repeated run of a model with nothing uncertain loads neither numpy nor the interval module.

The prediction interval needs numpy; a run whose machine and sidecar give no ``{ value, low,
high }`` input has no interval to compute, and importing numpy would add about 0.1 s to every run.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

from uml2perf import cache

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def test_a_repeated_run_without_uncertain_inputs_loads_no_numpy(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "prophet.uml", tmp_path / "prophet.uml")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop(cache.DISABLE_VARIABLE, None)
    env.pop(cache.LOCATION_VARIABLE, None)
    probe = (
        "from uml2perf.cli import main\n"
        "assert main(['run', 'prophet.uml', '--json']) == 0\n"
        "import sys\nprint(repr(sorted(sys.modules)), file=sys.stderr)"
    )
    for _ in range(2):  # the first run converts; the second is the repeated run
        done = subprocess.run(
            [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
    modules = ast.literal_eval(done.stderr.splitlines()[-1])
    assert "numpy" not in modules
    assert "uml2perf.intervals" not in modules
