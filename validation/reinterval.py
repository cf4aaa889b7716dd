"""Coverage and width of a stored validation run's intervals, for one launch and for a median.

``python validation/reinterval.py docs/validation/run-5 [docs/validation/heldout-2-1 ...]``

A run's ``results.json`` keeps every case's measured median and the interval its runner asked
for.  This script predicts every case again from the run's own files (its ``machine.toml``,
its fitted kernel costs or the stored command and sidecar), once with the interval of one
launch (``run`` without ``--median-of``) and once for the median of the case's quiet runs
(``--median-of N``), and prints how often each covers the measured median and how wide it is.
Predictions are deterministic, so the prediction itself must come out as stored (checked).

Why: ``--median-of`` narrows the run-to-run factor as if the launches of a case were
independent draws of the machine's state.  Whether that holds is a property of the machine,
measured here on the same runs: when consecutive launches share the state (a slow spell
lasting minutes), the narrowed interval covers less than its level says.
"""

from __future__ import annotations

import json
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _held_out(folder: Path, data: dict[str, Any]) -> list[tuple[float, dict[str, Any], dict[str, Any]]]:
    """Each case of a held-out run: (measured median, one-launch result, median-of result)."""
    found = []
    with tempfile.TemporaryDirectory() as tmp:
        for index, row in enumerate(data["rows"]):
            command = shlex.split(row["prediction_command"])[1:]
            if "--median-of" in command:
                at = command.index("--median-of")
                del command[at : at + 2]
            if row.get("sidecar"):
                path = Path(tmp) / f"sidecar-{index}.toml"
                path.write_text(row["sidecar"])
                command[command.index("--sidecar") + 1] = str(path)
            runs = str(max(1, len(row["measured_runs"])))
            both = []
            for extra in ([], ["--median-of", runs]):
                done = subprocess.run(
                    [sys.executable, "-m", "uml2perf", *command, *extra],
                    capture_output=True,
                    text=True,
                    timeout=900,
                )
                if done.returncode != 0:
                    raise SystemExit(f"{row['case']}: {done.stderr.strip()}")
                both.append(json.loads(done.stdout))
            found.append((row["measured_median"], both[0], both[1]))
    return found


def _suite(folder: Path, data: dict[str, Any]) -> list[tuple[float, dict[str, Any], dict[str, Any]]]:
    """Each case of a suite run, predicted from the run's machine file and fitted kernel costs."""
    import suite
    from cases import mpi, threads

    from uml2perf.api import predict
    from uml2perf_runtime import Machine

    machine = folder / "machine.toml"
    setup = suite.Setup(smoke=False, machine_path=machine, machine=Machine.load(machine))
    setup.costs = data["kernel_costs"]
    setup.spreads = {key: (low, high) for key, (low, high) in data["kernel_cost_intervals"].items()}
    cases = {case.name: case for case in threads.cases(setup) + mpi.cases(setup)}
    found = []
    with tempfile.TemporaryDirectory() as tmp:
        for row in data["rows"]:
            case = cases[row["case"]]
            both = []
            for median_of in (1, max(1, len(row["measured_runs"]))):
                result = predict(
                    suite.MODELS / f"{case.model}.uml",
                    machine=machine,
                    procs=case.procs,
                    overrides=case.variables,
                    sidecar=case.sidecar(setup, Path(tmp)),
                    samples=data.get("samples", 100),
                    median_of=median_of,
                )
                both.append({"time": result.time, "interval": result.interval})
            found.append((row["measured_median"], both[0], both[1]))
    return found


def summary(folder: Path) -> str:
    """One line: cases, then coverage and median width for one launch and for the median."""
    data = json.loads((folder / "results.json").read_text())
    rows = {row["case"]: row for row in data["rows"]}
    found = _held_out(folder, data) if "set" in data or "kernels" in data else _suite(folder, data)
    for (_, one, _), row in zip(found, rows.values(), strict=True):
        if abs(one["time"] - row["predicted"]) > 1e-9 * abs(row["predicted"]):
            raise SystemExit(f"{row['case']}: predicted {one['time']} now, {row['predicted']} stored")

    def figures(which: int) -> str:
        boxes = [(measured, results[which]) for measured, *results in found]
        covered = sum(b["interval"]["low"] <= m <= b["interval"]["high"] for m, b in boxes) / len(boxes)
        width = statistics.median(
            (b["interval"]["high"] - b["interval"]["low"]) / b["time"] * 100 for _, b in boxes
        )
        return f"coverage {covered:.0%}, median width {width:.0f}%"

    return f"{folder}: {len(found)} cases; one launch: {figures(0)}; median of the quiet runs: {figures(1)}"


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.split("\n\n")[1])
        return 2
    for folder in argv:
        print(summary(Path(folder)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
