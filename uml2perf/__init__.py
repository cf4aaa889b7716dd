"""uml2perf: predict the performance of parallel programs from UML activity diagrams.

The Python API, for scripts and notebooks (the command line is a thin shell over it)::

    import uml2perf

    results = uml2perf.predict("samples/lapw0.uml", machine="gescher", procs=32)
    results.time                        # predicted seconds
    results.to_dataframe()              # where the time goes, one row per element (needs pandas)

    table = uml2perf.sweep("samples/lapw0.uml", {"nodes:procs": [(1, 4), (2, 8)], "NAT": [32, 64]},
                           machine=uml2perf.Machine.load("gescher"))
    table.to_dataframe()                # one row per point: time_s, speedup, efficiency...

* :func:`read` — an XMI export as the neutral model;
* :func:`convert` — the generated Python module (or dot, json, your own handler);
* :func:`predict` — simulate once and return :class:`Results`;
* :func:`sweep` — predict over a grid and return a :class:`SweepResult`;
* :class:`Machine` — a machine (``Machine.load("gescher")``, ``Machine.load("m.toml")``);
* :class:`Uml2PerfError` and :class:`SimulationError` — every problem a model or input can cause.

Each name is imported when first used, so ``import uml2perf`` loads none of lxml, Jinja, SimPy
or numpy.  The package is organised by stage: :mod:`uml2perf.reader` (XMI dialects),
:mod:`uml2perf.model` (the neutral model), :mod:`uml2perf.profile` (performance annotations),
:mod:`uml2perf.expressions` (the safe expression language), :mod:`uml2perf.navigation`
(Navigator and Traverser), :mod:`uml2perf.handlers` (content handlers),
:mod:`uml2perf.generation`, and the commands: :mod:`uml2perf.cli`, :mod:`uml2perf.commands`
and :mod:`uml2perf.api`.  The estimator that generated models import is the separate package
``uml2perf_runtime``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing itself is not imported at run time: ``import uml2perf`` stays cheap
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0"

#: Public name -> (module, attribute), imported on first use (PEP 562).
_LAZY = {
    "read": ("uml2perf.api", "read"),
    "convert": ("uml2perf.api", "convert"),
    "predict": ("uml2perf.api", "predict"),
    "Machine": ("uml2perf_runtime.platform.machine", "Machine"),
    "Results": ("uml2perf_runtime.output.results", "Results"),
    "SweepResult": ("uml2perf.sweep", "SweepResult"),
    "Uml2PerfError": ("uml2perf.errors", "Uml2PerfError"),
    "SimulationError": ("uml2perf_runtime.errors", "SimulationError"),
}

__all__ = [
    "Machine",
    "Results",
    "SimulationError",
    "SweepResult",
    "Uml2PerfError",
    "__version__",
    "convert",
    "predict",
    "read",
    "sweep",
]


def __getattr__(name: str) -> Any:
    import importlib

    if name == "sweep":
        # the module uml2perf.sweep is callable as its function sweep(); as a submodule it would
        # replace any other attribute of this name once imported
        return importlib.import_module("uml2perf.sweep")
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'uml2perf' has no attribute {name!r}")
    value = getattr(importlib.import_module(target[0]), target[1])
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
