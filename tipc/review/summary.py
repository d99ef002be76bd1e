"""The review's one summary: a row per submission (verdict, per-ruleset counts, its root cause and how many
failing rules that one cause explains, wall time, peak memory, where its full report is), built from a
check's Outcome, and rendered as a terminal table, Markdown, CSV, JSON and a self-contained HTML page linking
each submission's report.

The root cause is the earliest failed step's own cause (or, when that step's failure follows from an earlier
step, that step's), not the first failing rule in ruleset order: a reviewer triaging many submissions reads
"train failed: the code imports `paddlevision`, a package the repo lacks" where the first rule in order would
have said "prepare failed: the download failed".
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tipc.core.fs import atomic_write_text
from tipc.core.jsontypes import JSONObject, as_list, as_object, objects
from tipc.core.units import human_bytes, human_seconds
from tipc.review import requirements as requirements_mod
from tipc.review.executor import Outcome

COUNTED = ("PASS", "FAIL", "WARN", "SKIP", "N-A")
CAUSE_CHARS = 300


@dataclass
class RulesetCounts:
    name: str
    counts: dict[str, int]

    def cell(self) -> str:
        """`36 pass, 2 fail` (+ warn), the short form the tables show."""
        parts = [f"{self.counts.get('PASS', 0)} pass", f"{self.counts.get('FAIL', 0)} fail"]
        if self.counts.get("WARN"):
            parts.append(f"{self.counts['WARN']} warn")
        return ", ".join(parts)


@dataclass
class Row:
    name: str
    source: str
    content_hash: str
    verdict: str  # PASS, FAIL, TIMEOUT, ERROR, REJECTED or STOPPED
    rulesets: list[RulesetCounts] = field(default_factory=list)
    first_failure: str | None = None  # rule id (or what stopped the check)
    cause: str | None = None  # the root cause, in words (else the first failing rule's summary)
    root_step: str | None = None  # the failed step the root cause is of
    explains: int = 0  # how many failing rules the root cause explains
    failing_rules: int = 0
    wall_s: float | None = None
    peak_rss_bytes: int | None = None
    exit_code: int | None = None
    report_html: str | None = None  # absolute paths
    report_json: str | None = None
    log_path: str | None = None
    work_area: str | None = None
    cached: bool = False  # taken from an earlier review (unchanged submission)
    killed_leftovers: int = 0
    node: str | None = None
    # seed 004's acceptance per requirement (tipc.review.requirements): id -> {verdict, evidence}
    requirements: dict[str, dict[str, str]] = field(default_factory=dict)
    distance: int | None = None  # requirements failed (every one when no report): the ranking key

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Row:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["rulesets"] = [
            RulesetCounts(str(r["name"]), dict(r["counts"])) for r in data.get("rulesets", [])
        ]
        return cls(**known)


def _short(text: str | None) -> str | None:
    if text is None:
        return None
    text = " ".join(text.split())
    return text if len(text) <= CAUSE_CHARS else text[: CAUSE_CHARS - 1] + "…"


def _counts(report: JSONObject) -> list[RulesetCounts]:
    names = [str(n) for n in as_list(report.get("rulesets"))]
    table: dict[str, dict[str, int]] = {n: {} for n in names}
    for rule in objects(report.get("rules")):
        rs = str(rule.get("ruleset", "?"))
        verdict = str(rule.get("verdict", "?"))
        table.setdefault(rs, {})
        table[rs][verdict] = table[rs].get(verdict, 0) + 1
    return [RulesetCounts(n, c) for n, c in table.items()]


# Which steps a rule's id speaks about: its stage words (basic.train.*: train steps; *.data.*: prepare,
# which fetches the data; a chain-wide rule: any step).
_RULE_STAGES = {"data": ("prepare",), "lite_data": ("prepare",), "prepare": ("prepare",)}


def _failed_step(report: JSONObject, rule_id: str) -> str | None:
    """The chain's first failed step that the rule `rule_id` is about, with its plain cause, or None."""
    steps = _steps(report)
    parts = set(rule_id.split("."))
    chain_wide = "chain" in rule_id or "chain_passes" in parts
    stages = set(parts) | {s for p in parts for s in _RULE_STAGES.get(p, ())}
    for step in steps:
        if step.get("status") not in ("failed", "timeout"):
            continue
        stage = str(step.get("stage") or str(step.get("id", "")).split("/")[0])
        if not chain_wide and stage not in stages:
            continue
        cause = _first_cause(step)
        first = cause.get("cause") if cause is not None else None
        what = first or step.get("reason") or step.get("status")
        return f"step {step.get('id')} {step.get('status')}: {what}"
    return None


