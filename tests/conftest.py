"""Shared test set-up: the benchmark fixtures in ``benchmarks/`` are importable as top-level modules,
and the corpus of real exports is found in one way (the bundled subset, or ``$UML2PERF_CORPUS``).

``benchmarks/synthetic.py`` writes the synthetic models the tests and the benchmarks share; it is not
part of the installed package.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_BENCHMARKS = str(Path(__file__).resolve().parent.parent / "benchmarks")
if _BENCHMARKS not in sys.path:
    sys.path.insert(0, _BENCHMARKS)


#: The small corpus of real exports under permissive licences that ships with the tests.
BUNDLED_CORPUS = Path(__file__).resolve().parent / "corpus"


def find_corpus() -> Path:
    """The corpus of real exports the corpus tests read: ``$UML2PERF_CORPUS`` when set (the full
    corpus, e.g. ``shared/corpus``), else the subset bundled in ``tests/corpus`` (its PROVENANCE.md
    says where each file comes from).  A test about a file the chosen corpus lacks skips
    (:func:`corpus_file`)."""
    given = os.environ.get("UML2PERF_CORPUS")
    if given:
        return Path(given).expanduser()
    return BUNDLED_CORPUS


def corpus_file(relative: str) -> Path:
    """The corpus file ``relative`` (a path like ``argouml/x.xmi``); the test skips when it is absent."""
    import pytest

    path = find_corpus() / relative
    if not path.is_file():
        pytest.skip(
            f"{relative} is not in the corpus at {find_corpus()} (set UML2PERF_CORPUS to the full one)"
        )
    return path


@pytest.fixture(autouse=True)
def own_limits() -> Iterator[None]:
    """Every test starts with this process's default limits and leaves them so.

    A command run in-process with ``--limit`` sets the limits of the whole process (the command
    line does this once); without this, a test run after it in the same worker would inherit
    them (a fuzz test's ``events=200000`` stopping a held-out set's longest case).
    """
    from uml2perf_runtime.engine import limits

    saved = list(limits._CURRENT)
    limits._CURRENT[:] = []
    yield
    limits._CURRENT[:] = saved
