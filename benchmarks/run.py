"""Benchmark of uml2perf against the floors of the libraries it is built on.

Every number is a whole child process (interpreter start, imports, work,
exit), because that is what a user waits for.  The commands compared in one
part run interleaved (A B A B ...), so a change of background load hits both
sides alike; each part reports the median and the spread (lowest to highest)
of wall and CPU time, and ratios are medians of the per-round ratios.  CPU time
(user + system of the child) is the steadier measure on a shared machine.

Peak memory is the child's own: every command runs under
``benchmarks/peakmem.py``, a bare interpreter that forks and execs it, because
a child started straight from this driver would report the driver's memory as
its peak (Linux keeps ``ru_maxrss`` across ``exec``).

Parts (``--only`` picks some; ``--profile DIR`` also writes cProfile statistics and
``-X importtime`` logs of convert and run):

``convert``
    ``uml2perf convert`` of a 20,000-action Papyrus model (convert never caches a
    generated module; uml2perf's templates compiled once, as its modules are)
    against a bare hardened ``lxml`` parse of the same bytes (target: at most 3x);
    the first convert after installing, which compiles the templates too, beside it.
``ring``
    ``uml2perf run`` of the 64-process x 2,000-round ring (cached module)
    against ``lean_simpy_ring.py`` (plain SimPy with the same events) and
    ``bare_simpy_ring.py`` (``simpy.Store`` mailboxes), and ``heapq_ring.py``
    (the lean ring on a bare ``heapq`` loop, SimPy's own ceiling); all must
    predict the same simulated time; events per second of each event loop.  Target:
    at most 1.5x the lean floor in CPU time (goal 1.2x).
``startup``
    a cached ``uml2perf run samples/prophet.uml`` against
    ``python -c "import simpy"`` (target: at most 2x).
``scaling``
    ``uml2perf run samples/lapw0.uml`` at 32 to 32,768 processes: whole-process
    time, events per second of the event loop, time and memory per simulated
    process (target: 32,768 processes in under 5 s).
``sweep``
    ``uml2perf sweep`` of a bulk-synchronous model: the analytic fast path
    against simulating every point.
``peer``
    SimGrid's Python bindings (``benchmarks/simgrid_peer.py``) against uml2perf
    on the same ring, all-reduce loop and LAPW0 scenarios, with matched network
    models: both predictions and the ratio of run times.  Skipped, with a note,
    when no Python on this machine imports ``simgrid``.

uml2perf's own modules are byte-compiled first, as ``pip install`` does
(``PYTHONDONTWRITEBYTECODE=1`` is set on these machines; ``--no-compile``
measures the uncompiled checkout).  Cached generated modules live in a private
folder of the benchmark, filled by one untimed run before the timed ones.

Usage::

    python benchmarks/run.py                 # full sizes, 5 interleaved rounds
    python benchmarks/run.py --quick         # smoke run in seconds
    python benchmarks/run.py --json out.json --repeat 9 --only ring,startup
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PEAKMEM = HERE / "peakmem.py"
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from synthetic import allreduce_model, bsp_model, chain_model, ring_model, write_model  # noqa: E402

PARTS = ("convert", "ring", "startup", "scaling", "sweep", "peer")

#: Targets of the ratios (uml2perf CPU time / floor CPU time).
CONVERT_TARGET = 3.0
RUN_TARGET = 1.5
RUN_GOAL = 1.2
STARTUP_TARGET = 2.0
#: Whole-process seconds for the largest LAPW0 run.
SCALING_TARGET_S = 5.0

#: Network of the benchmark machine: shared memory inside a node, Fast Ethernet between
#: nodes, 4 cores per node (the shape of the cluster of the Performance Prophet paper).
CORES_PER_NODE = 4
INTRA = (1e-6, 1e10)  # latency s, bandwidth B/s
INTER = (5e-5, 1.25e7)
#: Bytes per ring message (eager: below the machine's eager limit).
RING_SIZE = 1024
RING_WORK = 1e-3


@dataclass(frozen=True)
class Sizes:
    """Problem sizes of one benchmark run."""

    chain_actions: int
    ring_procs: int
    ring_rounds: int
    scaling_procs: tuple[int, ...]
    sweep_procs: tuple[int, ...]
    peer_ring: tuple[int, int]  # processes, rounds
    peer_allreduce: tuple[int, int]
    peer_lapw0: int


FULL = Sizes(
    chain_actions=20_000,
    ring_procs=64,
    ring_rounds=2_000,
    scaling_procs=(32, 512, 4096, 32768),
    sweep_procs=(32, 512, 4096),
    peer_ring=(64, 2000),
    peer_allreduce=(64, 50),
    peer_lapw0=512,
)
QUICK = Sizes(
    chain_actions=300,
    ring_procs=8,
    ring_rounds=20,
    scaling_procs=(4, 8, 16),
    sweep_procs=(4, 8, 16),
    peer_ring=(8, 10),
    peer_allreduce=(8, 10),
    peer_lapw0=8,
)


# ------------------------------------------------------------------------------------ running children


@dataclass
class Measurement:
    """Wall times, CPU times and peak memory of one command over interleaved rounds."""

    label: str
    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    rss_mib: list[float] = field(default_factory=list)
    returncode: int = 0
    stdout: str = ""
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and bool(self.walls)

    @property
    def wall(self) -> float:
        return statistics.median(self.walls) if self.walls else math.nan

    @property
    def cpu(self) -> float:
        """Median user + system CPU seconds of the child: barely moved by other load."""
        return statistics.median(self.cpus) if self.cpus else math.nan

    @property
    def peak_mib(self) -> float:
        return max(self.rss_mib) if self.rss_mib else math.nan

    def output(self) -> dict[str, Any]:
        """The JSON object the child printed last (``run --json`` prints exactly one)."""
        start = self.stdout.find("{")
        if not self.ok or start < 0:
            return {}
        try:
            data = json.loads(self.stdout[start:])
        except json.JSONDecodeError:
            return {}
        return data if isinstance(data, dict) else {}

    def summary(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "command": self.command,
            "env": self.env,
            "walls": self.walls,
            "cpus": self.cpus,
            "rss_mib": self.rss_mib,
            "wall": self.wall,
            "wall_spread": _spread(self.walls),
            "cpu": self.cpu,
            "cpu_spread": _spread(self.cpus),
            "peak_mib": self.peak_mib,
            "returncode": self.returncode,
            "stderr": self.stderr[-2000:],
        }


def _spread(values: list[float]) -> list[float] | None:
    return [min(values), max(values)] if values else None


def run_child(
    command: Sequence[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[float, float, float, int, str, str]:
    """Run one command under :mod:`peakmem`; return (wall s, CPU s, peak MiB, exit status, stdout, stderr).

    Output goes to temporary files so a chatty child never blocks on a full pipe.
    """
    full_env = {**os.environ, **(env or {})}
    handle, name = tempfile.mkstemp(suffix=".json", prefix="peak-")
    os.close(handle)
    report = Path(name)
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            wrapper = [sys.executable, "-I", "-S", str(PEAKMEM), str(report), *command]
            code = subprocess.call(
                wrapper, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=full_env
            )
            out.seek(0)
            err.seek(0)
            stdout = out.read().decode(errors="replace")
            stderr = err.read().decode(errors="replace")
        if code != 0:
            return math.nan, math.nan, math.nan, code, stdout, stderr
        data = json.loads(report.read_text(encoding="utf-8"))
        return (
            data["wall"],
            data["user"] + data["system"],
            data["max_rss_kib"] / 1024.0,
            data["returncode"],
            stdout,
            stderr,
        )
    finally:
        report.unlink(missing_ok=True)


def interleave(measurements: Sequence[Measurement], repeat: int, cwd: Path) -> None:
    """Run the commands in turn, ``repeat`` rounds of A B C ...; stop a command at its first failure."""
    for _ in range(max(1, repeat)):
        for m in measurements:
            if m.returncode != 0:
                continue
            wall, cpu, rss, code, stdout, stderr = run_child(m.command, cwd, m.env)
            m.returncode, m.stdout, m.stderr = code, stdout, stderr
            if code == 0:
                m.walls.append(wall)
                m.cpus.append(cpu)
                m.rss_mib.append(rss)


def warm(m: Measurement, cwd: Path) -> None:
    """One untimed run (fills the generated-module cache); a failure is kept and reported."""
    _, _, _, code, stdout, stderr = run_child(m.command, cwd, m.env)
    if code != 0:
        m.returncode, m.stdout, m.stderr = code, stdout, stderr


def ratios(a: Measurement, b: Measurement) -> dict[str, Any] | None:
    """Median and spread of the per-round ratios a / b, CPU and wall (rounds ran back to back)."""
    if not (a.ok and b.ok):
        return None
    n = min(len(a.cpus), len(b.cpus))
    cpu = [x / y for x, y in zip(a.cpus[:n], b.cpus[:n], strict=True) if y > 0]
    wall = [x / y for x, y in zip(a.walls[:n], b.walls[:n], strict=True) if y > 0]
    if not cpu or not wall:
        return None
    return {
        "cpu": statistics.median(cpu),
        "cpu_spread": _spread(cpu),
        "wall": statistics.median(wall),
        "wall_spread": _spread(wall),
    }


def uml2perf_command() -> list[str]:
    """The installed ``uml2perf`` script next to this interpreter, else ``python -m uml2perf``."""
    script = Path(sys.executable).with_name("uml2perf")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "uml2perf"]


def private_cache(work: Path) -> dict[str, str]:
    """Environment of cached runs: the benchmark's own cache folder (owner-only, as the cache requires)."""
    folder = work / "cache"
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    return {"UML2PERF_CACHE_DIR": str(folder), "XDG_CACHE_HOME": str(folder)}


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


