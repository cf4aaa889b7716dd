"""In-process figures: the work of a command after interpreter start and imports, beside its floor's.

``python benchmarks/inprocess.py convert MODEL OUT [-k N]`` imports uml2perf and lxml first, then
times, ``N`` times in turn, a hardened ``lxml.etree.fromstring`` of the model's bytes and a
``uml2perf.api.convert`` of the model to ``OUT`` (reading the file included).  It prints
``{"parse": [...], "convert": [...]}``.

``python benchmarks/inprocess.py run MODEL --floor SCRIPT --floor-args JSON [options] [-k N]``
times ``uml2perf.api.predict`` of the model (its generated module cached) and the floor's
``run(*args)`` (``SCRIPT`` is a floor of this folder, without ``.py``), ``N`` times in turn.  It
prints ``{"uml2perf": [...], "floor": [...]}``.

Every figure is CPU seconds of this process: what a library user pays per call, without the
start-up a whole command adds (``shapes.py`` shows both).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _cpu(call: Any) -> float:
    gc.collect()
    start = time.process_time()
    call()
    return time.process_time() - start


def convert_figures(model: Path, output: str, rounds: int) -> dict[str, list[float]]:
    from lxml import etree

    from uml2perf.api import convert

    figures: dict[str, list[float]] = {"parse": [], "convert": []}
    parser = etree.XMLParser(resolve_entities=False)
    for _ in range(rounds):
        figures["parse"].append(_cpu(lambda: etree.fromstring(model.read_bytes(), parser)))
        figures["convert"].append(_cpu(lambda: convert(model, output)))
    return figures


def run_figures(args: argparse.Namespace) -> dict[str, list[float]]:
    import importlib

    from uml2perf.api import predict

    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    floor = importlib.import_module(args.floor)
    positional = json.loads(args.floor_args)
    keywords = json.loads(args.floor_kwargs)
    options = {"machine": args.machine, "procs": args.procs, "nodes": args.nodes}
    if args.placement:
        options["placement"] = args.placement
    predict(args.model, **options)  # fills the module cache, as the whole-process runs are
    figures: dict[str, list[float]] = {"uml2perf": [], "floor": []}
    for _ in range(args.k):
        figures["uml2perf"].append(_cpu(lambda: predict(args.model, **options)))
        figures["floor"].append(_cpu(lambda: floor.run(*positional, **keywords)))
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    conv = commands.add_parser("convert")
    conv.add_argument("model")
    conv.add_argument("output")
    conv.add_argument("-k", type=int, default=3, help="rounds (default 3)")
    run = commands.add_parser("run")
    run.add_argument("model")
    run.add_argument("--machine", required=True)
    run.add_argument("--procs", type=int, required=True)
    run.add_argument("--nodes", type=int)
    run.add_argument("--placement")
    run.add_argument("--floor", required=True, help="floor module of this folder, e.g. lean_simpy_ring")
    run.add_argument("--floor-args", default="[]", help="JSON list: the floor's run() arguments")
    run.add_argument("--floor-kwargs", default="{}", help="JSON object: its keyword arguments")
    run.add_argument("-k", type=int, default=3, help="rounds (default 3)")
    args = parser.parse_args(argv)
    if args.command == "convert":
        figures = convert_figures(Path(args.model), args.output, max(1, args.k))
    else:
        args.k = max(1, args.k)
        figures = run_figures(args)
    json.dump(figures, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