def _first_failure(report: JSONObject) -> tuple[str | None, str | None]:
    """The first error-severity FAIL; its cause is led by the failed step it is about, if one failed."""
    for rule in objects(report.get("rules")):
        if rule.get("verdict") == "FAIL" and rule.get("severity", "error") == "error":
            rule_id = str(rule.get("id"))
            summary = str(rule.get("summary") or rule.get("error") or "")
            step = _failed_step(report, rule_id)
            return rule_id, _short(f"{step}; {summary}" if step else summary)
    return None, None


@dataclass(frozen=True)
class RootCause:
    step: str  # the failed step whose cause it is
    text: str  # "step S failed: <cause>"
    explains: tuple[str, ...]  # the failing rules it explains
    failing: int  # error-severity FAIL rules in all


def _steps(report: JSONObject) -> list[JSONObject]:
    return objects(as_object(report.get("run")).get("steps"))


def _first_cause(step: JSONObject) -> JSONObject | None:
    causes = as_list(step.get("causes"))
    return causes[0] if causes and isinstance(causes[0], dict) else None


def root_cause(report: JSONObject) -> RootCause | None:
    """The earliest failed step's own cause (the root: an earlier step it follows from takes its place),
    and the failing rules it explains; None when no step failed. prepare.sh counts only when a later
    failure follows from it (offline it often fails on a download nothing needs)."""
    steps = _steps(report)
    root = _root_step(steps)
    if root is None:
        return None
    step, cause = root
    sid = str(step.get("id"))
    what = (cause or {}).get("cause") or step.get("reason") or step.get("status")
    text = f"step {sid} {step.get('status')}: {what}"
    failing = [
        r
        for r in objects(report.get("rules"))
        if r.get("verdict") == "FAIL" and r.get("severity", "error") == "error"
    ]
    affected = _affected(steps, sid)
    seen = str((cause or {}).get("evidence") or "").strip()
    explained = tuple(str(r.get("id")) for r in failing if _explains(r, affected, seen))
    if step.get("stage") == "prepare" and failing and not explained:
        return None  # a prepare.sh download nothing needed: the first failing rule says more
    return RootCause(sid, text, explained, len(failing))


def _root_step(steps: list[JSONObject]) -> tuple[JSONObject, JSONObject | None] | None:
    """The earliest failed step (prepare.sh only when nothing else failed), or the earlier step its cause
    names upstream, with that step's first cause (the later one's where it has none)."""
    failed = [s for s in steps if s.get("status") in ("failed", "timeout")]
    chain = [s for s in failed if s.get("stage") != "prepare"] or failed
    if not chain:
        return None
    step = chain[0]
    cause = _first_cause(step)
    upstream = cause.get("upstream") if cause else None
    by_id = {str(s.get("id")): s for s in steps}
    if isinstance(upstream, str) and upstream in by_id:
        step = by_id[upstream]
        cause = _first_cause(step) or cause
    return step, cause


def _affected(steps: list[JSONObject], root: str) -> set[str]:
    """The root step, the steps blocked because of it, and the failed steps whose cause follows from it."""
    out = {root}
    for s in steps:
        sid = str(s.get("id"))
        reason = str(s.get("reason") or "")
        if (
            s.get("status") == "blocked"
            and (f"root cause: {root} " in reason or reason.endswith(f"root cause: {root}"))
        ) or any(c.get("upstream") == root for c in objects(s.get("causes"))):
            out.add(sid)
    # blocked behind a blocked step: follow the chain
    changed = True
    while changed:
        changed = False
        for s in steps:
            sid = str(s.get("id"))
            if (
                sid not in out
                and s.get("status") == "blocked"
                and any(f"input step {a} " in str(s.get("reason") or "") for a in out)
            ):
                out.add(sid)
                changed = True
    return out


