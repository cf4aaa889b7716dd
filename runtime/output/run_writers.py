"""The writers of one run's results (text, JSON, plot, report) and of a simulation's trace.

Registered in :mod:`uml2perf_runtime.output.writers` on first use; each renders what the
:class:`~uml2perf_runtime.output.results.Results` (or the traced simulation) already holds, so
the statistics are computed once, when the run ends.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .writers import ResultWriter, register


def _text(results: Any, options: Mapping[str, Any]) -> str:
    return str(results.report(top=options.get("top", 25)))


def _json(results: Any, options: Mapping[str, Any]) -> str:
    return json.dumps(results.to_dict(), indent=2, allow_nan=False) + "\n"


def _plot(results: Any, options: Mapping[str, Any]) -> Callable[[str], None]:
    from .plot import results_content

    suffix = Path(str(options.get("path", "plot.png"))).suffix or ".png"
    return results_content(results, suffix, top=options.get("top", 20))


def _check_plot(path: Any) -> None:
    from .plot import check_plot_target

    check_plot_target(path)


def _report(results: Any, options: Mapping[str, Any]) -> str:
    from .report import render_run_report
    from .writers import diagram_for

    diagram = options.get("diagram")
    return render_run_report(
        results,
        diagram=diagram if diagram is not None else diagram_for(results),
        command=options.get("command"),
    )


def _trace(sim: Any, options: Mapping[str, Any]) -> str:
    from .trace import build_trace

    return json.dumps(build_trace(sim), separators=(",", ":"), allow_nan=False) + "\n"


register(ResultWriter("run", "text", "report", _text, description="the readable summary"))
register(ResultWriter("run", "json", "JSON file", _json, description="every figure as one JSON object"))
register(
    ResultWriter("run", "plot", "plot", _plot, check=_check_plot, description="timeline and profile picture")
)
register(ResultWriter("run", "report", "HTML report", _report, description="one self-contained HTML page"))
register(ResultWriter("simulation", "trace", "trace file", _trace, description="Chrome/Perfetto trace"))
