"""Shared test set-up: the benchmark fixtures in ``benchmarks/`` are importable as top-level modules.

``benchmarks/synthetic.py`` writes the synthetic models the tests and the benchmarks share; it is not
part of the installed package.
"""

from __future__ import annotations

import sys
from pathlib import Path

_BENCHMARKS = str(Path(__file__).resolve().parent.parent / "benchmarks")
if _BENCHMARKS not in sys.path:
    sys.path.insert(0, _BENCHMARKS)