def _explains(rule: JSONObject, affected: set[str], seen: str) -> bool:
    """A failing rule is explained by the root cause when its evidence is about an affected step or quotes
    the root cause's own line (predict.py failing on the same missing module)."""
    texts = [str(rule.get("summary") or "")]
    for e in objects(rule.get("evidence")):
        texts += [str(e.get("text") or ""), str(e.get("excerpt") or "")]
    blob = "\n".join(texts)
    if any(step in blob for step in affected):
        return True
    return bool(seen) and len(seen) >= 12 and seen in blob


def _tipc_message(lines: Sequence[str]) -> str | None:
    """The check's own `tipc: ...` error line (exit 2/3), else its last line."""
    for line in reversed(lines):
        if line.startswith("tipc: "):
            return line[len("tipc: ") :]
    return lines[-1] if lines else None


def row_from_outcome(
    outcome: Outcome,
    *,
    name: str,
    source: str,
    content_hash: str,
    budget_s: float,
    work_area: str,
    report_dir: str,
    log_path: str,
) -> Row:
    report = outcome.report
    row = Row(
        name=name,
        source=source,
        content_hash=content_hash,
        verdict="ERROR",
        wall_s=outcome.wall_s,
        peak_rss_bytes=outcome.peak_rss_bytes,
        exit_code=outcome.exit_code,
        log_path=log_path,
        work_area=work_area,
        killed_leftovers=outcome.killed_leftovers,
        node=outcome.node,
    )
    if report is not None:
        row.rulesets = _counts(report)
        row.report_json = os.path.join(report_dir, "report.json")
        html_path = os.path.join(report_dir, "report.html")
        row.report_html = html_path if os.path.exists(html_path) else None
        row.first_failure, row.cause = _first_failure(report)
        root = root_cause(report)
        if root is not None:
            row.cause, row.root_step = _short(root.text), root.step
            row.explains, row.failing_rules = len(root.explains), root.failing
    if outcome.error is not None:
        row.verdict = "STOPPED" if outcome.interrupted else "ERROR"
        row.cause = _short(outcome.error)
    elif outcome.timed_out:
        row.verdict = "TIMEOUT"
        row.first_failure = "review.budget"
        row.cause = f"the check ran past its budget of {budget_s:g} s and was stopped"
    elif outcome.interrupted:
        row.verdict = "STOPPED"
        row.cause = "the review was interrupted"
    elif outcome.exit_code == 0:
        row.verdict = "PASS"
    elif outcome.exit_code == 1 and report is not None:
        row.verdict = "FAIL"
        if row.first_failure is None:
            row.first_failure, row.cause = "check", _short(_tipc_message(outcome.log_tail))
    elif outcome.exit_code in (143, 130, 129, -15, -2) and report is None:
        row.verdict = "STOPPED"
        row.cause = "the check was stopped by a signal"
    else:
        row.verdict = "ERROR"
        row.first_failure = row.first_failure or f"check.exit_{outcome.exit_code}"
        row.cause = row.cause or _short(_tipc_message(outcome.log_tail))
    _judge_requirements(row, report)
    return row


def _judge_requirements(row: Row, report: JSONObject | None) -> None:
    reqs = requirements_mod.load()
    row.requirements = requirements_mod.cells(report) if report is not None else {}
    row.distance = requirements_mod.distance(row.requirements, row.verdict, len(reqs))


def rejected_row(name: str, source: str, content_hash: str, reason: str) -> Row:
    row = Row(name, source, content_hash, "REJECTED", first_failure="review.unpack", cause=_short(reason))
    _judge_requirements(row, None)
    return row


