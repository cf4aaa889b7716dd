"""Atomic output files for the runtime (traces, plots).

A trace or a plot is written to a temporary file in the target's folder and
renamed into place, so an error (or an interrupted run) never leaves a
half-written file where the user expects a complete one.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from .errors import SimulationError


def write_atomically(path: str | os.PathLike[str], what: str, write: Callable[[str], None]) -> Path:
    """Call ``write(temporary_path)``, then rename the result to ``path``; clean up on any error.

    ``what`` names the file for messages ("trace file", "plot").
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise SimulationError(f"cannot write the {what} '{target}': {exc.strerror or exc}",
                              hint="check that its folder exists and is writable") from None
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return target
