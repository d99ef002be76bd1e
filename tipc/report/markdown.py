"""The Markdown reporter: a GitHub PR comment / CI step summary ($GITHUB_STEP_SUMMARY).

Failing and warning rules come first with their evidence in <details>; passing rules are listed in one
table. User text is escaped for table cells and code fences are made longer than any backtick run in the
excerpt. Output stays under GitHub's 65,536-character comment limit (excerpts are cut first).
"""

from __future__ import annotations

import re

from tipc.core.units import human_bytes, human_seconds
from tipc.judge.checks.base import Verdict
from tipc.report.model import (
    NO_CAUSE,
    TAIL_LINES,
    Report,
    RuleVerdict,
    agreement_caption,
    curve_points,
    evidence_text,
    matrix_table,
    remedy_text,
)

ICON = {"PASS": "✅", "FAIL": "❌", "ERROR": "💥"}
VERDICT_ICON = {
    Verdict.PASS: "✅ PASS",
    Verdict.FAIL: "❌ FAIL",
    Verdict.WARN: "⚠️ WARN",
    Verdict.SKIP: "⏭️ SKIP",
    Verdict.NA: "➖ N-A",
}
MAX_CHARS = 60_000
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f]")
MAX_EXCERPT_LINES = 20


def cell(text: object) -> str:
    """Safe inside a table cell: one line, pipes and HTML-significant characters escaped."""
    value = _ANSI.sub("", str(text).replace("\r", " ").replace("\n", " "))
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return value.replace("|", "\\|")


