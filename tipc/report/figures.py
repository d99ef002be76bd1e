"""Inline SVG figures for the HTML report: loss chart, stage timeline with resource series, lineage graph,
and the coloured agreement matrix cells. Pure functions from report data to markup.

Every piece of text that comes from the repo or the run (step ids, file paths) goes through `_esc`; the rest
is numbers formatted here. No scripts, no external references: the page stays self-contained and printable.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tipc.report.lineage import ARTEFACT_KINDS

BLUE, LIGHT_BLUE, ORANGE, GREEN, RED, GREY, PURPLE = (
    "#0969da",
    "#9ecbff",
    "#bc4c00",
    "#1a7f37",
    "#cf222e",
    "#6e7781",
    "#8250df",
)
STATUS_COLOURS = {"passed": GREEN, "failed": RED, "timeout": RED, "interrupted": RED}
FONT = 'font-family="system-ui,sans-serif" font-size="11"'


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _clip(text: str, width: int) -> str:
    """At most `width` characters (an ellipsis marks the cut); the full text goes in the element's <title>."""
    return text if len(text) <= width else text[: width - 1] + "…"


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About `count` round tick values covering [lo, hi] (1, 2, 2.5 or 5 times a power of ten apart)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks = []
    value = first
    while value <= hi + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    return ticks


def _fmt(v: float) -> str:
    return f"{v:.4g}"


def moving_average(values: Sequence[float], window: int) -> list[float]:
    """Centred moving average (the window shrinks at the ends), the smoothing drawn over the raw loss."""
    n = len(values)
    if window <= 1 or n == 0:
        return list(values)
    half = window // 2
    prefix = [0.0]
    for v in values:
        prefix.append(prefix[-1] + v)
    out = []
    for i in range(n):
        a, b = max(0, i - half), min(n, i + half + 1)
        out.append((prefix[b] - prefix[a]) / (b - a))
    return out


class _Frame:
    """A plot area with linear x/y scales and drawn axes."""

    def __init__(
        self,
        x0: float,
        x1: float,
        y0: float,
        y1: float,
        *,
        width: int,
        height: int,
        left: int = 56,
        right: int = 16,
        top: int = 24,
        bottom: int = 34,
    ) -> None:
        self.x0, self.x1 = x0, (x1 if x1 > x0 else x0 + 1.0)
        self.y0, self.y1 = y0, (y1 if y1 > y0 else y0 + 1.0)
        self.width, self.height = width, height
        self.left, self.right, self.top, self.bottom = left, right, top, bottom

    def x(self, v: float) -> float:
        return self.left + (v - self.x0) / (self.x1 - self.x0) * (self.width - self.left - self.right)

    def y(self, v: float) -> float:
        return (
            self.height
            - self.bottom
            - (v - self.y0) / (self.y1 - self.y0) * (self.height - self.top - self.bottom)
        )

    def axes(self, xlabel: str, ylabel: str, *, yfmt: Any = _fmt, xfmt: Any = _fmt) -> list[str]:
        parts = []
        xb, yl = self.height - self.bottom, self.left
        for t in nice_ticks(self.y0, self.y1, 4):
            y = self.y(t)
            parts.append(
                f'<line x1="{yl}" y1="{y:.1f}" x2="{self.width - self.right}" y2="{y:.1f}" stroke="#eaeef2"/>'
            )
            parts.append(f'<text x="{yl - 4}" y="{y + 3:.1f}" text-anchor="end" {FONT}>{yfmt(t)}</text>')
        for t in nice_ticks(self.x0, self.x1, 6):
            x = self.x(t)
            parts.append(f'<line x1="{x:.1f}" y1="{xb}" x2="{x:.1f}" y2="{xb + 4}" stroke="#57606a"/>')
            parts.append(f'<text x="{x:.1f}" y="{xb + 15}" text-anchor="middle" {FONT}>{xfmt(t)}</text>')
        parts.append(f'<line class="axis" x1="{yl}" y1="{self.top}" x2="{yl}" y2="{xb}" stroke="#57606a"/>')
        parts.append(
            f'<line class="axis" x1="{yl}" y1="{xb}" x2="{self.width - self.right}" y2="{xb}" '
            'stroke="#57606a"/>'
        )
        parts.append(
            f'<text x="{(yl + self.width - self.right) / 2:.0f}" y="{self.height - 4}" '
            f'text-anchor="middle" {FONT}>{_esc(xlabel)}</text>'
        )
        parts.append(
            f'<text x="12" y="{(self.top + xb) / 2:.0f}" text-anchor="middle" {FONT} '
            f'transform="rotate(-90 12 {(self.top + xb) / 2:.0f})">{_esc(ylabel)}</text>'
        )
        return parts

    def polyline(
        self, points: Sequence[tuple[float, float]], colour: str, width: float = 1.5, cls: str = ""
    ) -> str:
        coords = " ".join(f"{self.x(a):.1f},{self.y(b):.1f}" for a, b in points)
        klass = f' class="{cls}"' if cls else ""
        return f'<polyline{klass} fill="none" stroke="{colour}" stroke-width="{width}" points="{coords}"/>'


