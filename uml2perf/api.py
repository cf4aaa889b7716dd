"""The Python API behind the command line: read, convert, load and predict.

The CLI is a thin shell over these functions so that scripts and notebooks get
the same behaviour (and the same errors) as the command line.  Heavy imports
happen inside the functions, so ``import uml2perf.api`` stays cheap.
"""

from __future__ import annotations

import marshal
import os
import sys
import types
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from uml2perf_runtime.engine.records import FrozenRecord

from .errors import Diagnostic, InputError, Location, ModelError, Severity, UsageError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from uml2perf_runtime.output.files import InputBytes

    from .model import Model

#: File suffixes that are generated Python models rather than XMI exports.
PYTHON_SUFFIXES = (".py",)


class Conversion(FrozenRecord):
    """What ``convert`` produced: the text, where it went and what was noticed."""

    __slots__ = _FIELDS = ("text", "path", "handler", "diagnostics")
    text: str
    path: Path | None
    handler: str
    diagnostics: tuple[Any, ...]

    def __init__(self, text: str, path: Path | None, handler: str, diagnostics: tuple[Any, ...] = ()):
        put = object.__setattr__
        put(self, "text", text)
        put(self, "path", path)
        put(self, "handler", handler)
        put(self, "diagnostics", diagnostics)


class ModelSource(FrozenRecord):
    """The generated Python source of a model: what sweep workers compile and run.

    It carries no path: a worker needs neither the XMI file nor lxml and Jinja,
    only ``uml2perf_runtime``.  (Like every record of a run, a plain immutable class: building a
    dataclass costs more at start-up than the rest of this module.)
    """

    __slots__ = _FIELDS = ("text", "filename", "activity")
    text: str
    filename: str
    #: the activity a generated ``.py`` module runs (``--activity``); None: its main activity
    activity: str | None

    def __init__(self, text: str, filename: str, activity: str | None = None) -> None:
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "filename", filename)
        object.__setattr__(self, "activity", activity)

    @property
    def digest(self) -> str:
        from .cache import sha256

        return sha256(self.text.encode("utf-8")).hexdigest()


def read(
    path: str | Path,
    *,
    sidecar: str | Path | None = None,
    strict: bool = True,
    default_cost: float | None = None,
) -> Model:
    """Read an XMI export into the neutral model (dialect detected automatically).

    ``default_cost`` (seconds) is the cost of every action without one (as a sidecar's
    ``[defaults] cost``, which it replaces).

    With ``strict`` (the default for converting and running), an error the
    reader only noted (an unknown tag on a profile stereotype, say) stops the
    work here, because going on would silently predict the wrong thing;
    ``uml2perf check`` reads leniently to list every problem at once.
    """
    from .reader import read_model

    model = read_model(path, sidecar=sidecar, default_cost=default_cost_text(default_cost))
    if strict:
        raise_first_error(model.diagnostics)
    return model


def default_cost_text(seconds: float | None) -> str | None:
    """``--default-cost SECONDS`` as the expression the profile reads; refuses what is not a time."""
    if seconds is None:
        return None
    import math

    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise InputError(f"the default cost must be a number of seconds, got {seconds!r}")
    if not math.isfinite(seconds) or seconds < 0:
        raise InputError(
            f"the default cost must be a finite number of seconds of at least 0, got {seconds!r}",
            hint="e.g. --default-cost 1e-3",
        )
    return repr(float(seconds))


def raise_first_error(diagnostics: Iterable[Diagnostic]) -> None:
    """Raise the first error-level diagnostic as a :class:`ModelError`, naming how many there are."""
    errors = [d for d in diagnostics if d.severity == Severity.ERROR]
    if not errors:
        return
    first = errors[0]
    more = f" (and {len(errors) - 1} more: run 'uml2perf check')" if len(errors) > 1 else ""
    raise ModelError(first.message + more, first.location, first.hint)


