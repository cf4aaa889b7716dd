"""Whole commands against whole floors, over models of several shapes and sizes.

Every figure of the main table is a whole child process on both sides (interpreter start,
imports, work, exit), measured in CPU time of that child (``os.wait4`` through ``peakmem.py``),
the commands of one row run interleaved, ``-k`` rounds; a ratio is the median of the per-round
ratios with their range.  Beside each ratio stands the in-process figure, labelled as such: the
same work without interpreter start and imports, both sides in one process, best-of CPU seconds
(``inprocess.py``: ``uml2perf.api.convert`` against the parse; ``uml2perf.api.predict`` of the cached
module, results and findings included, against the floor's ``run``).

Rows:

``convert N``
    ``uml2perf convert`` of an N-action chain (2,000, 20,000, 200,000; templates compiled once,
    as uml2perf's modules are) against a hardened ``lxml`` parse of the same bytes.  Target 2.5×.
``convert sample``
    ``uml2perf convert samples/prophet.uml`` (the 145-line sample with decisions and loops),
    CPU seconds, beside ``python -c "import simpy"``.  Target 0.15 s.
``ring S``
    ``uml2perf run`` of the 64-process × 2,000-round ring (cached module, 16 nodes × 4 cores) with
    S-byte messages against ``lean_simpy_ring.py`` (eager, S up to the 64 KiB eager limit) or
    ``lean_simpy_rendezvous.py`` (above it): plain SimPy with exactly the events uml2perf spends;
    both must predict the same time.  Target 1.3×.  Then the 1 KiB ring whose sends and receives
    each spend 20 µs of local CPU (``cost`` tags; the lean ring's ``--local``).  Target 1.5×.
``allreduce``
    ``uml2perf run`` of 64 processes × 2,000 rounds of compute and an 8-byte all-reduce against
    ``lean_simpy_allreduce.py`` (each rank's finish offset computed once with uml2perf's
    collective model and passed in a file).  Target 1.5×.
``threads``
    ``uml2perf run`` of 16 processes (one per node of 4 cores) × 2,000 parallel regions of 4
    threads computing 1 ms each against ``lean_simpy_threads.py``.  Target 1.5×.
``lapw0 32768``
    ``uml2perf run samples/lapw0.uml --machine cluster-modern --procs 32768 --set NAT=32768``,
    whole-process seconds.  Target under 5 s.

``--against DIR`` adds, to the convert rows and the sample, the same ``uml2perf convert`` run with
another copy of the ``uml2perf`` package first on the path (``DIR/uml2perf``; the runtime and the
templates stay this checkout's), interleaved with the two commands of the row, and prints the new
command's CPU as a ratio of the other's: how a change moved convert, measured in one run.  When
``DIR`` also holds ``uml2perf_runtime`` and ``uml2perf_templates`` (another version's ``runtime``
and ``templates`` folders under those names), the ring, all-reduce and threads rows run that
copy's ``uml2perf run`` too (its own module cache), and say whether it predicted exactly the same.

Usage::

    python benchmarks/shapes.py -k 5                   # full sizes (about 10 minutes here)
    git archive REV uml2perf | tar -x -C /tmp/old       # then, with the old code beside:
    python benchmarks/shapes.py --only convert,sample --against /tmp/old
    git archive REV uml2perf runtime templates | tar -x -C /tmp/old   # a whole other version:
    mv /tmp/old/runtime /tmp/old/uml2perf_runtime; mv /tmp/old/templates /tmp/old/uml2perf_templates
    python benchmarks/shapes.py --only ring,allreduce,threads --against /tmp/old
    python benchmarks/shapes.py --quick -k 2           # tiny sizes, a smoke run
    python benchmarks/shapes.py --only ring --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from run import (  # noqa: E402
    CORES_PER_NODE,
    INTER,
    INTRA,
    REPO,
    RING_WORK,
    Measurement,
    compile_packages,
    interleave,
    machine_info,
    nodes_for,
    private_cache,
    ratios,
    run_command,
    same_time,
    uml2perf_command,
    warm,
    write_machine,
)
from synthetic import (  # noqa: E402
    allreduce_model,
    chain_model,
    rendezvous_ring_model,
    ring_model,
    threads_model,
    write_model,
)

CONVERT_TARGET = 2.5
SAMPLE_TARGET_S = 0.15
RING_TARGET = 1.3
COLLECTIVE_TARGET = 1.5
#: Local CPU seconds of each send and receive in the ring with local costs.
LOCAL_COST = 2e-5
LAPW0_TARGET_S = 5.0
#: The benchmark machine's eager limit (the runtime's default): larger messages use rendezvous.
EAGER_LIMIT = 65536
PARTS = ("convert", "sample", "ring", "allreduce", "threads", "lapw0")
#: Threads of each parallel region (one process per node of 4 cores: no thread waits for a core).
THREADS = 4
#: Bytes of each all-reduce (recursive doubling on the benchmark machine).
ALLREDUCE_SIZE = 8


def _lxml_floor(model: Path) -> Measurement:
    code = (
        "import sys\nfrom lxml import etree\n"
        "etree.fromstring(open(sys.argv[1],'rb').read(), etree.XMLParser(resolve_entities=False))"
    )
    return Measurement("lxml parse", [sys.executable, "-c", code, str(model)])


def _templates_env(work: Path) -> dict[str, str]:
    """A cache folder holding only uml2perf's compiled templates (a convert never caches its module)."""
    folder = work / "template-cache"
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    env = {"UML2PERF_CACHE_DIR": str(folder), "XDG_CACHE_HOME": str(folder)}
    warm_up = [
        *uml2perf_command(),
        "convert",
        str(REPO / "samples" / "kernels.uml"),
        "-o",
        str(work / "w.py"),
    ]
    subprocess.run(warm_up, env={**os.environ, **env}, capture_output=True, check=False)
    return env


