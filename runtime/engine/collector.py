"""Pausing Python's cyclic garbage collector around work that creates no cycles worth collecting.

Reading a large model, generating its module and simulating many processes each allocate
hundreds of thousands of small, long-lived objects; the collector's generational passes over
them cost a sizeable share of the time and free nothing.  Every stage pauses it the same way,
through :func:`collector_paused`.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(*, freeze: bool = False) -> Iterator[None]:
    """Switch the collector off for the ``with`` block, then back on if it was on.

    ``freeze=True`` also moves every surviving object into the permanent generation when the
    block ends: for a command that is about to exit, so neither later collections nor the one at
    interpreter exit traverse the objects just built.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was_enabled:
            gc.enable()


def release_cycles() -> None:
    """Free the reference cycles a finished simulation left, when the collector is paused.

    A command that pauses the collector for its whole life (``uml2perf run``) and runs several
    simulations (replications, what-if runs, device mappings) calls this before each simulation
    after the first: a finished simulation's processes, contexts and events refer to each other,
    so only the collector frees them, and without it every run would keep its predecessors'
    memory.  With the collector on this does nothing (it collects on its own).
    """
    if not gc.isenabled():
        gc.collect()
