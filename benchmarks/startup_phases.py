"""Where a cached ``uml2perf run`` spends its CPU time before (and after) its first simulated event.

Each round is a fresh process that runs the command as the console script does (``main()`` of
``uml2perf.cli``, the collector paused, the generated module from the cache) and reads its own
CPU clock (``time.process_time``, which counts from the start of the process) at the start and
end of each phase; a phase's time is the median over the rounds of the difference between its
marks.  The marks are taken by wrapping a few functions as their modules are imported (an import
hook that does nothing for any other module), so every import happens where the command makes
it, and the phase that makes it pays for it::

    python benchmarks/startup_phases.py                       # a 64-process ring × 2 rounds, 21 rounds
    python benchmarks/startup_phases.py -k 31 --against /tmp/old   # and the same with another copy
    python benchmarks/startup_phases.py -- run MODEL --machine M  # any command line of run

``--against DIR`` runs the same command with the copy of uml2perf in ``DIR`` first on the path
(``uml2perf``, ``uml2perf_runtime``, ``uml2perf_templates``, as ``shapes.py --against`` takes it,
with a cache folder of its own), interleaved round by round, and prints both columns.  The
figures include the wrappers' own small cost and, like every CPU figure on a shared machine, move
with its load: compare columns measured in the same run.
"""

from __future__ import annotations

import os
import sys
import time

#: The child's first mark, read before anything else is imported: the imports of the parent's
#: part (argparse, json...) happen only in the parent, so the command imports all it imports.
STARTED = time.process_time()
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

#: The phases, in order: the name of each mark and what the time up to it holds.
PHASES = (
    ("start", "interpreter start and site (the venv's path hooks)"),
    ("harness", "this script's import hook (not part of the command)"),
    ("cli", "import uml2perf.cli (argparse, errors, the command's module)"),
    ("parser", "build the argument parser"),
    ("parsed", "parse the command line, limits, options"),
    ("imports", "predict: import the runtime (SimPy, engine, platform)"),
    ("spec", "the generated module: cache key, entry, code run"),
    ("machine", "the machine: its file read and checked"),
    ("first_event", "build the simulation (processes placed, contexts made)"),
    ("loop", "the event loop"),
    ("end", "results, findings, output"),
)


def _child(argv: list[str]) -> None:
    """One round: run ``uml2perf`` with ``argv`` and print the CPU clock at each mark as JSON."""
    marks: dict[str, float] = {"start": STARTED}

    def mark(name: str) -> None:
        marks.setdefault(name, time.process_time())

    import importlib.machinery  # already loaded by the interpreter's own import system
    from types import ModuleType

    def wrap_cli(cli: ModuleType) -> None:
        build, run = cli.build_parser, cli._run

        def build_parser(*args: Any, **kwargs: Any) -> Any:
            mark("cli")  # main() starts by building the parser
            parser = build(*args, **kwargs)
            mark("parser")
            return parser

        def _run(args: Any) -> Any:
            mark("parsed")
            return run(args)

        cli.build_parser, cli._run = build_parser, _run

    def wrap_api(api: ModuleType) -> None:
        load_spec = api.load_spec

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            mark("imports")
            spec = load_spec(*args, **kwargs)
            mark("spec")
            return spec

        api.load_spec = wrapped

    def wrap_machine(module: ModuleType) -> None:
        load = module.Machine.load.__func__

        def wrapped(cls: Any, *args: Any, **kwargs: Any) -> Any:
            machine = load(cls, *args, **kwargs)
            mark("machine")
            return machine

        module.Machine.load = classmethod(wrapped)

    def wrap_simulation(module: ModuleType) -> None:
        loop = module.Simulation._loop

        def wrapped(self: Any) -> Any:
            mark("machine")  # a run without a machine file has no mark of its own
            mark("first_event")
            stopped = loop(self)
            mark("loop")
            return stopped

        module.Simulation._loop = wrapped

    wrappers = {
        "uml2perf.cli": wrap_cli,
        "uml2perf.api": wrap_api,
        "uml2perf_runtime.platform.machine": wrap_machine,
        "uml2perf_runtime.engine.simulation": wrap_simulation,
    }

    class Hook:  # a finder of sys.meta_path (importlib.abc is not imported: it imports more)
        def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
            wrap = wrappers.get(name)
            if wrap is None:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path, target)
            if spec is None:  # an editable install's own finder: let it find the module
                for finder in sys.meta_path:
                    if finder is not self and hasattr(finder, "find_spec"):
                        spec = finder.find_spec(name, path, target)
                        if spec is not None:
                            break
            if spec is None or spec.loader is None:
                return None
            loader = spec.loader
            execute = loader.exec_module

            def exec_module(module: ModuleType) -> None:
                execute(module)
                wrap(module)

            loader.exec_module = exec_module  # type: ignore[method-assign]
            return spec

    sys.meta_path.insert(0, Hook())
    mark("harness")
    sys.argv = ["uml2perf", *argv]
    devnull = open(os.devnull, "w")  # noqa: SIM115 - kept open until the process ends
    real = sys.stdout
    sys.stdout = devnull
    try:
        from uml2perf.cli import main

        code = main()
    finally:
        sys.stdout = real
    mark("end")
    import json

    print(json.dumps({"code": code, "marks": marks}))


