"""uml2perf_runtime: the SimPy performance estimator that generated models import.

Generated model modules import ``uml2perf_runtime.model`` (as ``rt``) for
:class:`Element`, :class:`ModelSpec` and the stand-alone :func:`main`; tools call
:func:`simulate` and read the returned :class:`Results`.
"""

from typing import TYPE_CHECKING, Any

# The public names are imported on first use (PEP 562): the generator imports
# ``uml2perf_runtime.functions`` for the expression language and must not pay
# for SimPy and numpy, and a generated module imports ``.model`` before it
# knows whether it will be simulated.
_EXPORTS = {
    "simulate": "engine.simulation",
    "Simulation": "engine.simulation",
    "DEFAULT_MAX_ITERATIONS": "engine.simulation",
    "DeadlockError": "errors",
    "LimitError": "errors",
    "MachineError": "errors",
    "ModelRuntimeError": "errors",
    "ParameterError": "errors",
    "SimulationError": "errors",
    "Link": "platform.machine",
    "Machine": "platform.machine",
    "Element": "model",
    "ModelSpec": "model",
    "main": "model",
    "Results": "output.results",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .engine.simulation import DEFAULT_MAX_ITERATIONS, Simulation, simulate
    from .errors import (
        DeadlockError,
        LimitError,
        MachineError,
        ModelRuntimeError,
        ParameterError,
        SimulationError,
    )
    from .model import Element, ModelSpec, main
    from .output.results import Results
    from .platform.machine import Link, Machine


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'uml2perf_runtime' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module_name}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


__all__ = [
    "simulate",
    "Simulation",
    "Machine",
    "Link",
    "Results",
    "ModelSpec",
    "Element",
    "main",
    "SimulationError",
    "MachineError",
    "ParameterError",
    "DeadlockError",
    "LimitError",
    "ModelRuntimeError",
    "DEFAULT_MAX_ITERATIONS",
]
