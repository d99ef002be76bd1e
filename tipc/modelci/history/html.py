"""A self-contained HTML trend page: one inline SVG plot per metric over time, points coloured by Paddle
version, the baseline band (median ± margin) drawn behind them. No script, no network: it opens from a
file."""

from __future__ import annotations

import datetime as _dt
import html
import math
from collections.abc import Sequence

from tipc.modelci.history.db import StoredRun, iter_metric_names
from tipc.modelci.history.trend import series

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
W, H, PAD_L, PAD_R, PAD_T, PAD_B = 640, 220, 64, 16, 16, 36


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _plot(
    name: str,
    points: list[tuple[StoredRun, float]],
    colours: dict[str, str],
    band: tuple[float, float] | None,
) -> str:
    values = [v for _, v in points if math.isfinite(v)]
    lo = min(values) if values else 0.0
    hi = max(values) if values else 1.0
    if band is not None:
        lo, hi = min(lo, band[0] - band[1]), max(hi, band[0] + band[1])
    if hi == lo:
        lo, hi = lo - 1.0, hi + 1.0
    span = hi - lo
    lo, hi = lo - 0.05 * span, hi + 0.05 * span
    n = len(points)

    def x(i: int) -> float:
        return PAD_L + (W - PAD_L - PAD_R) * (i / max(n - 1, 1) if n > 1 else 0.5)

    def y(v: float) -> float:
        return PAD_T + (H - PAD_T - PAD_B) * (1 - (v - lo) / (hi - lo))

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" role="img" '
        f'aria-label="{_esc(name)}" data-metric="{_esc(name)}">',
        f'<rect x="{PAD_L}" y="{PAD_T}" width="{W - PAD_L - PAD_R}" height="{H - PAD_T - PAD_B}" '
        'fill="#fafafa" stroke="#ccc"/>',
    ]
    if band is not None:
        top, bottom = y(band[0] + band[1]), y(band[0] - band[1])
        parts.append(
            f'<rect class="band" x="{PAD_L}" y="{top:.1f}" width="{W - PAD_L - PAD_R}" '
            f'height="{max(bottom - top, 1):.1f}" fill="#8fd18f" fill-opacity="0.35">'
            f"<title>baseline {band[0]:.4g} ± {band[1]:.4g}</title></rect>"
        )
        parts.append(
            f'<line x1="{PAD_L}" x2="{W - PAD_R}" y1="{y(band[0]):.1f}" y2="{y(band[0]):.1f}" '
            'stroke="#2a7a2a" stroke-dasharray="4 3"/>'
        )
    for v in (lo, (lo + hi) / 2, hi):
        parts.append(
            f'<text x="{PAD_L - 6}" y="{y(v) + 4:.1f}" font-size="11" text-anchor="end">{v:.4g}</text>'
        )
    if n > 1:
        path = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, (_, v) in enumerate(points) if math.isfinite(v))
        parts.append(f'<polyline points="{path}" fill="none" stroke="#999" stroke-width="1"/>')
    for i, (run, v) in enumerate(points):
        if not math.isfinite(v):
            continue
        when = _dt.datetime.fromtimestamp(run.started, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
        colour = colours.get(run.paddle_version or "?", "#333")
        parts.append(
            f'<circle class="point" cx="{x(i):.1f}" cy="{y(v):.1f}" r="4" fill="{colour}">'
            f"<title>{_esc(when)} · Paddle {_esc(run.paddle_version)} · {_esc(run.kind)} · {v:.6g}</title>"
            "</circle>"
        )
    if points:
        first = _dt.datetime.fromtimestamp(points[0][0].started, _dt.timezone.utc).strftime("%m-%d %H:%M")
        last = _dt.datetime.fromtimestamp(points[-1][0].started, _dt.timezone.utc).strftime("%m-%d %H:%M")
        parts.append(f'<text x="{PAD_L}" y="{H - 10}" font-size="11">{_esc(first)}</text>')
        parts.append(
            f'<text x="{W - PAD_R}" y="{H - 10}" font-size="11" text-anchor="end">{_esc(last)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def render(
    runs: Sequence[StoredRun],
    title: str,
    metrics: Sequence[str] = (),
    bands: dict[str, tuple[float, float]] | None = None,
) -> str:
    versions = sorted({r.paddle_version or "?" for r in runs})
    colours = {v: PALETTE[i % len(PALETTE)] for i, v in enumerate(versions)}
    legend = " ".join(
        f'<span class="key"><span class="swatch" style="background:{c}"></span>Paddle {_esc(v)}</span>'
        for v, c in colours.items()
    )
    names = list(metrics) or list(iter_metric_names(runs))
    sections = []
    for name in names:
        points = series(runs, name)
        unit = next((r.metrics[name][1] for r, _ in points if r.metrics[name][1]), "")
        band = (bands or {}).get(name)
        caption = f" · baseline {band[0]:.4g} ± {band[1]:.4g}" if band else ""
        sections.append(
            f'<section class="metric"><h2>{_esc(name)}{(" [" + _esc(unit) + "]") if unit else ""}</h2>'
            f'<p class="meta">{len(points)} values{_esc(caption)}</p>'
            f"{_plot(name, points, colours, band)}</section>"
        )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_esc(title)}</title><style>"
        "body{font-family:system-ui,sans-serif;margin:24px;color:#222}"
        "h1{font-size:20px}h2{font-size:15px;margin:18px 0 2px}"
        ".meta{margin:0 0 4px;color:#666;font-size:12px}"
        ".key{margin-right:14px;font-size:13px}.swatch{display:inline-block;width:11px;height:11px;"
        "border-radius:6px;margin-right:4px;vertical-align:middle}"
        ".band-key{display:inline-block;width:18px;height:10px;background:#8fd18f;opacity:.5;margin-right:4px}"
        "</style></head><body>"
        f"<h1>{_esc(title)}</h1><p>{len(runs)} runs · {legend} "
        '<span class="key"><span class="band-key"></span>baseline band (median ± margin)</span></p>'
        + "".join(sections)
        + "</body></html>\n"
    )
