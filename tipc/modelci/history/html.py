"""A self-contained HTML trend page: one inline SVG chart per metric over time, laid out in a responsive grid,
points coloured by Paddle version, the baseline band (median ± margin) drawn behind them. No script, no
network: it opens from a file.

The page is the package template `templates/history.html.j2` (jinja2 autoescapes every value); the charts are
SVG built here from numbers and escaped text. The x axis is the run order: its labels are the runs' start
times in the coarsest format that still tells every two runs of a chart apart (seconds, then the run's
number, when runs started in the same minute).
"""

from __future__ import annotations

import datetime as _dt
import html
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tipc.modelci.history.db import StoredRun, iter_metric_names
from tipc.modelci.history.trend import series

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
W, H, PAD_L, PAD_R, PAD_T, PAD_B = 440, 220, 58, 14, 12, 52
MAX_X_LABELS = 4
# px a character of an 11 px x label may take (a digit takes 7), and the least space between two labels
LABEL_CHAR_W, LABEL_GAP = 7.0, 8.0
# From coarse to fine: the first that gives every run of a chart its own label is used.
_TIME_FORMATS = ("%m-%d", "%m-%d %H:%M", "%m-%d %H:%M:%S")


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _utc(started: float) -> _dt.datetime:
    return _dt.datetime.fromtimestamp(started, _dt.timezone.utc)


def run_labels(runs: Sequence[StoredRun]) -> list[str]:
    """One x label per run: its start time in the coarsest format under which no two of these runs share a
    label (the year in front when they span years); runs started in the same second get their number."""
    years = {_utc(r.started).year for r in runs}
    prefix = "%Y-" if len(years) > 1 else ""
    for fmt in _TIME_FORMATS:
        labels = [_utc(r.started).strftime(prefix + fmt) for r in runs]
        if len(set(labels)) == len(labels):
            return labels
    return [f"{label} #{r.id}" for label, r in zip(labels, runs, strict=True)]


def _ticks(xs: list[float], labels: list[str]) -> list[int]:
    """The runs that get an x label: the first, the last, and between them the most evenly spread ones (up
    to MAX_X_LABELS in all) whose labels do not overlap. The first label runs right from its point, the last
    left, the others are centred."""
    n = len(xs)
    if n <= 1:
        return list(range(n))

    def span(i: int) -> tuple[float, float]:
        w = LABEL_CHAR_W * max(len(line) for line in labels[i].split(" ", 1))
        return (
            (xs[i], xs[i] + w)
            if i == 0
            else (xs[i] - w, xs[i])
            if i == n - 1
            else (xs[i] - w / 2, xs[i] + w / 2)
        )

    for count in range(min(n, MAX_X_LABELS), 1, -1):
        chosen = sorted({round(k * (n - 1) / (count - 1)) for k in range(count)})
        if all(span(a)[1] + LABEL_GAP <= span(b)[0] for a, b in itertools.pairwise(chosen)):
            return chosen
    return [0]


@dataclass(frozen=True)
class _Scale:
    """A chart's plot area: run i at x(i) (runs evenly spaced), value v at y(v)."""

    n: int
    lo: float
    hi: float

    @staticmethod
    def of(points: list[tuple[StoredRun, float]], band: tuple[float, float] | None) -> _Scale:
        values = [v for _, v in points if math.isfinite(v)]
        lo = min(values) if values else 0.0
        hi = max(values) if values else 1.0
        if band is not None:
            lo, hi = min(lo, band[0] - band[1]), max(hi, band[0] + band[1])
        if hi == lo:
            lo, hi = lo - 1.0, hi + 1.0
        span = hi - lo
        return _Scale(len(points), lo - 0.05 * span, hi + 0.05 * span)

    def x(self, i: int) -> float:
        return PAD_L + (W - PAD_L - PAD_R) * (i / max(self.n - 1, 1) if self.n > 1 else 0.5)

    def y(self, v: float) -> float:
        return PAD_T + (H - PAD_T - PAD_B) * (1 - (v - self.lo) / (self.hi - self.lo))


def _band(at: _Scale, band: tuple[float, float]) -> list[str]:
    top, bottom = at.y(band[0] + band[1]), at.y(band[0] - band[1])
    return [
        f'<rect class="band" x="{PAD_L}" y="{top:.1f}" width="{W - PAD_L - PAD_R}" '
        f'height="{max(bottom - top, 1):.1f}" fill="#8fd18f" fill-opacity="0.35">'
        f"<title>baseline {band[0]:.4g} ± {band[1]:.4g}</title></rect>",
        f'<line x1="{PAD_L}" x2="{W - PAD_R}" y1="{at.y(band[0]):.1f}" y2="{at.y(band[0]):.1f}" '
        'stroke="#2a7a2a" stroke-dasharray="4 3"/>',
    ]


