"""``uml2perf compare A.json B.json``: two saved predictions side by side.

Two results of ``run --json`` — the same model on two machines, or two
versions of a model — compared: the predicted times, and every element's
inclusive time with the difference, largest change first.  Results of
different models are refused (their elements cannot be matched).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .errors import InputError, Location

__all__ = ["compare", "load_result", "format_comparison"]

_REQUIRED = ("time", "model", "elements", "processes")


def _seconds(value: object) -> bool:
    """A time as a saved prediction holds it: a finite number of seconds, not negative."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def load_result(path: str | Path) -> dict[str, Any]:
    """A saved ``run --json`` result, checked for the fields a comparison needs."""
    from uml2perf_runtime.output.files import InputFileError, read_text_input
    from uml2perf_runtime.output.structured import StructureError, loads_json

    shown = str(path)
    try:
        data = loads_json(read_text_input(path, what="result file"), "result file")
    except (InputFileError, StructureError) as exc:
        raise InputError(exc.message, Location(file=shown), hint=exc.hint) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not a JSON file: {exc.msg} (line {exc.lineno}, column {exc.colno})",
            Location(file=shown, line=exc.lineno),
            hint="save a prediction with 'uml2perf run MODEL --json > FILE.json'",
        ) from None
    if not isinstance(data, dict):
        raise InputError(
            "not a saved prediction (the JSON is not an object)",
            Location(file=shown),
            hint="save one with 'uml2perf run MODEL --json > FILE.json'",
        )
    missing = [key for key in _REQUIRED if key not in data]
    if missing:
        raise InputError(
            f"not a saved prediction: missing {', '.join(repr(k) for k in missing)}",
            Location(file=shown),
            hint="save one with 'uml2perf run MODEL --json > FILE.json'",
        )
    time = data["time"]
    if not _seconds(time):
        raise InputError(
            f"'time' is {time!r}, not a number of seconds (finite, at least 0)", Location(file=shown)
        )
    if not isinstance(data["elements"], list):
        raise InputError("'elements' is not a list", Location(file=shown))
    for row in data["elements"]:
        if (
            not isinstance(row, dict)
            or not isinstance(row.get("name"), str)
            or not _seconds(row.get("inclusive"))
        ):
            raise InputError(
                "an entry of 'elements' lacks a 'name' or a number of seconds 'inclusive' "
                "(finite, at least 0)",
                Location(file=shown),
            )
    return data


def compare(a: dict[str, Any], b: dict[str, Any], *, a_name: str = "A", b_name: str = "B") -> dict[str, Any]:
    """The comparison of two loaded results (see the module documentation)."""
    if a["model"] != b["model"]:
        raise InputError(
            f"the results are of different models ({a['model']!r} in {a_name}, {b['model']!r} in {b_name})",
            Location(file=b_name),
            hint="compare predictions of the same model (on two machines, say)",
        )
    rows_a = {row["name"]: row for row in a["elements"]}
    rows_b = {row["name"]: row for row in b["elements"]}
    elements = []
    for name in dict.fromkeys([*rows_a, *rows_b]):
        ia = float(rows_a[name]["inclusive"]) if name in rows_a else 0.0
        ib = float(rows_b[name]["inclusive"]) if name in rows_b else 0.0
        difference = ib - ia
        if abs(difference) <= 1e-9 * max(abs(ia), abs(ib)):
            difference = 0.0  # the same time summed in another order
        elements.append(
            {
                "element": name,
                "a": ia,
                "b": ib,
                "difference": difference,
                "ratio": ib / ia if ia > 0 else None,
            }
        )
    elements.sort(key=lambda e: (-abs(e["difference"]), e["element"]))
    ta, tb = float(a["time"]), float(b["time"])
    return {
        "model": a["model"],
        "a": {
            "file": a_name,
            "time": ta,
            "processes": a["processes"],
            "machine": (a.get("machine") or {}).get("name"),
        },
        "b": {
            "file": b_name,
            "time": tb,
            "processes": b["processes"],
            "machine": (b.get("machine") or {}).get("name"),
        },
        "difference": tb - ta,
        "ratio": tb / ta if ta > 0 else None,
        "elements": elements,
    }


def format_comparison(result: dict[str, Any], top: int = 15) -> str:
    """The comparison as a text table."""
    from uml2perf_runtime.output.results import format_time

    a, b = result["a"], result["b"]
    ratio = f"{result['ratio']:.3f}x" if result["ratio"] is not None else "-"
    lines = [
        f"Model '{result['model']}'",
        f"  A: {a['file']}: {a['time']:.6g} s ({a['processes']} processes, machine {a['machine']})",
        f"  B: {b['file']}: {b['time']:.6g} s ({b['processes']} processes, machine {b['machine']})",
        f"  B - A: {result['difference']:+.6g} s (B/A {ratio})",
        "",
        "Elements, largest change of inclusive time first (summed over processes)",
        f"  {'element':<28}{'A':>12}{'B':>12}{'B - A':>13}{'B/A':>9}",
    ]
    for row in result["elements"][:top]:
        change = ("+" if row["difference"] > 0 else "-" if row["difference"] < 0 else "") + format_time(
            abs(row["difference"])
        )
        times = f"{row['ratio']:.3f}x" if row["ratio"] is not None else "new"
        lines.append(
            f"  {row['element']:<28}{format_time(row['a']):>12}{format_time(row['b']):>12}"
            f"{change:>13}{times:>9}"
        )
    if len(result["elements"]) > top:
        lines.append(f"  ... {len(result['elements']) - top} more (see --json)")
    return "\n".join(lines) + "\n"
