"""``uml2perf sweep``: predict a model over a grid of machine shapes and parameter values.

A sweep is the question a performance engineer asks most: how does the run
time move with processes, nodes and problem size?  The grid is the Cartesian
product of every ``--grid NAME=V1,V2,...``; ``procs`` and ``nodes`` are the
machine's shape, every other name is a model variable.

Points are evaluated by the analytic fast path
(:mod:`uml2perf_runtime.analysis.analytic`) wherever the model allows it (no
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

import csv
import io
import json
import math
import os
import sys
import types
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uml2perf_runtime.analysis.analytic import grid_points
from uml2perf_runtime.output.progress import ProgressBar
from uml2perf_runtime.output.results import SWEEP_TIME_COLUMNS

from .answers import checked_overrides
from .api import ModelSource, load_spec
from .errors import InputError, Location, ModelError, Uml2PerfError, UsageError

#: Diagnostics of the generator that explain a prediction of 0 s (sweep prints them).
ZERO_TIME_CODES = frozenset({"dead-join", "empty-start"})
#: Grid names that shape the machine rather than set model variables.
SYSTEM_PARAMETERS = ("procs", "nodes")
RESULT_COLUMNS = ("time", "compute", "comm", "wait", "method")
#: Columns a sweep over process counts adds (before ``method``).
SCALING_COLUMNS = ("speedup", "efficiency", "inefficiency")
#: Columns ``--replications`` adds after ``time``.
REPLICATION_COLUMNS = ("time_std", "time_ci95_low", "time_ci95_high")
#: Prediction-interval columns, present when some input of the machine or sidecar is an interval.
INTERVAL_COLUMNS = ("time_low", "time_high")
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
    from uml2perf_runtime.engine.simulation import coerce_value
    from uml2perf_runtime.parameters import did_you_mean

    defaults = dict(spec.parameters)
    names = [name for key in grid for name in axis_names(key)]
    unknown = [name for name in names if name not in SYSTEM_PARAMETERS and name not in defaults]
    if unknown:
        known = ", ".join(defaults) if defaults else "(none)"
        raise ModelError(
            f"model '{spec.name}' has no parameter {', '.join(repr(n) for n in unknown)}; "
            f"its parameters are: {known} (and the machine's procs, nodes)",
            Location(file=spec.source),
            hint=did_you_mean(unknown, [*defaults, *SYSTEM_PARAMETERS])
            or "sweep a model variable by its name, e.g. --grid NAT=32,64",
        )
    clash = [name for name in names if name in fixed]
    if clash:
        raise UsageError(f"{clash[0]} is both swept (--grid) and fixed (--set); give it once")

    def convert(name: str, raw: str) -> Any:
        if name in SYSTEM_PARAMETERS:
            return _positive_int(name, raw)
        value = coerce_value(name, raw, defaults[name])
        if isinstance(value, float) and not math.isfinite(value):
            raise UsageError(
                f"--grid {name}: {raw} is not a finite number",
                hint="infinite or not-a-number values would make every time meaningless (as for --set)",
            )
        return value

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


def split_axes(points: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Points of the grid product with each zipped axis (``nodes:procs``) split into its parameters."""
    flat_points: list[dict[str, Any]] = []
    for point in points:
        flat: dict[str, Any] = {}
        for key, value in point.items():
            parts = axis_names(key)
            if len(parts) == 1:
                flat[key] = value
            else:
                flat.update(zip(parts, value, strict=True))
        flat_points.append(flat)
    return flat_points


def grid_parameters(grid: Mapping[str, Sequence[Any]]) -> tuple[str, ...]:
    """The column names of a grid, zipped axes split into their parameters."""
    return tuple(name for key in grid for name in axis_names(key))


# ------------------------------------------------------------------------------------- the model