def convert(
    path: str | Path,
    output: str | Path | None = None,
    *,
    handler: str = "python",
    activity: str | None = None,
    sidecar: str | Path | None = None,
    default_cost: float | None = None,
) -> Conversion:
    """Convert an XMI export with a content handler; write ``output`` atomically when given.

    ``default_cost`` (seconds) is the cost of every action without one, written into the
    generated module.
    """
    from uml2perf_runtime.engine.collector import collector_paused

    from .generation import generate, write_output

    with collector_paused():
        model = read(path, sidecar=sidecar, default_cost=default_cost)
        result = generate(model, handler, activity=activity)
    diagnostics = tuple(getattr(result, "diagnostics", ()) or ())
    if handler == "python":
        diagnostics += _timing_warnings(Path(path), model)
    target: Path | None = None
    if output is not None and str(output) != "-":
        target = Path(output)
        write_output(result.text, target, inputs=(path, sidecar))
    return Conversion(result.text, target, handler, diagnostics)


def _timing_warnings(path: Path, model: Model) -> tuple[Diagnostic, ...]:
    """A converted model in which nothing takes time would predict 0 s: say so when converting."""
    from .check import timing_summary

    actions, untimed, timed = timing_summary(model)
    where = Location(file=path.name)
    if not timed:
        return (
            Diagnostic(
                Severity.WARNING,
                "nothing in this model takes time: the module will refuse to run (it would predict 0 s)",
                where,
                "give the actions costs: a sidecar (--sidecar FILE.toml) with [defaults] cost, or "
                "--default-cost SECONDS for every action without one",
                "untimed-model",
            ),
        )
    if untimed:
        return (
            Diagnostic(
                Severity.WARNING,
                f"{untimed} of {actions} actions have no cost and take no time ('uml2perf check' lists them)",
                where,
                None,
                "actions-without-cost",
            ),
        )
    return ()


def _module_from_source(source: str, name: str, filename: str) -> types.ModuleType:
    """Execute generated (trusted, validated) source as a fresh module object."""
    from .cache import compile_cached

    return _module_from_code(compile_cached(source, filename), source, name, filename)


def _module_from_code(code: types.CodeType, source: str, name: str, filename: str) -> types.ModuleType:
    """Execute generated code as a fresh module; its source is registered so errors can quote it."""
    from uml2perf_runtime.engine.sources import register

    register(filename, source)
    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)  # noqa: S102 - our own generated code, never model text
    finally:
        sys.modules.pop(name, None)
    return module


def _module_from_file(path: Path) -> types.ModuleType:
    """Import a generated model module from a ``.py`` file."""
    import hashlib
    import importlib.util

    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    name = f"uml2perf_model_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError("cannot import this file as a Python module", Location(file=str(path)))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise InputError(
            f"not a valid Python model module: {exc.msg}",
            Location(file=str(path), line=exc.lineno),
            hint="regenerate it with 'uml2perf convert'",
        ) from None
    finally:
        sys.modules.pop(name, None)
    return module


def load_spec(
    model: str | Path | ModelSource,
    *,
    activity: str | None = None,
    sidecar: str | Path | None = None,
    given: Iterable[str] | None = None,
    warnings: list[str] | None = None,
    default_cost: float | None = None,
) -> Any:
    """Return the runtime ``ModelSpec`` of an XMI export, a generated ``.py`` module or a model source.

    ``default_cost`` (seconds) is the cost of every action of an export without one; a
    generated module has its costs already, so it is refused there.

    ``warnings``, when given, receives the warnings reading and generating
    the model produced (the ones ``convert`` prints), also on a cache hit.

    With ``given`` (the names ``--set`` assigns), an XMI model that declares
    variables without a value (MARTE analysis-context parameters) and leaves
    some of them unassigned is an error naming them and how to set them.

    A :class:`ModelSource` is compiled and run once per process (remembered
    by the digest of its text); the other arguments do not apply to it.
    """
    if isinstance(model, ModelSource):
        return _spec_of_source(model)
    p = Path(model)
    if not p.exists():
        raise InputError("no such file", Location(file=str(model)), hint="check the path")
    if p.suffix in PYTHON_SUFFIXES:
        from uml2perf_runtime.model import choose_activity, require_values

        refuse_export_options(default_cost, sidecar)

        spec = choose_activity(module_spec(p), activity)
        if given is not None:
            require_values(spec, given)
        return spec
    from uml2perf_runtime.output.files import InputBytes

    generated = _generated_for_run(
        model if isinstance(model, InputBytes) else p, activity, sidecar, default_cost_text(default_cost)
    )
    if given is not None and generated.required:
        _require_values(generated.required, given)
    require_timing(p, generated.timing, warnings)
    if warnings is not None:
        warnings.extend(generated.warnings)
    module = _module_from_code(generated.code, generated.source, "uml2perf_model", generated.filename)
    return _spec_of_module(module, str(model))


