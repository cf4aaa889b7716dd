"""Geometry of the report's charts: plain numbers that the report template draws as SVG.

Nothing here writes markup: each function returns coordinates, tick labels and tooltips in a
fixed coordinate system, and ``templates/report/*.jinja`` turns them into ``<svg>`` elements, so
the picture is in the page as static SVG (readable with scripts off) and the page's script only
pans and zooms it.

Colours follow the Okabe-Ito palette, which stays distinct under the common colour-vision
deficiencies: compute blue, communication orange, wait reddish purple.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .results import format_time

#: Category colours (Okabe-Ito): compute, communication, wait, and composite elements.
CATEGORY_COLOURS = {"compute": "#0072B2", "comm": "#E69F00", "wait": "#CC79A7", "composite": "#999999"}
CATEGORY_LABELS = {"compute": "compute", "comm": "communication", "wait": "wait"}
#: Series colours of line charts (Okabe-Ito, without yellow, which is faint on white).
SERIES_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")

#: A timeline with at most this many slices is drawn slice by slice; a larger one is binned.
DETAIL_SLICES = 6000
#: Rows of a binned timeline (ranks and threads are grouped into at most this many bands).
BINNED_ROWS = 64
#: Time bins of a binned timeline.
BINS = 120
#: Width of a timeline in SVG units (zooming changes the visible part, not this).
TIMELINE_WIDTH = 1000.0


# --------------------------------------------------------------------------- time axis


def nice_ticks(low: float, high: float, most: int = 8) -> list[float]:
    """Round values from ``low`` to ``high`` (at most about ``most``) for axis labels."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low]
    raw = (high - low) / max(1, most)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(0.0 if abs(value) < step * 1e-9 else value)
        value += step
    return ticks


def log_ticks(low: float, high: float) -> list[float]:
    """Powers of two (processes) or of ten between ``low`` and ``high`` for a logarithmic axis."""
    if low <= 0 or high <= 0:
        return [low, high]
    base = 2.0 if high / low <= 4096 else 10.0
    ticks = []
    value = base ** math.floor(math.log(low, base) + 1e-9)
    while value <= high * (1 + 1e-9):
        if value >= low * (1 - 1e-9):
            ticks.append(value)
        value *= base
    return ticks or [low, high]


# --------------------------------------------------------------------------- timeline


def timeline(
    rows: Sequence[tuple[int, int, str, str, float, float]] | None, end: float
) -> dict[str, Any] | None:
    """The timeline chart: one bar per slice, or a binned summary when there are many slices.

    ``rows`` is ``Results.timeline`` ((rank, track, element, category, start, end)); composite
    slices (calls, loops, regions) are left out: their time is in the slices within them.
    """
    if not rows:
        return None
    slices = [row for row in rows if row[3] in CATEGORY_LABELS and row[5] > row[4]]
    tracks = sorted({(row[0], row[1]) for row in rows})
    span = end if end > 0 else max((row[5] for row in rows), default=1.0) or 1.0
    scale = TIMELINE_WIDTH / span
    if len(slices) <= DETAIL_SLICES and len(tracks) <= 4 * BINNED_ROWS:
        chart = _detailed(slices, tracks, scale)
    else:
        chart = _binned(slices, tracks, span, scale)
    chart.update(
        width=TIMELINE_WIDTH,
        span=span,
        ticks=[{"x": t * scale, "label": format_time(t)} for t in nice_ticks(0.0, span)],
        slices=len(slices),
        tracks=len(tracks),
        legend=[{"colour": CATEGORY_COLOURS[c], "label": label} for c, label in CATEGORY_LABELS.items()],
    )
    return chart


def _track_label(pid: int, track: int) -> str:
    return f"rank {pid}" if track == 0 else f"rank {pid} thread {track}"


def _detailed(
    slices: Sequence[tuple[int, int, str, str, float, float]],
    tracks: Sequence[tuple[int, int]],
    scale: float,
) -> dict[str, Any]:
    height = 14.0
    index = {key: i for i, key in enumerate(tracks)}
    bars = []
    for pid, track, name, category, start, stop in slices:
        bars.append(
            {
                "x": start * scale,
                "y": index[(pid, track)] * height + 1,
                "w": max((stop - start) * scale, 0.05),
                "h": height - 2,
                "colour": CATEGORY_COLOURS[category],
                "opacity": 1.0,
                "title": f"{name} ({CATEGORY_LABELS[category]}), {_track_label(pid, track)}: "
                f"starts {format_time(start)}, takes {format_time(stop - start)}",
            }
        )
    return {
        "binned": False,
        "height": len(tracks) * height,
        "row_height": height,
        "labels": [
            {"y": i * height + height / 2, "text": _track_label(pid, track)}
            for i, (pid, track) in enumerate(tracks)
        ],
        "bars": bars,
        "bands": len(tracks),
    }


