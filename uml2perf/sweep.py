"""``uml2perf sweep``: predict a model over a grid of machine shapes and parameter values.

A sweep is the question a performance engineer asks most: how does the run
time move with processes, nodes and problem size?  The grid is the Cartesian
product of every ``--grid NAME=V1,V2,...``; ``procs`` and ``nodes`` are the
machine's shape, every other name is a model variable.

Points are evaluated by the analytic fast path
(:mod:`uml2perf_runtime.analytic`) wherever the model allows it (no
point-to-point messages, threads or contention: bulk-synchronous models),
which evaluates a whole batch of points at once; every other point is
simulated, in parallel on the local cores (:mod:`concurrent.futures`) or on a
Dask cluster (``--dask tcp://host:port``, optional extra ``uml2perf[dask]``).
Rows always come out in grid order, whatever order the workers finish in.

Workers receive the generated model's *source text*, not the model file: a
worker compiles it once (cached by content) and needs neither the XMI file
nor lxml and Jinja, so remote Dask workers only need ``uml2perf_runtime``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from .errors import InputError, Location, ModelError, Uml2PerfError, UsageError

#: Grid names that shape the machine rather than set model variables.
SYSTEM_PARAMETERS = ("procs", "nodes")
RESULT_COLUMNS = ("time", "compute", "comm", "wait", "method")
#: Columns a sweep over process counts adds (before ``method``).
SCALING_COLUMNS = ("speedup", "efficiency", "inefficiency")
#: Columns ``--replications`` adds after ``time``.
REPLICATION_COLUMNS = ("time_std", "time_ci95_low", "time_ci95_high")
#: How long to wait for a Dask scheduler before giving up.
DASK_CONNECT_TIMEOUT = "10s"


# ------------------------------------------------------------------------------------- grid parsing


def parse_grid_item(text: str) -> tuple[str, list[str]]:
    """``NAME=V1,V2,...`` -> (name, raw values); a usage error names what is wrong.

    Several names joined by ``:`` make one *zipped* axis whose values move
    together, e.g. ``nodes:procs=1:4,2:8,4:16`` (the paper's N1P4, N2P8, N4P16).
    """
    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep or not name:
        raise UsageError(f"--grid expects NAME=V1,V2,... (or A:B=a1:b1,a2:b2,...), got {text!r}")
    names = axis_names(name)
    for part in names:
        if not part.isidentifier():
            raise UsageError(f"--grid: {part!r} is not a parameter name")
    if len(set(names)) != len(names):
        raise UsageError(f"--grid {name}: a name appears twice in one axis")
    values = [v.strip() for v in raw.split(",")]
    if not raw.strip() or any(not v for v in values):
        raise UsageError(f"--grid {name}: expected a comma-separated list of values, got {raw!r}")
    if len(names) > 1:
        for value in values:
            parts = value.split(":")
            if len(parts) != len(names) or any(not p.strip() for p in parts):
                raise UsageError(
                    f"--grid {name}: value {value!r} must give {len(names)} values joined by ':', "
                    f"e.g. {':'.join('1' for _ in names)}"
                )
    return name, values


def axis_names(key: str) -> list[str]:
    """The parameter names of one grid axis (one name, or several zipped with ``:``)."""
    return [part.strip() for part in key.split(":")]


def parse_grid(items: Sequence[str]) -> dict[str, list[str]]:
    """Every ``--grid`` option, in command-line order; a name given twice is a usage error."""
    grid: dict[str, list[str]] = {}
    seen: set[str] = set()
    for item in items:
        key, values = parse_grid_item(item)
        for name in axis_names(key):
            if name in seen:
                raise UsageError(f"--grid {name} is given twice; list all its values in one option")
            seen.add(name)
        grid[key] = values
    return grid


def _positive_int(name: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise UsageError(f"--grid {name}: {raw!r} is not a whole number") from None
    if value < 1:
        raise UsageError(f"--grid {name}: values must be at least 1, got {value}")
    return value


def typed_grid(
    grid: Mapping[str, Sequence[str]], spec: Any, fixed: Mapping[str, Any]
) -> dict[str, list[Any]]:
    """Check grid names against the model and convert each value to its parameter's type.

    ``procs``/``nodes`` must be positive whole numbers (usage error otherwise);
    any other name must be a model variable (a model error listing the
    variables otherwise); values take the type of the variable's default,
    exactly as ``--set`` does.
    """
    from uml2perf_runtime.engine import coerce_value

    defaults = dict(spec.parameters)
    names = [name for key in grid for name in axis_names(key)]
    unknown = [name for name in names if name not in SYSTEM_PARAMETERS and name not in defaults]
    if unknown:
        known = ", ".join(defaults) if defaults else "(none)"
        raise ModelError(
            f"model '{spec.name}' has no parameter {', '.join(repr(n) for n in unknown)}; "
            f"its parameters are: {known} (and the machine's procs, nodes)",
            Location(file=spec.source),
            hint="sweep a model variable by its name, e.g. --grid NAT=32,64",
        )
    clash = [name for name in names if name in fixed]
    if clash:
        raise UsageError(f"{clash[0]} is both swept (--grid) and fixed (--set); give it once")

    def convert(name: str, raw: str) -> Any:
        if name in SYSTEM_PARAMETERS:
            return _positive_int(name, raw)
        return coerce_value(name, raw, defaults[name])

    typed: dict[str, list[Any]] = {}
    for key, values in grid.items():
        parts = axis_names(key)
        if len(parts) == 1:
            typed[key] = [convert(key, v) for v in values]
        else:
            typed[key] = [
                tuple(convert(n, r.strip()) for n, r in zip(parts, v.split(":"), strict=True)) for v in values
            ]
    return typed


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """The Cartesian product of the axes in option order, the last option varying fastest.

    A zipped axis (``nodes:procs``) contributes its names together, value tuple by value tuple.
    """
    from uml2perf_runtime.analytic import grid_points as product

    points: list[dict[str, Any]] = []
    for point in product(grid):
        flat: dict[str, Any] = {}
        for key, value in point.items():
            parts = axis_names(key)
            if len(parts) == 1:
                flat[key] = value
            else:
                flat.update(zip(parts, value, strict=True))
        points.append(flat)
    return points


def grid_parameters(grid: Mapping[str, Sequence[Any]]) -> tuple[str, ...]:
    """The column names of a grid, zipped axes split into their parameters."""
    return tuple(name for key in grid for name in axis_names(key))


# ------------------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class ModelSource:
    """The generated Python source of a model: what workers compile and run."""

    text: str
    filename: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def model_source(
    path: str | Path, *, activity: str | None = None, sidecar: str | Path | None = None
) -> ModelSource:
    """The Python model of an XMI export (generated now) or of a generated ``.py`` file."""
    p = Path(path)
    if not p.exists():
        raise InputError("no such file", Location(file=str(path)), hint="check the path")
    if p.suffix == ".py":
        from uml2perf_runtime.files import InputFileError, read_text_input

        try:
            return ModelSource(read_text_input(p, what="model module"), str(p))
        except InputFileError as exc:
            raise InputError(exc.message, Location(file=str(path)), hint=exc.hint) from None
    from .api import read
    from .generation import generate

    model = read(p, sidecar=sidecar)
    result = generate(model, "python", activity=activity, options={"require_main": True})
    return ModelSource(result.text, f"<generated from {p.name}>")


_SPECS: dict[str, Any] = {}


def load_spec(source: ModelSource) -> Any:
    """Compile and run the model source once per process (cached by its content)."""
    key = source.digest
    spec = _SPECS.get(key)
    if spec is None:
        from .api import _module_from_source

        module = _module_from_source(source.text, f"uml2perf_sweep_{key[:12]}", source.filename)
        spec = getattr(module, "MODEL", None)
        if spec is None:
            raise ModelError(
                "this Python file defines no MODEL",
                Location(file=source.filename),
                hint="pass an XMI export or a module written by 'uml2perf convert'",
            )
        _SPECS[key] = spec
    return spec


# ------------------------------------------------------------------------------------- evaluation


@dataclass(frozen=True)
class PointJob:
    """Everything a worker needs to simulate one grid point (picklable)."""

    index: int
    point: dict[str, Any]
    fixed: dict[str, Any]
    procs: int | None
    nodes: int | None
    seed: int
    placement: str | None
    replications: int = 1


def _means(results: Any) -> tuple[float, float, float]:
    data = results.to_dict()
    rows = data.get("per_process") or []
    if not rows:
        return 0.0, 0.0, 0.0
    n = len(rows)
    return (
        sum(r.get("compute", 0.0) for r in rows) / n,
        sum(r.get("communication", r.get("comm", 0.0)) for r in rows) / n,
        sum(r.get("wait", 0.0) for r in rows) / n,
    )


def simulate_point(source: ModelSource, machine: Any, job: PointJob) -> dict[str, Any]:
    """Simulate one grid point; return its row (grid values, time, means, method)."""
    from uml2perf_runtime import simulate

    spec = load_spec(source)
    params = {k: v for k, v in job.point.items() if k not in SYSTEM_PARAMETERS}
    runs = [
        simulate(
            spec,
            machine=machine,
            procs=job.point.get("procs", job.procs),
            nodes=job.point.get("nodes", job.nodes),
            overrides={**job.fixed, **params},
            seed=job.seed + index,
            placement=job.placement,
        )
        for index in range(job.replications)
    ]
    means = [_means(results) for results in runs]
    row = {
        **job.point,
        "time": sum(float(r.time) for r in runs) / len(runs),
        "compute": sum(m[0] for m in means) / len(means),
        "comm": sum(m[1] for m in means) / len(means),
        "wait": sum(m[2] for m in means) / len(means),
        "method": "simulation",
    }
    if job.replications > 1:
        from uml2perf_runtime.replications import interval

        stats = interval([float(r.time) for r in runs])
        row["time_std"], (row["time_ci95_low"], row["time_ci95_high"]) = stats["std"], stats["ci95"]
    return row


# Worker-process state, set once by the pool initializer (inherited as is under fork).
_WORKER: dict[str, Any] = {}


def _init_worker(source: ModelSource, machine: Any) -> None:
    _WORKER["source"] = source
    _WORKER["machine"] = machine
    load_spec(source)


def _pool_task(job: PointJob) -> dict[str, Any]:
    return simulate_point(_WORKER["source"], _WORKER["machine"], job)


class Progress:
    """A one-line progress bar on a terminal: ``sweep  12/40 [######....] 30%  0:05``.

    Hand-written because it is twenty lines: a dependency would cost every
    install more than it gives here.  Redraws at most ten times a second.
    """

    def __init__(self, total: int, stream: TextIO, enabled: bool, label: str = "sweep") -> None:
        self.total = total
        self.stream = stream
        self.enabled = enabled and total > 0
        self.label = label
        self.done = 0
        self.start = time.monotonic()
        self._last = 0.0

    def advance(self, count: int = 1) -> None:
        self.done += count
        now = time.monotonic()
        if self.enabled and (now - self._last >= 0.1 or self.done >= self.total):
            self._last = now
            width = 30
            filled = int(width * self.done / self.total)
            elapsed = int(now - self.start)
            self.stream.write(
                f"\r{self.label} {self.done:>{len(str(self.total))}}/{self.total} "
                f"[{'#' * filled}{'.' * (width - filled)}] {100 * self.done // self.total:3d}% "
                f"{elapsed // 60}:{elapsed % 60:02d}"
            )
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


@dataclass
class SweepResult:
    """The rows of a sweep, in grid order, and how many points each method served."""

    parameters: tuple[str, ...]
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Scaling properties of the sweep (``non_scalability`` per group; see :mod:`uml2perf.scaling`).
    properties: list[dict[str, Any]] = field(default_factory=list)

    @property
    def columns(self) -> tuple[str, ...]:
        scaling = SCALING_COLUMNS if self.rows and "speedup" in self.rows[0] else ()
        spread = REPLICATION_COLUMNS if self.rows and "time_std" in self.rows[0] else ()
        return (
            *self.parameters,
            RESULT_COLUMNS[0],
            *spread,
            *RESULT_COLUMNS[1:-1],
            *scaling,
            RESULT_COLUMNS[-1],
        )


def run_sweep(
    source: ModelSource,
    machine: Any,
    grid: Mapping[str, Sequence[Any]],
    *,
    fixed: Mapping[str, Any] | None = None,
    procs: int | None = None,
    nodes: int | None = None,
    seed: int = 0,
    placement: str | None = None,
    analytic: bool = True,
    workers: int | None = None,
    dask_address: str | None = None,
    progress: Progress | None = None,
    replications: int = 1,
) -> SweepResult:
    """Evaluate every point of ``grid``: analytically where possible, else by simulation."""
    spec = load_spec(source)
    fixed = dict(fixed or {})
    points = grid_points(grid) if grid else [{}]
    result = SweepResult(grid_parameters(grid))
    rows: list[dict[str, Any] | None] = [None] * len(points)
    progress = progress or Progress(len(points), sys.stderr, False)
    if analytic:
        from uml2perf_runtime.analytic import evaluate_points

        analytic_rows, reasons = evaluate_points(
            spec, machine, points, overrides=fixed, procs=procs, nodes=nodes, placement=placement
        )
        for index, row in enumerate(analytic_rows):
            if row is not None:
                rows[index] = row
        served = sum(row is not None for row in analytic_rows)
        if served:
            progress.advance(served)
        for reason in reasons:
            result.notes.append(f"simulated: {reason}")
    jobs = [
        PointJob(i, points[i], fixed, procs, nodes, seed, placement, replications)
        for i, row in enumerate(rows)
        if row is None
    ]
    if jobs:
        for index, row in _simulate_jobs(source, machine, jobs, workers, dask_address, progress):
            rows[index] = row
    progress.close()
    result.rows = [row for row in rows if row is not None]
    if replications > 1:
        for row in result.rows:  # analytic points are deterministic: no spread
            row.setdefault("time_std", 0.0)
            row.setdefault("time_ci95_low", row["time"])
            row.setdefault("time_ci95_high", row["time"])
    from .scaling import add_scaling

    result.properties = add_scaling(result.parameters, result.rows)
    return result


def _simulate_jobs(
    source: ModelSource,
    machine: Any,
    jobs: list[PointJob],
    workers: int | None,
    dask_address: str | None,
    progress: Progress,
) -> Iterable[tuple[int, dict[str, Any]]]:
    if dask_address:
        yield from _simulate_dask(source, machine, jobs, dask_address, progress)
        return
    count = min(workers or os.cpu_count() or 1, len(jobs))
    if count <= 1:
        for job in jobs:
            row = simulate_point(source, machine, job)
            progress.advance()
            yield job.index, row
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=count, initializer=_init_worker, initargs=(source, machine)) as pool:
        futures = {pool.submit(_pool_task, job): job for job in jobs}
        try:
            for future in as_completed(futures):
                row = future.result()
                progress.advance()
                yield futures[future].index, row
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def _simulate_dask(
    source: ModelSource, machine: Any, jobs: list[PointJob], address: str, progress: Progress
) -> Iterable[tuple[int, dict[str, Any]]]:
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise Uml2PerfError(
            "--dask needs the optional Dask support, which is not installed",
            hint="install it with: pip install 'uml2perf[dask]'",
        ) from None
    try:
        client = Client(address, timeout=DASK_CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise Uml2PerfError(
            f"cannot reach the Dask scheduler at {address}: {exc}",
            hint="start one with 'dask scheduler' or check the address",
        ) from None
    try:
        shared_source, shared_machine = client.scatter([source, machine], broadcast=True)
        futures = [
            client.submit(simulate_point, shared_source, shared_machine, job, pure=False) for job in jobs
        ]
        index_of = {future.key: job.index for future, job in zip(futures, jobs)}
        for future in as_completed(futures):
            row = future.result()
            progress.advance()
            yield index_of[future.key], row
    finally:
        client.close()


# ------------------------------------------------------------------------------------- output


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def format_table(result: SweepResult) -> str:
    """A plain-text table with aligned columns, one row per grid point."""
    units = {"time": "time [s]", "compute": "compute [s]", "comm": "comm [s]", "wait": "wait [s]"}
    header = [units.get(c, c) for c in result.columns]
    body = [[_cell(row[c]) for c in result.columns] for row in result.rows]
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(header)]
    numeric = [True] * (len(header) - 1) + [False]
    lines = ["  ".join(h.rjust(w) if n else h.ljust(w) for h, w, n in zip(header, widths, numeric)).rstrip()]
    for r in body:
        lines.append(
            "  ".join(c.rjust(w) if n else c.ljust(w) for c, w, n in zip(r, widths, numeric)).rstrip()
        )
    return "\n".join(lines) + "\n"


def to_csv(result: SweepResult) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(result.columns)
    for row in result.rows:
        writer.writerow([repr(row[c]) if isinstance(row[c], float) else row[c] for c in result.columns])
    return buffer.getvalue()


def to_json(result: SweepResult, model: str, machine: Any) -> str:
    data = {
        "model": model,
        "machine": machine.to_dict() if hasattr(machine, "to_dict") else None,
        "parameters": list(result.parameters),
        "columns": list(result.columns),
        "rows": result.rows,
        "notes": result.notes,
        "properties": result.properties,
    }
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


def _write(text: str, target: str, inputs: tuple[str | None, ...] = ()) -> None:
    if target == "-":
        sys.stdout.write(text)
        return
    from .generation import write_output

    write_output(text, Path(target), inputs=inputs)


# ------------------------------------------------------------------------------------- command line


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run the model over the Cartesian grid and print (or write) one row per point."""
    from uml2perf_runtime import Machine
    from uml2perf_runtime.files import refuse_inputs_as_outputs

    from .cli import EXIT_OK, _overrides

    inputs = (
        args.model,
        args.sidecar,
        args.machine if args.machine and os.path.exists(args.machine) else None,
    )
    refuse_inputs_as_outputs({"CSV file": args.csv, "JSON file": args.json, "plot": args.plot}, inputs)
    if args.plot:
        from .sweep_plot import check_plot_target

        check_plot_target(args.plot)
    if args.replications < 1:
        raise InputError(
            f"the number of replications must be a whole number of at least 1, got {args.replications}",
            Location(file=str(args.model)),
        )
    grid_text = parse_grid(args.grid or [])
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    fixed_raw = _overrides(args.set)
    source = model_source(args.model, activity=args.activity, sidecar=args.sidecar)
    spec = load_spec(source)
    from uml2perf_runtime.engine import validate_overrides

    fixed = validate_overrides(spec, fixed_raw)
    grid = typed_grid(grid_text, spec, fixed)
    machine = Machine.load(args.machine) if args.machine else Machine.default()
    show = args.progress or sys.stderr.isatty()
    total = 1
    for values in grid.values():
        total *= len(values)
    from uml2perf_runtime.limits import LimitExceeded, current

    try:
        current().check("sweep_points", total, "the number of points of the sweep grid")
    except LimitExceeded as exc:
        raise InputError(exc.message, Location(file=str(args.model)), hint=exc.hint) from None
    result = run_sweep(
        source,
        machine,
        grid,
        fixed=fixed,
        procs=args.procs,
        nodes=args.nodes,
        seed=args.seed,
        placement=args.placement,
        analytic=not args.no_analytic,
        workers=args.workers,
        dask_address=args.dask,
        progress=Progress(total, sys.stderr, show),
        replications=args.replications,
    )
    if args.csv:
        _write(to_csv(result), args.csv, inputs)
    if args.json:
        _write(to_json(result, str(args.model), machine), args.json, inputs)
    if args.plot:
        from .sweep_plot import plot_sweep

        plot_sweep(result, args.plot, model=spec.name)
    if args.csv != "-" and args.json != "-":
        from .cli import _printable

        sys.stdout.write(_printable(format_table(result)))
    sys.stdout.flush()
    for prop in result.properties:
        if prop["severity"] >= 0.01:
            print(
                f"finding: non_scalability {prop['severity']:.2f}: {_printable_note(prop['hint'])}",
                file=sys.stderr,
            )
    for note in dict.fromkeys(result.notes):
        print(f"note: {_printable_note(note)}", file=sys.stderr)
    return EXIT_OK


def _printable_note(note: str) -> str:
    from .cli import _printable

    return _printable(note)


def register_command(sub: Any) -> None:
    """Add ``sweep`` to the subcommands of the ``uml2perf`` parser."""
    from .cli import positive_int as _positive

    sweep = sub.add_parser(
        "sweep",
        help="predict a model over a grid of processes, nodes and parameter values",
        description="Run the model over the Cartesian product of every --grid option. Points of "
        "bulk-synchronous models are evaluated analytically; the others are simulated in "
        "parallel.",
    )
    sweep.add_argument("model", help="XMI export or a generated model .py")
    sweep.add_argument(
        "--grid",
        action="append",
        metavar="NAME=V1,V2,...",
        help="values of procs, nodes or a model variable (repeat for more axes); "
        "A:B=a1:b1,a2:b2 moves several together, e.g. nodes:procs=1:4,2:8",
    )
    sweep.add_argument(
        "--machine",
        metavar="FILE.toml|NAME",
        help="machine file or bundled machine name (default: 1 node x 4 cores)",
    )
    sweep.add_argument("--procs", type=_positive, metavar="N", help="processes when procs is not swept")
    sweep.add_argument("--nodes", type=_positive, metavar="N", help="nodes when nodes is not swept")
    sweep.add_argument("--set", action="append", metavar="NAME=VALUE", help="fix a model variable")
    sweep.add_argument("--seed", type=int, default=0, help="seed of the random choices (default 0)")
    sweep.add_argument("--placement", choices=("block", "round_robin"), help="process placement on nodes")
    sweep.add_argument("--workers", type=int, metavar="N", help="local worker processes (default: all cores)")
    sweep.add_argument("--dask", metavar="ADDRESS", help="simulate on a Dask cluster (tcp://host:port)")
    out = sweep.add_mutually_exclusive_group()
    out.add_argument("--csv", metavar="FILE", help="also write the rows as CSV ('-': standard output only)")
    out.add_argument("--json", metavar="FILE", help="also write the rows as JSON ('-': standard output only)")
    sweep.add_argument("--no-analytic", action="store_true", help="simulate every point")
    sweep.add_argument(
        "--replications",
        type=int,
        default=1,
        metavar="N",
        help="simulate each point with N seeds: mean time, std and 95%% interval columns",
    )
    sweep.add_argument(
        "--plot",
        metavar="FILE.png",
        help="draw time, speedup, efficiency and the breakdown "
        "over the swept process counts (needs matplotlib)",
    )
    sweep.add_argument(
        "--progress", action="store_true", help="show progress even when stderr is not a terminal"
    )
    sweep.add_argument("--activity", metavar="NAME", help="the activity to start from (name or xmi:id)")
    sweep.add_argument("--sidecar", metavar="FILE.toml", help="costs and stereotypes for plain exports")
    from .cli import _add_limit_option

    _add_limit_option(sweep)
    sweep.set_defaults(func=cmd_sweep)


__all__ = [
    "parse_grid",
    "typed_grid",
    "grid_points",
    "ModelSource",
    "model_source",
    "load_spec",
    "run_sweep",
    "simulate_point",
    "SweepResult",
    "Progress",
    "format_table",
    "to_csv",
    "to_json",
    "register_command",
    "cmd_sweep",
]