def run_command(model: Path, machine: Path, procs: int) -> list[str]:
    """``uml2perf run MODEL --machine M --procs P --nodes N --json``."""
    return [
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


def same_time(a: Any, b: Any, rel: float = 1e-9) -> bool | None:
    if not isinstance(a, int | float) or not isinstance(b, int | float):
        return None
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def events_per_s(data: dict[str, Any], loop_key: str) -> float | None:
    events, loop = data.get("events"), data.get(loop_key)
    return events / loop if events and loop else None


def compile_packages() -> None:
    """Byte-compile uml2perf, its runtime and templates package, as an install would."""
    import compileall

    for folder in ("uml2perf", "runtime", "templates"):
        if (REPO / folder).is_dir():
            compileall.compile_dir(str(REPO / folder), quiet=1)


# ------------------------------------------------------------------------------------------- benches


def bench_convert(work: Path, sizes: Sizes, repeat: int) -> dict[str, Any]:
    """Convert of an N-action chain against a bare hardened lxml parse of the same bytes.

    ``convert`` never caches a generated module: every convert reads and generates anew.  What the
    cache may hold is the compiled code of uml2perf's own templates, which, like the byte-compiled
    modules of an installed package, is made once and reused by every later command.  The target
    is measured that way (the cache folder warmed by one untimed convert of another model); the
    very first convert after installing, which also compiles the templates, is reported beside it.
    """
    model = write_model(work / f"chain{sizes.chain_actions}.uml", chain_model(sizes.chain_actions))
    out = work / f"chain{sizes.chain_actions}.py"
    templates = work / "template-cache"
    templates.mkdir(mode=0o700, exist_ok=True)
    os.chmod(templates, 0o700)
    templates_env = {"UML2PERF_CACHE_DIR": str(templates), "XDG_CACHE_HOME": str(templates)}
    warm_up = [
        *uml2perf_command(),
        "convert",
        str(REPO / "samples" / "prophet.uml"),
        "-o",
        str(work / "warm.py"),
    ]
    subprocess.run(warm_up, env={**os.environ, **templates_env}, capture_output=True, check=False)
    first = work / "no-cache"
    first.mkdir(mode=0o700, exist_ok=True)
    lxml_code = (
        "import sys\nfrom lxml import etree\n"
        "etree.fromstring(open(sys.argv[1],'rb').read(), etree.XMLParser(resolve_entities=False))"
    )
    floor = Measurement("lxml parse", [sys.executable, "-c", lxml_code, str(model)])
    tool = Measurement(
        "uml2perf convert",
        [*uml2perf_command(), "convert", str(model), "-o", str(out)],
        env=templates_env,
    )
    first_ever = Measurement(
        "uml2perf convert, templates not yet compiled",
        [*uml2perf_command(), "convert", str(model), "-o", str(out)],
        env={"UML2PERF_NO_CACHE": "1", "UML2PERF_CACHE_DIR": str(first), "XDG_CACHE_HOME": str(first)},
    )
    interleave([tool, first_ever, floor], repeat, work)
    ratio = ratios(tool, floor)
    return {
        "actions": sizes.chain_actions,
        "file_mib": model.stat().st_size / 2**20,
        "floor": floor.summary(),
        "uml2perf": tool.summary(),
        "first_ever": first_ever.summary(),
        "ratio": ratio,
        "ratio_first_ever": ratios(first_ever, floor),
        "target": CONVERT_TARGET,
        "met": ratio is not None and ratio["cpu"] <= CONVERT_TARGET,
        "generated_lines": len(out.read_text(encoding="utf-8").splitlines()) if out.exists() else None,
    }


def _floor_command(script: str, procs: int, rounds: int) -> list[str]:
    return [
        sys.executable,
        str(HERE / script),
        "--procs",
        str(procs),
        "--rounds",
        str(rounds),
        "--work",
        repr(RING_WORK),
        "--size",
        str(RING_SIZE),
        "--ppn",
        str(CORES_PER_NODE),
        "--intra",
        repr(INTRA[0]),
        repr(INTRA[1]),
        "--inter",
        repr(INTER[0]),
        repr(INTER[1]),
    ]


def bench_ring(work: Path, sizes: Sizes, repeat: int) -> dict[str, Any]:
    """The P-process ring: uml2perf against the lean and the Store-based SimPy floors."""
    procs, rounds = sizes.ring_procs, sizes.ring_rounds
    model = write_model(
        work / f"ring{procs}x{rounds}.uml", ring_model(rounds, work=RING_WORK, size=RING_SIZE)
    )
    machine = write_machine(work / "ring_machine.toml", nodes_for(procs))
    tool = Measurement("uml2perf run", run_command(model, machine, procs), env=private_cache(work))
    lean = Measurement("lean SimPy ring", _floor_command("lean_simpy_ring.py", procs, rounds))
    store = Measurement("Store SimPy ring", _floor_command("bare_simpy_ring.py", procs, rounds))
    bare = Measurement("heapq loop ring (no SimPy)", _floor_command("heapq_ring.py", procs, rounds))
    warm(tool, work)
    interleave([tool, lean, store, bare], repeat, work)
    t, ln, st, hq = tool.output(), lean.output(), store.output(), bare.output()
    vs_lean = ratios(tool, lean)
    return {
        "procs": procs,
        "rounds": rounds,
        "size": RING_SIZE,
        "uml2perf": tool.summary(),
        "lean": lean.summary(),
        "store": store.summary(),
        "heapq": bare.summary(),
        "vs_lean": vs_lean,
        "lean_vs_heapq": ratios(lean, bare),
        "vs_store": ratios(tool, store),
        "target": RUN_TARGET,
        "goal": RUN_GOAL,
        "met": vs_lean is not None and vs_lean["cpu"] <= RUN_TARGET,
        "simulated_time": {
            "uml2perf": t.get("time"),
            "lean": ln.get("time"),
            "store": st.get("time"),
            "heapq": hq.get("time"),
            "same": all(same_time(t.get("time"), other.get("time")) for other in (ln, st, hq)),
        },
        "events": {
            "uml2perf": t.get("events"),
            "lean": ln.get("events"),
            "store": st.get("events"),
            "heapq": hq.get("events"),
        },
        "events_per_s": {
            "uml2perf": events_per_s(t, "wall_time"),
            "lean": events_per_s(ln, "loop"),
            "store": events_per_s(st, "loop"),
            "heapq": events_per_s(hq, "loop"),
        },
    }


def bench_startup(work: Path, sizes: Sizes, repeat: int) -> dict[str, Any]:
    """Cached ``uml2perf run`` processes that simulate almost nothing against ``python -c "import simpy"``.

    Two commands: ``run samples/prophet.uml`` (the default machine), and a 64-process ring of two
    rounds on a machine file (the benchmark machine's, 16 nodes): what the rows of the simulated
    shapes pay before their first event, and after their last, beside the floor's start-up.
    """
    env = private_cache(work)
    tool = Measurement(
        "uml2perf run samples/prophet.uml (cached)",
        [*uml2perf_command(), "run", str(REPO / "samples" / "prophet.uml")],
        env=env,
    )
    ring = write_model(work / "startup_ring.uml", ring_model(2, work=RING_WORK, size=RING_SIZE))
    machine = write_machine(work / "startup_machine.toml", nodes_for(64))
    ring_tool = Measurement(
        "uml2perf run 64-process ring × 2 rounds --machine FILE (cached)",
        run_command(ring, machine, 64),
        env=env,
    )
    floor = Measurement('python -c "import simpy"', [sys.executable, "-c", "import simpy"])
    warm(tool, work)
    warm(ring_tool, work)
    interleave([tool, ring_tool, floor], repeat, work)
    ratio = ratios(tool, floor)
    return {
        "uml2perf": tool.summary(),
        "ring": ring_tool.summary(),
        "floor": floor.summary(),
        "ratio": ratio,
        "ring_ratio": ratios(ring_tool, floor),
        "target": STARTUP_TARGET,
        "met": ratio is not None and ratio["cpu"] <= STARTUP_TARGET,
    }


def bench_scaling(work: Path, sizes: Sizes, repeat: int) -> dict[str, Any]:
    """``samples/lapw0.uml`` at growing process counts: time, events/s, time and memory per process."""
    model = REPO / "samples" / "lapw0.uml"
    env = private_cache(work)
    runs = [
        Measurement(
            f"run P={procs}",
            run_command(model, write_machine(work / f"scaling_{procs}.toml", nodes_for(procs)), procs),
            env=env,
        )
        for procs in sizes.scaling_procs
    ]
    warm(runs[0], work)
    interleave(runs, repeat, work)
    rows = []
    for procs, m in zip(sizes.scaling_procs, runs, strict=True):
        data = m.output()
        loop = data.get("wall_time")  # seconds the simulator spent in its event loop
        row: dict[str, Any] = {
            "procs": procs,
            "measurement": m.summary(),
            "events": data.get("events"),
            "loop_s": loop,
            "simulated_time": data.get("time"),
            "events_per_s": events_per_s(data, "wall_time"),
        }
        if m.ok:
            row["us_per_process"] = m.wall / procs * 1e6
            row["loop_us_per_process"] = loop / procs * 1e6 if loop else None
        rows.append(row)
    # memory per simulated process: the growth of the peak between the smallest and each size
    first = rows[0]["measurement"]["peak_mib"]
    for row in rows[1:]:
        peak = row["measurement"]["peak_mib"]
        if peak == peak and first == first:
            row["kib_per_process"] = (peak - first) * 1024 / (row["procs"] - rows[0]["procs"])
    largest = rows[-1]
    return {
        "model": "samples/lapw0.uml",
        "rows": rows,
        "target_s": SCALING_TARGET_S,
        "met": largest["measurement"]["returncode"] == 0
        and largest["measurement"]["wall"] < SCALING_TARGET_S,
    }


def bench_sweep(work: Path, sizes: Sizes, repeat: int) -> dict[str, Any]:
    """``uml2perf sweep`` of a bulk-synchronous model: analytic fast path vs simulating every point."""
    model = write_model(work / "bsp_sweep.uml", bsp_model(steps=20, collectives=("allreduce", "barrier")))
    procs = ",".join(str(p) for p in sizes.sweep_procs)
    machine = write_machine(work / "sweep_machine.toml", nodes_for(max(sizes.sweep_procs)))
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
    env = private_cache(work)
    fast = Measurement("sweep analytic", base, env=env)
    slow = Measurement("sweep simulated", [*base, "--no-analytic", "--workers", "1"], env=env)
    warm(fast, work)
    interleave([fast, slow], repeat, work)
    agree = None
    a, b = fast.output().get("rows"), slow.output().get("rows")
    if a and b:
        agree = len(a) == len(b) and all(
            abs(x["time"] - y["time"]) <= 1e-9 * abs(y["time"]) for x, y in zip(a, b, strict=True)
        )
    speed = ratios(slow, fast)
    return {
        "points": len(sizes.sweep_procs) * 2,
        "procs": list(sizes.sweep_procs),
        "analytic": fast.summary(),
        "simulated": slow.summary(),
        "speedup": speed,
        "same_times": agree,
    }


def simgrid_python() -> str | None:
    """An interpreter that imports ``simgrid``: this one, else the system's ``python3``."""
    for candidate in (sys.executable, "/usr/bin/python3"):
        if not Path(candidate).exists():
            continue
        probe = subprocess.run(
            [candidate, "-c", "import simgrid"], capture_output=True, stdin=subprocess.DEVNULL, check=False
        )
        if probe.returncode == 0:
            return candidate
    return None


def bench_peer(work: Path, sizes: Sizes, repeat: int) -> dict[str, Any]:
    """SimGrid's Python bindings against uml2perf on the same scenarios, matched network model."""
    python = simgrid_python()
    if python is None:
        return {
            "available": False,
            "note": "SimGrid's Python bindings are not installed (Debian: apt-get install python3-simgrid); "
            "the peer comparison was skipped",
        }
    env = private_cache(work)
    ring_p, ring_r = sizes.peer_ring
    ar_p, ar_r = sizes.peer_allreduce
    lapw_p = sizes.peer_lapw0
    scenarios = [
        (
            f"ring {ring_p} x {ring_r:,} rounds",
            write_model(work / "peer_ring.uml", ring_model(ring_r, work=RING_WORK, size=RING_SIZE)),
            ring_p,
            ["ring", "--procs", str(ring_p), "--rounds", str(ring_r)],
        ),
        (
            f"all-reduce loop {ar_p} x {ar_r:,} rounds",
            write_model(work / "peer_allreduce.uml", allreduce_model(ar_r, work=RING_WORK, size=8)),
            ar_p,
            ["allreduce", "--procs", str(ar_p), "--rounds", str(ar_r)],
        ),
        (
            f"LAPW0 {lapw_p} processes",
            REPO / "samples" / "lapw0.uml",
            lapw_p,
            ["lapw0", "--procs", str(lapw_p)],
        ),
    ]
    rows = []
    for name, model, procs, args in scenarios:
        machine = write_machine(work / f"peer_{procs}.toml", nodes_for(procs))
        tool = Measurement(f"uml2perf {name}", run_command(model, machine, procs), env=env)
        peer = Measurement(
            f"SimGrid {name}",
            [
                python,
                str(HERE / "simgrid_peer.py"),
                *args,
                "--ppn",
                str(CORES_PER_NODE),
                "--intra",
                repr(INTRA[0]),
                repr(INTRA[1]),
                "--inter",
                repr(INTER[0]),
                repr(INTER[1]),
            ],
        )
        warm(tool, work)
        interleave([tool, peer], repeat, work)
        t, s = tool.output(), peer.output()
        rel = None
        if isinstance(t.get("time"), float) and isinstance(s.get("time"), float) and s["time"]:
            rel = abs(t["time"] - s["time"]) / abs(s["time"])
        rows.append(
            {
                "scenario": name,
                "procs": procs,
                "uml2perf": tool.summary(),
                "simgrid": peer.summary(),
                "time_uml2perf": t.get("time"),
                "time_simgrid": s.get("time"),
                "relative_difference": rel,
                "simgrid_over_uml2perf": ratios(peer, tool),
            }
        )
    return {"available": True, "python": python, "rows": rows}


def profile_commands(work: Path, sizes: Sizes, out_dir: Path) -> dict[str, str]:
    """cProfile statistics and ``-X importtime`` logs of convert and run (for finding hot spots)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    chain = write_model(work / f"chain{sizes.chain_actions}.uml", chain_model(sizes.chain_actions))
    procs, rounds = sizes.ring_procs, sizes.ring_rounds
    ring = write_model(work / f"ring{procs}x{rounds}.uml", ring_model(rounds, work=RING_WORK, size=RING_SIZE))
    machine = write_machine(work / "ring_machine.toml", nodes_for(procs))
    runs = {
        "convert": ["convert", str(chain), "-o", str(work / "profiled.py")],
        "run": run_command(ring, machine, procs)[len(uml2perf_command()) :],
    }
    env = private_cache(work)
    written: dict[str, str] = {}
    for name, args in runs.items():
        stats = out_dir / f"{name}.prof"
        run_child([sys.executable, "-m", "cProfile", "-o", str(stats), "-m", "uml2perf", *args], work, env)
        written[f"{name}_cprofile"] = str(stats)
        imports = run_child([sys.executable, "-X", "importtime", "-m", "uml2perf", *args], work, env)[5]
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


def _fmt(value: Any, spec: str = ".3f") -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "n/a"
    return format(value, spec)


def _range(spread: list[float] | None, spec: str = ".3f") -> str:
    return "n/a" if not spread else f"{spread[0]:{spec}}–{spread[1]:{spec}}"


def _x(ratio: dict[str, Any] | None, key: str = "cpu") -> str:
    if not ratio:
        return "n/a"
    return f"{ratio[key]:.2f}× ({_range(ratio[key + '_spread'], '.2f')})"


def _status(ok_cmd: bool, met: bool) -> str:
    if not ok_cmd:
        return "FAILED"
    return "met" if met else "missed"


def _row(m: dict[str, Any]) -> str:
    """Median wall, median CPU with spread, and peak memory of one command."""
    if m["returncode"] != 0:
        return f"| {m['label']} | FAILED (exit {m['returncode']}) | | |"
    return (
        f"| {m['label']} | {_fmt(m['wall'])} ({_range(m['wall_spread'])}) "
        f"| {_fmt(m['cpu'])} ({_range(m['cpu_spread'])}) | {_fmt(m['peak_mib'], '.1f')} |"
    )


_HEAD = [
    "| command | wall [s] median (range) | CPU [s] median (range) | peak RSS [MiB] |",
    "|---|---|---|---|",
]


def render(report: dict[str, Any]) -> str:
    """The human-readable tables of one benchmark run (Markdown, for README files)."""
    info = report["machine"]
    lines = [
        f"Machine: {info['cpu']}, {info['cores']} cores; Python {info['python']}; "
        f"SimPy {info['versions']['simpy']}, lxml {info['versions']['lxml']}; "
        f"{report['repeat']} interleaved rounds, median (range)"
        f"{' (quick sizes)' if report['quick'] else ''}"
        "; uml2perf " + ("byte-compiled" if report.get("bytecode_compiled") else "NOT byte-compiled"),
    ]
    summary = ["", "| Benchmark | ratio, CPU | ratio, wall | target | status |", "|---|---|---|---|---|"]
    body: list[str] = []
    if "convert" in report:
        c = report["convert"]
        summary.append(
            f"| convert {c['actions']:,}-action model ({c['file_mib']:.1f} MiB) vs lxml parse "
            f"| {_x(c['ratio'])} | {_x(c['ratio'], 'wall')} | ≤ {c['target']}× "
            f"| {_status(c['uml2perf']['returncode'] == 0, c['met'])} |"
        )
        summary.append(
            "| the same, first convert after installing (templates compiled too) "
            f"| {_x(c['ratio_first_ever'])} | {_x(c['ratio_first_ever'], 'wall')} | | |"
        )
        body += ["", f"Convert of the {c['actions']:,}-action chain:", "", *_HEAD]
        body += [_row(c["uml2perf"]), _row(c["first_ever"]), _row(c["floor"])]
    if "ring" in report:
        r = report["ring"]
        summary.append(
            f"| run {r['procs']}-process ring × {r['rounds']:,} rounds vs lean SimPy (same events) "
            f"| {_x(r['vs_lean'])} | {_x(r['vs_lean'], 'wall')} | ≤ {r['target']}× (goal {r['goal']}×) "
            f"| {_status(r['uml2perf']['returncode'] == 0, r['met'])} |"
        )
        summary.append(
            f"| run {r['procs']}-process ring × {r['rounds']:,} rounds vs SimPy with Store mailboxes "
            f"| {_x(r['vs_store'])} | {_x(r['vs_store'], 'wall')} | | |"
        )
        sim, ev, eps = r["simulated_time"], r["events"], r["events_per_s"]
        body += [
            "",
            f"Ring of {r['procs']} processes × {r['rounds']:,} rounds, {r['size']:,}-byte eager messages, "
            f"{nodes_for(r['procs'])} nodes × {CORES_PER_NODE} cores:",
            "",
            "| command | wall [s] median (range) | CPU [s] median (range) | peak RSS [MiB] "
            "| simulated [s] | SimPy events | events/s (event loop) |",
            "|---|---|---|---|---|---|---|",
        ]
        for key in ("uml2perf", "lean", "store", "heapq"):
            body.append(
                _row(r[key])
                + f" {_fmt(sim[key], '.9g')} | {_fmt(ev[key], ',d')} | {_fmt(eps[key], ',.0f')} |"
            )
        verdict = "identical" if sim["same"] else "DIFFERENT" if sim["same"] is False else "not compared"
        body += [
            "",
            f"Ring simulated time: {verdict} in all four (1e-9 relative). The heapq loop runs the lean "
            f"ring's steps without SimPy: the lean SimPy ring costs {_x(r['lean_vs_heapq'])} of it in CPU.",
        ]
    if "startup" in report:
        s = report["startup"]
        summary.append(
            f'| start-up: cached `run samples/prophet.uml` vs `python -c "import simpy"` '
            f"| {_x(s['ratio'])} | {_x(s['ratio'], 'wall')} | ≤ {s['target']}× "
            f"| {_status(s['uml2perf']['returncode'] == 0, s['met'])} |"
        )
        ring_ratio = s.get("ring_ratio")
        if ring_ratio:
            met = ring_ratio["cpu"] <= s["target"]
            summary.append(
                "| start-up: cached `run` of a 64-process ring × 2 rounds with `--machine FILE` vs "
                f'`python -c "import simpy"` | {_x(ring_ratio)} | {_x(ring_ratio, "wall")} '
                f"| ≤ {s['target']}× | {_status(s['ring']['returncode'] == 0, met)} |"
            )
        rows = [s["uml2perf"], *([s["ring"]] if "ring" in s else []), s["floor"]]
        body += ["", "Start-up:", "", *_HEAD, *(_row(row) for row in rows)]
    if "scaling" in report:
        sc = report["scaling"]
        largest = sc["rows"][-1]
        summary.append(
            f"| run {sc['model']} at {largest['procs']:,} processes, whole process "
            f"| {_fmt(largest['measurement']['wall'], '.2f')} s wall | | < {sc['target_s']:g} s "
            f"| {_status(largest['measurement']['returncode'] == 0, sc['met'])} |"
        )
        body += [
            "",
            f"Scaling of `uml2perf run {sc['model']}` (P/4 nodes of 4 cores):",
            "",
            "| processes | wall [s] | CPU [s] | simulated [s] | SimPy events | event loop [s] "
            "| events/s (loop) | µs per process (wall) | µs per process (loop) | peak RSS [MiB] "
            "| KiB per process |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for row in sc["rows"]:
            m = row["measurement"]
            if m["returncode"] != 0:
                body.append(f"| {row['procs']:,} | FAILED (exit {m['returncode']}) | | | | | | | | | |")
                continue
            body.append(
                f"| {row['procs']:,} | {_fmt(m['wall'])} | {_fmt(m['cpu'])} "
                f"| {_fmt(row.get('simulated_time'), '.6g')} "
                f"| {_fmt(row['events'], ',d')} | {_fmt(row.get('loop_s'), '.3f')} "
                f"| {_fmt(row.get('events_per_s'), ',.0f')} | {_fmt(row.get('us_per_process'), ',.1f')} "
                f"| {_fmt(row.get('loop_us_per_process'), ',.1f')} | {_fmt(m['peak_mib'], '.1f')} "
                f"| {_fmt(row.get('kib_per_process'), '.1f')} |"
            )
        body += ["", "KiB per process: growth of the peak memory over the smallest run, per added process."]
    if "sweep" in report:
        w = report["sweep"]
        same = w["same_times"]
        body += [
            "",
            f"`uml2perf sweep` of a bulk-synchronous model (20 supersteps, allreduce + barrier), "
            f"procs = {', '.join(map(str, w['procs']))} × NAT = 32, 64 ({w['points']} points); "
            f"same predictions: {'yes (1e-9)' if same else 'NO' if same is False else 'n/a'}; "
            f"simulating every point costs {_x(w['speedup'])} the analytic fast path:",
            "",
            *_HEAD,
            _row(w["analytic"]),
            _row(w["simulated"]),
        ]
    if "peer" in report:
        p = report["peer"]
        if not p["available"]:
            body += ["", f"Peer comparison: {p['note']}."]
        else:
            body += [
                "",
                "SimGrid (Python bindings, CM02 network model, unit latency and bandwidth factors, "
                "the same two-level network) against uml2perf, whole processes:",
                "",
                "| scenario | uml2perf predicted [s] | SimGrid predicted [s] | relative difference "
                "| uml2perf wall [s] | SimGrid wall [s] | SimGrid / uml2perf, wall | SimGrid / uml2perf, CPU "
                "| peak RSS uml2perf / SimGrid [MiB] |",
                "|---|---|---|---|---|---|---|---|---|",
            ]
            for row in p["rows"]:
                body.append(
                    f"| {row['scenario']} | {_fmt(row['time_uml2perf'], '.9g')} "
                    f"| {_fmt(row['time_simgrid'], '.9g')} "
                    f"| {_fmt(row['relative_difference'], '.1e')} | {_fmt(row['uml2perf']['wall'])} "
                    f"| {_fmt(row['simgrid']['wall'])} | {_x(row['simgrid_over_uml2perf'], 'wall')} "
                    f"| {_x(row['simgrid_over_uml2perf'])} "
                    f"| {_fmt(row['uml2perf']['peak_mib'], '.0f')} "
                    f"/ {_fmt(row['simgrid']['peak_mib'], '.0f')} |"
                )
    failures = [
        f"{name}: exit {part['returncode']}: {_last_line(part['stderr'])}"
        for name, part in _commands(report)
        if part["returncode"] != 0
    ]
    if failures:
        body += ["", "Failed commands:", *(f"- {f}" for f in failures)]
    return "\n".join(lines + (summary if len(summary) > 3 else []) + body) + "\n"


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def _commands(report: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    if "convert" in report:
        found += [(f"convert/{k}", report["convert"][k]) for k in ("floor", "uml2perf", "first_ever")]
    if "ring" in report:
        found += [(f"ring/{k}", report["ring"][k]) for k in ("uml2perf", "lean", "store", "heapq")]
    if "startup" in report:
        found += [(f"startup/{k}", report["startup"][k]) for k in ("uml2perf", "floor")]
    for row in report.get("scaling", {}).get("rows", []):
        found.append((f"scaling/P={row['procs']}", row["measurement"]))
    if "sweep" in report:
        found += [(f"sweep/{k}", report["sweep"][k]) for k in ("analytic", "simulated")]
    for row in report.get("peer", {}).get("rows", []):
        found += [(f"peer/{row['scenario']}/{k}", row[k]) for k in ("uml2perf", "simgrid")]
    return found


# ---------------------------------------------------------------------------------------------- main


def _counts(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(",") if p.strip())


def _pair(text: str | None, default: tuple[int, int]) -> tuple[int, int]:
    if not text:
        return default
    first, second = _counts(text)
    return first, second


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/run.py",
        description="Benchmark uml2perf against plain lxml, plain SimPy and (when installed) SimGrid.",
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run in seconds")
    parser.add_argument(
        "--repeat", "-k", type=int, default=5, metavar="K", help="interleaved rounds per part (default 5)"
    )
    parser.add_argument("--json", metavar="FILE", help="write every number as JSON")
    parser.add_argument(
        "--only",
        default=",".join(PARTS),
        help=f"comma-separated parts to run: {', '.join(PARTS)} (default: all)",
    )
    parser.add_argument(
        "--workdir", metavar="DIR", help="keep generated models here (default: a temporary dir)"
    )
    parser.add_argument(
        "--no-compile",
        action="store_true",
        help="do not byte-compile uml2perf first (an uncompiled checkout)",
    )
    parser.add_argument("--profile", metavar="DIR", help="also write cProfile and -X importtime logs here")
    parser.add_argument("--actions", type=int, help="override the chain size of convert")
    parser.add_argument("--procs", type=int, help="override the processes of the ring")
    parser.add_argument("--rounds", type=int, help="override the rounds of the ring")
    parser.add_argument("--scaling", metavar="P1,P2,...", help="override the process counts of scaling")
    parser.add_argument("--sweep-procs", metavar="P1,P2,...", help="override the process counts of sweep")
    parser.add_argument("--peer-ring", metavar="P,R", help="processes and rounds of the peer ring")
    parser.add_argument(
        "--peer-allreduce", metavar="P,R", help="processes and rounds of the peer all-reduce loop"
    )
    parser.add_argument("--peer-lapw0", type=int, metavar="P", help="processes of the peer LAPW0 run")
    return parser


def sizes_from(args: argparse.Namespace) -> Sizes:
    base = QUICK if args.quick else FULL
    return Sizes(
        chain_actions=args.actions or base.chain_actions,
        ring_procs=args.procs or base.ring_procs,
        ring_rounds=args.rounds or base.ring_rounds,
        scaling_procs=_counts(args.scaling) if args.scaling else base.scaling_procs,
        sweep_procs=_counts(args.sweep_procs) if args.sweep_procs else base.sweep_procs,
        peer_ring=_pair(args.peer_ring, base.peer_ring),
        peer_allreduce=_pair(args.peer_allreduce, base.peer_allreduce),
        peer_lapw0=args.peer_lapw0 or base.peer_lapw0,
    )


BENCHES = {
    "convert": bench_convert,
    "ring": bench_ring,
    "startup": bench_startup,
    "scaling": bench_scaling,
    "sweep": bench_sweep,
    "peer": bench_peer,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    sizes = sizes_from(args)
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = set(parts) - set(PARTS)
    if unknown:
        print(
            f"error: unknown part(s) {', '.join(sorted(unknown))}; known: {', '.join(PARTS)}", file=sys.stderr
        )
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
        for part in PARTS:
            if part in parts:
                report[part] = BENCHES[part](work, sizes, args.repeat)
        if args.profile:
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
