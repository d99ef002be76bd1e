"""The HTML reporter: one self-contained page (inline CSS and SVG, no scripts, no external requests), led by
what needs attention: failed rules with their cause and evidence, broken rules, lint errors, failed steps
with their causes and log tails, warnings. Then the figures, the steps, the lineage and every rule, PASS rules
folded. Evidence lines a rule repeats are shown once with their count.

The page is the package template `templates/report.html.j2`; jinja2 autoescapes every value. The only markup
built in Python is the SVG of tipc.report.figures, made from numbers and escaped text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tipc.core.units import human_bytes, human_seconds
from tipc.judge.checks.base import Evidence, Verdict
from tipc.report.figures import lineage_svg, loss_chart_svg, timeline_svg
from tipc.report.matrix import Matrix, engines_matrix, serving_data
from tipc.report.model import (
    NO_CAUSE,
    TAIL_LINES,
    Report,
    RuleVerdict,
    agreement_caption,
    curve_points,
    evidence_text,
    remedy_text,
)

if TYPE_CHECKING:
    import jinja2

ATTENTION = (Verdict.FAIL, Verdict.WARN)  # verdicts shown in full at the top
_MAX_LOCATIONS = 12  # locations named on a collapsed evidence line before "+N more"


def loss_curve_svg(points: list[tuple[float, float]], data: Mapping[str, object] | None = None) -> str:
    """The loss chart (axes, smoothing, trend); built from numbers and escaped text only."""
    return loss_chart_svg(points, data or {})


@dataclass(frozen=True)
class EvidenceLine:
    """One line of a rule's evidence: the same text seen `count` times (at the locations `text` names)."""

    text: str
    count: int
    excerpts: tuple[tuple[str, str], ...]  # (location, excerpt)


def _locations(items: list[Evidence]) -> str:
    """Where repeated evidence was seen, each place once: `README.md:22, 43, 62, b.md:3`; at most
    _MAX_LOCATIONS named, then how many more."""
    by_path: dict[str, list[int]] = {}
    for e in items:
        if e.path is not None:
            lines = by_path.setdefault(e.path, [])
            if e.line is not None and e.line not in lines:
                lines.append(e.line)
    parts: list[str] = []
    left, hidden = _MAX_LOCATIONS, 0
    for path, lines in by_path.items():
        if left <= 0:
            hidden += max(1, len(lines))
            continue
        shown = lines[:left]
        hidden += len(lines) - len(shown)
        left -= max(1, len(shown))
        parts.append(f"{path}:{', '.join(map(str, shown))}" if shown else path)
    return ", ".join(parts) + (f" (+{hidden} more)" if hidden else "")


def evidence_lines(evidence: tuple[Evidence, ...]) -> list[EvidenceLine]:
    """The evidence with repeats collapsed: items with the same text and numbers become one line that names
    every location once and carries the count; excerpts stay, each with its location."""
    groups: dict[str, list[Evidence]] = {}
    for e in evidence:
        groups.setdefault(evidence_text(replace(e, path=None, line=None)), []).append(e)
    out = []
    for text, items in groups.items():
        where = _locations(items) if len(items) > 1 else items[0].location()
        excerpts = tuple((e.location(), e.excerpt) for e in items if e.excerpt)
        out.append(EvidenceLine(" ".join(x for x in (where, text) if x), len(items), excerpts))
    return out


def collapse_summary(summary: str) -> str:
    """A summary joined from its parts ("a; a; b"), each repeated part once with its count: "a (×2); b"."""
    parts = summary.split("; ")
    counts: dict[str, int] = {}
    for part in parts:
        counts[part] = counts.get(part, 0) + 1
    if len(counts) == len(parts):
        return summary
    return "; ".join(part if n == 1 else f"{part} (×{n})" for part, n in counts.items())


