"""The converge report in tipc check's five formats: terminal text, JSON, JUnit XML, Markdown and HTML
(one inline SVG per segment with the recorded and the new curve). Pure functions of a ConvergeResult."""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tipc.convergence.result import FAIL, PASS, ConvergeResult, SegmentResult, fmt
from tipc.core.fs import atomic_write_text

FORMATS = ("text", "json", "junit", "markdown", "html")
FILES = {
    "json": "converge.json",
    "junit": "converge.junit.xml",
    "markdown": "converge.md",
    "html": "converge.html",
}


def _summary(result: ConvergeResult) -> str:
    segs = result.segments
    failed = sum(1 for s in segs if s.status != PASS)
    verdict = PASS if result.passed else FAIL
    return f"{verdict}: {len(result.tests)} test(s), {len(segs)} segment(s), {failed} failed ({result.mode})"


def terminal(result: ConvergeResult) -> str:
    lines: list[str] = []
    for t in result.tests:
        lines.append(f"[{t.status}] {t.name} ({t.mode}; manifest {t.manifest_path})")
        for err in t.errors:
            lines.append(f"    ! {err}")
        for note in t.notes:
            lines.append(f"    - {note}")
        for s in t.segments:
            passed = sum(1 for c in s.checks if c.passed)
            extra = f", {passed}/{len(s.checks)} checks" if s.checks else ""
            code = f", exit {s.exit_code}" if result.mode == "run" and s.exit_code is not None else ""
            lines.append(f"  [{s.status}] segment@{s.start_step} ({s.checkpoint}{extra}{code})")
            for r in s.reasons if s.status != PASS or result.mode == "gather" else []:
                lines.append(f"      {r}")
            for c in s.failed_checks:
                lines.append(f"      {c.describe()}")
            if s.status != PASS and s.log_path:
                lines.append(f"      log: {s.log_path}")
    lines.append(_summary(result))
    return "\n".join(lines) + "\n"


def to_dict(result: ConvergeResult) -> dict[str, Any]:
    return {
        "mode": result.mode,
        "status": PASS if result.passed else FAIL,
        "tests": [
            {
                "name": t.name,
                "status": t.status,
                "config": t.config_path,
                "manifest": t.manifest_path,
                "errors": t.errors,
                "notes": t.notes,
                "segments": [
                    {
                        "name": s.name,
                        "start_step": s.start_step,
                        "checkpoint": s.checkpoint,
                        "status": s.status,
                        "reasons": s.reasons,
                        "exit_code": s.exit_code,
                        "timed_out": s.timed_out,
                        "duration_s": round(s.duration_s, 3),
                        "log": s.log_path,
                        "argv": s.argv,
                        "checks": [
                            {
                                "step": c.step,
                                "metric": c.metric,
                                "label": c.label,
                                "operator": c.op,
                                "margin": c.margin,
                                "abs_margin": c.abs_margin,
                                "expected": c.expected,
                                "band": list(c.band) if c.band else None,
                                "allowed": [c.lo, c.hi],
                                "actual": c.actual,
                                "passed": c.passed,
                                "reason": c.reason,
                            }
                            for c in s.checks
                        ],
                        "recorded": s.recorded,
                        "observed": s.observed,
                    }
                    for s in t.segments
                ],
            }
            for t in result.tests
        ],
    }


def to_json(result: ConvergeResult) -> str:
    return json.dumps(to_dict(result), indent=2) + "\n"