def _in_process(model: Path, out: Path, rounds: int, env: dict[str, str]) -> dict[str, Any] | None:
    """Best-of CPU seconds of convert and of the parse inside one process (``inprocess.py``)."""
    proc = subprocess.run(
        [sys.executable, str(HERE / "inprocess.py"), "convert", str(model), str(out), "-k", str(rounds)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return None
    data = json.loads(proc.stdout)
    parse, convert = min(data["parse"]), min(data["convert"])
    return {"parse": parse, "convert": convert, "ratio": convert / parse if parse > 0 else None}


def _in_process_run(
    work: Path, command: list[str], floor: str, args: list[Any], kwargs: dict[str, Any], rounds: int
) -> dict[str, Any] | None:
    """Best-of CPU seconds of ``predict`` and of the floor's ``run`` inside one process.

    ``command`` is the whole-process ``uml2perf run`` command: its model and options are reused.
    """
    model = command[command.index("run") + 1]
    options = []
    for flag in ("--machine", "--procs", "--nodes", "--placement"):
        if flag in command:
            options += [flag, command[command.index(flag) + 1]]
    proc = subprocess.run(
        [
            sys.executable,
            str(HERE / "inprocess.py"),
            "run",
            model,
            *options,
            *("--floor", floor, "--floor-args", json.dumps(args), "--floor-kwargs", json.dumps(kwargs)),
            *("-k", str(rounds)),
        ],
        env={**os.environ, **private_cache(work)},
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return None
    data = json.loads(proc.stdout)
    tool, base = min(data["uml2perf"]), min(data["floor"])
    return {"uml2perf": tool, "floor": base, "ratio": tool / base if base > 0 else None}


def _other_copy(tool: Measurement, other: Path | None) -> Measurement | None:
    """The command of ``tool`` with the copy of uml2perf in ``other`` first on the path (``--against``)."""
    if other is None:
        return None
    command = [*tool.command]
    command[-1] += ".other"  # its own output file: the two outputs can be compared afterwards
    return Measurement(f"{tool.label}, {other}", command, env={**tool.env, "PYTHONPATH": str(other)})


def _against(tool: Measurement, other: Measurement | None) -> dict[str, Any] | None:
    """This checkout's command against the other copy's, CPU of the same rounds, and whether both
    wrote the same module."""
    if other is None:
        return None
    out = Path(tool.command[-1])
    same = (
        out.exists()
        and Path(other.command[-1]).exists()
        and out.read_bytes() == Path(other.command[-1]).read_bytes()
    )
    return {"other": other.summary(), "ratio": ratios(tool, other), "same_output": same}


def bench_convert(
    work: Path, actions: list[int], repeat: int, other: Path | None = None
) -> list[dict[str, Any]]:
    env = _templates_env(work)
    rows = []
    for n in actions:
        model = write_model(work / f"chain{n}.uml", chain_model(n))
        out = work / f"chain{n}.py"
        tool = Measurement(
            f"uml2perf convert ({n:,} actions)",
            [*uml2perf_command(), "convert", str(model), "-o", str(out)],
            env=env,
        )
        floor = _lxml_floor(model)
        before = _other_copy(tool, other)
        interleave([tool, floor, *([before] if before else [])], repeat, work)
        ratio = ratios(tool, floor)
        rows.append(
            {
                "label": f"convert {n:,}-action chain ({model.stat().st_size / 2**20:.1f} MiB) vs lxml parse",
                "uml2perf": tool.summary(),
                "floor": floor.summary(),
                "ratio": ratio,
                "in_process": _in_process(model, out, max(3, repeat), env),
                "target": CONVERT_TARGET,
                "met": ratio is not None and ratio["cpu"] <= CONVERT_TARGET,
                "against": _against(tool, before),
            }
        )
    return rows


def bench_sample(work: Path, repeat: int, other: Path | None = None) -> dict[str, Any]:
    env = _templates_env(work)
    model = REPO / "samples" / "prophet.uml"
    out = work / "prophet.py"
    tool = Measurement(
        "uml2perf convert samples/prophet.uml",
        [*uml2perf_command(), "convert", str(model), "-o", str(out)],
        env=env,
    )
    floor = Measurement('python -c "import simpy"', [sys.executable, "-c", "import simpy"])
    before = _other_copy(tool, other)
    interleave([tool, floor, *([before] if before else [])], repeat, work)
    return {
        "label": "convert samples/prophet.uml, CPU seconds",
        "uml2perf": tool.summary(),
        "floor": floor.summary(),
        "ratio": ratios(tool, floor),
        "in_process": _in_process(model, out, max(3, repeat), env),
        "target": SAMPLE_TARGET_S,
        "met": tool.ok and tool.cpu <= SAMPLE_TARGET_S,
        "against": _against(tool, before),
    }


def _ring_floor(script: str, procs: int, rounds: int, size: int) -> list[str]:
    return [
        sys.executable,
        str(HERE / script),
        *("--procs", str(procs), "--rounds", str(rounds), "--work", repr(RING_WORK), "--size", str(size)),
        *("--ppn", str(CORES_PER_NODE), "--intra", repr(INTRA[0]), repr(INTRA[1])),
        *("--inter", repr(INTER[0]), repr(INTER[1])),
    ]


def _other_run(work: Path, tool: Measurement, other: Path | None) -> Measurement | None:
    """The ``uml2perf run`` of ``tool`` with the copy in ``other`` first on the path (its
    ``uml2perf``, ``uml2perf_runtime`` and ``uml2perf_templates``), with a module cache of its own;
    None without a copy of the runtime there."""
    if other is None or not (other / "uml2perf_runtime" / "__init__.py").is_file():
        return None
    folder = work / "cache-other"
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    env = {
        **tool.env,
        "PYTHONPATH": str(other),
        "UML2PERF_CACHE_DIR": str(folder),
        "XDG_CACHE_HOME": str(folder),
    }
    return Measurement(f"{tool.label}, {other}", [*tool.command], env=env)


def _same_prediction(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Both ``run --json`` outputs say the same, to the bit (the wall time apart)."""
    if not a or not b:
        return False
    return {k: v for k, v in a.items() if k != "wall_time"} == {
        k: v for k, v in b.items() if k != "wall_time"
    }


def _simulated_row(
    work: Path,
    tool: Measurement,
    floor: Measurement,
    repeat: int,
    floor_run: tuple[str, list[Any], dict[str, Any]],
    label: str,
    target: float,
    other: Path | None = None,
) -> dict[str, Any]:
    """One ``run`` row: the command and its floor interleaved, their ratio, the in-process figure
    (``floor_run``: the floor module, its ``run()`` arguments and keywords) and the checks that
    both simulated the same time with the same events.  With ``other`` (``--against``), the same
    command with that copy of uml2perf runs interleaved too: this checkout's CPU as a ratio of
    the copy's, and whether both predicted exactly the same."""
    warm(tool, work)  # one untimed run fills the module cache
    before = _other_run(work, tool, other)
    if before is not None:
        warm(before, work)
    interleave([tool, floor, *([before] if before else [])], repeat, work)
    t, f = tool.output(), floor.output()
    ratio = ratios(tool, floor)
    module, args, kwargs = floor_run
    inner = _in_process_run(work, tool.command, module, args, kwargs, max(3, repeat))
    against = None
    if before is not None:
        against = {
            "other": before.summary(),
            "ratio": ratios(tool, before),
            "same_output": _same_prediction(t, before.output()),
        }
    return {
        "against": against,
        "label": label,
        "uml2perf": tool.summary(),
        "floor": floor.summary(),
        "ratio": ratio,
        "in_process": inner,
        "simulated": {"uml2perf": t.get("time"), "floor": f.get("time")},
        "events": {"uml2perf": t.get("events"), "floor": f.get("events")},
        "same_time": same_time(t.get("time"), f.get("time")),
        "target": target,
        "met": ratio is not None and ratio["cpu"] <= target,
    }


def bench_ring(
    work: Path, procs: int, rounds: int, sizes: list[int], repeat: int, other: Path | None = None
) -> list[dict[str, Any]]:
    """The ring at each message size (eager up to the limit, rendezvous above), then the 1 KiB
    ring whose sends and receives have a local cost of :data:`LOCAL_COST` seconds."""
    machine = write_machine(work / "ring_machine.toml", nodes_for(procs))
    cases = [(size, 0.0) for size in sizes] + [(1024, LOCAL_COST)]
    rows = []
    for size, local in cases:
        eager = size <= EAGER_LIMIT
        protocol = "eager" if eager else "rendezvous"
        if local:
            model = write_model(
                work / "ring_local.uml", ring_model(rounds, work=RING_WORK, size=size, local=local)
            )
        else:
            build = ring_model if eager else rendezvous_ring_model
            model = write_model(work / f"ring_{size}.uml", build(rounds, work=RING_WORK, size=size))
        tool = Measurement(f"uml2perf run (ring, {size:,} B)", run_command(model, machine, procs))
        tool.env = private_cache(work)
        script = "lean_simpy_ring.py" if eager else "lean_simpy_rendezvous.py"
        command = _ring_floor(script, procs, rounds, size) + (["--local", repr(local)] if local else [])
        floor = Measurement(f"lean SimPy ring, {protocol}", command)
        floor_args = [procs, rounds, RING_WORK, size, CORES_PER_NODE, list(INTRA), list(INTER)]
        costs = f", local cost {local * 1e6:g} µs per send and receive" if local else ""
        target = COLLECTIVE_TARGET if local else RING_TARGET  # local costs: the 1.5× of "other models"
        row = _simulated_row(
            work,
            tool,
            floor,
            repeat,
            (script.removesuffix(".py"), floor_args, {"local": local} if local else {}),
            f"run {procs}-process ring × {rounds:,}, {size:,} B {protocol}{costs} vs lean SimPy",
            target,
            other,
        )
        rows.append({**row, "size": size, "protocol": protocol, "local": local})
    return rows


def _allreduce_offsets(machine: Path, procs: int, size: float, out: Path) -> Path:
    """Each rank's finish offset of one all-reduce, from uml2perf's collective model (computed here,
    once, so the floor's process runs only its event loop)."""
    from uml2perf_runtime.platform.machine import Machine
    from uml2perf_runtime.platform.network import CollectiveModel

    loaded = Machine.load(str(machine))
    model = CollectiveModel.for_machine(loaded, [pid // CORES_PER_NODE for pid in range(procs)])
    out.write_text(json.dumps(model.offsets("allreduce", 0, size)), encoding="utf-8")
    return out


def bench_allreduce(
    work: Path, procs: int, rounds: int, repeat: int, other: Path | None = None
) -> dict[str, Any]:
    machine = write_machine(work / "ring_machine.toml", nodes_for(procs))
    model = write_model(work / "allreduce.uml", allreduce_model(rounds, work=RING_WORK, size=ALLREDUCE_SIZE))
    offsets = _allreduce_offsets(machine, procs, ALLREDUCE_SIZE, work / "allreduce_offsets.json")
    tool = Measurement("uml2perf run (all-reduce loop)", run_command(model, machine, procs))
    tool.env = private_cache(work)
    floor = Measurement(
        "lean SimPy all-reduce loop",
        [
            sys.executable,
            str(HERE / "lean_simpy_allreduce.py"),
            *("--procs", str(procs), "--rounds", str(rounds), "--work", repr(RING_WORK)),
            *("--offsets", str(offsets)),
        ],
    )
    offsets_list = json.loads(offsets.read_text(encoding="utf-8"))
    return _simulated_row(
        work,
        tool,
        floor,
        repeat,
        ("lean_simpy_allreduce", [procs, rounds, RING_WORK, offsets_list], {}),
        f"run {procs}-process compute + {ALLREDUCE_SIZE} B all-reduce × {rounds:,} vs lean SimPy",
        COLLECTIVE_TARGET,
        other,
    )


def bench_threads(
    work: Path, procs: int, rounds: int, repeat: int, other: Path | None = None
) -> dict[str, Any]:
    """Parallel regions of :data:`THREADS` threads, one process per node, against the lean floor."""
    nodes = max(1, procs)
    machine = write_machine(work / "threads_machine.toml", nodes)
    model = write_model(work / "threads.uml", threads_model(rounds, threads=THREADS, work=RING_WORK))
    command = [
        *uml2perf_command(),
        "run",
        str(model),
        *("--machine", str(machine), "--procs", str(procs), "--nodes", str(nodes)),
        *("--placement", "round_robin", "--json"),
    ]
    tool = Measurement("uml2perf run (parallel regions)", command, env=private_cache(work))
    floor = Measurement(
        "lean SimPy parallel regions",
        [
            sys.executable,
            str(HERE / "lean_simpy_threads.py"),
            *("--procs", str(procs), "--rounds", str(rounds), "--threads", str(THREADS)),
            *("--work", repr(RING_WORK)),
        ],
    )
    return _simulated_row(
        work,
        tool,
        floor,
        repeat,
        ("lean_simpy_threads", [procs, rounds, THREADS, RING_WORK], {}),
        f"run {procs} processes × {rounds:,} parallel regions of {THREADS} threads vs lean SimPy",
        COLLECTIVE_TARGET,
        other,
    )


def bench_lapw0(work: Path, procs: int, repeat: int) -> dict[str, Any]:
    command = [
        *uml2perf_command(),
        "run",
        str(REPO / "samples" / "lapw0.uml"),
        *("--machine", "cluster-modern", "--procs", str(procs), "--set", f"NAT={procs}"),
    ]
    tool = Measurement(f"uml2perf run samples/lapw0.uml --procs {procs}", command, env=private_cache(work))
    warm(tool, work)
    interleave([tool], repeat, work)
    return {
        "label": f"run samples/lapw0.uml, cluster-modern, {procs:,} processes, whole process",
        "uml2perf": tool.summary(),
        "target": LAPW0_TARGET_S,
        "met": tool.ok and tool.wall < LAPW0_TARGET_S,
    }


def _x(ratio: dict[str, Any] | None) -> str:
    if not ratio:
        return "n/a"
    low, high = ratio["cpu_spread"]
    return f"{ratio['cpu']:.2f}× ({low:.2f}–{high:.2f})"


def _s(m: dict[str, Any], key: str = "cpu") -> str:
    spread = m.get(f"{key}_spread")
    if not spread:
        return "failed"
    return f"{m[key]:.3f} ({spread[0]:.3f}–{spread[1]:.3f})"


def _sample_inner(inner: dict[str, Any] | None) -> str:
    return f"{inner['convert']:.3f} s convert, {inner['parse']:.4f} s parse" if inner else "n/a"


def _ring_inner(inner: dict[str, Any] | None) -> str:
    if not inner:
        return "n/a"
    return f"{inner['ratio']:.2f}× ({inner['uml2perf']:.3f} s / {inner['floor']:.3f} s)"


def render(report: dict[str, Any]) -> str:
    """The Markdown tables: whole processes (CPU) beside the in-process figures."""
    info = report["machine"]
    lines = [
        f"Machine: {info['cpu']}, {info['cores']} cores; Python {info['python']}; "
        f"{report['repeat']} interleaved rounds, median (range){' (quick sizes)' if report['quick'] else ''}",
        "",
        "| row | uml2perf CPU [s] | floor CPU [s] | whole process, CPU ratio | in-process ratio "
        "| target | status |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in report.get("convert", []):
        inner = row["in_process"]
        lines.append(
            f"| {row['label']} | {_s(row['uml2perf'])} | {_s(row['floor'])} | {_x(row['ratio'])} "
            f"| {inner['ratio']:.2f}× ({inner['convert']:.3f} s / {inner['parse']:.3f} s) "
            if inner
            else "| n/a "
        )
        lines[-1] += f"| ≤ {row['target']}× | {'met' if row['met'] else 'missed'} |"
    if "sample" in report:
        row = report["sample"]
        inner = row["in_process"]
        lines.append(
            f"| {row['label']} (floor: `import simpy`) | {_s(row['uml2perf'])} | {_s(row['floor'])} "
            f"| {_x(row['ratio'])} | {_sample_inner(inner)} "
            f"| ≤ {row['target']} s | {'met' if row['met'] else 'missed'} |"
        )
    simulated = [*report.get("ring", []), *(report[p] for p in ("allreduce", "threads") if p in report)]
    for row in simulated:
        inner = row["in_process"]
        same = "same time" if row["same_time"] else "TIMES DIFFER"
        lines.append(
            f"| {row['label']} ({same}) | {_s(row['uml2perf'])} | {_s(row['floor'])} | {_x(row['ratio'])} "
            f"| {_ring_inner(inner)} "
            f"| ≤ {row['target']}× | {'met' if row['met'] else 'missed'} |"
        )
    compared = [r for r in [*report.get("convert", []), report.get("sample")] if r and r.get("against")]
    if compared:
        lines += [
            "",
            f"Against the copy of uml2perf in {report['against']} (same rounds, CPU of whole processes):",
            "",
        ]
        lines += ["| row | this checkout [s] | the copy [s] | ratio | same module |", "|---|---|---|---|---|"]
        for row in compared:
            against = row["against"]
            lines.append(
                f"| {row['label']} | {_s(row['uml2perf'])} | {_s(against['other'])} | {_x(against['ratio'])} "
                f"| {'yes' if against['same_output'] else 'NO'} |"
            )
    simulated_against = [row for row in simulated if row.get("against")]
    if simulated_against:
        lines += [
            "",
            f"`run` against the copy of uml2perf in {report['against']} "
            "(same rounds, CPU of whole processes):",
            "",
            "| row | this checkout [s] | the copy [s] | ratio | same prediction |",
            "|---|---|---|---|---|",
        ]
        for row in simulated_against:
            against = row["against"]
            lines.append(
                f"| {row['label']} | {_s(row['uml2perf'])} | {_s(against['other'])} | {_x(against['ratio'])} "
                f"| {'yes' if against['same_output'] else 'NO'} |"
            )
    if "lapw0" in report:
        row = report["lapw0"]
        lines.append(
            f"| {row['label']} | {_s(row['uml2perf'])} (wall {_s(row['uml2perf'], 'wall')}) | | | "
            f"| < {row['target']} s wall | {'met' if row['met'] else 'missed'} |"
        )
    lines.append("")
    return "\n".join(lines)


def _counts(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("-k", "--repeat", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    parser.add_argument("--only", default=",".join(PARTS), help=f"some of {','.join(PARTS)}")
    parser.add_argument("--actions", help="chain sizes of convert, comma-separated")
    parser.add_argument("--sizes", help="message sizes of the ring in bytes, comma-separated")
    parser.add_argument("--json", help="also write the raw numbers here")
    parser.add_argument("--workdir", help="keep the models and caches here")
    parser.add_argument(
        "--against",
        type=Path,
        help="a folder holding another copy of the uml2perf package (and of uml2perf_runtime and "
        "uml2perf_templates for the run rows): compared with this checkout",
    )
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = set(parts) - set(PARTS)
    if unknown:
        print(
            f"error: unknown part(s) {', '.join(sorted(unknown))}; known: {', '.join(PARTS)}", file=sys.stderr
        )
        return 2
    actions = _counts(args.actions) if args.actions else ([40, 400] if args.quick else [2000, 20000, 200000])
    sizes = _counts(args.sizes) if args.sizes else [1024, 8192, 32768, 131072]
    procs, rounds = (8, 10) if args.quick else (64, 2000)
    lapw0_procs = 64 if args.quick else 32768
    work = Path(args.workdir or tempfile.mkdtemp(prefix="uml2perf-shapes-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    compile_packages()
    other = args.against.resolve() if args.against else None
    if other is not None:
        if not (other / "uml2perf" / "__init__.py").is_file():
            print(
                f"error: {other} holds no uml2perf package (expected {other / 'uml2perf'})", file=sys.stderr
            )
            return 2
        import compileall

        for package in ("uml2perf", "uml2perf_runtime", "uml2perf_templates"):  # byte-compiled, as here
            if (other / package).is_dir():
                compileall.compile_dir(str(other / package), quiet=1)
    report: dict[str, Any] = {"machine": machine_info(), "quick": args.quick, "repeat": args.repeat}
    if other is not None:
        report["against"] = str(other)
    if "convert" in parts:
        report["convert"] = bench_convert(work, actions, args.repeat, other)
    if "sample" in parts:
        report["sample"] = bench_sample(work, args.repeat, other)
    if "ring" in parts:
        report["ring"] = bench_ring(work, procs, rounds, sizes, args.repeat, other)
    if "allreduce" in parts:
        report["allreduce"] = bench_allreduce(work, procs, rounds, args.repeat, other)
    if "threads" in parts:
        report["threads"] = bench_threads(work, 4 if args.quick else 16, rounds, args.repeat, other)
    if "lapw0" in parts:
        report["lapw0"] = bench_lapw0(work, lapw0_procs, args.repeat)
    sys.stdout.write(render(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    rows = [*report.get("convert", []), *report.get("ring", [])]
    rows += [report[p] for p in ("sample", "allreduce", "threads", "lapw0") if p in report]
    failed = any(row["uml2perf"]["returncode"] != 0 for row in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
