"""Results of one evaluation: predicted time, per-process breakdown, per-element profile.

Definitions (also what ``to_dict()`` means):

``time``
    The predicted run time: the latest finish time over all processes.
``nodes``
    The nodes the processes ran on (``Results.nodes`` and ``machine.nodes``: the nodes the
    machine of the run has; the text report says both, "16 nodes x 4 cores: 32 processes on 8 nodes").
``per_process``
    For each process: ``pid``, ``node``, ``time`` (its finish time),
    ``compute``, ``communication``, ``wait`` (seconds of its main thread; the
    wall time of a thread region counts as compute, so for a process that
    never idles they add up to ``time``) and ``threads``: the same three
    categories summed over its threads, in thread-seconds.
``elements``
    One row per element, sorted by inclusive time (descending): ``calls``,
    ``inclusive`` and ``exclusive`` summed over all processes (threads folded
    into their process, in thread-seconds), ``percent`` (share of the summed
    exclusive time of all elements), and the spread across the processes that
    executed the element at least once: ``processes`` (how many), ``mean``,
    ``min``, ``max`` and ``std`` (population standard deviation) of their
    per-process inclusive totals.  Averaging only over executing processes
    keeps, e.g., a root-only action's mean equal to what the root spends.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..analysis.summation import argmax, column_sum, column_sums, table_sum
from ..engine.process import CATEGORY_NAMES

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

#: Columns of a sweep's rows that hold seconds: the text table picks one unit per column, CSV
#: headers say ``_s``, the report draws them as times.
SWEEP_TIME_COLUMNS = (
    "time",
    "compute",
    "comm",
    "wait",
    "time_std",
    "time_ci95_low",
    "time_ci95_high",
    "time_low",
    "time_high",
)


#: A finished :class:`~uml2perf_runtime.engine.simulation.Simulation` (which imports this module).
Simulation = Any


def _refuse_non_finite(model: str, per_process: list[dict[str, Any]], rows: list[dict[str, Any]]) -> None:
    """Stop where sums over processes or threads overflow: no output may hold ``inf`` or ``nan``.

    Each process's time is finite (checked above), but an element's time summed over thousands of
    processes may pass the largest float; the message names the element.
    """
    from ..errors import SimulationError

    for what, table in (("process", per_process), ("element", rows)):
        for row in table:
            for key, value in row.items():
                if isinstance(value, float) and not math.isfinite(value):
                    name = row.get("name", row.get("pid"))
                    raise SimulationError(
                        f"the {key} figure of {what} {name!r} of model '{model}' is {value}: "
                        "its times summed over processes pass the largest number a float can hold",
                        hint="check the cost functions for huge values",
                    )


class Results:
    """What :func:`~uml2perf_runtime.simulate` returns.

    Mutable and compared by value field by field, as a dataclass would be; a plain class because
    generating a dataclass's methods for its many fields costs more at import than the rest of
    this module.
    """

    model: str
    source: str
    machine: dict[str, Any]
    time: float
    processes: int
    nodes: int
    seed: int
    placement: str
    per_process: list[dict[str, Any]]
    elements: list[dict[str, Any]]
    events: int
    wall_time: float
    parameters: dict[str, Any]
    #: Raw timeline when tracing was on: (pid, track, element name, category, start, end).
    timeline: list[tuple[int, int, str, str, float, float]] | None
    #: Performance properties that hold, most severe first (see :mod:`uml2perf_runtime.analysis.properties`).
    properties: list[dict[str, Any]]
    #: With ``--replications``: n, seeds, mean/std/ci95 of the time and of each per-process figure.
    replications: dict[str, Any] | None
    #: Elements on the critical path (element, process, time on the path), when the timeline was kept.
    critical_path: list[dict[str, Any]] | None
    #: What-if runs: the unchanged prediction, and the factors applied.
    base_time: float | None
    speedups: dict[str, float] | None
    #: ``--rank-speedups``: each element that does work at 2x (actions, communication, critical
    #: sections; those on the critical path first), largest gain first.
    ranked_speedups: list[dict[str, Any]] | None
    #: ``device = "auto"``: the chosen processor of each such action, and all-CPU / all-device times.
    mapping: dict[str, str] | None
    alternatives: dict[str, float] | None
    #: On a machine with ``[network.topology]``: per link direction that carried data, busiest
    #: first: ``link`` (its name), ``busy`` (seconds with a flow on it), ``max_flows``, ``bytes``.
    links: list[dict[str, Any]] | None
    #: Uncertain inputs: the prediction interval ``{low, high, level, samples, method, seconds}``.
    interval: dict[str, Any] | None
    #: Uncertain inputs: ``[{input, share}]``, which inputs make the interval's width, most first.
    sensitivity: list[dict[str, Any]] | None

    _FIELDS = (
        "model",
        "source",
        "machine",
        "time",
        "processes",
        "nodes",
        "seed",
        "placement",
        "per_process",
        "elements",
        "events",
        "wall_time",
        "parameters",
        "timeline",
        "properties",
        "replications",
        "critical_path",
        "base_time",
        "speedups",
        "ranked_speedups",
        "mapping",
        "alternatives",
        "links",
        "interval",
        "sensitivity",
    )

    def __init__(
        self,
        model: str,
        source: str,
        machine: dict[str, Any],
        time: float,
        processes: int,
        nodes: int,
        seed: int,
        placement: str,
        per_process: list[dict[str, Any]],
        elements: list[dict[str, Any]],
        events: int = 0,
        wall_time: float = 0.0,
        parameters: dict[str, Any] | None = None,
        timeline: list[tuple[int, int, str, str, float, float]] | None = None,
        properties: list[dict[str, Any]] | None = None,
        replications: dict[str, Any] | None = None,
        critical_path: list[dict[str, Any]] | None = None,
        base_time: float | None = None,
        speedups: dict[str, float] | None = None,
        ranked_speedups: list[dict[str, Any]] | None = None,
        mapping: dict[str, str] | None = None,
        alternatives: dict[str, float] | None = None,
        links: list[dict[str, Any]] | None = None,
        interval: dict[str, Any] | None = None,
        sensitivity: list[dict[str, Any]] | None = None,
    ) -> None:
        self.model = model
        self.source = source
        self.machine = machine
        self.time = time
        self.processes = processes
        self.nodes = nodes
        self.seed = seed
        self.placement = placement
        self.per_process = per_process
        self.elements = elements
        self.events = events
        self.wall_time = wall_time
        self.parameters = {} if parameters is None else parameters
        self.timeline = timeline
        self.properties = [] if properties is None else properties
        self.replications = replications
        self.critical_path = critical_path
        self.base_time = base_time
        self.speedups = speedups
        self.ranked_speedups = ranked_speedups
        self.mapping = mapping
        self.alternatives = alternatives
        self.links = links
        self.interval = interval
        self.sensitivity = sensitivity

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        fields = self._FIELDS
        return tuple(getattr(self, name) for name in fields) == tuple(getattr(other, name) for name in fields)

    __hash__ = None  # type: ignore[assignment]  # mutable and compared by value, as a dataclass

    # -- construction --------------------------------------------------------------

    @classmethod
    def from_simulation(cls, sim: Simulation) -> Results:
        """Collect the statistics of a finished simulation."""
        contexts = sim.contexts
        elements = sim.elements
        per_process = []
        for ctx in contexts:
            t = ctx.totals
            tt = ctx.thread_totals
            per_process.append(
                {
                    "pid": ctx.pid,
                    "node": ctx.node,
                    "time": ctx.finish_time,
                    "compute": t[0],
                    "communication": t[1],
                    "wait": t[2],
                    "threads": {"compute": tt[0], "communication": tt[1], "wait": tt[2]},
                    "oversubscribed": ctx.oversubscribed,
                }
            )
        rows = _element_rows(sim) if elements else []
        timeline = None
        if sim.tracing:
            names = [e.name for e in elements]
            timeline = [
                (pid, track, names[index], CATEGORY_NAMES[cat] if cat >= 0 else "composite", start, end)
                for pid, track, index, cat, start, end in sim.trace_events
            ]
        parameters = {name: sim.overrides.get(name, default) for name, default in sim.spec.parameters}
        time = max((ctx.finish_time for ctx in contexts), default=0.0)
        net = getattr(sim, "link_network", None)
        links = net.link_report(sim.env.now) if net is not None else None
        if links is None and getattr(sim.machine, "topology", None) is not None:
            links = []
        if not math.isfinite(time):
            from ..errors import SimulationError

            raise SimulationError(
                f"the predicted time of model '{sim.spec.name}' is {time}: the costs add up past the largest "
                "number a float can hold",
                hint="check the cost functions for huge values",
            )
        _refuse_non_finite(sim.spec.name, per_process, rows)
        return cls(
            model=sim.spec.name,
            source=sim.spec.source,
            machine=sim.machine.to_dict(),
            time=time,
            processes=sim.nprocs,
            nodes=sim.nnodes,
            seed=sim.rng_seed,
            placement=sim.placement,
            per_process=per_process,
            elements=rows,
            events=sim.events,
            wall_time=sim.wall_time,
            parameters=parameters,
            timeline=timeline,
            properties=_properties(sim, time, links),
            critical_path=_critical_path(sim) if sim.tracing else None,
            links=links,
        )

    def __repr__(self) -> str:
        return (
            f"Results(model={self.model!r}, time={self.time!r}, processes={self.processes}, "
            f"nodes={self.nodes}, machine={self.machine.get('name')!r})"
        )

    # -- queries -------------------------------------------------------------------------

    @property
    def nodes_used(self) -> int:
        """How many nodes the processes ran on (``nodes`` is how many the machine has)."""
        return len({row["node"] for row in self.per_process}) if self.per_process else 0

    def element(self, name: str) -> dict[str, Any]:
        """The profile row of the element called ``name`` (KeyError if none)."""
        for row in self.elements:
            if row["name"] == name:
                return row
        raise KeyError(f"no element named {name!r} in the results of model '{self.model}'")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready results (the keys defined in the module docstring first)."""
        return {
            "time": self.time,
            "processes": self.processes,
            "nodes": self.nodes_used,
            "per_process": self.per_process,
            "elements": self.elements,
            "model": self.model,
            "source": self.source,
            "machine": self.machine,
            "placement": self.placement,
            "seed": self.seed,
            "parameters": self.parameters,
            "events": self.events,
            "wall_time": self.wall_time,
            "properties": self.properties,
            "critical_path": self.critical_path,
            **(
                {"critical_path_note": "a large run: ask for its critical path with --critical-path"}
                if self.critical_path is None
                else {}
            ),
            **({"replications": self.replications} if self.replications is not None else {}),
            **(
                {"interval": self.interval, "sensitivity": self.sensitivity}
                if self.interval is not None
                else {}
            ),
            **({"base_time": self.base_time, "what_if": self.speedups} if self.base_time is not None else {}),
            **({"speedups": self.ranked_speedups} if self.ranked_speedups is not None else {}),
            **(
                {"mapping": self.mapping, "alternatives": self.alternatives}
                if self.mapping is not None
                else {}
            ),
            **self._links_dict(),
        }

    #: The most links ``to_dict`` lists (the busiest first); ``Results.links`` keeps them all.
    LINKS_IN_JSON = 1000

    def _links_dict(self) -> dict[str, Any]:
        """``links`` for JSON: the busiest :attr:`LINKS_IN_JSON`, with a note when there are more."""
        if self.links is None:
            return {}
        most = self.LINKS_IN_JSON
        if len(self.links) <= most:
            return {"links": self.links}
        return {
            "links": self.links[:most],
            "links_note": f"the {most:,} busiest of {len(self.links):,} links (Results.links has them all)",
        }

    def to_dataframe(self, table: str = "elements") -> Any:
        """A table of the results as a pandas DataFrame (needs pandas, imported only here).

        ``table`` is ``"elements"`` (where the time goes: one row per element, most inclusive
        time first) or ``"processes"`` (compute, communication and wait of each process).
        Column names carry their unit (``inclusive_s``), as in the CSV files uml2perf writes.
        """
        if table == "elements":
            return data_frame(self.elements, ELEMENT_COLUMNS)
        if table == "processes":
            return data_frame(self.per_process, PROCESS_COLUMNS)
        raise ValueError(f"no table {table!r}: choose 'elements' or 'processes'")

    # -- files ------------------------------------------------------------------------------

    def write(self, format: str, path: str | os.PathLike[str], **options: Any) -> Path:
        """Write the results as ``format`` (``"text"``, ``"json"``, ``"plot"``, ``"report"``) to ``path``.

        Through the one registry of result writers (:mod:`uml2perf_runtime.output.writers`) and the
        one atomic writer, as ``uml2perf run`` writes them; ``options`` go to the writer
        (``top=`` for text and plot).
        """
        from .writers import write

        return write("run", format, self, path, **options)

    def write_report(self, path: str | os.PathLike[str], **options: Any) -> Path:
        """Write the self-contained HTML report of this run to ``path`` (see ``docs/report.md``).

        The diagram as drawn appears for a run of an XMI export made by :func:`uml2perf.predict`;
        ``command=`` sets the command line the summary shows.
        """
        return self.write("report", path, **options)

    # -- text report ----------------------------------------------------------------------

    def report(self, top: int = 25, max_processes: int = 16) -> str:
        """A readable summary: prediction, per-process breakdown, where the time goes.

        ``top`` limits the element table to the elements with the most inclusive
        time; with more than ``max_processes`` processes the per-process table
        shows min/mean/max instead of one row per process.  Ends with a newline.
        """
        m = self.machine
        used = self.nodes_used
        lines = [
            f"Model '{self.model}' ({self.source}) on machine '{m.get('name')}' "
            f"({self.nodes} node{'s' if self.nodes != 1 else ''} x {m.get('cores_per_node')} cores): "
            f"{self.processes} process{'es' if self.processes != 1 else ''} on {used} "
            f"node{'s' if used != 1 else ''}, placement {self.placement}, seed {self.seed}",
            f"Predicted time: {self.time:.9g} s"
            + (f" ({format_time(self.time)})" if 0 < self.time < 1 else "")
            + self._interval_note()
            + self._replication_note(),
            f"({self.events:,} events simulated in {self.wall_time:.3f} s)",
            "",
        ]
        lines += self._sensitivity_lines()
        lines += self._process_table(max_processes)
        lines.append("")
        lines += self._element_table(top)
        lines += self._mapping_lines()
        lines += self._what_if()
        lines += self._critical_path_lines()
        lines += self._link_lines()
        lines += self._findings()
        return "\n".join(lines) + "\n"

    def _mapping_lines(self) -> list[str]:
        if self.mapping is None:
            return []
        out = ["", 'Mapping of device = "auto" actions (chosen to minimise the whole model\'s time)']
        out += [f"  {name:<28} {device}" for name, device in self.mapping.items()]
        alternatives = ", ".join(
            f"all on {name}: {value:.6g} s" for name, value in (self.alternatives or {}).items()
        )
        out.append(f"  chosen: {self.time:.6g} s; {alternatives}")
        return out

    def _what_if(self) -> list[str]:
        out: list[str] = []
        if self.base_time is not None and self.speedups:
            change = self.time - self.base_time
            share = 100 * change / self.base_time if self.base_time > 0 else 0.0
            factors = ", ".join(f"{name} {factor:g}x faster" for name, factor in self.speedups.items())
            out += [
                "",
                f"What if {factors}: {self.time:.6g} s instead of {self.base_time:.6g} s "
                f"({change:+.6g} s, {share:+.1f}%)",
            ]
        if self.ranked_speedups:
            out += ["", "What to speed up first (each element that does work 2x faster)"]
            base = self.base_time or self.time
            for row in self.ranked_speedups:
                gain = base - row["time"]
                shown = format_time(row["time"])
                saved = f", {100 * gain / base:.1f}%" if base > 0 and gain > 0 else ""
                out.append(f"  {row['element']:<28} {shown:>12}  (saves {format_time(gain)}{saved})")
        return out

    def _critical_path_lines(self, most: int = 5) -> list[str]:
        if not self.critical_path:
            return []
        ranked = critical_path_totals(self.critical_path)
        out = ["", "Critical path (what determines the predicted time)"]
        for name, seconds in ranked[:most]:
            share = 100 * seconds / self.time if self.time > 0 else 0.0
            out.append(f"  {name:<28}{format_time(seconds):>12} {share:5.1f}%")
        return out

    def _link_lines(self, most: int = 5) -> list[str]:
        """The busiest links of a topology (nothing on a machine without one)."""
        if not self.links:
            return []
        out = ["", "Busiest links (seconds carrying data, most messages at once)"]
        for row in self.links[:most]:
            share = 100 * row["busy"] / self.time if self.time > 0 else 0.0
            out.append(
                f"  {row['link']:<34}{format_time(row['busy']):>12} {share:5.1f}%  {row['max_flows']:>5}"
            )
        if len(self.links) > most:
            out.append(f"  ... {len(self.links) - most} more (see --json)")
        return out

    def _interval_note(self) -> str:
        """`` (90% interval 0.13–0.33 s, 200 samples)`` when some input was uncertain."""
        box = self.interval
        if box is None:
            return ""
        runs = box.get("median_of", 1)
        median = f" for the median of {runs} runs" if runs > 1 else ""
        return (
            f" ({box['level']:.0%} interval {box['low']:.4g}–{box['high']:.4g} s{median}, "
            f"{box['samples']} samples)"
        )

    def _sensitivity_lines(self, most: int = 8) -> list[str]:
        if not self.sensitivity:
            return []
        shown = [row for row in self.sensitivity if row["share"] > 0]  # the others: no effect seen
        out = ["Inputs that make the interval (share of the width, by rank correlation over the samples)"]
        out += [f"  {row['input']:<44} {row['share'] * 100:5.1f}%" for row in shown[:most]]
        if len(shown) > most:
            out.append(f"  ... and {len(shown) - most} more")
        return [*out, ""]

    def _replication_note(self) -> str:
        rep = self.replications
        if rep is None:
            return ""
        low, high = rep["ci95"]
        return (
            f", mean of {rep['n']} replications (std {format_time(rep['std'])}, "
            f"95% confidence interval {low:.6g} .. {high:.6g} s)"
        )

    def _findings(self, most: int = 6) -> list[str]:
        """The most severe properties, one line each (nothing when none holds)."""
        if not self.properties:
            return []
        out = ["", "Findings (most severe first; severity = share of the run's process time)"]
        for prop in self.properties[:most]:
            where = prop["element"] or "whole run"
            if prop.get("relative") is not None and prop["element"] is not None:
                where += f" ({prop['relative']:.2f} of the element)"
            sure = f" (held in {prop['confidence']:.0%} of replications)" if prop["confidence"] < 1 else ""
            out.append(f"  {prop['severity']:5.2f}  {prop['property']:<17} {where}: {prop['hint']}{sure}")
        if len(self.properties) > most:
            out.append(f"  ... {len(self.properties) - most} more (see --json)")
        return out

    def _process_table(self, max_processes: int) -> list[str]:
        head = f"  {'':<14}{'time':>12}{'compute':>12}{'comm':>12}{'wait':>12}"
        keys = ("time", "compute", "communication", "wait")
        if self.processes <= max_processes:
            out = ["Per process", head]
            for row in self.per_process:
                label = f"{row['pid']} (node {row['node']})"
                out.append(f"  {label:<14}" + "".join(f"{format_time(row[k]):>12}" for k in keys))
            return out
        out = [f"Per process (over {self.processes} processes)", head]
        data = [[row[k] for k in keys] for row in self.per_process]
        columns = list(zip(*data, strict=True))
        slowest = argmax(columns[0])
        for label, values in (
            ("min", [min(column) for column in columns]),
            ("mean", [total / len(data) for total in column_sums(data, len(keys))]),
            ("max", [max(column) for column in columns]),
        ):
            out.append(f"  {label:<14}" + "".join(f"{format_time(float(x)):>12}" for x in values))
        out.append(f"  slowest process: {self.per_process[slowest]['pid']}")
        return out

    def _element_table(self, max_elements: int) -> list[str]:
        rows = [r for r in self.elements if r["calls"]]
        if not rows:
            return ["No element was executed."]
        width = max(7, *(len(r["name"]) for r in rows[:max_elements]))  # names are never cut
        out = [
            "Where the time goes (summed over processes; threads in thread-seconds)",
            f"  {'element':<{width}} {'kind':<10}{'calls':>10}{'inclusive':>12}{'exclusive':>12}"
            f"{'%excl':>7}{'per call':>12}{'mean/proc':>12}{'min':>12}{'max':>12}{'std':>12}",
        ]
        overlapping = []
        for r in rows[:max_elements]:
            per_call = r["inclusive"] / r["calls"] if r["calls"] else 0.0
            if r["max"] > self.time * (1 + 1e-9):
                overlapping.append(r["name"])
            out.append(
                f"  {r['name']:<{width}} {r['kind'][:10]:<10}{r['calls']:>10,}"
                f"{format_time(r['inclusive']):>12}{format_time(r['exclusive']):>12}"
                f"{r['percent']:>6.1f}%{format_time(per_call):>12}{format_time(r['mean']):>12}"
                f"{format_time(r['min']):>12}{format_time(r['max']):>12}{format_time(r['std']):>12}"
            )
        if len(rows) > max_elements:
            out.append(f"  ... {len(rows) - max_elements} more elements (see --json)")
        if overlapping:
            names = ", ".join(overlapping[:3]) + (" ..." if len(overlapping) > 3 else "")
            out.append(
                f"  ({names}: called on several threads of a process at once, so a process spends more "
                f"thread-seconds in {'them' if len(overlapping) > 1 else 'it'} than the predicted time)"
            )
        return out


