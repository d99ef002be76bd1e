# ruff: noqa: E501  (the inline page template keeps its natural line lengths)
"""The HTML reporter: one self-contained page (inline CSS and SVG, no scripts, no external requests).

jinja2 autoescapes every value; the only markup built in Python is the loss-curve SVG, made from numbers.
"""

from __future__ import annotations

from typing import Any

from tipc.core.console import human_bytes
from tipc.report.figures import agreement_cells, lineage_svg, loss_chart_svg, timeline_svg
from tipc.report.model import (
    NO_CAUSE,
    REFERENCE_ENGINE,
    TAIL_LINES,
    Report,
    agreement_caption,
    curve_points,
    evidence_text,
    fmt_seconds,
    matrix_table,
    remedy_text,
    served_cells,
    with_served,
)

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>tipc check: {{ report.overall }} — {{ report.repo }}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC","PingFang SC","Microsoft YaHei","WenQuanYi Zen Hei",sans-serif;margin:2rem;color:#1f2328;max-width:1200px}
code,pre,table.matrix td{overflow-wrap:anywhere}
h3 .v{padding:.1em .4em;border-radius:.3em;color:#fff;font-size:.8em}
h1 .v{padding:.1em .4em;border-radius:.3em;color:#fff}
.PASS{background:#1a7f37}.FAIL{background:#cf222e}.ERROR{background:#8250df}.WARN{background:#9a6700}
.SKIP,.N-A{background:#6e7781}
table{border-collapse:collapse;width:100%;margin:1rem 0}th,td{border:1px solid #d0d7de;padding:.3rem .5rem;
text-align:left;vertical-align:top;overflow-wrap:anywhere}th{background:#f6f8fa}
table.rules{table-layout:fixed}table.rules col.rule{width:30%}table.rules col.verdict{width:5.5em}
td.v span{color:#fff;padding:.05em .35em;border-radius:.25em;font-weight:600;font-size:.9em}
pre{background:#f6f8fa;padding:.5rem;overflow:auto;max-height:20rem;font-size:.85em}
.meta{color:#57606a}.src{color:#57606a;font-size:.85em}details{margin:.3rem 0}
svg{background:#fff;border:1px solid #d0d7de}
table.matrix{width:auto}table.matrix th{white-space:nowrap}table.matrix caption{text-align:left;color:#57606a;font-size:.85em;padding:.2rem 0}
ul.failed li{margin:.3rem 0}
.env{background:#f6f8fa;border:1px solid #d0d7de;border-radius:.3em;padding:.4rem .6rem;margin:.5rem 0}
.env div{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85em}
section.step{border-left:4px solid #cf222e;padding:.2rem .8rem;margin:.6rem 0}
.cause{font-weight:600}.remedy{color:#1a7f37}
table.matrix td{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85em}
table.matrix td.agree{background:#dafbe1}table.matrix td.differ{background:#ffebe9;color:#a40e26;font-weight:600}
table.steps td:not(:first-child):not(:last-child),table.steps th{white-space:nowrap}table.steps td:first-child{max-width:28rem}
table.matrix td.none{color:#8c959f;text-align:center}
nav.summary>div>.v{padding:.05em .35em;border-radius:.25em;color:#fff;font-weight:600}
nav.summary{position:sticky;top:0;z-index:2;background:#fff;border-bottom:2px solid #d0d7de;padding:.4rem 0;margin-bottom:1rem}
nav.summary .why{margin:.2rem 0 0 0;padding-left:1.2rem;max-height:9rem;overflow:auto;font-size:.9em}
nav.summary a{color:inherit}
svg{max-width:100%;height:auto}figure{margin:.5rem 0}figcaption{color:#57606a;font-size:.85em}
@page{size:A4;margin:12mm}
@media print{body{margin:0;max-width:none;font-size:10pt}nav.summary{position:static;border:none}
nav.summary .why{max-height:none;overflow:visible}pre{max-height:none;white-space:pre-wrap}
section,figure,tr,svg{break-inside:avoid}h2{break-after:avoid}a{color:inherit;text-decoration:none}
details>*{display:block}}
</style>
</head>
<body>
<h1>tipc check <span class="v {{ report.overall }}">{{ report.overall }}</span></h1>
<p class="meta">repo <code>{{ report.repo }}</code> · rulesets {{ report.rulesets | join(", ") }}
{% if report.run %} · config <code>{{ report.run.config }}</code> · mode <code>{{ report.run.mode }}</code>
{% if report.run.reused %}(reused run record){% endif %}{% endif %} · tipc {{ report.tool_version }}
· {{ report.created }}</p>
{% if env_lines %}<div class="env">{% for line in env_lines %}<div>{{ line }}</div>{% endfor %}</div>{% endif %}
{% if box_lines %}<details class="sandbox"><summary>{{ box_lines[0] }}</summary><ul>{% for line in box_lines[1:] %}<li><code>{{ line.strip() }}</code></li>{% endfor %}</ul></details>{% endif %}
<nav class="summary" id="summary">
<div><span class="v {{ report.overall }}">{{ report.overall }}</span>
<div>{% for verdict, n in counts.items() if n %}<b>{{ n }}</b> {{ verdict }}{% if not loop.last %}, {% endif %}{% endfor %}
{% if report.lint_errors %} · <b>{{ report.lint_errors | length }}</b> lint error(s){% endif %}
{% if report.run %} · {{ report.run.totals() }}{% endif %}</div>
{% if failed or failed_steps or broken %}<ul class="why">
{% if failed_steps %}<li>Failed steps: {% for s in failed_steps %}<a href="#step-{{ loop.index }}"><b>{{ s.step.id }}</b></a> ({{ s.step.status }}{% if s.step.exit_code %}, exit {{ s.step.exit_code }}{% endif %}{% if s.causes %}, {{ s.causes[0].id }}{% endif %}){% if not loop.last %}, {% endif %}{% endfor %}</li>{% endif %}
{% for r in failed %}<li><a href="#{{ r.rule.id }}"><b>{{ r.rule.id }}</b></a>: {{ r.rule.summary }}</li>{% endfor %}
{% for r in broken %}<li><a href="#{{ r.rule.id }}"><b>{{ r.rule.id }}</b></a> broke: <code>{{ r.rule.error }}</code></li>{% endfor %}
</ul>{% else %}<div class="meta">nothing failed</div>{% endif %}
</nav>

{% if failed_steps %}
<h2>Failed steps</h2>
{% for s in failed_steps %}
<section class="step" id="step-{{ loop.index }}"><h3>{{ s.step.id }} <span class="v FAIL">{{ s.step.status }}{% if s.step.exit_code %} (exit {{ s.step.exit_code }}){% endif %}</span></h3>
{% if not s.causes %}<p class="cause">cause: {{ no_cause }}</p>{% endif %}
{% for c in s.causes %}<p class="cause">cause: {{ c.cause }}</p><p class="remedy">remedy: {{ c.remedy }}</p>
{% if c.evidence %}<p class="src">seen: <code>{{ c.evidence }}</code></p>{% endif %}{% endfor %}
{% if s.tail %}<p class="src">log tail (<code>{{ s.step.log }}</code>):</p><pre>{{ s.tail }}</pre>
{% elif s.step.log %}<p class="src">log: <code>{{ s.step.log }}</code></p>{% endif %}
</section>
{% endfor %}
{% endif %}

{% if failed %}
<h2>Failed</h2>
<ul class="failed">{% for r in failed %}<li><a href="#{{ r.rule.id }}"><b>{{ r.rule.id }}</b></a>: {{ r.rule.summary }}
{% for e in r.evidence[:1] %}<br><span class="src">{{ e.text }}</span>{% endfor %}</li>{% endfor %}</ul>
{% endif %}

{% if figures %}
<h2>Figures</h2>
{% for r in figures %}
<section class="fig" id="fig-{{ r.rule.id }}">
<h3><a href="#{{ r.rule.id }}">{{ r.rule.id }}</a> <span class="v {{ r.rule.verdict.value }}">{{ r.rule.verdict.value }}</span></h3>
{% if r.matrix %}<table class="matrix"><caption>engine x engine agreement{% if r.served %} (with the served model){% endif %}{% if r.matrix_caption %}: {{ r.matrix_caption }}{% endif %}</caption><tr>{% for h in r.matrix[0] %}<th>{{ h }}</th>{% endfor %}</tr>
{% for row in r.cells %}<tr>{% for c in row %}{% if loop.first %}<th>{{ c.text }}</th>{% else %}<td class="{{ c.cls }}">{{ c.text }}</td>{% endif %}{% endfor %}</tr>{% endfor %}</table>{% endif %}
{% if r.svg %}<figure class="loss">{{ r.svg }}<figcaption>loss per iteration with its moving average; the orange bars are the first and last windows the convergence check compares</figcaption></figure>{% endif %}
</section>
{% endfor %}
{% endif %}

{% if report.run %}
<h2>Steps</h2>
{% if timeline %}<figure class="timeline">{{ timeline }}<figcaption>stage timeline with the monitor's CPU, memory{% if has_gpu %} and GPU memory{% endif %} series of each step's process tree</figcaption></figure>{% endif %}
<table class="steps">
<tr><th>Step</th><th>Stage</th><th>Status</th><th>Exit</th><th>Time</th><th>Peak RSS</th><th>Peak GPU mem</th><th>Log</th></tr>
{% for s in steps %}
<tr><td>{{ s.step.id }}</td><td>{{ s.step.stage }}</td><td>{{ s.step.status }}{% if s.step.reason %}
<br><span class="src">{{ s.step.reason }}</span>{% endif %}</td><td>{{ s.step.exit_code if s.step.exit_code is not none else "" }}</td>
<td>{{ s.time }}</td><td>{{ s.rss }}</td><td>{{ s.gpu }}</td><td><code>{{ s.step.log or "" }}</code></td></tr>
{% endfor %}
</table>
{% endif %}

{% if lineage %}
<h2>Lineage</h2>
{% if lineage_svg %}<figure class="lineage">{{ lineage_svg }}<figcaption>steps (top) and the weights and model files they wrote (green) or read; a red dashed arrow is a read of a file this run did not write</figcaption></figure>{% endif %}
<details class="lineage-text"{% if not lineage_svg %} open{% endif %}><summary>as text: weights and model files each step read and wrote in this run; <b>!</b> marks a read of a file this run did not write</summary>
<ul class="lineage">{% for sid, reads, writes in lineage %}<li><code>{{ sid }}</code>
<ul>{% for r in reads %}<li>read <code>{{ r }}</code></li>{% endfor %}{% for w in writes %}<li>wrote <code>{{ w }}</code></li>{% endfor %}
{% if not reads and not writes %}<li class="src">no weights or model file</li>{% endif %}</ul></li>{% endfor %}</ul></details>
{% endif %}

<h2>Rules</h2>
<table class="rules">
<colgroup><col class="rule"><col class="verdict"><col></colgroup>
<tr><th>Rule</th><th>Verdict</th><th>Evidence</th></tr>
{% for r in rules %}
<tr id="{{ r.rule.id }}">
<td><b>{{ r.rule.id }}</b><br><span class="src">{{ r.rule.source }} · {{ r.rule.severity }}</span>
<br><span class="src">{{ r.rule.description }}</span></td>
<td class="v"><span class="{{ r.rule.verdict.value }}">{{ r.rule.verdict.value }}</span></td>
<td>{{ r.rule.summary }}
{% if r.rule.error %}<p><b>internal error:</b> <code>{{ r.rule.error }}</code></p>{% endif %}
{% for c in r.rule.causes[:1] %}<p class="cause">cause: {{ c.cause }}</p><p class="remedy">remedy: {{ c.remedy }}</p>{% endfor %}
{% if r.evidence %}<ul>{% for e in r.evidence %}<li>{{ e.text }}
{% if e.excerpt %}<details><summary>excerpt</summary><pre>{{ e.excerpt }}</pre></details>{% endif %}</li>
{% endfor %}</ul>{% endif %}
{% if r.svg or r.matrix %}<p><a href="#fig-{{ r.rule.id }}">figures</a></p>{% endif %}
</td></tr>
{% endfor %}
</table>

{% if report.findings %}
<h2>Config lint</h2>
<ul>{% for f in report.findings %}<li><code>{{ f.format() }}</code></li>{% endfor %}</ul>
{% endif %}
{% for note in report.notes %}<p class="meta">{{ note }}</p>{% endfor %}
</body>
</html>
"""


def loss_curve_svg(points: list[tuple[float, float]], data: dict[str, Any] | None = None) -> str:
    """The loss chart (axes, smoothing, trend); built from numbers and escaped text only."""
    return loss_chart_svg(points, data or {})


def _matrix_cells(
    matrix: tuple[list[str], list[list[str]]] | None, raw_rows: list[list[Any]] | None
) -> list[list[dict[str, str]]]:
    """The agreement matrix's body: coloured cells from the raw rows, else its text with the name column
    marked."""
    if not matrix:
        return []
    if raw_rows:
        return agreement_cells(matrix[0], raw_rows)
    return [[{"text": c, "cls": "name" if i == 0 else ""} for i, c in enumerate(row)] for row in matrix[1]]


def _rule_view(r: Any, served: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What the template shows of one rule: evidence, loss chart, agreement matrix."""
    from markupsafe import Markup

    svg = loss_curve_svg(curve_points(r.data), r.data)
    data = r.data
    grown = False
    # The served model joins the engines' agreement matrix (the check that names its engines).
    if served and isinstance(data.get("engines"), list) and REFERENCE_ENGINE in (data.get("matrix") or {}):
        data = {**data, "matrix": with_served(data["matrix"], served)}
        grown = True
    matrix = matrix_table(data)
    return {
        "rule": r,
        "evidence": [{"text": evidence_text(e), "excerpt": e.excerpt} for e in r.evidence],
        "svg": Markup(svg) if svg else "",  # numbers and escaped text only, see tipc.report.figures
        "matrix": matrix,
        "cells": _matrix_cells(matrix, _raw_rows(data)),
        "served": grown,
        "matrix_caption": agreement_caption(r.data),
    }


def _step_views(report: Report) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The steps table's rows and the failed steps with their causes and log tails."""
    steps = [
        {
            "step": s,
            "time": fmt_seconds(s.duration_s),
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


def _run_context(report: Report) -> dict[str, Any]:
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


def render_html(report: Report) -> str:
    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = env.from_string(_TEMPLATE)
    served: dict[str, dict[str, Any]] = {}
    for r in report.rules:
        served.update(served_cells(r.data))
    rules = [_rule_view(r, served) for r in report.rules]
    steps, failed_steps = _step_views(report)
    return template.render(
        broken=[r for r in rules if r["rule"].error is not None],
        report=report,
        rules=rules,
        figures=[r for r in rules if r["svg"] or r["matrix"]],
        failed=[r for r in rules if r["rule"].verdict.value == "FAIL"],
        steps=steps,
        counts=report.counts(),
        failed_steps=failed_steps,
        no_cause=NO_CAUSE,
        **_run_context(report),
    )


def _raw_rows(data: dict[str, Any]) -> list[list[Any]] | None:
    """The {a: {b: cell}} matrix as rows of raw cells (name first), in matrix_table's column order."""
    m = data.get("matrix")
    if not (isinstance(m, dict) and m and all(isinstance(v, dict) for v in m.values())):
        return None
    cols: list[str] = []
    for v in m.values():
        for k in v:
            if str(k) not in cols:
                cols.append(str(k))
    return [[str(a), *(row.get(c) for c in cols)] for a, row in m.items()]