@dataclass(frozen=True)
class RuleView:
    rule: RuleVerdict
    summary: str  # the rule's summary, repeats collapsed
    evidence: list[EvidenceLine]
    svg: str  # markupsafe.Markup of the loss chart, or ""
    matrix: Matrix | None
    matrix_caption: str
    figure: str = ""  # the id of the figure that shows this rule's figures, "" for none

    @property
    def attention(self) -> bool:
        return self.rule.verdict in ATTENTION or self.rule.error is not None

    @property
    def has_figure(self) -> bool:
        return bool(self.svg or self.matrix)


def _rule_view(r: RuleVerdict, serving: Mapping[str, object] | None) -> RuleView:
    from markupsafe import Markup

    svg = loss_curve_svg(curve_points(r.data), r.data)
    matrix = engines_matrix(r.data, serving)
    return RuleView(
        rule=r,
        summary=collapse_summary(r.summary),
        evidence=evidence_lines(r.evidence),
        svg=Markup(svg) if svg else "",  # numbers and escaped text only, see tipc.report.figures
        matrix=matrix,
        matrix_caption=agreement_caption(r.data),
        figure=f"fig-{r.id}" if svg or matrix else "",
    )


def _with_served_figure(rules: list[RuleView], serving: Mapping[str, object] | None) -> list[RuleView]:
    """The serving rule points at the engines' matrix its protocols joined."""
    grown = next((r for r in rules if r.matrix is not None and r.matrix.served), None)
    if grown is None or serving is None:
        return rules
    return [replace(r, figure=grown.figure) if r.rule.data is serving and not r.figure else r for r in rules]


def _step_views(report: Report) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """The steps table's rows and the failed steps with their causes and log tails."""
    steps = [
        {
            "step": s,
            "time": human_seconds(s.duration_s),
            "rss": human_bytes(s.peak_rss_bytes),
            "gpu": human_bytes(s.peak_gpu_mem_bytes),
        }
        for s in (report.run.steps if report.run else ())
    ]
    failed_steps = [
        {
            "step": s,
            "causes": [
                {"id": c.id, "cause": c.cause, "remedy": remedy_text(c), "evidence": c.evidence}
                for c in s.causes
            ],
            "tail": "\n".join(s.log_tail.splitlines()[-TAIL_LINES:]) if s.log_tail else "",
        }
        for s in (report.run.failed_steps if report.run else ())
    ]
    return steps, failed_steps


def _run_context(report: Report) -> dict[str, object]:
    """The template's values read from the run record (empty without one) and the lineage."""
    from markupsafe import Markup

    from tipc.report.lineage import step_lines

    run_steps = report.run.steps if report.run else ()
    timeline = timeline_svg(run_steps)
    graph = lineage_svg(report.lineage) if report.lineage else ""
    return {
        "step_counts": report.run.status_counts() if report.run else {},
        "timeline": Markup(timeline) if timeline else "",  # escaped in tipc.report.figures
        "has_gpu": any(x[3] is not None for s in run_steps for x in s.samples),
        "lineage_svg": Markup(graph) if graph else "",
        "env_lines": report.run.environment_lines if report.run else [],
        "box_lines": report.run.sandbox_lines() if report.run else [],
        "lineage": step_lines(report.lineage) if report.lineage else [],
    }


def _template() -> jinja2.Template:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("tipc.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("report.html.j2")


def render_html(report: Report) -> str:
    serving = serving_data(r.data for r in report.rules)
    rules = _with_served_figure([_rule_view(r, serving) for r in report.rules], serving)
    steps, failed_steps = _step_views(report)
    return str(
        _template().render(
            report=report,
            rules=rules,
            failed=[r for r in rules if r.rule.verdict is Verdict.FAIL],
            broken=[r for r in rules if r.rule.error is not None and r.rule.verdict is not Verdict.FAIL],
            warned=[r for r in rules if r.rule.verdict is Verdict.WARN and r.rule.error is None],
            figures=[r for r in rules if r.has_figure],
            steps=steps,
            counts=report.counts(),
            failed_steps=failed_steps,
            no_cause=NO_CAUSE,
            **_run_context(report),
        )
    )
