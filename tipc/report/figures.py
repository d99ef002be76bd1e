"""Inline SVG figures for the HTML report: loss chart, stage timeline with resource series, lineage graph.
Pure functions from report data to markup (the agreement matrix is a table: tipc.report.matrix).

Every piece of text that comes from the repo or the run (step ids, file paths) goes through `_esc`; the rest
is numbers formatted here. Names are set in monospace and wrapped to their box (`wrap`), never cut. No
scripts, no external references: the page stays self-contained and printable.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tipc.core.jsontypes import JSONObject, objects
from tipc.core.units import human_bytes, human_seconds
from tipc.report.lineage import ARTEFACT_KINDS

if TYPE_CHECKING:
    from tipc.report.model import StepSummary

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
# Names (step ids, file names) are monospace, so a line's width is known and a long one wraps, never cut.
MONO = 'font-family="DejaVu Sans Mono,ui-monospace,SFMono-Regular,Menlo,Consolas,monospace" font-size="11"'
CHAR_W = 7.0  # px per character of MONO, a little over the 6.6 px DejaVu Sans Mono takes
LINE_H = 13


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


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

    def axes(
        self,
        xlabel: str,
        ylabel: str,
        *,
        yfmt: Callable[[float], str] = _fmt,
        xfmt: Callable[[float], str] = _fmt,
    ) -> list[str]:
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
    points: list[tuple[float, float]], data: Mapping[str, object], *, width: int = 640, height: int = 240
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
    return human_bytes(v, significant=3)


@dataclass(frozen=True)
class _Timed:
    """A step with a start time and a duration: what the timeline draws."""

    id: str
    status: str
    started: float
    duration_s: float
    samples: tuple[tuple[float, int, float, int | None], ...]


_Series = tuple[str, str, Callable[[float], str], list[list[tuple[float, float]]]]


def _timeline_series(timed: Sequence[_Timed], t0: float) -> list[_Series]:
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


def wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` characters, broken after `/ _ - .` or a space where one falls in
    the line's last two thirds, else at the width: every character is kept."""
    width = max(4, width)
    lines = []
    rest = text
    while len(rest) > width:
        cut = max((i + 1 for i, ch in enumerate(rest[:width]) if ch in "/_-. "), default=0)
        if cut < width // 3:
            cut = width
        lines.append(rest[:cut])
        rest = rest[cut:]
    lines.append(rest)
    return lines


def _chars(box_width: float) -> int:
    """Monospace characters that fit a box `box_width` wide with its padding."""
    return int((box_width - 16) / CHAR_W)


def _label(lines: list[str], x: float, y: float, *, anchor: str = "start", cls: str = "label") -> str:
    """Lines of monospace text, the first baseline at `y`."""
    spans = "".join(
        f'<tspan x="{x:.1f}" dy="{0 if i == 0 else LINE_H}">{_esc(line)}</tspan>'
        for i, line in enumerate(lines)
    )
    return f'<text class="{cls}" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {MONO}>{spans}</text>'


def _gantt_parts(
    timed: Sequence[_Timed], t0: float, span: float, width: int, left: int
) -> tuple[list[str], int]:
    """The steps' bars with their names (wrapped, never cut), and the seconds axis under them; the height."""
    rows = []
    y = 24
    for s in timed:
        lines = wrap(str(s.id), _chars(left))
        height = max(18, LINE_H * len(lines) + 5)
        rows.append((s, y, height, lines))
        y += height
    gantt_h = y + 30
    gantt = _Frame(0.0, span, 0.0, 1.0, width=width, height=gantt_h, left=left, top=24)
    parts = [
        f'<text x="{left}" y="14" {FONT}>steps on the run\'s clock (seconds since the first started)</text>'
    ]
    for s, y, height, lines in rows:
        a, b = s.started - t0, s.started - t0 + s.duration_s
        colour = STATUS_COLOURS.get(s.status, GREY)
        first = y + (height - LINE_H * len(lines)) / 2 + 10
        parts.append(_label(lines, left - 6, first, anchor="end", cls="label step-name"))
        parts.append(
            f'<rect class="bar {_esc(s.status)}" x="{gantt.x(a):.1f}" y="{y + (height - 13) / 2:.1f}" '
            f'width="{max(1.5, gantt.x(b) - gantt.x(a)):.1f}" height="13" fill="{colour}">'
            f"<title>{_esc(s.id)}: {_esc(s.status)}, {human_seconds(s.duration_s)}</title></rect>"
        )
    xb = gantt_h - 30
    for t in nice_ticks(0.0, span, 8):
        x = gantt.x(t)
        parts.append(f'<line x1="{x:.1f}" y1="20" x2="{x:.1f}" y2="{xb}" stroke="#eaeef2"/>')
        parts.append(f'<text x="{x:.1f}" y="{xb + 14}" text-anchor="middle" {FONT}>{_fmt(t)}s</text>')
    parts.append(f'<line class="axis" x1="{left}" y1="{xb}" x2="{width - 16}" y2="{xb}" stroke="#57606a"/>')
    return parts, gantt_h


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