def _phases(marks: dict[str, float]) -> dict[str, float]:
    """Seconds of each phase (from the mark before it); a phase without a mark is 0."""
    out: dict[str, float] = {}
    last = 0.0
    for name, _ in PHASES:
        at = marks.get(name)
        out[name] = 0.0 if at is None else at - last
        last = at if at is not None else last
    return out


def _round(argv: list[str], env: dict[str, str]) -> dict[str, float]:
    import json
    import subprocess

    done = subprocess.run(
        [sys.executable, __file__, "--child", *argv], env=env, capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        raise SystemExit(f"the command failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return _phases(result["marks"])


def _default_command(work: Path) -> list[str]:
    """A 64-process ring of 2 rounds on the benchmark machine file (16 nodes of 4 cores)."""
    from pathlib import Path

    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    from run import RING_SIZE, RING_WORK, nodes_for, write_machine
    from synthetic import ring_model, write_model

    model = write_model(work / "ring2.uml", ring_model(2, work=RING_WORK, size=RING_SIZE))
    machine = write_machine(work / "machine.toml", nodes_for(64))
    return ["run", str(model), "--machine", str(machine), "--procs", "64", "--nodes", str(nodes_for(64))]


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json
    import statistics
    import tempfile
    from pathlib import Path

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", "--rounds", type=int, default=21, help="fresh processes per column")
    parser.add_argument("--against", type=Path, help="also the copy of uml2perf in this folder")
    parser.add_argument("--json", type=Path, help="also write the medians as JSON")
    parser.add_argument("command", nargs="*", help="the command line after 'uml2perf' (after --)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        command = args.command or _default_command(work)
        columns = {"this checkout": {**os.environ, "UML2PERF_CACHE_DIR": str(work / "cache")}}
        if args.against is not None:
            columns[str(args.against)] = {
                **os.environ,
                "UML2PERF_CACHE_DIR": str(work / "cache-other"),
                "PYTHONPATH": str(args.against.resolve()),
            }
        for env in columns.values():
            Path(env["UML2PERF_CACHE_DIR"]).mkdir(mode=0o700, exist_ok=True)
            _round(command, env)  # fills the cache: the rounds below are repeated runs
        rounds: dict[str, list[dict[str, float]]] = {name: [] for name in columns}
        for _ in range(args.rounds):
            for name, env in columns.items():
                rounds[name].append(_round(command, env))
    medians = {
        name: {phase: statistics.median(r[phase] for r in rows) for phase, _ in PHASES}
        for name, rows in rounds.items()
    }
    totals = {name: statistics.median(sum(r.values()) for r in rows) for name, rows in rounds.items()}
    to_first = {
        name: statistics.median(
            sum(v for phase, v in r.items() if phase not in ("harness", "loop", "end")) for r in rows
        )
        for name, rows in rounds.items()
    }
    names = list(columns)
    print(f"uml2perf {' '.join(command)}: CPU milliseconds, median of {args.rounds} fresh processes")
    print()
    print("| phase | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for phase, text in PHASES:
        print(f"| {text} | " + " | ".join(f"{1000 * medians[n][phase]:.2f}" for n in names) + " |")
    print(
        "| start to first event (without the hook) | "
        + " | ".join(f"{1000 * to_first[n]:.1f}" for n in names)
        + " |"
    )
    print("| whole process | " + " | ".join(f"{1000 * totals[n]:.1f}" for n in names) + " |")
    if args.json:
        args.json.write_text(json.dumps({"command": command, "medians": medians, "rounds": rounds}, indent=1))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2:])
    else:
        raise SystemExit(main())