@dataclass
class Summary:
    rows: list[Row]
    rulesets: list[str]
    tipc_version: str
    executor: str
    jobs: int
    wall_s: float
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.rows) and all(r.verdict == "PASS" for r in self.rows)

    def ranked(self) -> list[Row]:
        """The rows nearest to acceptance first (fewest failed requirements), in submission order on ties."""
        order = {id(r): i for i, r in enumerate(self.rows)}
        return sorted(
            self.rows, key=lambda r: (r.distance if r.distance is not None else 1 << 30, order[id(r)])
        )

    def requirement_ids(self) -> list[str]:
        """The requirements some row was judged on, in the order of specs/review/requirements.yaml."""
        used = {k for r in self.rows for k in r.requirements}
        return [q.id for q in requirements_mod.load() if q.id in used]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            out[r.verdict] = out.get(r.verdict, 0) + 1
        return out

    def to_json(self) -> dict[str, object]:
        return {
            "schema": "tipc.review/1",
            "tipc_version": self.tipc_version,
            "executor": self.executor,
            "jobs": self.jobs,
            "wall_s": round(self.wall_s, 3),
            "rulesets": self.rulesets,
            "passed": self.passed,
            "verdicts": self.counts(),
            "notes": self.notes,
            "submissions": [r.to_json() for r in self.rows],
        }


# --- renderers -------------------------------------------------------------------------------------------


def _ruleset_cell(row: Row, name: str) -> str:
    for rs in row.rulesets:
        if rs.name == name:
            return rs.cell()
    return "-"


def _extra_rulesets(summary: Summary) -> list[str]:
    """Rulesets as columns: the asked ones, then any a report adds (`lint`)."""
    names = list(summary.rulesets)
    for row in summary.rows:
        for rs in row.rulesets:
            if rs.name not in names:
                names.append(rs.name)
    return names


CAUSE_COLUMN = "root cause (failing rules it explains)"


def _failure_text(row: Row) -> str:
    """The root cause and how many of the failing rules it explains; without a failed step, the first
    failing rule and its summary."""
    if row.root_step is not None and row.cause:
        return f"[explains {row.explains} of {row.failing_rules} failing rules] {row.cause}"
    if row.first_failure is None:
        return ""
    return f"{row.first_failure}: {row.cause}" if row.cause else row.first_failure


def _req_headers(summary: Summary) -> list[str]:
    by_id = {q.id: q for q in requirements_mod.load()}
    return [by_id[i].header for i in summary.requirement_ids()]


def _distance_text(summary: Summary, row: Row) -> str:
    total = len(summary.requirement_ids())
    if row.distance is None or not total:
        return "-"
    return f"{min(row.distance, total)}/{total} fail"


def table_rows(summary: Summary) -> tuple[list[str], list[list[str]]]:
    """The summary table, nearest to acceptance first: per-ruleset counts, then one column per acceptance
    requirement (PASS / FAIL / N-A; the evidence lines are rendered beside the table)."""
    names = _extra_rulesets(summary)
    reqs = summary.requirement_ids()
    header = ["submission", "verdict", "distance", *names, *_req_headers(summary), CAUSE_COLUMN]
    header += ["wall", "peak mem"]
    body = []
    for r in summary.ranked():
        verdict = r.verdict + (" (cached)" if r.cached else "")
        body.append(
            [
                r.name,
                verdict,
                _distance_text(summary, r),
                *(_ruleset_cell(r, n) for n in names),
                *(r.requirements.get(q, {}).get("verdict", "-") for q in reqs),
                _failure_text(r),
                human_seconds(r.wall_s),
                human_bytes(r.peak_rss_bytes or None),
            ]
        )
    return header, body


def evidence_lines(summary: Summary) -> list[tuple[Row, str, str, str]]:
    """(row, requirement header, verdict, evidence) for every judged requirement, rows ranked."""
    by_id = {q.id: q for q in requirements_mod.load()}
    out = []
    for r in summary.ranked():
        for q in summary.requirement_ids():
            cell = r.requirements.get(q)
            if cell is not None:
                out.append((r, by_id[q].header, cell["verdict"], cell["evidence"]))
    return out