def junit(result: ConvergeResult) -> str:
    root = ET.Element("testsuites", name=f"tipc converge {result.mode}")
    for t in result.tests:
        suite = ET.SubElement(
            root,
            "testsuite",
            name=t.name,
            tests=str(max(1, len(t.segments))),
            failures=str(sum(1 for s in t.segments if s.status != PASS) + (1 if t.errors else 0)),
        )
        if t.errors or not t.segments:
            case = ET.SubElement(suite, "testcase", classname=t.name, name=f"{t.name}::{t.mode}")
            failure = ET.SubElement(case, "failure", message=(t.errors or ["no segments"])[0].splitlines()[0])
            failure.text = "\n".join(t.errors or ["no segments"])
        for s in t.segments:
            case = ET.SubElement(suite, "testcase", classname=t.name, name=s.name, time=f"{s.duration_s:.3f}")
            if s.status != PASS:
                text = s.failure_text()
                failure = ET.SubElement(case, "failure", message=(text.splitlines() or ["failed"])[0])
                failure.text = text
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def markdown(result: ConvergeResult) -> str:
    out = [f"# tipc converge {result.mode}", "", f"**{_summary(result)}**", ""]
    for t in result.tests:
        out += [f"## {t.name}: {t.status}", "", f"Manifest: `{t.manifest_path}`", ""]
        out += [f"- **error**: {_md(e)}" for e in t.errors] + [f"- {_md(n)}" for n in t.notes]
        out += ["", "| segment | checkpoint | status | detail |", "|---|---|---|---|"]
        for s in t.segments:
            detail = (
                s.failure_text()
                if s.status != PASS
                else f"{len(s.checks)} checks passed"
                if s.checks
                else "; ".join(s.reasons)
            )
            out.append(f"| {s.start_step} | `{s.checkpoint}` | {s.status} | {_md(detail)} |")
        out.append("")
    return "\n".join(out) + "\n"


_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")


@dataclass(frozen=True)
class _Chart:
    """A chart's size and the data range it maps onto it."""

    width: int
    height: int
    lo_s: int
    hi_s: int
    lo_v: float
    hi_v: float
    pad: int = 44
    top: int = 22

    @classmethod
    def of(cls, pts: list[tuple[int, float]], width: int, height: int) -> _Chart:
        return cls(
            width,
            height,
            min(p[0] for p in pts),
            max(p[0] for p in pts),
            min(p[1] for p in pts),
            max(p[1] for p in pts),
        )

    def x(self, step: int) -> float:
        span_s = (self.hi_s - self.lo_s) or 1
        return self.pad + (step - self.lo_s) / span_s * (self.width - 2 * self.pad)

    def y(self, value: float) -> float:
        span_v = (self.hi_v - self.lo_v) or 1.0
        plot = self.height - self.pad + 14 - self.top
        return self.height - self.pad + 14 - (value - self.lo_v) / span_v * plot


def _frame(c: _Chart, seg: SegmentResult, name: str) -> list[str]:
    """The chart's opening tag, title, plot box, axis labels and legend."""
    width, height, pad, top = c.width, c.height, c.pad, c.top
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="{html.escape(name)} at segment {seg.start_step}">',
        f'<text x="{pad}" y="14" font-size="12" font-weight="bold">{html.escape(name)}</text>',
        f'<rect x="{pad}" y="{top}" width="{width - 2 * pad}" height="{height - pad + 14 - top}" fill="none" '
        'stroke="#ccc"/>',
        f'<text x="{pad}" y="{height - 12}" font-size="10">step {c.lo_s}</text>',
        f'<text x="{width - pad}" y="{height - 12}" font-size="10" text-anchor="end">step {c.hi_s}</text>',
        f'<text x="2" y="{top + 8}" font-size="10">{html.escape(fmt(c.hi_v))}</text>',
        f'<text x="2" y="{height - pad + 14}" font-size="10">{html.escape(fmt(c.lo_v))}</text>',
        f'<text x="{width - pad}" y="14" font-size="10" text-anchor="end">'
        '<tspan fill="#1f77b4">recorded ——</tspan> <tspan fill="#ff7f0e">new - - -</tspan></text>',
    ]


def _series(c: _Chart, points: list[tuple[int, float]], cls: str, dash: str, name: str) -> list[str]:
    """One curve's polyline and a dot per point (NaN values left out)."""
    path = " ".join(f"{c.x(s):.1f},{c.y(v):.1f}" for s, v in points if v == v)
    colour = "#1f77b4" if cls == "recorded" else "#ff7f0e"
    parts = [
        f'<polyline class="{cls}" data-series="{html.escape(name)}" fill="none" stroke="{colour}"'
        f'{dash} stroke-width="1.5" points="{path}"/>'
    ]
    for s, v in points:
        if v == v:
            parts.append(f'<circle cx="{c.x(s):.1f}" cy="{c.y(v):.1f}" r="2" fill="{colour}"/>')
    return parts


