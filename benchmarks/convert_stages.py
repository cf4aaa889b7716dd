"""Where one ``uml2perf convert`` spends its CPU, stage by stage, as a command meets it.

Each round is a fresh process that imports uml2perf (and Jinja, and the modules convert imports
on its way) first, pauses the collector as the command line does, and then converts the model
once: the first conversion of a process, as ``uml2perf convert`` does it, with the page faults of a
fresh heap and the template loading included (a second conversion in the same process is faster
and would hide both).  The stages are timed by wrapping the functions that make them up, so a
stage's figure includes everything it calls; ``read`` includes ``parse`` to ``profile``,
``generate`` includes ``recover`` to ``render``.

``python benchmarks/convert_stages.py MODEL [-k ROUNDS] [--json OUT]`` prints, per stage, the
median and the range over the rounds, in CPU milliseconds (``time.process_time``), and the parse
of the same bytes in a bare ``lxml`` process for scale.  ``python benchmarks/synthetic.py chain
OUT --actions N`` writes the chains the convert rows of ``shapes.py`` use.  Nothing here is a
test: the machine is shared, so compare figures of one run only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: (stage, module, attribute path) of the wrapped functions, outermost first; a method wrapped on
#: its class counts its outermost call only (nested regions call ``read_region`` again).
STAGES = (
    ("convert", "uml2perf.api", "convert"),
    ("read", "uml2perf.api", "read"),
    ("parse (hardened, with its checks)", "uml2perf.reader.xml", "load_bytes"),
    ("detect the dialect", "uml2perf.reader", "detect_dialect"),
    ("scan for activities", "uml2perf.reader.dialects.uml2", "Uml2Reader.scan"),
    ("stereotype applications", "uml2perf.reader.stereotypes", "StereotypeReading.read_stereotypes"),
    ("regions (nodes and flows)", "uml2perf.reader.activities", "ActivityReading.read_region"),
    ("checks of applications", "uml2perf.reader.stereotypes", "StereotypeReading.check_stereotype_bases"),
    ("profile", "uml2perf.profile", "apply_profile"),
    ("generate", "uml2perf.generation", "generate"),
    ("recover the control flow", "uml2perf.controlflow", "recover_model"),
    ("handler start", "uml2perf.handlers.python.handler", "PythonHandler.start"),
    ("handler walk", "uml2perf.navigation.traversal", "Traverser.run"),
    ("render (Jinja imported here)", "uml2perf.handlers.python.handler", "render"),
    ("timing check", "uml2perf.check", "timing_summary"),
    ("write", "uml2perf.generation", "write_output"),
)

_CHILD = r"""
import functools, gc, importlib, json, sys, time
gc.disable()
import uml2perf.api, uml2perf.generation, uml2perf.reader, uml2perf.profile, uml2perf.controlflow
import uml2perf.handlers.python.handler, uml2perf.navigation.traversal, uml2perf.check
import uml2perf.reader.dialects.uml2
stages = json.loads(sys.argv[3])
spent = {}
def wrap(stage, module, path):
    owner = importlib.import_module(module)
    *outer, name = path.split(".")
    for part in outer:
        owner = getattr(owner, part)
    inner = getattr(owner, name)
    depth = [0]
    @functools.wraps(inner)
    def timed(*args, **kwargs):
        depth[0] += 1
        start = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                spent[stage] = spent.get(stage, 0.0) + time.process_time() - start
    setattr(owner, name, timed)
for stage, module, path in stages:
    wrap(stage, module, path)
uml2perf.api.convert(sys.argv[1], sys.argv[2])
print(json.dumps(spent))
"""

_PARSE = r"""
import sys, time
from lxml import etree
start = time.process_time()
etree.fromstring(open(sys.argv[1], "rb").read(), etree.XMLParser(resolve_entities=False))
print(time.process_time() - start)
"""


def measure(model: Path, rounds: int, output: Path) -> dict[str, list[float | None]]:
    """CPU seconds per stage (and of a bare parse), one list entry per round (``None``: never reached)."""
    figures: dict[str, list[float | None]] = {stage: [] for stage, _, _ in STAGES}
    figures["bare lxml parse (its own process)"] = []
    stages = json.dumps(STAGES)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for _ in range(rounds):
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(model), str(output), stages],
            capture_output=True,
            text=True,
            check=True,
            env=env,
            cwd=str(HERE.parent),
        )
        spent = json.loads(done.stdout.strip().splitlines()[-1])
        for stage, _, _ in STAGES:
            figures[stage].append(spent.get(stage))
        parse = subprocess.run(
            [sys.executable, "-c", _PARSE, str(model)], capture_output=True, text=True, check=True, env=env
        )
        figures["bare lxml parse (its own process)"].append(float(parse.stdout.strip()))
    return figures


def table(figures: dict[str, list[float | None]]) -> str:
    lines = ["| stage | CPU [ms], median (range) |", "|---|---|"]
    for stage, values in figures.items():
        ms = sorted(v * 1000 for v in values if v is not None)
        if not ms:
            lines.append(f"| {stage} | not reached |")
            continue
        lines.append(f"| {stage} | {statistics.median(ms):.1f} ({ms[0]:.1f}–{ms[-1]:.1f}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("-k", "--rounds", type=int, default=5, help="fresh processes (default 5)")
    parser.add_argument("--output", default=None, help="where the module goes (default: a temporary file)")
    parser.add_argument("--json", help="also write the raw figures here")
    args = parser.parse_args(argv)
    import tempfile

    with tempfile.TemporaryDirectory() as work:
        output = Path(args.output) if args.output else Path(work) / "model.py"
        figures = measure(Path(args.model).resolve(), args.rounds, output)
    print(table(figures))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
