"""Benchmark of uml2perf against the floors of the libraries it is built on.

Every number is the wall-clock time of a whole child process (interpreter
start, imports, work, exit), best of ``--repeat`` runs, because that is what a
user waits for.  Five measurements, in one run:

(a) ``uml2perf convert`` of a generated 20,000-action Papyrus model, against a
    bare hardened ``lxml`` parse of the same file (target: at most 3x);
(b) ``uml2perf run`` of a 64-process ring (compute, then a neighbour send and
    receive, 2,000 rounds) against the same ring written in plain SimPy
    (``benchmarks/bare_simpy_ring.py``; target: at most 1.5x); both must
    predict the same simulated time;
(c) the LAPW0-like sample (``samples/lapw0.uml``; the synthetic ring when it is
    absent) at 32, 512 and 4,096 processes: wall time, SimPy events per second
    of the event loop (the runtime reports its event count and loop time in
    ``run --json``) and time per process (and per process x round for the
    ring), to show that the cost grows no worse than linearly;
(d) peak resident memory (``ru_maxrss``) of every child process;
(e) ``uml2perf sweep`` of a bulk-synchronous model over the same process counts x
    two problem sizes: the analytic fast path against simulating every point.

uml2perf's own modules are byte-compiled first (``compileall`` into
``__pycache__``), as ``pip install`` does for an installed package: with
``PYTHONDONTWRITEBYTECODE=1`` (set on these machines) an editable checkout
would otherwise recompile every module of uml2perf on every run, which no
installed user pays.  ``--no-compile`` measures that case too.

Besides wall time, the CPU time (user + system) of each child is recorded:
on a shared machine other load stretches wall time, hardly CPU time, so the
CPU ratio is the steadier comparison.

``--quick`` uses tiny sizes (seconds instead of minutes); ``--json FILE``
writes every number; ``--profile DIR`` also writes cProfile statistics and
``-X importtime`` logs of the convert and run commands.

Usage::

    python benchmarks/run.py                 # full sizes, best of 3
    python benchmarks/run.py --quick         # smoke run
    python benchmarks/run.py --json out.json --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from uml2perf.synthetic import bsp_model, chain_model, ring_model, write_model  # noqa: E402

#: Targets of the ratios (uml2perf time / floor time).
CONVERT_TARGET = 3.0
RUN_TARGET = 1.5

#: Network of the benchmark machine: shared memory inside a node, Fast Ethernet between
#: nodes, 4 cores per node (the shape of the cluster of the Performance Prophet paper).
CORES_PER_NODE = 4
INTRA = (1e-6, 1e10)  # latency s, bandwidth B/s
INTER = (5e-5, 1.25e7)


@dataclass(frozen=True)
class Sizes:
    """Problem sizes of one benchmark run."""

    chain_actions: int
    ring_procs: int
    ring_rounds: int
    scaling_procs: tuple[int, ...]
    scaling_rounds: int  # rounds of the synthetic ring when the LAPW0 sample is absent


FULL = Sizes(
    chain_actions=20_000, ring_procs=64, ring_rounds=2_000, scaling_procs=(32, 512, 4096), scaling_rounds=50
)
QUICK = Sizes(chain_actions=300, ring_procs=8, ring_rounds=20, scaling_procs=(4, 8, 16), scaling_rounds=5)


@dataclass
class Measurement:
    """Wall times and peak memory of one command, over several repetitions."""

    label: str
    command: list[str]
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    max_rss_mib: float = 0.0
    returncode: int = 0
    stdout: str = ""
    stderr: str = ""

    @property
    def best(self) -> float:
        return min(self.walls) if self.walls else float("nan")

    @property
    def best_cpu(self) -> float:
        """User + system CPU seconds of the child: unlike wall time, barely moved by other load."""
        return min(self.cpus) if self.cpus else float("nan")

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def summary(self) -> dict[str, Any]:
        data = asdict(self)
        data["best"] = self.best
        data["best_cpu"] = self.best_cpu
        data.pop("stdout")
        data["stderr"] = self.stderr[-2000:]
        return data


# ------------------------------------------------------------------------------------ running children


def run_child(command: Sequence[str], cwd: Path) -> tuple[float, float, float, int, str, str]:
    """Run one child process; return (wall s, CPU s, peak RSS MiB, exit status, stdout, stderr).

    ``os.wait4`` gives the resource usage of exactly this child (``RUSAGE_CHILDREN``
    would mix in every earlier child).  Output goes to temporary files so a
    chatty child never blocks on a full pipe.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(list(command), cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        # ru_maxrss is in KiB on Linux
        cpu = usage.ru_utime + usage.ru_stime
        return (
            wall,
            cpu,
            usage.ru_maxrss / 1024.0,
            proc.returncode,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
        )


def measure(label: str, command: Sequence[str], repeat: int, cwd: Path) -> Measurement:
    """Best of ``repeat`` runs; stops at the first failure so a broken command is reported once."""
    m = Measurement(label, list(command))
    for _ in range(max(1, repeat)):
        wall, cpu, rss, code, stdout, stderr = run_child(command, cwd)
        m.walls.append(wall)
        m.cpus.append(cpu)
        m.max_rss_mib = max(m.max_rss_mib, rss)
        m.returncode, m.stdout, m.stderr = code, stdout, stderr
        if code != 0:
            break
    return m


def uml2perf_command() -> list[str]:
    """The installed ``uml2perf`` script next to this interpreter, else ``python -m uml2perf``."""
    script = Path(sys.executable).with_name("uml2perf")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "uml2perf"]


