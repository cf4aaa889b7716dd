"""In-process figures of convert: the work after interpreter start and imports, beside a bare parse.

``python benchmarks/inprocess.py MODEL OUT [-k N]`` imports uml2perf and lxml first, then times,
``N`` times in turn, a hardened ``lxml.etree.fromstring`` of the model's bytes and a
``uml2perf.api.convert`` of the model to ``OUT`` (reading the file included), in CPU seconds of
this process.  It prints ``{"parse": [...], "convert": [...]}``: what a library user calling
``convert`` pays per model, without the start-up a whole command adds (``shapes.py`` shows both).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("output")
    parser.add_argument("-k", type=int, default=3, help="rounds (default 3)")
    args = parser.parse_args(argv)
    from lxml import etree

    from uml2perf.api import convert

    model = Path(args.model)
    parses: list[float] = []
    converts: list[float] = []
    for _ in range(max(1, args.k)):
        gc.collect()
        start = time.process_time()
        etree.fromstring(model.read_bytes(), etree.XMLParser(resolve_entities=False))
        parses.append(time.process_time() - start)
        gc.collect()
        start = time.process_time()
        convert(model, args.output)
        converts.append(time.process_time() - start)
    json.dump({"parse": parses, "convert": converts}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