def _points(at: _Scale, points: list[tuple[StoredRun, float]], colours: dict[str, str]) -> list[str]:
    """The line through the values and a point per run, coloured by Paddle version, its run in the tooltip."""
    parts = []
    if at.n > 1:
        path = " ".join(f"{at.x(i):.1f},{at.y(v):.1f}" for i, (_, v) in enumerate(points) if math.isfinite(v))
        parts.append(f'<polyline points="{path}" fill="none" stroke="#999" stroke-width="1"/>')
    for i, (run, v) in enumerate(points):
        if not math.isfinite(v):
            continue
        when = _utc(run.started).strftime("%Y-%m-%d %H:%M:%S UTC")
        colour = colours.get(run.paddle_version or "?", "#333")
        parts.append(
            f'<circle class="point" cx="{at.x(i):.1f}" cy="{at.y(v):.1f}" r="4" fill="{colour}">'
            f"<title>{_esc(when)} · run {run.id} · Paddle {_esc(run.paddle_version)} · {_esc(run.kind)} · "
            f"{v:.6g}</title></circle>"
        )
    return parts


def _x_labels(at: _Scale, labels: list[str]) -> list[str]:
    """Tick and label under the runs _ticks picks; the date over the time, so a label is half as wide."""
    parts = []
    n, base = at.n, H - PAD_B
    for i in _ticks([at.x(i) for i in range(n)], labels):
        anchor = "start" if i == 0 and n > 1 else "end" if i == n - 1 and n > 1 else "middle"
        parts.append(
            f'<line x1="{at.x(i):.1f}" x2="{at.x(i):.1f}" y1="{base}" y2="{base + 4}" stroke="#999"/>'
        )
        lines = "".join(
            f'<tspan x="{at.x(i):.1f}" dy="{0 if k == 0 else 12}">{_esc(line)}</tspan>'
            for k, line in enumerate(labels[i].split(" ", 1))
        )
        parts.append(
            f'<text class="xlabel" x="{at.x(i):.1f}" y="{base + 15}" font-size="11" text-anchor="{anchor}">'
            f"{lines}</text>"
        )
    return parts


def _plot(
    name: str,
    points: list[tuple[StoredRun, float]],
    colours: dict[str, str],
    band: tuple[float, float] | None,
) -> str:
    at = _Scale.of(points, band)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
        f'aria-label="{_esc(name)}" data-metric="{_esc(name)}" font-family="system-ui,sans-serif">',
        f'<rect x="{PAD_L}" y="{PAD_T}" width="{W - PAD_L - PAD_R}" height="{H - PAD_T - PAD_B}" '
        'fill="#fafafa" stroke="#ccc"/>',
    ]
    if band is not None:
        parts += _band(at, band)
    for v in (at.lo, (at.lo + at.hi) / 2, at.hi):
        parts.append(
            f'<text x="{PAD_L - 6}" y="{at.y(v) + 4:.1f}" font-size="11" text-anchor="end">{v:.4g}</text>'
        )
    parts += _points(at, points, colours)
    parts += _x_labels(at, run_labels([run for run, _ in points]))
    parts.append(
        f'<text x="{(PAD_L + W - PAD_R) / 2:.0f}" y="{H - 4}" font-size="10" fill="#666" '
        'text-anchor="middle">runs in order (UTC start time)</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class _Chart:
    name: str
    unit: str
    count: int
    caption: str
    svg: Markup  # numbers and escaped text only


def _template() -> jinja2.Template:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("tipc.modelci.history", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("history.html.j2")


def render(
    runs: Sequence[StoredRun],
    title: str,
    metrics: Sequence[str] = (),
    bands: dict[str, tuple[float, float]] | None = None,
) -> str:
    from markupsafe import Markup

    versions = sorted({r.paddle_version or "?" for r in runs})
    colours = {v: PALETTE[i % len(PALETTE)] for i, v in enumerate(versions)}
    names = list(metrics) or list(iter_metric_names(runs))
    charts = []
    for name in names:
        points = series(runs, name)
        unit = next((r.metrics[name][1] for r, _ in points if r.metrics[name][1]), "")
        band = (bands or {}).get(name)
        caption = f" · baseline {band[0]:.4g} ± {band[1]:.4g}" if band else ""
        charts.append(_Chart(name, unit, len(points), caption, Markup(_plot(name, points, colours, band))))
    span = ""
    if runs:
        span = f"{_utc(runs[0].started):%Y-%m-%d %H:%M} to {_utc(runs[-1].started):%Y-%m-%d %H:%M} UTC"
    return str(_template().render(title=title, runs=runs, span=span, colours=colours, charts=charts)) + "\n"