def model_source(
    path: str | Path,
    *,
    activity: str | None = None,
    sidecar: str | Path | None = None,
    warnings: list[str] | None = None,
    default_cost: float | None = None,
) -> ModelSource:
    """The Python model of an XMI export (generated now) or of a generated ``.py`` file.

    An export in which nothing takes time is refused (every point would predict 0 s);
    ``warnings``, when given, receives the count of actions without a cost; ``default_cost``
    (seconds) is the cost of every action of an export without one.
    """
    p = Path(path)
    if not p.exists():
        raise InputError("no such file", Location(file=str(path)), hint="check the path")
    if p.suffix == ".py":
        from uml2perf_runtime.output.files import InputFileError, read_text_input

        from .api import refuse_export_options

        refuse_export_options(default_cost, sidecar)

        try:
            return ModelSource(read_text_input(p, what="model module"), str(p), activity)
        except InputFileError as exc:
            raise InputError(exc.message, Location(file=str(path)), hint=exc.hint) from None
    from .api import read, require_timing
    from .check import timing_summary
    from .generation import generate

    model = read(p, sidecar=sidecar, default_cost=default_cost)
    result = generate(model, "python", activity=activity, options={"require_main": True})
    require_timing(p, timing_summary(model), warnings)
    if warnings is not None:  # what makes a run predict 0 s: said before the table
        warnings += [str(d) for d in result.diagnostics if getattr(d, "code", None) in ZERO_TIME_CODES]
    return ModelSource(result.text, f"<generated from {p.name}>")


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
        from uml2perf_runtime.analysis.replications import interval

        stats = interval([float(r.time) for r in runs])
        row["time"] = row["time"] if math.isfinite(row["time"]) else stats["mean"]
        row["time_std"], (row["time_ci95_low"], row["time_ci95_high"]) = stats["std"], stats["ci95"]
    if not all(math.isfinite(row[key]) for key in ("time", "compute", "comm", "wait")):
        raise ModelError(
            f"the mean times of the sweep point {job.point} pass the largest number a float can hold",
            Location(file=spec.source),
            hint="check the cost functions for huge values",
        )
    return row


# Worker-process state, set once by the pool initializer (inherited as is under fork).
_WORKER: dict[str, Any] = {}


def _init_worker(source: ModelSource, machine: Any) -> None:
    _WORKER["source"] = source
    _WORKER["machine"] = machine
    load_spec(source)


def _pool_task(job: PointJob) -> dict[str, Any]:
    return simulate_point(_WORKER["source"], _WORKER["machine"], job)


@dataclass
class SweepResult:
    """The rows of a sweep, in grid order, and how many points each method served."""

    parameters: tuple[str, ...]
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Scaling properties of the sweep (``non_scalability`` per group; see :mod:`uml2perf.scaling`).
    properties: list[dict[str, Any]] = field(default_factory=list)
    #: The model's name and the machine swept on.
    model: str = ""
    machine: Any = None

    def to_dataframe(self) -> Any:
        """The rows as a pandas DataFrame (needs pandas, imported only here), one row per point.

        Columns are the swept parameters, then the results with their unit, as in the CSV
        file: ``time_s``, ``compute_s``, ``comm_s``, ``wait_s``, ``speedup``... ``method``.
        """
        from uml2perf_runtime.output.results import data_frame

        return data_frame(
            self.rows, [(c if c in self.parameters else csv_header(c), c) for c in self.columns]
        )

    def to_dict(self) -> dict[str, Any]:
        """Parameters, columns, rows, notes and scaling findings as plain data."""
        return {
            "parameters": list(self.parameters),
            "columns": list(self.columns),
            "rows": self.rows,
            "notes": self.notes,
            "properties": self.properties,
        }

    def write(self, format: str, path: str | Path, **options: Any) -> Path:
        """Write the sweep as ``format`` (``text``, ``csv``, ``json``, ``plot``, ``report``) to ``path``.

        Through the registry of result writers and the one atomic writer, as ``uml2perf sweep`` does.
        """
        from uml2perf_runtime.output import writers

        return writers.write("sweep", format, self, path, **options)

    def write_report(self, path: str | Path, **options: Any) -> Path:
        """Write the self-contained HTML report of the sweep to ``path`` (see docs/report.md)."""
        return self.write("report", path, **options)

    @property
    def columns(self) -> tuple[str, ...]:
        scaling = SCALING_COLUMNS if self.rows and "speedup" in self.rows[0] else ()
        spread = REPLICATION_COLUMNS if self.rows and "time_std" in self.rows[0] else ()
        interval = INTERVAL_COLUMNS if self.rows and "time_low" in self.rows[0] else ()
        return (
            *self.parameters,
            RESULT_COLUMNS[0],
            *interval,
            *spread,
            *RESULT_COLUMNS[1:-1],
            *scaling,
            RESULT_COLUMNS[-1],
        )