def inline(text: object) -> str:
    """Inline code that survives backticks in the text."""
    value = str(text).replace("\n", " ")
    longest = max((len(m) for m in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def fenced(text: str, max_lines: int = MAX_EXCERPT_LINES) -> str:
    lines = _ANSI.sub("", text).splitlines()
    if len(lines) > max_lines:
        lines = [f"... ({len(lines) - max_lines} lines cut)", *lines[-max_lines:]]
    body = "\n".join(lines)
    longest = max((len(m) for m in re.findall(r"`{3,}", body)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{body}\n{fence}"


def _escape_text(text: str) -> str:
    text = _ANSI.sub("", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _rule_details(r: RuleVerdict, max_lines: int) -> list[str]:
    out = [
        f"<details><summary><b>{_escape_text(r.id)}</b> — {VERDICT_ICON[r.verdict]} — "
        f"{_escape_text(r.summary)}</summary>",
        "",
        f"*{_escape_text(r.source)}* ({r.severity}): {_escape_text(r.description)}",
        "",
    ]
    for e in r.evidence:
        out.append(f"- {_escape_text(evidence_text(e))}")
        if e.excerpt and max_lines > 0:
            out.extend(["", fenced(e.excerpt, max_lines), ""])
    for c in r.causes[:1]:
        out.append(f"- cause: {_escape_text(c.cause)}")
        out.append(f"- remedy: {_escape_text(remedy_text(c))}")
    if r.error:
        out.append(f"- internal error: {inline(r.error)}")
    out.extend(["", "</details>", ""])
    return out


def _figures(r: RuleVerdict) -> list[str]:
    out: list[str] = []
    points = curve_points(r.data)
    if points:
        ys = [y for _, y in points]
        out.append(
            f"- **{_escape_text(r.id)}** loss curve: {len(points)} points, first {ys[0]:.6g}, "
            f"last {ys[-1]:.6g}, min {min(ys):.6g}, max {max(ys):.6g}"
        )
    table = matrix_table(r.data)
    if table:
        header, rows = table
        caption = agreement_caption(r.data)
        out.extend(
            [
                f"- **{_escape_text(r.id)}** engine x engine agreement"
                + (f" ({_escape_text(caption)})" if caption else "")
                + ":",
                "",
            ]
        )
        out.extend(["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)])
        out.extend("| " + " | ".join(cell(c) for c in row) + " |" for row in rows)
        out.append("")
    return out


def _failed_steps(report: Report, max_lines: int) -> list[str]:
    """Each failed step: its cause and remedy first, then the end of its log."""
    if report.run is None or not report.run.failed_steps:
        return []
    out = ["### Failed steps", ""]
    for s in report.run.failed_steps:
        status = s.status + (f" (exit {s.exit_code})" if s.exit_code not in (None, 0) else "")
        out.append(f"- **{_escape_text(s.id)}** {_escape_text(status)}")
        if not s.causes:
            out.append(f"  - **cause:** {NO_CAUSE}")
        for c in s.causes:
            out.append(f"  - **cause:** {_escape_text(c.cause)}")
            out.append(f"  - **remedy:** {_escape_text(remedy_text(c))}")
            if c.evidence:
                out.append(f"  - seen: {inline(c.evidence)}")
        if s.log_tail and max_lines > 0:
            tail = fenced(s.log_tail, min(max_lines, TAIL_LINES))
            out.extend(["", *("  " + line if line else "" for line in tail.splitlines()), ""])
        elif s.log:
            out.append(f"  - log: {inline(s.log)}")
    out.append("")
    return out


def _header(report: Report) -> list[str]:
    """The title, what was checked, the environment and sandbox lines and the rule counts."""
    counts = ", ".join(f"{n} {v}" for v, n in report.counts().items() if n)
    out = [f"## {ICON[report.overall]} tipc check: {report.overall}", ""]
    meta = [f"repo {inline(report.repo)}", f"rulesets {', '.join(inline(r) for r in report.rulesets)}"]
    if report.run is not None:
        meta.append(f"config {inline(report.run.config)}")
        meta.append(f"mode {inline(report.run.mode)}" + (" (reused run)" if report.run.reused else ""))
    meta.append(f"tipc {report.tool_version}")
    out.extend([" · ".join(meta), ""])
    if report.run is not None and report.run.environment_lines:
        out.extend(f"> {_escape_text(line)}  " for line in report.run.environment_lines)
        out.append("")
    box_lines = report.run.sandbox_lines() if report.run is not None else []
    if box_lines:
        out.append(_escape_text(box_lines[0]))
        out.extend(f"- {_escape_text(line.strip())}" for line in box_lines[1:])
        out.append("")
    out.append(
        f"**Rules:** {counts or 'none'}"
        + (f" · **lint errors:** {len(report.lint_errors)}" if report.lint_errors else "")
    )
    out.append("")
    return out


def _rules(report: Report, max_lines: int) -> list[str]:
    """The failing and warning rules with their evidence, then the table of all rules and the figures."""
    out: list[str] = []
    attention = [r for r in report.rules if r.verdict in (Verdict.FAIL, Verdict.WARN) or r.error]
    if attention:
        out.extend(["### Needs attention", ""])
        for r in attention:
            out.extend(_rule_details(r, max_lines))
    out.extend(["### All rules", "", "| Rule | Verdict | Source | Summary |", "|---|---|---|---|"])
    for r in report.rules:
        out.append(f"| {cell(r.id)} | {VERDICT_ICON[r.verdict]} | {cell(r.source)} | {cell(r.summary)} |")
    out.append("")
    figures = [line for r in report.rules for line in _figures(r)]
    if figures:
        out.extend(["### Figures", "", *figures, ""])
    return out


def _steps(report: Report) -> list[str]:
    """The run's steps table: status, time and peak memory of each."""
    if report.run is None:
        return []
    out = [
        "### Steps",
        "",
        _escape_text(report.run.totals()),
        "",
        "| Step | Stage | Status | Time | Peak RSS | Peak GPU mem |",
        "|---|---|---|---|---|---|",
    ]
    for s in report.run.steps:
        status = s.status + (f" (exit {s.exit_code})" if s.exit_code not in (None, 0) else "")
        out.append(
            f"| {cell(s.id)} | {cell(s.stage)} | {cell(status)} | {human_seconds(s.duration_s)} | "
            f"{human_bytes(s.peak_rss_bytes)} | {human_bytes(s.peak_gpu_mem_bytes)} |"
        )
    out.append("")
    return out


def _render(report: Report, max_lines: int) -> str:
    out = _header(report)
    out.extend(_failed_steps(report, max_lines))
    out.extend(_rules(report, max_lines))
    out.extend(_steps(report))
    if report.findings:
        out.extend(["### Config lint", ""])
        out.extend(f"- {inline(f.format())}" for f in report.findings)
        out.append("")
    for note in report.notes:
        out.append(f"> {_escape_text(note)}")
    return "\n".join(out).rstrip() + "\n"


def render_markdown(report: Report) -> str:
    for max_lines in (MAX_EXCERPT_LINES, 5, 0):
        text = _render(report, max_lines)
        if len(text) <= MAX_CHARS:
            return text
    return text[: MAX_CHARS - 80] + "\n\n… (report cut to fit; see report.json for everything)\n"
