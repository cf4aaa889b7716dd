"""The case groups of the validation suite, each a module with ``prepare`` and ``cases``.

``prepare(setup)`` measures what the group's models need on this machine
beyond the calibrated machine file (fitted kernel costs into ``setup.costs``);
``cases(setup)`` returns the group's :class:`suite.Case` list.  A group that
cannot run here (no MPI) says why in ``setup.notes`` and returns no cases.
"""

from __future__ import annotations

from types import ModuleType

from . import mpi, threads

GROUPS: dict[str, ModuleType] = {"threads": threads, "mpi": mpi}