def refuse_export_options(default_cost: float | None, sidecar: str | Path | None) -> None:
    """``--default-cost`` and ``--sidecar`` change how an export is read: a generated module was read."""
    if default_cost is not None:
        raise UsageError(
            "--default-cost applies to an XMI export: a generated module has its costs already",
            hint="convert the export again with --default-cost SECONDS",
        )
    if sidecar is not None:
        raise UsageError(
            "--sidecar applies to an XMI export: a generated module has its costs already",
            hint="convert the export again with --sidecar FILE.toml",
        )


def module_spec(path: Path) -> Any:
    """The ``MODEL`` of a generated ``.py`` module as written (its main activity may be None)."""
    if not path.exists():
        raise InputError("no such file", Location(file=str(path)), hint="check the path")
    return _spec_of_module(_module_from_file(path), str(path))


def _spec_of_module(module: types.ModuleType, shown: str) -> Any:
    spec = getattr(module, "MODEL", None)
    if spec is None:
        raise ModelError(
            "this Python file defines no MODEL",
            Location(file=shown),
            hint="pass an XMI export or a module written by 'uml2perf convert'",
        )
    return spec


_SPECS: dict[str, Any] = {}


def _spec_of_source(source: ModelSource) -> Any:
    """Compile and run a model source once per process (remembered by its content)."""
    from uml2perf_runtime.model import choose_activity

    key = source.digest
    spec = _SPECS.get(key)
    if spec is None:
        module = _module_from_source(source.text, f"uml2perf_sweep_{key[:12]}", source.filename)
        spec = _SPECS[key] = _spec_of_module(module, source.filename)
    return choose_activity(spec, source.activity)


class _Generated:
    """What ``run`` needs of a generated model: code, source (for messages), warnings, required variables.

    A plain class rather than a dataclass: it is built on every run, also from the cache, and a
    dataclass costs more to define than the rest of this module to import.
    """

    __slots__ = ("code", "source", "filename", "warnings", "required", "timing")

    def __init__(
        self,
        code: types.CodeType,
        source: str,
        filename: str,
        warnings: tuple[str, ...],
        required: tuple[dict[str, Any], ...],
        timing: tuple[int, int, bool],
    ) -> None:
        self.code = code
        self.source = source
        self.filename = filename
        self.warnings = warnings
        self.required = required
        #: (actions, actions without a cost, whether anything takes time)
        self.timing = timing


def _generated_for_run(
    path: Path | InputBytes, activity: str | None, sidecar: str | Path | None, default_cost: str | None
) -> _Generated:
    """The generated module of an XMI export, from the verified cache when nothing it depends on changed.

    The key is a digest of the input's bytes, the sidecar's bytes, the chosen
    activity and uml2perf's own files, so a hit needs neither lxml nor Jinja.
    """
    from .cache import key_of, open_cache, package_fingerprint, sha256

    cache = open_cache()
    key = None
    source: str | os.PathLike[str] = path
    filename = f"<generated from {Path(path).name}>"
    if cache is not None:
        # read once: the key and the model come from the same bytes, whatever happens to the files
        model_in = _read_once(path, "model file")
        sidecar_in = _read_once(sidecar, "sidecar file") if sidecar is not None else None
        key = key_of(
            _ENTRY_FORMAT,
            sha256(model_in.data).digest(),
            sha256(sidecar_in.data if sidecar_in is not None else b"").digest(),
            # the sidecar's path as given appears in the warnings about it
            "" if sidecar is None else str(sidecar),
            activity or "",
            default_cost or "",
            filename,
            package_fingerprint(),
        )
        source, sidecar = model_in, sidecar_in
        hit = _decode_generated(cache.get("module", key), filename)
        if hit is not None:
            return hit
    from uml2perf_runtime.engine.collector import collector_paused

    from .generation import generate
    from .profile import main_activity, unset_variables

    with collector_paused():
        model = read_model_checked(source, sidecar, default_cost)
        result = generate(model, "python", activity=activity, options={"require_main": True})

    required = tuple(
        {
            "name": v.name,
            "file": v.location.file,
            "line": v.location.line,
            "element_id": v.location.element_id,
            "element": v.location.name,
            "uml_type": v.location.uml_type,
        }
        for v in unset_variables(model, main_activity(model, activity), ())
    )
    warnings = tuple(
        str(d)
        for d in (*model.diagnostics, *getattr(result, "diagnostics", ()))
        if getattr(d, "severity", None) == Severity.WARNING
    )
    from .check import timing_summary

    generated = _Generated(
        _compiled(result.text, filename, path),
        result.text,
        filename,
        tuple(dict.fromkeys(warnings)),
        required,
        timing_summary(model),
    )
    if cache is not None and key is not None:
        cache.put("module", key, _encode_generated(generated))
    return generated