def plain_grid(grid: Mapping[str, Any]) -> dict[str, list[str]]:
    """A grid of plain Python values (``{"procs": [1, 2, 4], "nodes:procs": [(1, 4), (2, 8)]}``)
    as the text ``--grid`` gives, so that one check converts both (:func:`typed_grid`)."""

    def text(value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            return repr(value)
        if isinstance(value, (tuple, list)):
            return ":".join(text(v) for v in value)
        return str(value)

    if not isinstance(grid, Mapping):
        raise UsageError(f"the grid must be a mapping of names to lists of values, got {type(grid).__name__}")
    found: dict[str, list[str]] = {}
    for key, values in grid.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise UsageError(f"grid {key}: expected a list of values, got {values!r}")
        items = [text(v) for v in values]
        found.update(parse_grid([f"{key}={','.join(items)}"]))
    return found


def run_sweep(
    source: ModelSource | str | Path,
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
    progress: ProgressBar | None = None,
    replications: int = 1,
) -> SweepResult:
    """Evaluate every point of ``grid``: analytically where possible, else by simulation.

    Takes plain Python values: ``source`` a :class:`ModelSource` or the path of an export or
    generated module, ``machine`` a ``Machine``, a machine file or bundled name, or None (one
    node of 4 cores), ``grid`` names to lists of values (``{"procs": [1, 2, 4], "NAT": [32]}``,
    zipped axes as ``{"nodes:procs": [(1, 4), (2, 8)]}``), ``fixed`` names to values.  Names and
    values are checked against the model as ``--grid`` and ``--set`` are.
    """
    from uml2perf_runtime.platform.machine import Machine

    if not isinstance(source, ModelSource):
        source = model_source(source)
    if machine is None or machine == "":
        machine = Machine.default()
    elif not isinstance(machine, Machine):
        machine = Machine.load(machine)
    spec = load_spec(source)
    fixed_values: dict[str, Any] = checked_overrides(spec, dict(fixed or {}))
    grid = typed_grid(plain_grid(grid), spec, fixed_values)
    points = split_axes(grid_points(grid)) if grid else [{}]
    result = SweepResult(grid_parameters(grid), model=spec.name, machine=machine)
    rows: list[dict[str, Any] | None] = [None] * len(points)
    progress = progress or ProgressBar(len(points), sys.stderr, False)
    if analytic:
        from uml2perf_runtime.analysis.analytic import evaluate_points

        analytic_rows, reasons = evaluate_points(
            spec, machine, points, overrides=fixed_values, procs=procs, nodes=nodes, placement=placement
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
        PointJob(i, points[i], fixed_values, procs, nodes, seed, placement, replications)
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
    progress: ProgressBar,
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
    source: ModelSource, machine: Any, jobs: list[PointJob], address: str, progress: ProgressBar
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
        index_of = {future.key: job.index for future, job in zip(futures, jobs, strict=True)}
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


#: Columns holding seconds (one definition, shared with the report).
TIME_COLUMNS = SWEEP_TIME_COLUMNS
#: Significant digits of the largest value of a numeric column in the text table.
TABLE_DIGITS = 4
_UNITS = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))


def format_column(values: Sequence[float], seconds: bool) -> tuple[list[str], str]:
    """One numeric column as text with aligned decimal points, and the unit its header names.

    The largest magnitude gets :data:`TABLE_DIGITS` significant digits and every value of the
    column the same number of decimals, so ``263.8`` and ``0.005274`` never stand in one column:
    a column of seconds is shown in the unit of its largest value (``comm [ms]  5.274``).
    """
    finite = [abs(v) for v in values if math.isfinite(v)]
    largest = max(finite, default=0.0)
    unit, scale = "", 1.0
    if seconds:
        unit, scale = "s", 1.0
        for name, factor in _UNITS:
            if largest >= factor or name == "ns":
                unit, scale = name, factor
                break
        if largest == 0:
            unit, scale = "s", 1.0
    if largest == 0:
        return [("0" if v == 0 else str(v)) for v in values], unit
    integer_digits = max(1, math.floor(math.log10(largest / scale)) + 1)
    decimals = max(0, TABLE_DIGITS - integer_digits)
    return [f"{v / scale:.{decimals}f}" if math.isfinite(v) else str(v) for v in values], unit


