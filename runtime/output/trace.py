"""Chrome / Perfetto trace-event JSON of a simulation.

Open the file in https://ui.perfetto.dev or ``chrome://tracing``.  Layout:

* one trace *process* per simulated process (``pid`` = rank, named
  ``rank 5 (node 1)`` and sorted by rank), so Perfetto groups each rank's
  tracks together;
* one *thread* track per context: ``tid`` 0 is the process's main thread, the
  threads of parallel regions, forks, pipelines and task pools get tracks 1, 2,
  ... in creation order (named ``thread 2 of 4``);
* complete events (``ph: "X"``) named after the element, with category
  ``compute``, ``comm``, ``wait`` or ``composite`` (calls, loops, regions),
  times in microseconds; the element's XMI id and kind are in ``args``;
* flow arrows (``ph: "s"``/``"f"``) from sender to receiver for every message
  the communication layer reports through ``ctx.record_message``;
* on a machine with ``[network.topology]``, one more trace process ``network links`` (after the
  ranks) with a counter track per link direction that carried data: ``flows`` on it and
  ``load``, the share of its bandwidth in use, after every change.

Events are sorted by (rank, track, start, longest first), so the output is
deterministic and timestamps are monotonic on every track.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..engine.process import CATEGORY_NAMES

#: A finished :class:`~uml2perf_runtime.engine.simulation.Simulation` (which imports this module).
Simulation = Any

_US = 1e6  # trace timestamps are microseconds


def _us(seconds: float) -> float:
    return round(seconds * _US, 6)


def build_trace(sim: Simulation) -> dict[str, Any]:
    """The trace of a finished, traced simulation as a JSON-ready dict."""
    elements = sim.elements
    events: list[dict[str, Any]] = []
    for ctx in sim.contexts:
        events.append(
            {
                "ph": "M",
                "name": "process_name",
                "pid": ctx.pid,
                "tid": 0,
                "args": {"name": f"rank {ctx.pid} (node {ctx.node})"},
            }
        )
        events.append(
            {
                "ph": "M",
                "name": "process_sort_index",
                "pid": ctx.pid,
                "tid": 0,
                "args": {"sort_index": ctx.pid},
            }
        )
        events.append({"ph": "M", "name": "thread_name", "pid": ctx.pid, "tid": 0, "args": {"name": "main"}})
    for (pid, track), label in sorted(sim.track_labels.items()):
        events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": track, "args": {"name": label}})
        events.append(
            {"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": track, "args": {"sort_index": track}}
        )

    slices = sorted(sim.trace_events, key=lambda e: (e[0], e[1], e[4], -(e[5] - e[4]), e[2], e[3]))
    for pid, track, index, category, start, end in slices:
        elem = elements[index]
        args: dict[str, Any] = {"kind": elem.kind}
        if elem.xmi_id:
            args["id"] = elem.xmi_id
        if elem.line:
            args["line"] = elem.line
        events.append(
            {
                "ph": "X",
                "name": elem.name,
                "cat": CATEGORY_NAMES[category] if category >= 0 else "composite",
                "pid": pid,
                "tid": track,
                "ts": _us(start),
                "dur": _us(end - start),
                "args": args,
            }
        )

    for number, (src, dst, size, tag, sent, received) in enumerate(sim.trace_messages):
        flow = {
            "name": "message",
            "cat": "message",
            "id": number,
            "args": {"size": size, "tag": tag, "from": src, "to": dst},
        }
        events.append({**flow, "ph": "s", "pid": src, "tid": 0, "ts": _us(sent)})
        events.append({**flow, "ph": "f", "bp": "e", "pid": dst, "tid": 0, "ts": _us(received)})

    events += _link_counters(sim)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "model": sim.spec.name,
            "source": sim.spec.source,
            "machine": sim.machine.name,
            "processes": sim.nprocs,
            "nodes": sim.nnodes,
            "seed": sim.rng_seed,
        },
    }


def _link_counters(sim: Simulation) -> list[dict[str, Any]]:
    """Counter tracks of the links' load (nothing without a topology or messages between nodes)."""
    net = getattr(sim, "link_network", None)
    if net is None or not net.samples:
        return []
    pid = sim.nprocs
    events: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "network links"}},
        {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}},
    ]
    names = net.fabric.names
    for when, link, flows, load in net.samples:
        events.append(
            {
                "ph": "C",
                "name": names[link],
                "pid": pid,
                "tid": 0,
                "ts": _us(when),
                "args": {"flows": flows, "load": round(load, 9)},
            }
        )
    return events


def write_trace(path: str | os.PathLike[str], sim: Simulation) -> Path:
    """Write the trace atomically (a temporary file renamed into place), by the trace's result writer."""
    from .writers import write

    return write("simulation", "trace", sim, path)


__all__ = ["build_trace", "write_trace"]
