"""The held-out cases: each program's settings, how they map to its model's variables, and
which kernel (if any) the model's cost takes from a micro-benchmark.

The sizes were chosen before any program was measured, so that each timed region takes
roughly 10-200 ms on a 2-core machine; nothing here was adjusted to measured numbers.
A program's ``--flag`` and the model's variable of the same setting are written side by side,
so a reader can check that the model is predicted for exactly what the program ran.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Case:
    """One program run with one setting on ``procs`` ranks, and the model that predicts it."""

    program: str  # programs/<program>.py and models/<program>.uml
    label: str  # the setting, as the table shows it
    arguments: dict[str, int]  # the program's command-line flags (without --)
    variables: dict[str, int]  # the model's variables (--set)
    procs: int
    #: model variable -> (kernel, size): its value comes from kernels.py, measured once
    kernels: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: filled by the runner
    measured: list[float] = field(default_factory=list)
    busy: list[float] = field(default_factory=list)
    disturbed: list[tuple[float, float]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    prediction: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        return f"{self.program} {self.label} {self.procs} ranks"

    def command_arguments(self) -> list[str]:
        return [part for key, value in self.arguments.items() for part in (f"--{key}", str(value))]


#: a setting: its label, the program's flags, the model's variables, kernel-measured variables
Setting = tuple[str, dict[str, int], dict[str, int], dict[str, tuple[str, int]]]


def _ring(size: int, rounds: int) -> Setting:
    return f"S={size} R={rounds}", {"size": size, "rounds": rounds}, {"S": size, "R": rounds}, {}


def _jacobi(n: int, iters: int) -> Setting:
    return f"N={n} ITERS={iters}", {"n": n, "iters": iters}, {"N": n, "ITERS": iters}, {}


def _power(n: int, iters: int) -> Setting:
    return f"N={n} ITERS={iters}", {"n": n, "iters": iters}, {"N": n, "ITERS": iters}, {}


def _poly(n: int, iters: int) -> Setting:  # the kernel's block size is n / ranks: see _case
    return (
        f"N={n} ITERS={iters}",
        {"n": n, "iters": iters},
        {"N": n, "ITERS": iters},
        {"HORNER": ("horner", n)},
    )


def _farm(tasks: int, work: int) -> Setting:
    label = f"TASKS={tasks} WORK={work}"
    return label, {"tasks": tasks, "work": work}, {"TASKS": tasks, "WORK": work}, {"TASK": ("task", work)}


def _axpy(n: int, iters: int, every: int) -> Setting:
    label = f"N={n} ITERS={iters} EVERY={every}"
    return label, {"n": n, "iters": iters, "every": every}, {"N": n, "ITERS": iters, "EVERY": every}, {}


def _alltoall(block: int, rounds: int) -> Setting:
    return f"B={block} R={rounds}", {"block": block, "rounds": rounds}, {"B": block, "R": rounds}, {}


#: program -> its settings (full runs)
SETTINGS: dict[str, list[Setting]] = {
    "ring_shift": [_ring(1024, 5000), _ring(65536, 1000), _ring(1 << 20, 100)],
    "jacobi1d": [_jacobi(200_000, 500), _jacobi(4_000_000, 30)],
    "power_iteration": [_power(1024, 200), _power(4096, 20)],
    "scatter_poly": [_poly(262_144, 40), _poly(4_194_304, 5)],
    "task_farm": [_farm(2000, 1000), _farm(200, 100_000)],
    "axpy_allreduce": [_axpy(65_536, 1000, 10), _axpy(65_536, 1000, 1), _axpy(2_097_152, 40, 4)],
    "alltoall_exchange": [_alltoall(128, 5000), _alltoall(8192, 1000), _alltoall(131_072, 100)],
}

#: program -> one tiny setting (--quick: checks the loop end to end, says nothing of accuracy)
QUICK: dict[str, Setting] = {
    "ring_shift": _ring(4096, 50),
    "jacobi1d": _jacobi(20_000, 20),
    "power_iteration": _power(256, 10),
    "scatter_poly": _poly(16_384, 5),
    "task_farm": _farm(40, 1000),
    "axpy_allreduce": _axpy(8192, 20, 5),
    "alltoall_exchange": _alltoall(512, 50),
}

#: program -> where its model's compute costs come from (the summary's groups)
COST_SOURCE = {
    "ring_shift": "communication only",
    "alltoall_exchange": "communication only",
    "jacobi1d": "roofline",
    "power_iteration": "roofline",
    "axpy_allreduce": "roofline",
    "scatter_poly": "micro-benchmark",
    "task_farm": "micro-benchmark",
}

#: rank counts: 2 (one per core) and 4 (two per core) for every program; --quick runs 2, and 4
#: for the task farm (the only program whose model changes shape with the ranks: more workers)
PROCS = (2, 4)
QUICK_PROCS = {"task_farm": (2, 4)}


def _case(program: str, setting: Setting, procs: int) -> Case:
    label, arguments, variables, kernels = setting
    sized = {}
    for variable, (kernel, size) in kernels.items():
        # a block of the scatter is N / nprocs; a farm's task is WORK whatever the ranks
        sized[variable] = (kernel, size // procs if kernel == "horner" else size)
    return Case(program, label, dict(arguments), dict(variables), procs, sized)


def all_cases(quick: bool = False) -> list[Case]:
    """Every case in table order: program, setting, ranks."""
    if quick:
        return [
            _case(program, setting, procs)
            for program, setting in QUICK.items()
            for procs in QUICK_PROCS.get(program, (2,))
        ]
    return [
        _case(program, setting, procs)
        for program, settings in SETTINGS.items()
        for setting in settings
        for procs in PROCS
    ]
