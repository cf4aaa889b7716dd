"""Shared test set-up: the benchmark fixtures in ``benchmarks/`` are importable as top-level modules,
and the corpus of real exports is found in one way.

``benchmarks/synthetic.py`` writes the synthetic models the tests and the benchmarks share; it is not
part of the installed package.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_BENCHMARKS = str(Path(__file__).resolve().parent.parent / "benchmarks")
if _BENCHMARKS not in sys.path:
    sys.path.insert(0, _BENCHMARKS)


def find_corpus() -> Path:
    """The corpus of real exports: ``$UML2PERF_CORPUS``, else ``shared/corpus`` beside a folder above
    this checkout (absent on a fresh clone: the corpus tests then skip)."""
    given = os.environ.get("UML2PERF_CORPUS")
    if given:
        return Path(given)
    here = Path(__file__).resolve()
    for folder in here.parents[1:]:
        candidate = folder / "shared" / "corpus"
        if candidate.is_dir():
            return candidate
    return here.parents[2] / "shared" / "corpus"