def _is_export(path: Any) -> bool:
    """An existing XMI export (not a model source, not a generated module, not a missing file)."""
    from uml2perf_runtime.output.files import InputBytes

    if isinstance(path, ModelSource) or isinstance(path, InputBytes):
        return False
    return Path(path).suffix not in PYTHON_SUFFIXES and Path(path).exists()


def _read_once(path: str | os.PathLike[str], what: str) -> InputBytes:
    """An input read into memory once (the input rules apply), its problems as input errors."""
    from uml2perf_runtime.output.files import InputBytes, InputFileError, read_once

    try:
        data = read_once(path, what=what)
    except InputFileError as exc:
        raise InputError(exc.message, Location(file=str(path)), hint=exc.hint) from None
    assert isinstance(data, InputBytes)
    return data


def read_model_checked(
    path: str | os.PathLike[str], sidecar: str | os.PathLike[str] | None, default_cost: str | None
) -> Model:
    """:func:`read` with the default cost already an expression."""
    from .reader import read_model

    model = read_model(path, sidecar=sidecar, default_cost=default_cost)
    raise_first_error(model.diagnostics)
    return model


def _compiled(source: str, filename: str, path: Path) -> types.CodeType:
    """Compile a generated module; a module too deep for Python's compiler is a model error."""
    try:
        return compile(source, filename, "exec")
    except (RecursionError, MemoryError, SyntaxError) as exc:
        raise ModelError(
            f"the generated model is too deeply nested for Python's compiler ({type(exc).__name__})",
            Location(file=str(path)),
            hint="split the diagram into activities of their own (called with CallBehaviorActions)",
        ) from None


#: Layout of a ``module`` cache entry (part of its key: an entry of another layout is never read).
_ENTRY_FORMAT = "run-module-3"


def _encode_generated(generated: _Generated) -> bytes:
    """One marshalled tuple: plain strings, numbers, dicts and the code object (nothing pickled)."""
    return marshal.dumps(
        (
            generated.warnings,
            generated.required,
            generated.source,
            generated.timing,
            generated.code,
        )
    )


def _decode_generated(payload: bytes | None, filename: str) -> _Generated | None:
    """A cache entry back (the cache has verified its digest); anything malformed is a miss."""
    if payload is None:
        return None
    try:
        warnings, required, source, timing, code = marshal.loads(payload)
        if not isinstance(code, types.CodeType) or code.co_filename != filename:
            return None
        actions, untimed, timed = timing
        return _Generated(
            code,
            str(source),
            filename,
            tuple(map(str, warnings)),
            tuple(dict(r) for r in required),
            (int(actions), int(untimed), bool(timed)),
        )
    except (ValueError, TypeError, KeyError, EOFError):
        return None