def write_machine(path: Path, nodes: int) -> Path:
    """A machine file with ``nodes`` nodes of :data:`CORES_PER_NODE` cores."""
    path.write_text(
        "\n".join(
            [
                'name = "benchmark cluster"',
                f"nodes = {nodes}",
                f"cores_per_node = {CORES_PER_NODE}",
                "speed = 1.0",
                "",
                "[network.intra_node]",
                f"latency = {INTRA[0]!r}",
                f"bandwidth = {INTRA[1]!r}",
                "",
                "[network.inter_node]",
                f"latency = {INTER[0]!r}",
                f"bandwidth = {INTER[1]!r}",
                "",
            ]
        ),
        encoding="utf-8",
    )
    return path


def nodes_for(procs: int) -> int:
    return max(1, -(-procs // CORES_PER_NODE))


def _json_from(stdout: str) -> dict[str, Any]:
    """The last JSON object a child printed (``run --json`` prints exactly one)."""
    start = stdout.find("{")
    return json.loads(stdout[start:]) if start >= 0 else {}


def _ratio(a: Measurement, b: Measurement) -> float | None:
    if not (a.ok and b.ok):
        return None
    return a.best / b.best


def _cpu_ratio(a: Measurement, b: Measurement) -> float | None:
    if not (a.ok and b.ok) or not b.best_cpu:
        return None
    return a.best_cpu / b.best_cpu


def compile_packages() -> None:
    """Byte-compile uml2perf, its runtime and templates package, as an install would."""
    import compileall

    for folder in ("uml2perf", "runtime", "templates"):
        compileall.compile_dir(str(REPO / folder), quiet=1)


# ------------------------------------------------------------------------------------------- benches


def bench_convert(work: Path, sizes: Sizes, repeat: int) -> dict[str, Any]:
    """(a) convert of an N-action chain vs a bare hardened lxml parse of the same bytes."""
    model = write_model(work / f"chain{sizes.chain_actions}.uml", chain_model(sizes.chain_actions))
    out = work / f"chain{sizes.chain_actions}.py"
    lxml_code = (
        "import sys\nfrom lxml import etree\n"
        "etree.fromstring(open(sys.argv[1],'rb').read(), etree.XMLParser(resolve_entities=False))"
    )
    floor = measure("lxml parse", [sys.executable, "-c", lxml_code, str(model)], repeat, work)
    tool = measure(
        "uml2perf convert", [*uml2perf_command(), "convert", str(model), "-o", str(out)], repeat, work
    )
    ratio = _ratio(tool, floor)
    return {
        "actions": sizes.chain_actions,
        "file_mib": model.stat().st_size / 2**20,
        "floor": floor.summary(),
        "uml2perf": tool.summary(),
        "ratio": ratio,
        "cpu_ratio": _cpu_ratio(tool, floor),
        "target": CONVERT_TARGET,
        "met": ratio is not None and ratio <= CONVERT_TARGET,
        "generated_lines": len(out.read_text(encoding="utf-8").splitlines()) if out.exists() else None,
    }


def bench_ring(work: Path, sizes: Sizes, repeat: int) -> dict[str, Any]:
    """(b) run of the P-process ring vs the same ring in plain SimPy; same simulated time."""
    procs, rounds = sizes.ring_procs, sizes.ring_rounds
    model = write_model(work / f"ring{procs}x{rounds}.uml", ring_model(rounds))
    machine = write_machine(work / "ring_machine.toml", nodes_for(procs))
    bare_cmd = [
        sys.executable,
        str(HERE / "bare_simpy_ring.py"),
        "--procs",
        str(procs),
        "--rounds",
        str(rounds),
        "--work",
        "1e-3",
        "--size",
        "1024",
        "--ppn",
        str(CORES_PER_NODE),
        "--intra",
        repr(INTRA[0]),
        repr(INTRA[1]),
        "--inter",
        repr(INTER[0]),
        repr(INTER[1]),
    ]
    floor = measure("bare SimPy ring", bare_cmd, repeat, work)
    tool_cmd = [
        *uml2perf_command(),
        "run",
        str(model),
        "--machine",
        str(machine),
        "--procs",
        str(procs),
        "--nodes",
        str(nodes_for(procs)),
        "--json",
    ]
    tool = measure("uml2perf run", tool_cmd, repeat, work)
    bare_time = _json_from(floor.stdout).get("time") if floor.ok else None
    tool_time = _json_from(tool.stdout).get("time") if tool.ok else None
    same = None
    if bare_time is not None and tool_time is not None:
        same = abs(bare_time - tool_time) <= 1e-9 * max(abs(bare_time), 1e-300)
    ratio = _ratio(tool, floor)
    return {
        "procs": procs,
        "rounds": rounds,
        "floor": floor.summary(),
        "uml2perf": tool.summary(),
        "ratio": ratio,
        "cpu_ratio": _cpu_ratio(tool, floor),
        "target": RUN_TARGET,
        "met": ratio is not None and ratio <= RUN_TARGET,
        "simulated_time": {"bare": bare_time, "uml2perf": tool_time, "same": same},
        "events_bare": _json_from(floor.stdout).get("events") if floor.ok else None,
    }


def bench_scaling(work: Path, sizes: Sizes, repeat: int) -> dict[str, Any]:
    """(c) the LAPW0 sample (or the ring) at growing process counts: wall, events/s, per-process time."""
    sample = REPO / "samples" / "lapw0.uml"
    rounds: int | None
    if sample.exists():
        model, rounds, name = sample, None, "samples/lapw0.uml"
    else:
        rounds = sizes.scaling_rounds
        model = write_model(work / f"ring_scaling_{rounds}.uml", ring_model(rounds))
        name = f"synthetic ring ({rounds} rounds; samples/lapw0.uml absent)"
    rows = []
    for procs in sizes.scaling_procs:
        machine = write_machine(work / f"scaling_{procs}.toml", nodes_for(procs))
        cmd = [
            *uml2perf_command(),
            "run",
            str(model),
            "--machine",
            str(machine),
            "--procs",
            str(procs),
            "--nodes",
            str(nodes_for(procs)),
            "--json",
        ]
        m = measure(f"run P={procs}", cmd, repeat, work)
        data = _json_from(m.stdout) if m.ok else {}
        events = data.get("events")
        loop = data.get("wall_time")  # seconds the simulator spent in its event loop
        row: dict[str, Any] = {"procs": procs, "measurement": m.summary(), "events": events, "loop_s": loop}
        if m.ok:
            row["simulated_time"] = data.get("time")
            row["events_per_s"] = events / loop if events and loop else None
            row["us_per_process"] = m.best / procs * 1e6
            row["loop_us_per_process"] = loop / procs * 1e6 if loop else None
            if rounds:
                row["us_per_process_round"] = m.best / (procs * rounds) * 1e6
        rows.append(row)
    per = [r.get("us_per_process") for r in rows if r.get("us_per_process")]
    loop_per = [r.get("loop_us_per_process") for r in rows if r.get("loop_us_per_process")]
    return {
        "model": name,
        "rows": rows,
        # Growth no worse than linear: the cost per process at the largest size is not above
        # the cost at the smallest (start-up makes small runs dearer per process); checked on the
        # whole process and on the event loop alone (with 25 % slack for timer noise).
        "linear_or_better": bool(per)
        and len(per) == len(rows)
        and per[-1] <= per[0] * 1.1
        and (len(loop_per) < 2 or loop_per[-1] <= loop_per[0] * 1.25),
    }


def bench_sweep(work: Path, sizes: Sizes, repeat: int) -> dict[str, Any]:
    """(e) ``uml2perf sweep`` of a bulk-synchronous model: analytic fast path vs simulating every point."""
    model = write_model(work / "bsp_sweep.uml", bsp_model(steps=20, collectives=("allreduce", "barrier")))
    procs = ",".join(str(p) for p in sizes.scaling_procs)
    machine = write_machine(work / "sweep_machine.toml", nodes_for(max(sizes.scaling_procs)))
    base = [
        *uml2perf_command(),
        "sweep",
        str(model),
        "--machine",
        str(machine),
        "--grid",
        f"procs={procs}",
        "--grid",
        "NAT=32,64",
        "--json",
        "-",
    ]
    fast = measure("sweep analytic", base, repeat, work)
    slow = measure("sweep simulated", [*base, "--no-analytic", "--workers", "1"], repeat, work)
    agree = None
    if fast.ok and slow.ok:
        a, b = _json_from(fast.stdout)["rows"], _json_from(slow.stdout)["rows"]
        agree = all(abs(x["time"] - y["time"]) <= 1e-9 * abs(y["time"]) for x, y in zip(a, b)) and len(
            a
        ) == len(b)
    return {
        "points": len(sizes.scaling_procs) * 2,
        "procs": list(sizes.scaling_procs),
        "analytic": fast.summary(),
        "simulated": slow.summary(),
        "speedup": _ratio(slow, fast),
        "same_times": agree,
    }


def profile_commands(work: Path, sizes: Sizes, out_dir: Path) -> dict[str, str]:
    """cProfile statistics and ``-X importtime`` logs of convert and run (for finding hot spots)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    chain = work / f"chain{sizes.chain_actions}.uml"
    ring = work / f"ring{sizes.ring_procs}x{sizes.ring_rounds}.uml"
    machine = work / "ring_machine.toml"
    base = [sys.executable]
    runs = {
        "convert": ["convert", str(chain), "-o", str(work / "profiled.py")],
        "run": [
            "run",
            str(ring),
            "--machine",
            str(machine),
            "--procs",
            str(sizes.ring_procs),
            "--nodes",
            str(nodes_for(sizes.ring_procs)),
            "--json",
        ],
    }
    written: dict[str, str] = {}
    for name, args in runs.items():
        stats = out_dir / f"{name}.prof"
        run_child([*base, "-m", "cProfile", "-o", str(stats), "-m", "uml2perf", *args], work)
        written[f"{name}_cprofile"] = str(stats)
        _, _, _, _, _, imports = run_child([*base, "-X", "importtime", "-m", "uml2perf", *args], work)
        log = out_dir / f"{name}.importtime.txt"
        log.write_text(imports, encoding="utf-8")
        written[f"{name}_importtime"] = str(log)
    return written


# -------------------------------------------------------------------------------------------- report


def machine_info() -> dict[str, Any]:
    """CPU model, core count, Python and library versions: what the numbers depend on."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions: dict[str, str] = {}
    from importlib.metadata import PackageNotFoundError, version

    for package in ("simpy", "lxml", "jinja2", "numpy", "networkx"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            versions[package] = "absent"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE", ""),
        "versions": versions,
    }


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)


def _status(ok_cmd: bool, met: bool) -> str:
    if not ok_cmd:
        return "FAILED"
    return "met" if met else "missed"


def render(report: dict[str, Any]) -> str:
    """The human-readable table of one benchmark run (Markdown, for README files)."""
    info = report["machine"]
    lines = [
        f"Machine: {info['cpu']}, {info['cores']} cores; Python {info['python']}; "
        f"SimPy {info['versions']['simpy']}, lxml {info['versions']['lxml']}; best of {report['repeat']}"
        f"{' (quick sizes)' if report['quick'] else ''}"
        f"{'; uml2perf byte-compiled' if report.get('bytecode_compiled') else '; uml2perf NOT byte-compiled'}",
        "",
        "| Benchmark | uml2perf wall [s] | floor wall [s] | wall ratio | CPU ratio | target | status "
        "| peak RSS uml2perf / floor [MiB] |",
        "|---|---|---|---|---|---|---|---|",
    ]
    if "convert" in report:
        c = report["convert"]
        lines.append(
            f"| (a) convert {c['actions']:,}-action model ({c['file_mib']:.1f} MiB) vs lxml parse "
            f"| {_fmt(c['uml2perf']['best'])} | {_fmt(c['floor']['best'])} | {_fmt(c['ratio'], '.2f')}x "
            f"| {_fmt(c['cpu_ratio'], '.2f')}x "
            f"| <= {c['target']}x | {_status(c['uml2perf']['returncode'] == 0, c['met'])} "
            f"| {c['uml2perf']['max_rss_mib']:.0f} / {c['floor']['max_rss_mib']:.0f} |"
        )
    if "ring" in report:
        r = report["ring"]
        same = r["simulated_time"]["same"]
        lines.append(
            f"| (b) run {r['procs']}-process ring x {r['rounds']:,} rounds vs plain SimPy "
            f"| {_fmt(r['uml2perf']['best'])} | {_fmt(r['floor']['best'])} | {_fmt(r['ratio'], '.2f')}x "
            f"| {_fmt(r['cpu_ratio'], '.2f')}x "
            f"| <= {r['target']}x | {_status(r['uml2perf']['returncode'] == 0, r['met'])} "
            f"| {r['uml2perf']['max_rss_mib']:.0f} / {r['floor']['max_rss_mib']:.0f} |"
        )
        lines.append("")
        lines.append(
            f"Ring simulated time: uml2perf {_fmt(r['simulated_time']['uml2perf'], '.9g')} s, "
            f"plain SimPy {_fmt(r['simulated_time']['bare'], '.9g')} s "
            f"({'identical' if same else 'DIFFERENT' if same is False else 'not compared'})."
        )
    if "scaling" in report:
        s = report["scaling"]
        lines += [
            "",
            f"(c) Scaling of `uml2perf run` on {s['model']}:",
            "",
            "| processes | wall [s] | CPU [s] | simulated [s] | SimPy events | event loop [s] | events/s (loop) "
            "| us per process (wall) | us per process (loop) | us per process x round | peak RSS [MiB] |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for row in s["rows"]:
            m = row["measurement"]
            if m["returncode"] != 0:
                lines.append(f"| {row['procs']} | FAILED (exit {m['returncode']}) | | | | | | | | | |")
                continue
            lines.append(
                f"| {row['procs']:,} | {_fmt(m['best'])} | {_fmt(m['best_cpu'])} "
                f"| {_fmt(row.get('simulated_time'), '.6g')} "
                f"| {_fmt(row['events'], ',d')} | {_fmt(row.get('loop_s'), '.3f')} "
                f"| {_fmt(row.get('events_per_s'), ',.0f')} | {_fmt(row.get('us_per_process'), ',.1f')} "
                f"| {_fmt(row.get('loop_us_per_process'), ',.1f')} "
                f"| {_fmt(row.get('us_per_process_round'), ',.2f')} | {m['max_rss_mib']:.0f} |"
            )
        lines.append("")
        lines.append(f"Growth no worse than linear in processes: {'yes' if s['linear_or_better'] else 'NO'}.")
    if "sweep" in report:
        w = report["sweep"]
        lines += [
            "",
            f"(e) `uml2perf sweep` of a bulk-synchronous model (20 supersteps, allreduce + barrier), "
            f"procs = {', '.join(map(str, w['procs']))} x NAT = 32, 64 ({w['points']} points):",
            "",
            "| evaluation | wall [s] | CPU [s] | same predictions |",
            "|---|---|---|---|",
            f"| analytic fast path | {_fmt(w['analytic']['best'])} | {_fmt(w['analytic']['best_cpu'])} "
            f"| {'yes (1e-9)' if w['same_times'] else 'NO' if w['same_times'] is False else 'n/a'} |",
            f"| simulation of every point (1 worker) | {_fmt(w['simulated']['best'])} "
            f"| {_fmt(w['simulated']['best_cpu'])} | |",
        ]
    failures = [
        f"{name}: exit {part['returncode']}: {part['stderr'].strip().splitlines()[-1] if part['stderr'].strip() else ''}"
        for name, part in _commands(report)
        if part["returncode"] != 0
    ]
    if failures:
        lines += ["", "Failed commands:", *(f"- {f}" for f in failures)]
    return "\n".join(lines) + "\n"


def _commands(report: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    for key in ("convert", "ring"):
        if key in report:
            found += [(f"{key}/{k}", report[key][k]) for k in ("floor", "uml2perf")]
    for row in report.get("scaling", {}).get("rows", []):
        found.append((f"scaling/P={row['procs']}", row["measurement"]))
    if "sweep" in report:
        found += [(f"sweep/{k}", report["sweep"][k]) for k in ("analytic", "simulated")]
    return found


# ---------------------------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/run.py", description="Benchmark uml2perf against plain lxml and plain SimPy."
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run in seconds")
    parser.add_argument("--repeat", "-k", type=int, default=3, metavar="K", help="best of K runs (default 3)")
    parser.add_argument("--json", metavar="FILE", help="write every number as JSON")
    parser.add_argument(
        "--only",
        default="convert,ring,scaling,sweep",
        help="comma-separated parts to run: convert, ring, scaling, sweep (default: all)",
    )
    parser.add_argument(
        "--workdir", metavar="DIR", help="keep generated models here (default: a temporary dir)"
    )
    parser.add_argument("--profile", metavar="DIR", help="also write cProfile and -X importtime logs here")
    parser.add_argument(
        "--no-compile",
        action="store_true",
        help="do not byte-compile uml2perf first (measures an uncompiled checkout)",
    )
    parser.add_argument("--actions", type=int, help="override the chain size of (a)")
    parser.add_argument("--procs", type=int, help="override the ring size of (b)")
    parser.add_argument("--rounds", type=int, help="override the ring rounds of (b)")
    parser.add_argument("--scaling", metavar="P1,P2,...", help="override the process counts of (c)")
    return parser


def sizes_from(args: argparse.Namespace) -> Sizes:
    base = QUICK if args.quick else FULL
    return Sizes(
        chain_actions=args.actions or base.chain_actions,
        ring_procs=args.procs or base.ring_procs,
        ring_rounds=args.rounds or base.ring_rounds,
        scaling_procs=tuple(int(p) for p in args.scaling.split(",")) if args.scaling else base.scaling_procs,
        scaling_rounds=base.scaling_rounds,
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    sizes = sizes_from(args)
    parts = {p.strip() for p in args.only.split(",") if p.strip()}
    unknown = parts - {"convert", "ring", "scaling", "sweep"}
    if unknown:
        print(f"error: unknown part(s) {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    temp = None
    if args.workdir:
        work = Path(args.workdir).resolve()
        work.mkdir(parents=True, exist_ok=True)
    else:
        temp = tempfile.mkdtemp(prefix="uml2perf-bench-")
        work = Path(temp)
    report: dict[str, Any] = {
        "machine": machine_info(),
        "quick": args.quick,
        "repeat": args.repeat,
        "sizes": asdict(sizes),
        "bytecode_compiled": not args.no_compile,
    }
    if not args.no_compile:
        compile_packages()
    try:
        if "convert" in parts:
            report["convert"] = bench_convert(work, sizes, args.repeat)
        if "ring" in parts:
            report["ring"] = bench_ring(work, sizes, args.repeat)
        if "scaling" in parts:
            report["scaling"] = bench_scaling(work, sizes, args.repeat)
        if "sweep" in parts:
            report["sweep"] = bench_sweep(work, sizes, args.repeat)
        if args.profile and {"convert", "ring"} <= parts:
            report["profile"] = profile_commands(work, sizes, Path(args.profile))
    finally:
        if temp:
            shutil.rmtree(temp, ignore_errors=True)
    sys.stdout.write(render(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    failed = any(part["returncode"] != 0 for _, part in _commands(report))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
