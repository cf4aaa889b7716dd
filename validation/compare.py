"""Two suite runs side by side: their calibrations key by key, their summaries, their cases.

    python validation/compare.py RUN1_DIR RUN2_DIR [-o side-by-side.md]

Each folder is a suite run's ``--out`` (``machine.toml`` from ``uml2perf calibrate`` and
``results.json``).  Markdown: every measured key of the first calibration with its interval,
the second's value, and whether that value lies inside the first's interval (the share of keys
that do is how well one calibration's intervals hold the next); then both summaries and every
case's error and coverage in both runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tomllib
from pathlib import Path
from typing import Any


def measured_keys(path: Path) -> dict[str, tuple[float, float, float]]:
    """Every number of a machine file by key path: ``(value, low, high)`` (low = high = value when plain)."""
    from uml2perf_runtime.platform.uncertain import is_interval, path_text

    found: dict[str, tuple[float, float, float]] = {}

    def walk(data: Any, path: tuple[Any, ...]) -> None:
        if is_interval(data):
            value = float(data["value"])
            found[path_text(path)] = (value, float(data.get("low", value)), float(data.get("high", value)))
        elif isinstance(data, dict):
            for key, item in data.items():
                walk(item, (*path, key))
        elif isinstance(data, list) and path and path[-1] == "ranges":
            low = 0
            for item in data:  # a range is named by its sizes: the cuts may differ between calibrations
                up_to = item.get("up_to") if isinstance(item, dict) else None
                high = int(up_to) if up_to is not None else "inf"
                walk(item, (*path[:-1], f"ranges[{low}..{high}]"))
                low = high
        elif isinstance(data, list):
            for index, item in enumerate(data):
                walk(item, (*path, index))
        elif isinstance(data, (int, float)) and not isinstance(data, bool):
            found[path_text(path)] = (float(data), float(data), float(data))

    walk(tomllib.loads(path.read_text()), ())
    for key in ("nodes", "cores_per_node", "speed"):
        found.pop(key, None)
    return {key: value for key, value in found.items() if not key.endswith("up_to")}


def keys_table(first: Path, second: Path) -> tuple[list[str], int, int]:
    """Markdown rows of the two calibrations' keys, and how many of the second's values lie in the first's."""
    a, b = measured_keys(first), measured_keys(second)
    rows = [
        "| key | first: value (5th..95th) | second: value (5th..95th) | second inside first's interval |",
        "|---|---|---|---|",
    ]
    inside = total = 0
    for key in a:
        if key not in b:
            rows.append(f"| `{key}` | {_shown(a[key])} | (not written) | — |")
            continue
        total += 1
        ok = a[key][1] <= b[key][0] <= a[key][2]
        inside += ok
        rows.append(f"| `{key}` | {_shown(a[key])} | {_shown(b[key])} | {'yes' if ok else 'no'} |")
    for key in b:
        if key not in a:
            rows.append(f"| `{key}` | (not written) | {_shown(b[key])} | — |")
    return rows, inside, total


def _shown(v: tuple[float, float, float]) -> str:
    value, low, high = v
    return f"{value:.4g}" if low == value == high else f"{value:.4g} ({low:.4g}..{high:.4g})"