def require_timing(path: Path, timing: tuple[int, int, bool], warnings: list[str] | None) -> None:
    """Refuse a model in which nothing takes time; count the actions without a cost once."""
    actions, untimed, timed = timing
    if not timed:
        what = f"none of its {actions} actions has a cost" if actions else "it has no actions"
        raise ModelError(
            f"nothing in this model takes time: {what}, and nothing communicates, so every prediction "
            "would be 0 s",
            Location(file=str(path)),
            hint="give the actions costs: an action+ stereotype with a cost tag, a MARTE PaStep "
            'hostDemand, a sidecar (--sidecar FILE.toml) with [defaults] cost = "1e-3" or '
            '[elements."NAME"] cost = ..., or one cost for every action without one: '
            "--default-cost SECONDS",
        )
    if untimed and warnings is not None:
        warnings.append(
            f"{path.name}: warning: {untimed} of {actions} actions have no cost and take no time "
            "('uml2perf check' lists them)"
        )


def _require_values(required: Iterable[dict[str, Any]], given: Iterable[str]) -> None:
    """Stop before simulating when a variable the model leaves without a value is not set."""
    from uml2perf_runtime.model import unset_variables_message

    supplied = set(given)
    missing = [
        types.SimpleNamespace(
            name=r["name"],
            location=Location(
                file=r["file"],
                line=r["line"],
                element_id=r["element_id"],
                name=r["element"],
                uml_type=r["uml_type"],
            ),
        )
        for r in required
        if r["name"] not in supplied
    ]
    if missing:
        # one text for the XMI and for a generated module (uml2perf_runtime.model.require_values)
        message, hint = unset_variables_message([m.name for m in missing])
        raise ModelError(message, missing[0].location, hint)