def timeline_svg(steps: Sequence[StepSummary], *, width: int = 1240) -> str:
    """A Gantt chart of the steps on one wall-clock axis, then the monitor's CPU %, memory and (when any was
    measured) GPU memory series on the same axis. Empty when no step has a start time and a duration."""
    timed = [
        _Timed(s.id, s.status, s.started, s.duration_s, s.samples)
        for s in steps
        if s.started is not None and s.duration_s is not None
    ]
    if not timed:
        return ""
    t0 = min(s.started for s in timed)
    t1 = max(s.started + s.duration_s for s in timed)
    left = 380  # the step names' column: a long id wraps in it
    parts, gantt_h = _gantt_parts(timed, t0, t1 - t0, width, left)
    series = _timeline_series(timed, t0)
    panel_h = 110
    height = gantt_h + panel_h * len(series)
    for k, one in enumerate(series):
        parts.append(_series_panel(one, t1 - t0, width, left, panel_h, gantt_h + k * panel_h))
    return _svg(width, height, "stage timeline", parts)


def _file_anchor(path: str, edges: list[JSONObject], col: dict[str, int]) -> int:
    """The step row a file sits beside: the first step that wrote it, else its first reader."""
    touching = [
        col[str(e["step"])] for e in edges if str(e.get("file")) == path and str(e.get("step")) in col
    ]
    writers = [
        col[str(e["step"])]
        for e in edges
        if str(e.get("file")) == path and e.get("kind") == "wrote" and str(e.get("step")) in col
    ]
    return min(writers) if writers else min(touching)


@dataclass(frozen=True)
class _Box:
    x: float
    y: float
    w: float
    h: float

    def port(self, side: str, k: int, n: int) -> tuple[float, float]:
        """The k-th of n points spread down the box's left or right side, where edges meet it."""
        return (self.x + (self.w if side == "right" else 0.0), self.y + self.h * (k + 1) / (n + 1))


def _lineage_graph(
    lineage: Mapping[str, object],
) -> tuple[list[str], dict[str, JSONObject], list[JSONObject]]:
    """The recorded steps' ids, the files by path, and the edges that touch a weights or model file."""
    steps = [s for s in objects(lineage.get("steps")) if s.get("recorded")]
    files = {str(f["path"]): f for f in objects(lineage.get("files")) if "path" in f}
    edges = [
        e
        for e in objects(lineage.get("edges"))
        if files.get(str(e.get("file")), {}).get("kind") in ARTEFACT_KINDS
    ]
    return [str(s.get("id")) for s in steps], files, edges


def _files_in_order(edges: list[JSONObject], col: dict[str, int]) -> list[str]:
    """The files a drawn step touched, ordered by the row they sit beside (stable: first seen first)."""
    used: list[str] = []
    for e in edges:
        if str(e.get("file")) not in used and str(e.get("step")) in col:
            used.append(str(e.get("file")))
    used.sort(key=lambda path: _file_anchor(path, edges, col))
    return used


def _short_names(paths: list[str]) -> dict[str, str]:
    """Each path's shortest tail of folders that no other path shares: the name, unless two files share it."""
    segments = {p: p.rstrip("/").split("/") for p in paths}
    out = {}
    for p, segs in segments.items():
        k = 1
        while k < len(segs) and sum(1 for q in segments.values() if q[-k:] == segs[-k:]) > 1:
            k += 1
        out[p] = "/".join(segs[-k:])
    return out


def _box_height(lines: list[str]) -> float:
    return LINE_H * len(lines) + 12


@dataclass(frozen=True)
class _LineageLayout:
    """Steps down the left in run order; beside each, the files it wrote first (or read first, when no step
    wrote them); every label wrapped to its box."""

    steps: dict[str, tuple[_Box, list[str]]]
    files: dict[str, tuple[_Box, list[str]]]
    height: int


def _lineage_layout(
    step_ids: list[str], used: list[str], edges: list[JSONObject], fresh: set[str], width: int
) -> _LineageLayout:
    col = {sid: i for i, sid in enumerate(step_ids)}
    step_w, file_w = width * 0.44, width * 0.32
    file_x = width - 10 - file_w
    names = _short_names(used)
    steps: dict[str, tuple[_Box, list[str]]] = {}
    files: dict[str, tuple[_Box, list[str]]] = {}
    y = 10.0
    for i, sid in enumerate(step_ids):
        lines = wrap(sid, _chars(step_w))
        mine = [(p, wrap(("" if p in fresh else "! ") + names[p], _chars(file_w))) for p in used]
        mine = [(p, ls) for p, ls in mine if _file_anchor(p, edges, col) == i]
        stack = sum(_box_height(ls) for _, ls in mine) + 8 * max(0, len(mine) - 1)
        row = max(_box_height(lines), stack)
        steps[sid] = (_Box(10.0, y + (row - _box_height(lines)) / 2, step_w, _box_height(lines)), lines)
        fy = y + (row - stack) / 2
        for p, ls in mine:
            files[p] = (_Box(file_x, fy, file_w, _box_height(ls)), ls)
            fy += _box_height(ls) + 8
        y += row + 16
    return _LineageLayout(steps, files, int(y))