def _binned(
    slices: Sequence[tuple[int, int, str, str, float, float]],
    tracks: Sequence[tuple[int, int]],
    span: float,
    scale: float,
) -> dict[str, Any]:
    """Tracks grouped into bands and time into bins: each cell shows its busiest category.

    A cell's opacity is the share of the band's time in the bin that something ran; its
    tooltip gives the share of each category.
    """
    size = max(1, math.ceil(len(tracks) / BINNED_ROWS))
    band_of = {key: i // size for i, key in enumerate(tracks)}
    bands = math.ceil(len(tracks) / size)
    members = [tracks[b * size : (b + 1) * size] for b in range(bands)]
    width = span / BINS
    seconds = _bin_sums(slices, band_of, bands, span).tolist()  # [band][category][bin]
    cells = {
        (band, b): [seconds[band][c][b] for c in range(3)]
        for band in range(bands)
        for b in range(BINS)
        if seconds[band][0][b] + seconds[band][1][b] + seconds[band][2][b] > 0
    }
    height = 12.0
    bars = []
    names = ("compute", "comm", "wait")
    for (band, b), parts in sorted(cells.items()):
        capacity = width * len(members[band])
        busy = min(1.0, sum(parts) / capacity) if capacity > 0 else 0.0
        top = max(range(3), key=lambda i: parts[i])
        shares = ", ".join(f"{CATEGORY_LABELS[names[i]]} {100 * parts[i] / capacity:.0f}%" for i in range(3))
        bars.append(
            {
                "x": b * width * scale,
                "y": band * height + 1,
                "w": width * scale,
                "h": height - 2,
                "colour": CATEGORY_COLOURS[names[top]],
                "opacity": round(0.2 + 0.8 * busy, 3),
                "title": f"{_band_label(members[band])}, {format_time(b * width)} to "
                f"{format_time((b + 1) * width)}: {shares}",
            }
        )
    return {
        "binned": True,
        "height": bands * height,
        "row_height": height,
        "labels": [{"y": i * height + height / 2, "text": _band_label(m)} for i, m in enumerate(members)],
        "bars": bars,
        "bands": bands,
        "group": size,
        "bins": BINS,
    }


def _bin_sums(
    slices: Sequence[tuple[int, int, str, str, float, float]],
    band_of: Mapping[tuple[int, int], int],
    bands: int,
    span: float,
) -> Any:
    """Seconds of each category in each band and time bin, as an array (band, category, bin).

    The busy time of a set of slices up to a time ``x`` is the sum over slices that started before
    ``x`` of ``x - start``, less the same over slices that ended before ``x``: two sorted arrays and
    their running sums give it at every bin edge, and its differences are the bins' shares, without
    a loop over the bins a slice covers (a long compute phase covers all of them).
    """
    import numpy as np

    order = {"compute": 0, "comm": 1, "wait": 2}
    band = np.fromiter((band_of[(row[0], row[1])] for row in slices), dtype=np.int64, count=len(slices))
    category = np.fromiter((order[row[3]] for row in slices), dtype=np.int64, count=len(slices))
    start = np.fromiter((row[4] for row in slices), dtype=np.float64, count=len(slices))
    stop = np.fromiter((row[5] for row in slices), dtype=np.float64, count=len(slices))
    edges = np.linspace(0.0, span, BINS + 1)
    sums = np.zeros((bands, 3, BINS))
    group = band * 3 + category
    by_group = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[by_group], np.arange(bands * 3 + 1))
    for g in range(bands * 3):
        chosen = by_group[bounds[g] : bounds[g + 1]]
        if chosen.size == 0:
            continue
        busy = _busy_until(np.sort(start[chosen]), edges) - _busy_until(np.sort(stop[chosen]), edges)
        sums[g // 3, g % 3] = np.diff(busy)
    # the running sums cancel to a few ulps of the run's length where nothing ran: that is zero
    sums[sums < 1e-9 * (span / BINS)] = 0.0
    return sums


def _busy_until(times: Any, edges: Any) -> Any:
    """For each edge ``x``: the sum of ``x - t`` over the sorted ``times`` before it."""
    import numpy as np

    before = np.searchsorted(times, edges, side="left")
    running = np.concatenate(([0.0], np.cumsum(times)))
    return before * edges - running[before]


def _band_label(members: Sequence[tuple[int, int]]) -> str:
    if len(members) == 1:
        return _track_label(*members[0])
    ranks = sorted({pid for pid, _ in members})
    threads = len(members) - len(ranks)
    text = f"ranks {ranks[0]}-{ranks[-1]}" if len(ranks) > 1 else f"rank {ranks[0]}"
    return text + (f" (+{threads} threads)" if threads else "")


# --------------------------------------------------------------------------- line and bar charts

#: Plot area of the small charts (SVG units): width, height and the margins around it.
CHART = {"width": 420.0, "height": 260.0, "left": 64.0, "right": 12.0, "top": 14.0, "bottom": 40.0}


def _axis(low: float, high: float, log: bool, length: float, flip: bool) -> Callable[[float], float]:
    if log:
        low, high = math.log(low), math.log(high)
    spread = high - low or 1.0

    def place(value: float) -> float:
        v = math.log(value) if log else value
        share = (v - low) / spread
        return length * (1 - share) if flip else length * share

    return place


def line_chart(
    series: Sequence[Mapping[str, Any]],
    *,
    x_label: str,
    y_label: str,
    log_x: bool = False,
    log_y: bool = False,
    y_range: tuple[float, float] | None = None,
    ideal: Sequence[tuple[float, float]] | None = None,
    seconds: bool = False,
) -> dict[str, Any]:
    """Lines with markers (``series``: ``{"label", "points": [(x, y), ...]}``) and axes.

    A series may give ``ranges`` (``{x: (low, high)}``, an interval of its value), drawn as error bars.

    Logarithmic axes need positive values; points that are not are left out of such a chart.
    """
    c = CHART
    plot_w = c["width"] - c["left"] - c["right"]
    plot_h = c["height"] - c["top"] - c["bottom"]
    usable = [
        (float(x), float(y))
        for s in series
        for x, y in s["points"]
        if math.isfinite(x) and math.isfinite(y) and (x > 0 or not log_x) and (y > 0 or not log_y)
    ]
    extra = list(ideal or ())
    extra += [
        (float(x), float(bound))
        for s in series
        for x, pair in (s.get("ranges") or {}).items()
        for bound in pair
        if math.isfinite(bound) and (bound > 0 or not log_y)
    ]
    xs = [x for x, _ in usable] or [1.0]
    ys = [y for _, y in usable + [(x, y) for x, y in extra if y > 0 or not log_y]] or [1.0]
    x_low, x_high = min(xs), max(xs)
    if x_high == x_low:
        x_low, x_high = (x_low / 2, x_high * 2) if log_x else (x_low - 1, x_high + 1)
    if y_range is not None:
        y_low, y_high = y_range
    else:
        y_low, y_high = min(ys), max(ys)
        if log_y:
            y_low, y_high = y_low / 1.3, y_high * 1.3
        else:
            y_low = min(0.0, y_low)
            y_high = y_high * 1.08 if y_high > 0 else 1.0
        if y_high == y_low:
            y_high = y_low + 1.0
    fx = _axis(x_low, x_high, log_x, plot_w, False)
    fy = _axis(y_low, y_high, log_y, plot_h, True)
    show = format_time if seconds else _number
    drawn = []
    for i, s in enumerate(series):
        ranges = {
            float(x): (float(low), float(high))
            for x, (low, high) in (s.get("ranges") or {}).items()
            if math.isfinite(low) and math.isfinite(high) and (low > 0 or not log_y)
        }
        points = [
            (float(x), float(y))
            for x, y in s["points"]
            if math.isfinite(x) and math.isfinite(y) and (x > 0 or not log_x) and (y > 0 or not log_y)
        ]
        drawn.append(
            {
                "label": s["label"],
                "colour": SERIES_COLOURS[i % len(SERIES_COLOURS)],
                "dash": "" if i < len(SERIES_COLOURS) else "4 2",
                "path": " ".join(f"{fx(x):.2f},{fy(y):.2f}" for x, y in points),
                "markers": [
                    {
                        "x": fx(x),
                        "y": fy(y),
                        "title": f"{s['label']}: {x_label} {_number(x)}, {y_label} {show(y)}"
                        + (f" ({show(ranges[x][0])} to {show(ranges[x][1])})" if x in ranges else ""),
                        "low": fy(ranges[x][0]) if x in ranges else None,
                        "high": fy(ranges[x][1]) if x in ranges else None,
                    }
                    for x, y in points
                ],
            }
        )
    x_ticks = log_ticks(x_low, x_high) if log_x else nice_ticks(x_low, x_high, 6)
    y_ticks = log_ticks(y_low, y_high) if log_y else nice_ticks(y_low, y_high, 5)
    return {
        **c,
        "plot_w": plot_w,
        "plot_h": plot_h,
        "x_label": x_label,
        "y_label": y_label,
        "series": drawn,
        "ideal": " ".join(f"{fx(x):.2f},{fy(y):.2f}" for x, y in (ideal or ()) if (y > 0 or not log_y)),
        "x_ticks": [{"x": fx(t), "label": _number(t)} for t in x_ticks if x_low <= t <= x_high],
        "y_ticks": [{"y": fy(t), "label": show(t)} for t in y_ticks if y_low <= t <= y_high * (1 + 1e-9)],
    }


def stacked_bars(
    groups: Sequence[Mapping[str, Any]],
    parts: Sequence[tuple[str, str]],
    *,
    x_label: str,
    y_label: str,
) -> dict[str, Any]:
    """Stacked bars of the ``parts`` keys, one per ``groups`` entry ``{"label", "group", "values"}``.

    ``group`` (the other swept values) is written once under the first bar of each group.
    """
    c = CHART
    plot_w = c["width"] - c["left"] - c["right"]
    plot_h = c["height"] - c["top"] - c["bottom"]
    highest = max((sum(g["values"].get(k, 0.0) for k, _ in parts) for g in groups), default=0.0) or 1.0
    highest *= 1.05
    slot = plot_w / max(1, len(groups))
    bar_w = max(2.0, slot * 0.7)
    bars = []
    for i, g in enumerate(groups):
        bottom = 0.0
        for key, label in parts:
            value = float(g["values"].get(key, 0.0))
            h = plot_h * value / highest
            bars.append(
                {
                    "x": i * slot + (slot - bar_w) / 2,
                    "y": plot_h - bottom - h,
                    "w": bar_w,
                    "h": h,
                    "colour": CATEGORY_COLOURS[key],
                    "title": f"{x_label} {g['label']}{' ' + g['group'] if g.get('group') else ''}: "
                    f"{label} {format_time(value)}",
                }
            )
            bottom += h
    labels = [{"x": i * slot + slot / 2, "text": g["label"]} for i, g in enumerate(groups)]
    step = max(1, math.ceil(len(labels) / 16))
    group_labels = [
        {"x": i * slot + 2, "text": g["group"]}
        for i, g in enumerate(groups)
        if g.get("group") and (i == 0 or groups[i - 1].get("group") != g["group"])
    ]
    return {
        **c,
        "plot_w": plot_w,
        "plot_h": plot_h,
        "y_label": y_label,
        "bars": bars,
        "x_labels": labels[::step],
        "group_labels": group_labels,
        "x_label": x_label,
        "y_ticks": [
            {"y": plot_h * (1 - t / highest), "label": format_time(t)} for t in nice_ticks(0.0, highest, 5)
        ],
        "legend": [{"colour": CATEGORY_COLOURS[k], "label": label} for k, label in parts],
    }


def _number(value: float) -> str:
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.3g}"


# --------------------------------------------------------------------------- shading by share

#: A single-hue sequential ramp (ColorBrewer "Blues"): lighter is less of the run; it reads the same
#: under colour-vision deficiencies because only the lightness changes.
RAMP = ("#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b")


def shade(share: float) -> tuple[str, str]:
    """The fill for a share of the run (0..1) and a text colour that stays readable on it."""
    if not math.isfinite(share) or share <= 0:
        return "#ffffff", "#000000"
    step = min(len(RAMP) - 1, 1 + int(math.sqrt(min(share, 1.0)) * (len(RAMP) - 1)))
    return RAMP[step], "#ffffff" if step >= 5 else "#000000"


__all__ = [
    "CATEGORY_COLOURS",
    "line_chart",
    "shade",
    "stacked_bars",
    "timeline",
]