def format_table(result: SweepResult) -> str:
    """A plain-text table, one row per grid point: aligned columns, units in the headers.

    Swept parameters print as given; each numeric result column has one unit and one number
    of decimals (see :func:`format_column`); CSV and JSON keep every digit.
    """
    columns = result.columns
    header: list[str] = []
    cells: list[list[str]] = []
    for name in columns:
        values = [row[name] for row in result.rows]
        if name not in result.parameters and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in values
        ):
            texts, unit = format_column([float(v) for v in values], name in TIME_COLUMNS)
            header.append(f"{name} [{unit}]" if unit else name)
        else:
            texts = [_cell(v) for v in values]
            header.append(name)
        cells.append(texts)
    body = [list(row) for row in zip(*cells, strict=True)] if result.rows else []
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(header)]
    numeric = [True] * (len(header) - 1) + [False]
    lines = [
        "  ".join(
            h.rjust(w) if n else h.ljust(w) for h, w, n in zip(header, widths, numeric, strict=True)
        ).rstrip()
    ]
    for r in body:
        lines.append(
            "  ".join(
                c.rjust(w) if n else c.ljust(w) for c, w, n in zip(r, widths, numeric, strict=True)
            ).rstrip()
        )
    return "\n".join(lines) + "\n"


def csv_header(column: str) -> str:
    """The CSV name of a result column: seconds say so (``time_s``), other names stay."""
    return f"{column}_s" if column in TIME_COLUMNS else column