def predict(
    path: str | Path,
    *,
    machine: Any = None,
    procs: int | None = None,
    nodes: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    seed: int = 0,
    placement: str | None = None,
    trace: str | Path | bool | None = None,
    activity: str | None = None,
    sidecar: str | Path | None = None,
    max_time: float | None = None,
    progress: bool = False,
    warnings: list[str] | None = None,
    replications: int = 1,
    min_severity: float | None = None,
    critical_path: bool | str = "auto",
    speedups: Mapping[str, float] | None = None,
    rank_speedups: bool = False,
    default_cost: float | None = None,
    allow_zero: bool = False,
    samples: int | None = None,
    level: float | None = None,
    interval: bool = True,
    median_of: int = 1,
) -> Any:
    """Read (or import) a model and simulate it; returns the runtime's ``Results``.

    ``warnings``, when given, receives the model's warnings (printed by ``run``).
    ``replications`` runs the model with that many seeds (``seed``, ``seed + 1``...)
    and returns the first run with ``time`` the mean and ``replications`` the
    statistics (a model whose replications all take the same time says so in
    ``warnings``: it has no random branches); ``min_severity`` bounds the performance
    properties reported.  ``critical_path`` fills ``critical_path`` (``"auto"``, the default
    and what ``run --json`` does: only for runs of at most :data:`AUTO_CRITICAL_PATH_EVENTS`
    events; ``False``: never); ``speedups`` (element name or id
    -> factor) predicts as if those elements were that much faster, keeping
    the unchanged prediction in ``base_time``; ``rank_speedups`` tries the
    elements that do work at 2x (those on the critical path first) and lists the
    gains.  ``default_cost`` (seconds) is the cost of every action of an export without one.
    A prediction of 0 s from a model in which elements take time is an error
    (:class:`ModelError`) naming what never ran, unless ``allow_zero`` (then a warning).

    ``machine`` is a ``Machine``, a TOML file or the name of a bundled machine (``gescher``,
    ``laptop``, ``cluster-modern``, ``gpu-node``); ``trace`` is a trace file to write, or
    ``True`` to keep the timeline in memory (for plots).

    When the machine file or the sidecar gives inputs as intervals ``{ value, low, high }``
    (and ``interval`` is true), ``samples`` more predictions at values drawn through them give
    ``Results.interval`` (its ``level`` share, default 90%) and ``Results.sensitivity`` (see
    :mod:`uml2perf.intervals`); the prediction itself stays the one at the values.  ``median_of``
    makes the interval one for the median of that many launches of the program (default 1).
    """
    from uml2perf_runtime import simulate
    from uml2perf_runtime.engine.collector import release_cycles

    from .answers import (
        checked_overrides,
        larger_machine_warning,
        ranked_speedups,
        refuse_zero_time,
        what_if_notes,
    )

    if not isinstance(replications, int) or isinstance(replications, bool) or replications < 1:
        raise InputError(
            f"the number of replications must be a whole number of at least 1, got {replications!r}",
            Location(file=str(path)),
        )
    from uml2perf_runtime.engine.limits import current

    current().check("replications", replications, "the number of replications")
    if sidecar is not None and not isinstance(path, ModelSource):
        # read once: the model, the cache key and the interval's inputs all come from these bytes
        sidecar = _read_once(sidecar, "sidecar file")
    if _is_export(path):
        # read once: the model, the cache key and the report's diagram all come from these bytes
        path = _read_once(path, "model file")
    spec = load_spec(
        path,
        activity=activity,
        sidecar=sidecar,
        given=tuple(overrides or ()),
        warnings=warnings,
        default_cost=default_cost,
    )
    checked_overrides(spec, dict(overrides or {}))
    machine_obj = _machine(machine)
    if nodes is not None and machine_obj is not None and nodes > machine_obj.nodes and warnings is not None:
        warnings.append(larger_machine_warning(machine_obj, nodes))

    def run_once(index: int, factors: Mapping[str, float] | None, keep_path: bool, first: bool) -> Any:
        if not first:
            release_cycles()  # `run` pauses the collector for the whole command (see cli.main)
        return simulate(
            spec,
            machine=machine_obj,
            procs=procs,
            nodes=nodes,
            overrides=dict(overrides or {}),
            seed=seed + index,
            placement=placement,
            trace=(trace if isinstance(trace, bool) or trace is None else str(trace)) if first else None,
            max_time=max_time,
            progress=progress and first,
            min_severity=min_severity,
            critical_path=keep_path,
            speedups=factors,
        )

    want_path = critical_path is True or rank_speedups
    runs = [run_once(0, speedups, want_path, True)]
    if not isinstance(path, ModelSource) and Path(path).suffix in PYTHON_SUFFIXES:
        from uml2perf_runtime.model import require_time

        require_time(spec, runs[0])  # an export was checked before: a module is checked by its run
    refuse_zero_time(path, runs[0], allow_zero, warnings)
    if critical_path == "auto" and not want_path and runs[0].events <= AUTO_CRITICAL_PATH_EVENTS:
        # a small run: one more run with its timeline costs little
        runs[0].critical_path = run_once(0, speedups, True, False).critical_path
    runs += _more_replications(run_once, replications, speedups, runs[0].wall_time, progress)
    if replications > 1 and warnings is not None and len({r.time for r in runs}) == 1:
        warnings.append(
            f"warning: the {replications} replications all predict {runs[0].time:.9g} s: the model has no "
            "random branches, so one run gives the same answer (--replications is for models that draw "
            "random numbers)"
        )
    if replications == 1:
        result = runs[0]
    else:
        from uml2perf_runtime.analysis.replications import summarise

        result = summarise(runs)
    if interval:
        _add_interval(
            result,
            spec,
            machine_obj,
            sidecar,
            path,
            samples,
            level,
            dict(procs=procs, nodes=nodes, overrides=dict(overrides or {}), seed=seed, placement=placement),
            max_time,
            dict(speedups or {}),
            median_of,
        )
    if speedups:
        base_runs = [run_once(index, None, False, False) for index in range(replications)]
        result.base_time = sum(r.time for r in base_runs) / len(base_runs)
        result.speedups = dict(speedups)
        if warnings is not None:
            warnings += what_if_notes(result, speedups)
    if not isinstance(path, ModelSource):
        # where the run came from, so that its report can draw the diagram as drawn (uml2perf.report)
        result.model_origin = {
            "path": str(path),
            "input": path if not isinstance(path, (str, Path)) else None,  # the bytes read (InputBytes)
            "activity": activity,
            "sidecar": sidecar,
            "default_cost": default_cost,
            "provider": "uml2perf.report",
        }
    if rank_speedups:
        result.ranked_speedups = ranked_speedups(
            result,
            lambda name: [
                run_once(
                    index, {**(speedups or {}), name: 2.0 * (speedups or {}).get(name, 1.0)}, False, False
                ).time
                for index in range(replications)
            ],
        )
    return result