def _footer(summary: Summary) -> str:
    counts = ", ".join(f"{n} {v}" for v, n in summary.counts().items())
    return (
        f"{len(summary.rows)} submission(s): {counts}; {summary.executor} executor, {summary.jobs} job(s), "
        f"{human_seconds(summary.wall_s)}"
    )


def render_text(summary: Summary, width: int = 160) -> str:
    header, body = table_rows(summary)
    fail_col = header.index(CAUSE_COLUMN)
    # the cause column takes what the others leave of the width
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(header)]
    others = sum(w for i, w in enumerate(widths) if i != fail_col) + 2 * (len(widths) - 1)
    widths[fail_col] = max(24, min(widths[fail_col], width - others))

    def fmt(cells: list[str]) -> str:
        out = []
        for i, c in enumerate(cells):
            if len(c) > widths[i]:
                c = c[: widths[i] - 1] + "…"
            out.append(c.ljust(widths[i]))
        return "  ".join(out).rstrip()

    lines = [fmt(header), fmt(["-" * w for w in widths]), *(fmt(b) for b in body), ""]
    evidence = evidence_lines(summary)
    if evidence:
        lines.append("acceptance per requirement (seed 004), nearest to acceptance first:")
        current = None
        for row, head, verdict, text in evidence:
            if row is not current:
                lines.append(f"  {row.name}: {_distance_text(summary, row)}")
                current = row
            lines.append(f"    {head:<26} {verdict:<4} {text}"[:width])
        lines.append("")
    lines.append(_footer(summary))
    lines.extend(f"note: {n}" for n in summary.notes)
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(summary: Summary, base: Path | None = None) -> str:
    header, body = table_rows(summary)
    lines = [
        "# tipc review",
        "",
        f"tipc {summary.tipc_version}; rulesets: {', '.join(summary.rulesets)}.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for r, cells in zip(summary.ranked(), body, strict=True):
        if r.report_html:
            target = os.path.relpath(r.report_html, base) if base else r.report_html
            cells = [f"[{_md(cells[0])}]({target})", *cells[1:]]
        else:
            cells = [_md(cells[0]), *cells[1:]]
        lines.append("| " + " | ".join(_md(c) if i else c for i, c in enumerate(cells)) + " |")
    reqs = summary.requirement_ids()
    if reqs:
        heads = _req_headers(summary)
        lines += [
            "",
            "## Acceptance per requirement (seed 004 §4.1.3, §4.2.3, §4.3.4)",
            "",
            "| submission | distance | " + " | ".join(heads) + " |",
            "|" + "---|" * (len(heads) + 2),
        ]
        for r in summary.ranked():
            cells = [
                f"**{c['verdict']}** {_md(c['evidence'])}" if (c := r.requirements.get(q)) else "-"
                for q in reqs
            ]
            lines.append(f"| {_md(r.name)} | {_distance_text(summary, r)} | " + " | ".join(cells) + " |")
    lines += ["", _footer(summary)]
    lines.extend(f"- note: {n}" for n in summary.notes)
    return "\n".join(lines) + "\n"


def render_csv(summary: Summary) -> str:
    names = _extra_rulesets(summary)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    header = ["submission", "source", "content_hash", "verdict", "cached"]
    for n in names:
        header += [f"{n}_{v.lower().replace('-', '')}" for v in COUNTED]
    reqs = summary.requirement_ids()
    header += ["distance", *(h for q in reqs for h in (f"req_{q}", f"req_{q}_evidence"))]
    header += ["first_failing_rule", "cause", "root_step", "explains", "failing_rules"]
    header += ["wall_s", "peak_rss_bytes", "exit_code", "report"]
    writer.writerow(header)
    for r in summary.ranked():
        by_name = {rs.name: rs.counts for rs in r.rulesets}
        cells: list[object] = [r.name, r.source, r.content_hash, r.verdict, str(r.cached).lower()]
        for n in names:
            cells += [by_name.get(n, {}).get(v, 0) if n in by_name else "" for v in COUNTED]
        cells.append("" if r.distance is None else r.distance)
        for q in reqs:
            cell = r.requirements.get(q, {})
            cells += [cell.get("verdict", ""), cell.get("evidence", "")]
        cells += [
            r.first_failure or "",
            r.cause or "",
            r.root_step or "",
            r.explains,
            r.failing_rules,
            r.wall_s if r.wall_s is not None else "",
            r.peak_rss_bytes or "",
            "" if r.exit_code is None else r.exit_code,
            r.report_html or "",
        ]
        writer.writerow(cells)
    return buf.getvalue()


def render_json(summary: Summary) -> str:
    return json.dumps(summary.to_json(), indent=2, ensure_ascii=False) + "\n"


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;font-size:14px}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3}
.v-PASS{background:#e5f5e5;color:#126b12;font-weight:bold}
.v-FAIL,.v-TIMEOUT,.v-ERROR,.v-REJECTED,.v-STOPPED{background:#fbe4e4;color:#9b1111;font-weight:bold}
.v-N-A{background:#f3f3f3;color:#555}
td.req{min-width:8em;max-width:16em}
td.req .small{font-weight:normal}
td.cause{max-width:40em}
.small{color:#666;font-size:12px}
"""


def render_html(summary: Summary, base: Path | None = None) -> str:
    """One self-contained page (inline style, no script); links to each submission's report are relative to
    `base` (the folder the page is written to)."""
    header, body = table_rows(summary)
    e = html.escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>tipc review</title>',
        f"<style>{_CSS}</style></head><body>",
        "<h1>tipc review</h1>",
        f'<p class="small">tipc {e(summary.tipc_version)}; rulesets: {e(", ".join(summary.rulesets))}</p>',
        "<table><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr></thead><tbody>",
    ]
    reqs = summary.requirement_ids()
    first_req = header.index(_req_headers(summary)[0]) if reqs else -1
    for r, cells in zip(summary.ranked(), body, strict=True):
        tds = []
        for i, c in enumerate(cells):
            if reqs and first_req <= i < first_req + len(reqs):
                cell = r.requirements.get(reqs[i - first_req])
                if cell is None:
                    tds.append("<td>-</td>")
                else:
                    tds.append(
                        f'<td class="req v-{e(cell["verdict"])}">{e(cell["verdict"])}'
                        f'<br><span class="small">{e(cell["evidence"])}</span></td>'
                    )
                continue
            if i == 0:
                link = r.report_html
                inner = e(c)
                if link:
                    target = os.path.relpath(link, base) if base else link
                    inner = f'<a href="{e(target)}">{e(c)}</a>'
                inner += f'<br><span class="small">{e(r.source)}</span>'
                tds.append(f"<td>{inner}</td>")
            elif i == 1:
                tds.append(f'<td class="v-{e(r.verdict)}">{e(c)}</td>')
            elif header[i] == CAUSE_COLUMN:
                tds.append(f'<td class="cause">{e(c)}</td>')
            else:
                tds.append(f"<td>{e(c)}</td>")
        out.append("<tr>" + "".join(tds) + "</tr>")
    out.append("</tbody></table>")
    out.append(f"<p>{e(_footer(summary))}</p>")
    out.extend(f'<p class="small">note: {e(n)}</p>' for n in summary.notes)
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def render(summary: Summary, fmt: str, base: Path | None = None) -> str:
    if fmt == "markdown":
        return render_markdown(summary, base)
    if fmt == "csv":
        return render_csv(summary)
    if fmt == "json":
        return render_json(summary)
    if fmt == "html":
        return render_html(summary, base)
    return render_text(summary)


def write_all(summary: Summary, folder: Path) -> dict[str, Path]:
    """summary.{md,csv,json,html} in `folder`; returns them by format."""
    written = {}
    for fmt, ext in (("markdown", "md"), ("csv", "csv"), ("json", "json"), ("html", "html")):
        path = folder / f"summary.{ext}"
        atomic_write_text(path, render(summary, fmt, folder))
        written[fmt] = path
    return written