def _critical_path(sim: Simulation) -> list[dict[str, Any]]:
    from ..analysis.critical_path import critical_path

    return critical_path(
        sim.trace_events,
        sim.trace_messages,
        [ctx.finish_time for ctx in sim.contexts],
        [e.name for e in sim.elements],
        [e.kind for e in sim.elements],
    )


def _properties(sim: Simulation, time: float, links: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The performance properties of a finished simulation (flat per-process lists, one pass)."""
    from ..analysis.properties import DEFAULT_THRESHOLD, compute_properties, network_contention

    contexts = sim.contexts
    elements = sim.elements
    zeros = [0.0] * len(elements)
    threshold = getattr(sim, "property_threshold", DEFAULT_THRESHOLD)
    net = getattr(sim, "link_network", None)
    found = compute_properties(
        time=time,
        names=[e.name for e in elements],
        kinds=[e.kind for e in elements],
        incl=[ctx.incl for ctx in contexts],
        waits=[ctx.waits if ctx.waits is not None else zeros for ctx in contexts],
        compute=[ctx.totals[0] for ctx in contexts],
        communication=[ctx.totals[1] + ctx.thread_totals[1] for ctx in contexts],
        oversubscribed=[ctx.oversubscribed for ctx in contexts],
        threshold=threshold,
    )
    if net is not None and links:
        found += network_contention(net.lost, net.flows, links, time, sim.nprocs, threshold)
        found.sort(key=lambda p: (-p["severity"], p["property"], p["element"] or ""))
    return found


def _element_rows(sim: Simulation) -> list[dict[str, Any]]:
    """Per-element statistics across processes, sorted by inclusive time.

    Computed column by column (one column per element, one value per process) in the order
    numpy would add them (see ``summation.py``).
    """
    contexts = sim.contexts
    width = len(sim.elements)
    incl_columns = list(zip(*(ctx.incl for ctx in contexts), strict=True))
    call_columns = list(zip(*(ctx.calls for ctx in contexts), strict=True))
    child_columns = None
    if any(ctx.child is not None for ctx in contexts):
        zeros = [0.0] * width
        child_columns = list(
            zip(*(ctx.child if ctx.child is not None else zeros for ctx in contexts), strict=True)
        )
    excl_columns = []
    for j, column in enumerate(incl_columns):
        # Rounding can leave a composite a hair below zero exclusive time: such values, and
        # any below 1e-12 of the inclusive time (at least 1e-12 s), count as zero.
        if child_columns is None:
            excl_columns.append(
                [x if (a := abs(x)) > 1e-12 * (a if a > 1.0 else 1.0) else 0.0 for x in column]
            )
        else:
            excl_columns.append(
                [
                    x if abs(x) > 1e-12 * (i if i > 1.0 else 1.0) else 0.0
                    for x, i in zip(
                        [x - c for x, c in zip(column, child_columns[j], strict=True)], column, strict=True
                    )
                ]
            )
    total_excl = table_sum(list(zip(*excl_columns, strict=True)))
    rows = []
    for elem in sim.elements:
        j = elem.index
        column = incl_columns[j]
        calls = call_columns[j]
        ran = sum(1 for c in calls if c > 0)
        safe = max(ran, 1)
        mean = column_sum([x if c > 0 else 0.0 for x, c in zip(column, calls, strict=True)], width) / safe
        squares = [(d := x - mean) * d if c > 0 else 0.0 for x, c in zip(column, calls, strict=True)]
        std = math.sqrt(column_sum(squares, width) / safe)
        # Equal values summed in another order differ in the last bits: no spread.
        if std <= 1e-12 * abs(mean):
            std = 0.0
        executed = [x for x, c in zip(column, calls, strict=True) if c > 0]
        exclusive = column_sum(excl_columns[j], width)
        rows.append(
            {
                "name": elem.name,
                "id": elem.xmi_id,
                "kind": elem.kind,
                "line": elem.line,
                "calls": sum(calls),
                "inclusive": column_sum(column, width),
                "exclusive": exclusive,
                "percent": 100.0 * exclusive / total_excl if total_excl > 0 else 0.0,
                "processes": ran,
                "mean": mean if ran else 0.0,
                "min": min(executed) if ran else 0.0,
                "max": max(executed) if ran else 0.0,
                "std": std if ran else 0.0,
            }
        )
    rows.sort(key=lambda r: -r["inclusive"])
    return rows


#: (column, key of a row of ``Results.elements``) of ``to_dataframe("elements")``.
ELEMENT_COLUMNS = (
    ("element", "name"),
    ("id", "id"),
    ("kind", "kind"),
    ("line", "line"),
    ("calls", "calls"),
    ("inclusive_s", "inclusive"),
    ("exclusive_s", "exclusive"),
    ("exclusive_percent", "percent"),
    ("processes", "processes"),
    ("mean_per_process_s", "mean"),
    ("min_s", "min"),
    ("max_s", "max"),
    ("std_s", "std"),
)
#: (column, key of a row of ``Results.per_process``) of ``to_dataframe("processes")``.
PROCESS_COLUMNS = (
    ("pid", "pid"),
    ("node", "node"),
    ("time_s", "time"),
    ("compute_s", "compute"),
    ("comm_s", "communication"),
    ("wait_s", "wait"),
)


def data_frame(rows: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, str]]) -> Any:
    """``rows`` as a pandas DataFrame with the given (column, key) pairs; a clear error without pandas."""
    try:
        import pandas
    except ImportError:
        raise ImportError(
            "to_dataframe() needs pandas, which is not installed: pip install pandas "
            "(or use to_dict() / the rows, which need nothing)"
        ) from None
    return pandas.DataFrame(
        [[row.get(key) for _, key in columns] for row in rows], columns=[name for name, _ in columns]
    )


def critical_path_totals(path: Sequence[Mapping[str, Any]]) -> list[tuple[str, float]]:
    """Seconds each element spends on the critical path, the most first (text and HTML reports list these)."""
    total: dict[str, float] = {}
    for entry in path:
        total[entry["element"]] = total.get(entry["element"], 0.0) + entry["time"]
    return sorted(total.items(), key=lambda item: -item[1])


def format_time(seconds: float) -> str:
    """A duration with a readable unit: ``1.5 ms``, ``2.25 s``, ``0``."""
    if seconds == 0:
        return "0"
    if not math.isfinite(seconds):
        return str(seconds)
    magnitude = abs(seconds)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if magnitude >= scale or unit == "ns":
            return f"{seconds / scale:.4g} {unit}"
    return f"{seconds:.4g} s"  # pragma: no cover


__all__ = ["Results", "critical_path_totals", "data_frame", "format_time"]