def _svg(width: int, height: int, label: str, parts: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{_esc(label)}">' + "".join(parts) + "</svg>"
    )


def _thin(points: list[tuple[float, float]], limit: int = 800) -> list[tuple[float, float]]:
    """Every k-th point so a long curve stays a small page; the last point is always kept."""
    if len(points) <= limit:
        return points
    k = math.ceil(len(points) / limit)
    return points[::k] + ([points[-1]] if (len(points) - 1) % k else [])


def loss_chart_svg(
    points: list[tuple[float, float]], data: dict[str, Any], *, width: int = 640, height: int = 240
) -> str:
    """Raw loss (light), its moving average (bold), and the trend the convergence check tested: the first and
    last window means joined by the trend line, with the Mann-Kendall statistic printed. Empty below 2 points.
    """
    if len(points) < 2:
        return ""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    frame = _Frame(min(xs), max(xs), min(0.0, min(ys)), max(ys), width=width, height=height, top=36)
    given = data.get("window")
    window = given if isinstance(given, int) and given > 0 else max(3, len(points) // 20)
    smooth = list(zip(xs, moving_average(ys, window), strict=True))
    parts = frame.axes("iteration", "loss")
    parts.append(frame.polyline(_thin(points), LIGHT_BLUE, 1.0, "raw"))
    parts.append(frame.polyline(_thin(smooth), BLUE, 2.0, "smoothed"))
    first, last = data.get("first_window"), data.get("last_window")
    legend = [(LIGHT_BLUE, "loss"), (BLUE, f"moving average ({window})")]
    if isinstance(first, dict) and isinstance(last, dict):
        try:
            fx0, fx1, fm = float(first["start"]), float(first["end"]), float(first["mean"])
            lx0, lx1, lm = float(last["start"]), float(last["end"]), float(last["mean"])
        except (KeyError, TypeError, ValueError):
            pass
        else:
            for a, b, m in ((fx0, fx1, fm), (lx0, lx1, lm)):
                parts.append(frame.polyline([(a, m), (b, m)], ORANGE, 3.0, "window"))
            parts.append(
                f'<line class="trend" x1="{frame.x((fx0 + fx1) / 2):.1f}" y1="{frame.y(fm):.1f}" '
                f'x2="{frame.x((lx0 + lx1) / 2):.1f}" y2="{frame.y(lm):.1f}" stroke="{ORANGE}" '
                'stroke-width="1.5" stroke-dasharray="5 3"/>'
            )
            legend.append((ORANGE, "window means and trend"))
    mk = data.get("mann_kendall")
    if isinstance(mk, dict) and all(
        isinstance(mk.get(k), (int, float)) for k in ("z", "p_decreasing", "tau")
    ):
        p = float(mk["p_decreasing"])
        stat = f"Mann-Kendall z={mk['z']:.2f}, tau={mk['tau']:.2f}, " + (
            f"p(decreasing)={p:.2g}" if p > 0 else "p(decreasing) < 1e-300"
        )
        parts.append(f'<text class="stat" x="{frame.left + 8}" y="28" {FONT}>{_esc(stat)}</text>')
    explosion = data.get("explosion")
    if isinstance(explosion, dict) and isinstance(explosion.get("iter"), (int, float)):
        ex, ey = float(explosion["iter"]), float(explosion.get("loss", max(ys)))
        parts.append(f'<circle cx="{frame.x(ex):.1f}" cy="{frame.y(ey):.1f}" r="4" fill="{RED}"/>')
    for i, (colour, text) in enumerate(legend):
        x = frame.left + 8 + i * 170
        parts.append(
            f'<rect x="{x}" y="6" width="12" height="4" fill="{colour}"/>'
            f'<text x="{x + 16}" y="12" {FONT}>{_esc(text)}</text>'
        )
    return _svg(width, height, "loss curve", parts)


def _bytes(v: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(v) < 1024 or unit == "TiB":
            return f"{v:.0f} {unit}" if unit == "B" else f"{v:.3g} {unit}"
        v /= 1024
    return str(v)


_Series = tuple[str, str, Any, list[list[tuple[float, float]]]]


def _timeline_series(timed: Sequence[Any], t0: float) -> list[_Series]:
    """The monitor's series measured in any step, on the run's clock: (label, colour, formatter, lines)."""
    series: list[_Series] = []
    cpu = [[(s.started - t0 + x[0], x[2]) for x in s.samples] for s in timed]
    mem = [[(s.started - t0 + x[0], float(x[1])) for x in s.samples] for s in timed]
    gpu = [[(s.started - t0 + x[0], float(x[3])) for x in s.samples if x[3] is not None] for s in timed]
    if any(cpu):
        series.append(("CPU %", BLUE, _fmt, cpu))
    if any(mem):
        series.append(("memory", PURPLE, _bytes, mem))
    if any(gpu):
        series.append(("GPU memory", ORANGE, _bytes, gpu))
    return series


def _gantt_parts(timed: Sequence[Any], t0: float, span: float, width: int, left: int, row: int) -> list[str]:
    """The steps' bars with their names, and the seconds axis under them."""
    gantt_h = 24 + row * len(timed) + 30
    gantt = _Frame(0.0, span, 0.0, 1.0, width=width, height=gantt_h, left=left, top=24)
    parts = [
        f'<text x="{left}" y="14" {FONT}>steps on the run\'s clock (seconds since the first started)</text>'
    ]
    for i, s in enumerate(timed):
        y = 24 + i * row
        a, b = s.started - t0, s.started - t0 + s.duration_s
        colour = STATUS_COLOURS.get(s.status, GREY)
        parts.append(
            f'<text x="{left - 6}" y="{y + 12}" text-anchor="end" {FONT}>{_esc(_clip(s.id, 30))}</text>'
        )
        parts.append(
            f'<rect class="bar {_esc(s.status)}" x="{gantt.x(a):.1f}" y="{y + 2}" '
            f'width="{max(1.5, gantt.x(b) - gantt.x(a)):.1f}" height="{row - 5}" fill="{colour}">'
            f"<title>{_esc(s.id)}: {_esc(s.status)}, {s.duration_s:.1f}s</title></rect>"
        )
    xb = gantt_h - 30
    for t in nice_ticks(0.0, span, 8):
        x = gantt.x(t)
        parts.append(f'<line x1="{x:.1f}" y1="20" x2="{x:.1f}" y2="{xb}" stroke="#eaeef2"/>')
        parts.append(f'<text x="{x:.1f}" y="{xb + 14}" text-anchor="middle" {FONT}>{_fmt(t)}s</text>')
    parts.append(f'<line class="axis" x1="{left}" y1="{xb}" x2="{width - 16}" y2="{xb}" stroke="#57606a"/>')
    return parts


def _series_panel(
    series: _Series,
    span: float,
    width: int,
    left: int,
    panel_h: int,
    top: int,
) -> str:
    """One monitor series as a panel under the Gantt chart, `top` pixels down."""
    label, colour, fmt, lines = series
    values = [v for line in lines for _, v in line]
    frame = _Frame(
        0.0,
        span,
        0.0,
        max(values) if values else 1.0,
        width=width,
        height=panel_h,
        left=left,
        top=14,
        bottom=22,
    )
    panel = frame.axes("", label, yfmt=fmt, xfmt=lambda t: f"{_fmt(t)}s")
    panel += [frame.polyline(_thin(line, 300), colour, 1.3, "series") for line in lines if len(line) > 1]
    panel += [
        f'<circle cx="{frame.x(line[0][0]):.1f}" cy="{frame.y(line[0][1]):.1f}" r="1.5" fill="{colour}"/>'
        for line in lines
        if len(line) == 1
    ]
    return (
        f'<g class="panel" transform="translate(0 {top})">'
        f'<text x="{left}" y="10" {FONT}>{_esc(label)}</text>' + "".join(panel) + "</g>"
    )


def timeline_svg(steps: Sequence[Any], *, width: int = 960) -> str:
    """A Gantt chart of the steps on one wall-clock axis, then the monitor's CPU %, memory and (when any was
    measured) GPU memory series on the same axis. Empty when no step has a start time and a duration."""
    timed = [s for s in steps if s.started is not None and s.duration_s is not None]
    if not timed:
        return ""
    t0 = min(s.started for s in timed)
    t1 = max(s.started + s.duration_s for s in timed)
    row, left = 18, 190
    gantt_h = 24 + row * len(timed) + 30
    series = _timeline_series(timed, t0)
    panel_h = 110
    height = gantt_h + panel_h * len(series)
    parts = _gantt_parts(timed, t0, t1 - t0, width, left, row)
    for k, one in enumerate(series):
        parts.append(_series_panel(one, t1 - t0, width, left, panel_h, gantt_h + k * panel_h))
    return _svg(width, height, "stage timeline", parts)


def _file_anchor(path: str, edges: list[dict[str, Any]], col: dict[str, int]) -> float:
    """The step column a file sits under: the first step that wrote it, else its first reader."""
    touching = [
        col[str(e["step"])] for e in edges if str(e.get("file")) == path and str(e.get("step")) in col
    ]
    writers = [
        col[str(e["step"])]
        for e in edges
        if str(e.get("file")) == path and e.get("kind") == "wrote" and str(e.get("step")) in col
    ]
    return float(min(writers) if writers else min(touching))


@dataclass(frozen=True)
class _LineageLayout:
    """Where the lineage graph's boxes sit: step boxes across the top (x), file boxes below (x, y)."""

    box_w: float
    step_x: dict[str, float]
    file_x: dict[str, float]
    file_y: dict[str, int]


def _lineage_edge(e: dict[str, Any], at: _LineageLayout) -> str | None:
    """One arrow: step -> file it wrote, file -> step that read it; a read of a file this run did not write
    is red and dashed. None when either end is not drawn."""
    path, sid = str(e.get("file")), str(e.get("step"))
    if sid not in at.step_x or path not in at.file_y:
        return None
    stale = e.get("kind") != "wrote" and not e.get("fresh")
    colour = RED if stale else "#57606a"
    dash = ' stroke-dasharray="4 3"' if stale else ""
    top_x, file_x = at.step_x[sid] + at.box_w / 2, at.file_x[path] + at.box_w / 2
    if e.get("kind") == "wrote":
        a, b = (top_x, 40.0), (file_x - 8, float(at.file_y[path]))
    else:
        a, b = (file_x + 8, float(at.file_y[path])), (top_x, 40.0)
    return (
        f'<line class="{"stale" if stale else "edge"}" x1="{a[0]:.1f}" y1="{a[1]:.1f}" '
        f'x2="{b[0]:.1f}" y2="{b[1]:.1f}" stroke="{colour}" stroke-width="1.2"{dash} '
        'marker-end="url(#arrow)"/>'
    )


def _lineage_file(p: str, node: dict[str, Any], edges: list[dict[str, Any]], at: _LineageLayout) -> str:
    """One file box: green when this run wrote it, else red with a `!`."""
    fresh = any(e.get("kind") == "wrote" for e in edges if str(e.get("file")) == p)
    fill = "#dafbe1" if fresh else "#ffebe9"
    label = ("" if fresh else "! ") + p.rstrip("/").rsplit("/", 1)[-1]  # the name; the path: its title
    fx, fy, box_w = at.file_x[p], at.file_y[p], at.box_w
    return (
        f'<rect class="file" x="{fx:.1f}" y="{fy}" width="{box_w:.1f}" height="26" rx="10" '
        f'fill="{fill}" stroke="{GREEN if fresh else RED}"><title>{_esc(p)} '
        f"({_esc(node.get('kind'))})</title></rect>"
        f'<text x="{fx + box_w / 2:.1f}" y="{fy + 17}" text-anchor="middle" {FONT}>'
        f"{_esc(_clip(label, 26))}</text>"
    )


def _lineage_graph(lineage: dict[str, Any]) -> tuple[list[str], dict[str, Any], list[dict[str, Any]]]:
    """The recorded steps' ids, the files by path, and the edges that touch a weights or model file."""
    steps = [s for s in lineage.get("steps", []) if isinstance(s, dict) and s.get("recorded")]
    files = {f["path"]: f for f in lineage.get("files", []) if isinstance(f, dict) and "path" in f}
    edges = [
        e
        for e in lineage.get("edges", [])
        if isinstance(e, dict) and files.get(str(e.get("file")), {}).get("kind") in ARTEFACT_KINDS
    ]
    return [str(s.get("id")) for s in steps], files, edges


def _files_in_order(edges: list[dict[str, Any]], col: dict[str, int]) -> list[str]:
    """The files a drawn step touched, ordered by the column they sit under (stable: first seen first)."""
    used: list[str] = []
    for e in edges:
        if str(e.get("file")) not in used and str(e.get("step")) in col:
            used.append(str(e.get("file")))
    used.sort(key=lambda path: _file_anchor(path, edges, col))
    return used


def lineage_svg(lineage: dict[str, Any], *, width: int = 960) -> str:
    """The run's lineage as a graph: steps in run order across the top, the weights and model files they
    wrote or read below; an arrow from a step to a file it wrote, from a file to a step that read it. A read
    of a file this run did not write is drawn red and dashed. Empty when no artefact was recorded."""
    step_ids, files, edges = _lineage_graph(lineage)
    if not step_ids or not edges:
        return ""
    col = {sid: i for i, sid in enumerate(step_ids)}
    used = _files_in_order(edges, col)
    n = max(len(step_ids), 1)
    cell = (width - 20) / n
    box_w = min(150.0, cell - 12)
    height = 70 + 44 * len(used) + 30
    at = _LineageLayout(
        box_w=box_w,
        step_x={sid: 10 + cell * i + (cell - box_w) / 2 for i, sid in enumerate(step_ids)},
        file_x={p: 10 + cell * _file_anchor(p, edges, col) + (cell - box_w) / 2 for p in used},
        file_y={p: 70 + 44 * i for i, p in enumerate(used)},
    )
    parts = [
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#57606a"/></marker></defs>'
    ]
    for sid in step_ids:
        x = at.step_x[sid]
        parts.append(
            f'<rect class="step" x="{x:.1f}" y="10" width="{box_w:.1f}" height="30" rx="4" '
            f'fill="#ddf4ff" stroke="{BLUE}"/><text x="{x + box_w / 2:.1f}" y="29" '
            f'text-anchor="middle" {FONT}>{_esc(_clip(sid, 22))}<title>{_esc(sid)}</title></text>'
        )
    parts += [line for line in (_lineage_edge(e, at) for e in edges) if line is not None]
    parts += [_lineage_file(p, files[p], edges, at) for p in used]
    return _svg(width, height, "lineage graph", parts)


def agreement_cells(rows: list[list[Any]]) -> list[list[dict[str, str]]]:
    """Matrix cells as {text, cls}: `agree`/`differ` from a cell's `within`, `none` for no comparison."""
    out = []
    for row in rows:
        cells = []
        for value in row[1:]:
            if value is None:
                cells.append({"text": "—", "cls": "none"})
                continue
            from tipc.report.model import matrix_cell

            text = matrix_cell(value)
            cls = ""
            if isinstance(value, dict) and "within" in value:
                cls = "agree" if value["within"] else "differ"
            cells.append({"text": text, "cls": cls})
        out.append([{"text": str(row[0]), "cls": "name"}, *cells])
    return out