def loaded_summary(run: dict[str, Any]) -> dict[str, Any] | None:
    """The summary's figures over the runs others disturbed, for a run without any quiet one.

    They say how the suite's loop behaved on a loaded machine, nothing of uml2perf's accuracy.
    """
    rows = [r for r in run["rows"] if r["error_percent"] is None and r["error_percent_unquiet"] is not None]
    if not rows:
        return None
    errors = sorted(abs(r["error_percent_unquiet"]) for r in rows)
    covered = [r["interval_low"] <= r["measured_median"] <= r["interval_high"] for r in rows]
    widths = sorted(r["interval_width_percent"] for r in rows)
    return {
        "cases": len(rows),
        "mean_abs_error_percent": sum(errors) / len(errors),
        "median_abs_error_percent": errors[len(errors) // 2],
        "max_abs_error_percent": errors[-1],
        "within_10_percent": sum(e <= 10 for e in errors),
        "coverage_percent": 100 * sum(covered) / len(rows),
        "median_interval_width_percent": widths[len(widths) // 2],
    }


def summaries(runs: list[dict[str, Any]], names: list[str]) -> list[str]:
    rows = [
        "| | " + " | ".join(f"`{name}`" for name in names) + " |",
        "|---|" + "---|" * len(runs),
    ]
    fields = [
        ("cases with quiet runs", "cases", "{:d}"),
        ("mean \\|error\\|", "mean_abs_error_percent", "{:.1f}%"),
        ("median \\|error\\|", "median_abs_error_percent", "{:.1f}%"),
        ("max \\|error\\|", "max_abs_error_percent", "{:.1f}%"),
        ("within 10%", "within_10_percent", "{:d}"),
        ("coverage of the 90% intervals", "coverage_percent", "{:.0f}%"),
        ("median interval width", "median_interval_width_percent", "{:.0f}%"),
    ]
    for label, key, form in fields:
        cells = [form.format(run["summary"][key]) if run.get("summary") else "—" for run in runs]
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    loaded = [loaded_summary(run) for run in runs]
    if any(loaded):
        rows.append("| *cases without a quiet run (disturbed by others: no accuracy)* |" + " |" * len(runs))
        for label, key, form in fields:
            cells = [form.format(run[key]) if run else "—" for run in loaded]
            rows.append(f"| {label}, disturbed runs | " + " | ".join(cells) + " |")
    rows.append(
        "| disturbed runs (re-run later) | " + " | ".join(str(run["disturbed_runs"]) for run in runs) + " |"
    )
    rows.append(
        "| left out (no quiet run) | "
        + " | ".join(str(len(run["summary"]["left_out"])) if run.get("summary") else "—" for run in runs)
        + " |"
    )
    rows.append(
        "| calibration: others busy before / load average | "
        + " | ".join(
            f"{run['calibration']['others_busy_before'] * 100:.0f}% / "
            f"{run['calibration']['load_average_before']:.2f}"
            for run in runs
        )
        + " |"
    )
    rows.append(
        "| machine file held after the programs (`calibrate --check`) | "
        + " | ".join(_held(run) for run in runs)
        + " |"
    )
    rows.append("| suite's wall time | " + " | ".join(f"{run['seconds']:.0f} s" for run in runs) + " |")
    return rows


def _held(run: dict[str, Any]) -> str:
    """``yes (9 of 10 keys)`` from the run's ``calibrate --check`` (— for runs from before the check)."""
    check = run.get("machine_check")
    if not check:
        return "—"
    counted = next((line for line in check["output"].splitlines() if " keys inside the file" in line), "")
    keys = counted.split(" keys inside", 1)[0] if counted else "?"
    return f"{'yes' if check['holds'] else 'NO'} ({keys} keys)"


#: The case groups of the summary by group, by how a case's name ends.
GROUPS = ("threads", "MPI, 2 ranks", "MPI, 4 ranks on 2 cores")


def group_of(case: str) -> str:
    """``threads`` for the thread programs; the MPI cases by their ranks (4 ranks share 2 cores)."""
    if case.endswith(" 4 ranks"):
        return GROUPS[2]
    return GROUPS[1] if case.endswith(" ranks") else GROUPS[0]


def group_figures(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per group and over all: cases, mean/median/max |error|, coverage and median width (quiet cases)."""
    quiet = [r for r in rows if r["error_percent"] is not None]
    out = {}
    for name in (*GROUPS, "all"):
        chosen = [r for r in quiet if name in ("all", group_of(r["case"]))]
        if not chosen:
            continue
        errors = [abs(r["error_percent"]) for r in chosen]
        out[name] = {
            "cases": len(chosen),
            "mean": statistics.fmean(errors),
            "median": statistics.median(errors),
            "max": max(errors),
            "coverage": 100 * sum(bool(r["covered"]) for r in chosen) / len(chosen),
            "width": statistics.median(r["interval_width_percent"] for r in chosen),
        }
    return out


def groups(runs: list[dict[str, Any]], names: list[str]) -> list[str]:
    """The summary by group, one row per run and group."""
    rows = [
        "| run | group | cases | mean \\|error\\| | median | max "
        "| coverage of 90% intervals | median width |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run, name in zip(runs, names, strict=True):
        for group, f in group_figures(run["rows"]).items():
            rows.append(
                f"| `{name}` | {group} | {f['cases']:d} | {f['mean']:.1f}% | {f['median']:.1f}% | "
                f"{f['max']:.1f}% | {f['coverage']:.0f}% | {f['width']:.0f}% |"
            )
    return rows


def quiet_check(machine: Path) -> str:
    """The calibration's own quiet-check line of its machine file (empty when it has none)."""
    for line in machine.read_text().splitlines():
        if line.startswith("# quiet check:"):
            return line.removeprefix("# ").strip()
    return ""


def cases(runs: list[dict[str, Any]], names: list[str]) -> list[str]:
    head = "| case | " + " | ".join(
        f"`{name}`: measured | predicted (90% interval) | error | covered" for name in names
    )
    rows = [head + " |", "|---|" + "---|---|---|---|" * len(runs)]
    by_name = [{row["case"]: row for row in run["rows"]} for run in runs]
    for name in by_name[0]:
        cells = []
        for table in by_name:
            r = table.get(name)
            if r is None:
                cells.append("— | — | — | —")
                continue
            err = r["error_percent"]
            cells.append(
                f"{r['measured_median'] * 1e3:.3f} ms | {r['predicted'] * 1e3:.3f} "
                f"({r['interval_low'] * 1e3:.3f}–{r['interval_high'] * 1e3:.3f}) | "
                + (
                    f"{err:+.1f}% | {'yes' if r['covered'] else 'no'}"
                    if err is not None
                    else "no quiet run | —"
                )
            )
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("runs", nargs=2, type=Path)
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args(argv)
    first, second = args.runs
    rows, inside, total = keys_table(first / "machine.toml", second / "machine.toml")
    results = [json.loads((run / "results.json").read_text()) for run in args.runs]
    text = "\n".join(
        [
            f"# Two suite runs side by side: `{first.name}` and `{second.name}`",
            "",
            "## The two calibrations (`uml2perf calibrate`, each run afresh by its suite run)",
            "",
            f"**{inside} of {total} keys ({100 * inside / max(total, 1):.0f}%) of the second calibration lie "
            "inside the first's interval (5th..95th percentiles of one more launch)** (link ranges are "
            "named by the sizes they cover; a range that only one calibration cut is listed as not "
            "written by the other).",
            "",
            *rows,
            "",
            *[
                f"- `{run.name}`: {quiet_check(run / 'machine.toml')}"
                for run in args.runs
                if quiet_check(run / "machine.toml")
            ],
            "",
            "## Summaries",
            "",
            *summaries(results, [run.name for run in args.runs]),
            "",
            "## By group",
            "",
            *groups(results, [run.name for run in args.runs]),
            "",
            "## Cases",
            "",
            *cases(results, [run.name for run in args.runs]),
            "",
        ]
    )
    if args.output:
        args.output.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