def to_csv(result: SweepResult) -> str:
    """The rows as CSV: every digit (``repr`` of floats), units in the headers (``time_s``)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([c if c in result.parameters else csv_header(c) for c in result.columns])
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


def sweep(
    model: str | Path,
    grid: Mapping[str, Iterable[Any]],
    *,
    machine: Any = None,
    fixed: Mapping[str, Any] | None = None,
    procs: int | None = None,
    nodes: int | None = None,
    seed: int = 0,
    placement: str | None = None,
    analytic: bool = True,
    workers: int | None = None,
    dask_address: str | None = None,
    replications: int = 1,
    activity: str | None = None,
    sidecar: str | Path | None = None,
    default_cost: float | None = None,
    progress: bool = False,
    warnings: list[str] | None = None,
    allow_zero: bool = False,
    samples: int | None = None,
    level: float | None = None,
    interval: bool = True,
    median_of: int = 1,
) -> Any:
    """Predict ``model`` at every point of ``grid``; returns a ``SweepResult`` (``rows``, ``to_dataframe()``).

    ``grid`` maps ``procs``, ``nodes`` or model variables to lists of plain values
    (``{"procs": [1, 2, 4], "NAT": [32, 64]}``; ``{"nodes:procs": [(1, 4), (2, 8)]}`` moves two
    together); ``fixed`` sets other variables.  ``machine`` is a ``Machine``, a machine file, a
    bundled machine's name or None (one node of 4 cores).  Points of bulk-synchronous models are
    evaluated analytically (``analytic=False`` simulates every one), the others simulated in
    ``workers`` processes.  Every variable the model leaves without a value must be swept or
    fixed; ``warnings`` receives the model's warnings.  Points predicted at 0 s are a
    :class:`ModelError` (the model's elements take time, and none ran), unless ``allow_zero``.
    When the machine file or the sidecar gives inputs as intervals, every row gains ``time_low``
    and ``time_high``: its prediction interval (``level``, default 90%, from ``samples`` samples;
    see :mod:`uml2perf.intervals`), for the median of ``median_of`` launches of the program (default 1).
    """
    from uml2perf_runtime.engine.limits import LimitExceeded, current
    from uml2perf_runtime.model import require_values
    from uml2perf_runtime.output.progress import ProgressBar

    if not isinstance(replications, int) or isinstance(replications, bool) or replications < 1:
        raise InputError(
            f"the number of replications must be a whole number of at least 1, got {replications!r}",
            Location(file=str(model)),
        )
    current().check("replications", replications, "the number of replications")
    grid_text = plain_grid(grid)
    fixed = dict(fixed or {})
    if sidecar is not None:
        from .api import _read_once

        # read once: the model and the intervals' inputs come from the same bytes (a FIFO works)
        sidecar = _read_once(sidecar, "sidecar file")
    source = model_source(
        model, activity=activity, sidecar=sidecar, warnings=warnings, default_cost=default_cost
    )
    spec = load_spec(source)
    # every variable the model leaves without a value is fixed or swept
    require_values(spec, {*fixed, *(name for key in grid_text for name in axis_names(key))})
    total = 1
    for values in grid_text.values():
        total *= len(values)
    try:
        current().check("sweep_points", total, "the number of points of the sweep grid")
    except LimitExceeded as exc:
        raise InputError(exc.message, Location(file=str(model)), hint=exc.hint) from None
    if machine not in (None, ""):
        from uml2perf_runtime.platform.machine import Machine

        if not isinstance(machine, Machine):
            machine = Machine.load(machine)  # read once: a machine file may be a FIFO
        if warnings is not None:
            warnings += _larger_machine_warnings(machine, grid_text, nodes)
    result = run_sweep(
        source,
        machine,
        grid_text,
        fixed=fixed,
        procs=procs,
        nodes=nodes,
        seed=seed,
        placement=placement,
        analytic=analytic,
        workers=workers,
        dask_address=dask_address,
        progress=ProgressBar(total, sys.stderr, progress),
        replications=replications,
    )
    _refuse_zero_points(model, result, allow_zero, warnings)
    if replications > 1 and warnings is not None and all(row.get("time_std") == 0 for row in result.rows):
        warnings.append(
            f"warning: the {replications} replications of every point predict the same time: the model has "
            "no random branches, so one run per point gives the same answer"
        )
    if interval:
        from .intervals import add_sweep_intervals

        add_sweep_intervals(
            result,
            spec,
            sidecar,
            fixed,
            procs,
            nodes,
            seed,
            placement,
            samples,
            level,
            str(model),
            SYSTEM_PARAMETERS,
            median_of,
        )
    return result


def _larger_machine_warnings(machine: Any, grid: Mapping[str, list[str]], nodes: int | None) -> list[str]:
    """Node counts beyond the machine's own (``--nodes``, or swept): it runs, on a larger machine."""
    from uml2perf_runtime.platform.machine import Machine

    from .answers import larger_machine_warning

    machine_obj = machine if isinstance(machine, Machine) else Machine.load(machine)
    found = []
    if nodes is not None and nodes > machine_obj.nodes:
        found.append(larger_machine_warning(machine_obj, nodes))
    swept = []
    for key, values in grid.items():
        names = axis_names(key)
        if "nodes" in names:
            at = names.index("nodes")
            swept += [int(v.split(":")[at]) for v in values if v.split(":")[at].strip().isdigit()]
    beyond = max((n for n in swept if n > machine_obj.nodes), default=None)
    if beyond is not None:
        found.append(larger_machine_warning(machine_obj, beyond, "the grid's nodes={}"))
    return found


def _refuse_zero_points(
    model: Any, result: SweepResult, allow_zero: bool, warnings: list[str] | None
) -> None:
    """Points predicted at 0 s although the model's elements take time: say which (``run`` says why)."""
    zero = [row for row in result.rows if row["time"] == 0]
    if not zero:
        return
    names = [p for p in result.parameters]
    shown = ", ".join(" ".join(f"{name}={row[name]}" for name in names) or "the point" for row in zero[:3])
    message = (
        f"the predicted time is 0 s at {len(zero)} of {len(result.rows)} points ({shown}"
        f"{' ...' if len(zero) > 3 else ''}) although the model has elements that take time: none of them ran"
    )
    if allow_zero:
        if warnings is not None:
            warnings.append(f"{Path(str(model)).name}: warning: {message} (--allow-zero: reported as 0 s)")
        return
    raise ModelError(
        message,
        Location(file=str(model)),
        hint="'uml2perf run' on one of these points names what never ran and why; --allow-zero accepts 0 s",
    )


class _SweepModule(types.ModuleType):
    """This module, callable as its function :func:`sweep`: ``uml2perf.sweep(model, grid, ...)``.

    ``uml2perf.sweep`` names this module once anything imports it (Python sets a package's
    attribute to its submodule), so the API function of that name is reached through it.
    """

    def __call__(self, model: str | Path, grid: Mapping[str, Iterable[Any]], **options: Any) -> SweepResult:
        return sweep(model, grid, **options)


sys.modules[__name__].__class__ = _SweepModule

__all__ = [
    "parse_grid",
    "typed_grid",
    "split_axes",
    "ModelSource",
    "model_source",
    "sweep",
    "load_spec",
    "run_sweep",
    "simulate_point",
    "SweepResult",
    "format_table",
    "to_csv",
    "to_json",
]