def _machine(machine: Any) -> Any:
    """``machine`` as a ``Machine``: itself, a machine file or bundled machine read, or None (the default).

    A machine file parsed before is taken from the cache (:func:`uml2perf.cache.parsed_toml`).
    """
    from uml2perf_runtime import Machine

    if isinstance(machine, Machine) or not machine:
        return machine or None
    from .cache import parsed_toml

    return Machine.load(machine, parse=parsed_toml)


def _add_interval(
    result: Any,
    spec: Any,
    machine: Any,
    sidecar: Any,
    path: Any,
    samples: int | None,
    level: float | None,
    run: dict[str, Any],
    max_time: float | None,
    speedups: dict[str, float],
    median_of: int = 1,
) -> None:
    """``result.interval`` and ``result.sensitivity`` when some input is uncertain (else nothing)."""
    car = None
    if sidecar is not None:
        from .profile.sidecar import load_sidecar

        car = load_sidecar(sidecar)
    if getattr(machine, "uncertain", None) is None and not getattr(car, "uncertain", None):
        # nothing uncertain (what uncertain_inputs would find): a plain run never loads the interval
        # module, which imports numpy (about 0.1 s of every run's start-up)
        return
    from .intervals import (
        DEFAULT_LEVEL,
        DEFAULT_SAMPLES,
        Sampler,
        check_options,
        prediction_interval,
        uncertain_inputs,
    )

    where = str(sidecar or getattr(machine, "source", None) or path)
    samples = DEFAULT_SAMPLES if samples is None else samples
    level = DEFAULT_LEVEL if level is None else level
    check_options(samples, level, where, median_of)
    inputs = uncertain_inputs(
        machine,
        car,
        result.parameters,
        tuple(run["overrides"]),
        where,
        median_of,
        getattr(spec, "operations", ()),
    )
    if not inputs:
        return
    sampler = Sampler(spec, machine, inputs, max_time=max_time, speedups=speedups, **run)
    found = prediction_interval(sampler, samples, level)
    result.interval = found["interval"] | {"median_of": median_of}
    result.sensitivity = found["sensitivity"]


#: ``critical_path="auto"`` (``run --json``) finds the critical path of runs of at most this many events;
#: larger runs say how to ask for it (keeping their timeline would cost them time and memory).
AUTO_CRITICAL_PATH_EVENTS = 50_000

#: Replications run in parallel processes when the remaining ones would take longer than this (seconds).
PARALLEL_REPLICATIONS_AFTER = 2.0


def _more_replications(
    run_once: Any, replications: int, speedups: Any, first_wall: float, progress: bool = False
) -> list[Any]:
    """Replications 1..N-1: in forked worker processes when the work is large, else one after another.

    With ``progress``, a counted bar with the time left follows them when they take a while.
    """
    import os

    from uml2perf_runtime.output.progress import ProgressBar

    remaining = range(1, replications)
    workers = min(os.cpu_count() or 1, len(remaining))
    large = first_wall * len(remaining) > PARALLEL_REPLICATIONS_AFTER
    bar = ProgressBar(len(remaining), sys.stderr, progress and large, label="replications")
    try:
        if workers < 2 or not large or sys.platform != "linux":
            runs = []
            for index in remaining:
                runs.append(run_once(index, speedups, False, False))
                bar.advance()
            return runs
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        _FORKED[:] = [(run_once, speedups)]  # inherited by the forked workers: nothing to pickle but seeds
        try:
            with ProcessPoolExecutor(
                max_workers=workers, mp_context=multiprocessing.get_context("fork")
            ) as pool:
                runs = []
                for run in pool.map(_replication_in_worker, remaining):  # in seed order
                    runs.append(run)
                    bar.advance()
                return runs
        finally:
            _FORKED.clear()
    finally:
        bar.close()


_FORKED: list[Any] = []


def _replication_in_worker(index: int) -> Any:
    run_once, speedups = _FORKED[0]
    result = run_once(index, speedups, False, False)
    result.timeline = None
    return result