def svg(seg: SegmentResult, name: str, width: int = 360, height: int = 170) -> str:
    """One metric label of a segment: the recorded curve (solid) and the new one (dashed); failing steps
    circled in red. Each metric gets its own chart, since scales differ (a loss and an accuracy)."""
    recorded = seg.recorded.get(name, [])
    observed = seg.observed.get(name, [])
    failed = {c.step for c in seg.failed_checks if c.name == name}
    pts = [p for p in (*recorded, *observed) if p[1] == p[1]]
    if not pts:
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="40">'
            f'<text x="4" y="20">{html.escape(name)}: no data</text></svg>'
        )
    chart = _Chart.of(pts, width, height)
    parts = _frame(chart, seg, name)
    parts += _series(chart, recorded, "recorded", "", name)
    parts += _series(chart, observed, "observed", ' stroke-dasharray="5,3"', name)
    for s, v in observed:
        if s in failed and v == v:
            parts.append(
                f'<circle class="failed" cx="{chart.x(s):.1f}" cy="{chart.y(v):.1f}" r="6" fill="none" '
                'stroke="#c00"/>'
            )
    parts.append("</svg>")
    return "".join(parts)


def html_report(result: ConvergeResult) -> str:
    esc = html.escape
    body = [
        f"<h1>tipc converge {esc(result.mode)}</h1>",
        f"<p class=summary><b>{esc(_summary(result))}</b></p>",
    ]
    for t in result.tests:
        body.append(f'<h2 class="{t.status.lower()}">{esc(t.name)}: {t.status}</h2>')
        body.append(f"<p>Manifest: <code>{esc(t.manifest_path)}</code></p>")
        body += [f'<p class="error">{esc(e)}</p>' for e in t.errors] + [f"<p>{esc(n)}</p>" for n in t.notes]
        for s in t.segments:
            body.append(f'<section class="segment" id="seg-{esc(t.name)}-{s.start_step}">')
            body.append(
                f'<h3 class="{s.status.lower()}">segment @ step {s.start_step}: {s.status}</h3>'
                f"<p>checkpoint <code>{esc(s.checkpoint)}</code></p>"
            )
            body += [f"<p>{esc(r)}</p>" for r in s.reasons]
            body.append('<div class="charts">' + "".join(svg(s, name) for name in s.recorded) + "</div>")
            if s.checks:
                body.append(
                    "<table><tr><th>step</th><th>metric</th><th>op</th><th>margin</th><th>expected</th>"
                    "<th>allowed</th><th>actual</th><th>result</th></tr>"
                )
                for c in s.checks:
                    res = "pass" if c.passed else f"FAIL {c.reason}".strip()
                    body.append(
                        f'<tr class="{"pass" if c.passed else "fail"}">'
                        f"<td>{c.step}</td><td>{esc(c.name)}</td>"
                        f"<td>{esc(c.op)}</td><td>{c.margin:g}</td><td>{fmt(c.expected)}</td>"
                        f"<td>{esc(c.allowed())}</td><td>{fmt(c.actual)}</td><td>{esc(res)}</td></tr>"
                    )
                body.append("</table>")
            if s.status != PASS and s.log_tail:
                body.append("<pre>" + esc("\n".join(s.log_tail)) + "</pre>")
            body.append("</section>")
    style = (
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
        "padding:2px 6px}.fail{color:#b00}.pass{color:#060}"
        "pre{background:#f4f4f4;padding:6px;white-space:pre-wrap}"
        ".charts{display:flex;flex-wrap:wrap;gap:12px}"
    )
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>tipc converge</title>"
        f"<style>{style}</style></head><body>" + "\n".join(body) + "</body></html>\n"
    )


def render(result: ConvergeResult, fmt_name: str) -> str:
    return {"text": terminal, "json": to_json, "junit": junit, "markdown": markdown, "html": html_report}[
        fmt_name
    ](result)


def write_all(result: ConvergeResult, directory: Path) -> dict[str, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, filename in FILES.items():
        path = directory / filename
        atomic_write_text(path, render(result, name))
        written[name] = path
    return written
