"""The cases of the fifth held-out set: six MPI programs, 17 settings, each on 2 and on 4 ranks.

Every setting was sized from estimates of its work (the counts its model holds, priced on a
machine file of this machine), never from a run of the program at that size: each timed region
was meant to land between about 15 and 300 ms.  The models and these sizes were committed
together before any program ran at them.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "unseen"))

from unseen_cases import Case  # noqa: E402  (the one case class every set shares)

#: a setting: its label, the program's flags, the model's variables, kernel-measured variables
Setting = tuple[str, dict[str, int], dict[str, int], dict[str, tuple[str, int]]]


def _setting(flags: dict[str, int], names: dict[str, str], kernels: dict[str, str] | None = None) -> Setting:
    """Flags and variables with the same values (``names``: flag -> the model's variable)."""
    variables = {names[flag]: value for flag, value in flags.items()}
    label = " ".join(f"{names[flag]}={value}" for flag, value in flags.items())
    # a kernel variable is measured later, at the rank's share: the size is filled in by _case
    wanted = {variable: (kernel, 0) for variable, kernel in (kernels or {}).items()}
    return label, dict(flags), variables, wanted


def _compact(n: int, percent: int, iters: int) -> Setting:
    return _setting(
        {"n": n, "percent": percent, "iters": iters}, {"n": "N", "percent": "PERCENT", "iters": "ITERS"}
    )


def _pipeline(rows: int, cols: int, passes: int, frames: int) -> Setting:
    return _setting(
        {"rows": rows, "cols": cols, "passes": passes, "frames": frames},
        {"rows": "ROWS", "cols": "COLS", "passes": "PASSES", "frames": "FRAMES"},
    )


def _covariance(rows: int, dim: int, iters: int) -> Setting:
    return _setting(
        {"rows": rows, "dim": dim, "iters": iters}, {"rows": "ROWS", "dim": "DIM", "iters": "ITERS"}
    )


def _topk(n: int, queries: int) -> Setting:
    return _setting({"n": n, "queries": queries}, {"n": "N", "queries": "QUERIES"}, {"SELECT": "local_best"})


def _sinkhorn(n: int, iters: int) -> Setting:
    return _setting({"n": n, "iters": iters}, {"n": "N", "iters": "ITERS"})


def _ensemble(members: int, variables: int, steps: int, every: int) -> Setting:
    return _setting(
        {"members": members, "vars": variables, "steps": steps, "every": every},
        {"members": "MEMBERS", "vars": "VARS", "steps": "STEPS", "every": "EVERY"},
    )


#: program -> its settings (full runs)
SETTINGS: dict[str, list[Setting]] = {
    "compact": [_compact(65_536, 25, 400), _compact(1_048_576, 50, 20), _compact(8_388_608, 10, 4)],
    "image_pipeline": [_pipeline(64, 128, 8, 400), _pipeline(512, 512, 8, 40), _pipeline(2048, 1024, 4, 6)],
    "cross_covariance": [
        _covariance(16_384, 256, 10),
        _covariance(4096, 512, 10),
        _covariance(32_768, 384, 2),
    ],
    "topk_tree": [_topk(8192, 1500), _topk(196_608, 150), _topk(2_097_152, 20)],
    "sinkhorn": [_sinkhorn(256, 2000), _sinkhorn(1024, 600), _sinkhorn(4096, 40)],
    "l96_ensemble": [_ensemble(64, 40, 3000, 10), _ensemble(1024, 400, 30, 5)],
}

#: program -> one tiny setting (--quick: checks the loop end to end, says nothing of accuracy)
QUICK: dict[str, Setting] = {
    "compact": _compact(16_384, 25, 5),
    "image_pipeline": _pipeline(32, 32, 4, 5),
    "cross_covariance": _covariance(1024, 32, 3),
    "topk_tree": _topk(4096, 10),
    "sinkhorn": _sinkhorn(128, 10),
    "l96_ensemble": _ensemble(16, 40, 20, 5),
}

#: program -> where its model's compute costs come from
COST_SOURCE = {
    "compact": "counted",
    "image_pipeline": "counted",
    "cross_covariance": "counted",
    "topk_tree": "kernel micro-benchmark",
    "sinkhorn": "counted",
    "l96_ensemble": "counted",
}

PROCS = (2, 4)
#: quick runs: every program on 2 ranks, the tree also on 4 (its shape changes with the ranks)
QUICK_PROCS = {"topk_tree": (2, 4)}


def _case(program: str, setting: Setting, procs: int) -> Case:
    label, arguments, variables, kernels = setting
    # a kernel is timed at the rank's share of the program's first size (--n)
    share = next(iter(arguments.values())) // procs
    return Case(
        program,
        label,
        dict(arguments),
        dict(variables),
        procs,
        {variable: (kernel, share) for variable, (kernel, _) in kernels.items()},
    )


def all_cases(quick: bool = False) -> list[Case]:
    """Every case, in a fixed order (the runner shuffles the order of its runs)."""
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