def _lineage_edges(edges: list[JSONObject], at: _LineageLayout) -> list[str]:
    """One curve per read or write: step -> file it wrote, file -> step that read it; a read of a file this
    run did not write is red and dashed. Edges meet a box at points spread down its side."""
    drawn = [e for e in edges if str(e.get("step")) in at.steps and str(e.get("file")) in at.files]
    step_ports: dict[str, list[int]] = {}
    file_ports: dict[str, list[int]] = {}
    for k, e in enumerate(drawn):
        step_ports.setdefault(str(e["step"]), []).append(k)
        file_ports.setdefault(str(e["file"]), []).append(k)
    # ports in the order of the other end's height, so the curves into one box do not cross there
    for key, ports in step_ports.items():
        ports.sort(key=lambda k: at.files[str(drawn[k]["file"])][0].y)
        step_ports[key] = ports
    for key, ports in file_ports.items():
        ports.sort(key=lambda k: at.steps[str(drawn[k]["step"])][0].y)
        file_ports[key] = ports
    parts = []
    for k, e in enumerate(drawn):
        sid, path = str(e["step"]), str(e["file"])
        sbox, fbox = at.steps[sid][0], at.files[path][0]
        sp = sbox.port("right", step_ports[sid].index(k), len(step_ports[sid]))
        fp = fbox.port("left", file_ports[path].index(k), len(file_ports[path]))
        stale = e.get("kind") != "wrote" and not e.get("fresh")
        a, b = (sp, fp) if e.get("kind") == "wrote" else (fp, sp)
        bend = (fp[0] - sp[0]) / 2 * (1 if a is sp else -1)
        colour = RED if stale else "#57606a"
        dash = ' stroke-dasharray="5 3"' if stale else ""
        parts.append(
            f'<path class="{"stale" if stale else "edge"} {"wrote" if a is sp else "read"}" fill="none" '
            f'd="M{a[0]:.1f},{a[1]:.1f} C{a[0] + bend:.1f},{a[1]:.1f} {b[0] - bend:.1f},{b[1]:.1f} '
            f'{b[0]:.1f},{b[1]:.1f}" stroke="{colour}" stroke-width="1.3"{dash} marker-end="url(#arrow)">'
            f"<title>{_esc(sid)} {'wrote' if a is sp else 'read'} {_esc(path)}</title></path>"
        )
    return parts


def _lineage_node(cls: str, box: _Box, lines: list[str], title: str, fill: str, stroke: str) -> str:
    return (
        f'<g class="node {cls}"><title>{_esc(title)}</title>'
        f'<rect class="{cls}" x="{box.x:.1f}" y="{box.y:.1f}" width="{box.w:.1f}" height="{box.h:.1f}" '
        f'rx="{4 if cls == "step" else 10}" fill="{fill}" stroke="{stroke}"/>'
        + _label(lines, box.x + 8, box.y + 17)
        + "</g>"
    )


def lineage_svg(lineage: Mapping[str, object], *, width: int = 1240) -> str:
    """The run's lineage as a graph: the steps down the left in run order, the weights and model files they
    wrote or read on the right, beside the step that wrote them; an arrow from a step to a file it wrote, from
    a file to a step that read it. A read of a file this run did not write is red and dashed, its file red
    and marked `!`. Labels wrap inside their boxes, never cut. Empty when no artefact was recorded."""
    step_ids, files, edges = _lineage_graph(lineage)
    if not step_ids or not edges:
        return ""
    col = {sid: i for i, sid in enumerate(step_ids)}
    used = _files_in_order(edges, col)
    fresh = {str(e.get("file")) for e in edges if e.get("kind") == "wrote"}
    at = _lineage_layout(step_ids, used, edges, fresh, width)
    parts = [
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#57606a"/></marker></defs>'
    ]
    parts += _lineage_edges(edges, at)
    for sid, (box, lines) in at.steps.items():
        parts.append(_lineage_node("step", box, lines, sid, "#ddf4ff", BLUE))
    for p, (box, lines) in at.files.items():
        ok = p in fresh
        title = f"{p} ({files[p].get('kind')})"
        parts.append(
            _lineage_node("file", box, lines, title, "#dafbe1" if ok else "#ffebe9", GREEN if ok else RED)
        )
    return _svg(width, at.height, "lineage graph", parts)
