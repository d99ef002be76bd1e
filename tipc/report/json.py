"""The JSON reporter: schema "tipc.report/1", keys in a fixed order, valid JSON (no NaN).

Top-level keys, in order: schema, tool_version, created, repo, rulesets, overall, exit_code, counts, run,
lint, rules, notes, lineage. `run` is null when nothing ran; `lineage` (steps, files, read/wrote edges) is
null when no file access was recorded. Each rule: ruleset, id, source, severity, description,
verdict (PASS/FAIL/WARN/SKIP/N-A), summary, evidence [{text, path, line, excerpt, numbers}], data, error.
Each step of `run` carries its plain `causes` ([{id, cause, remedy, switch, evidence}], most specific
first) and, when it failed, `log_tail`; `run.environment` holds the probe's facts and
`run.environment_lines` the header lines.
"""

from __future__ import annotations

import json
from typing import Any

from tipc.report.model import REPORT_SCHEMA, Report, RunSummary, _finite


def _run(run: RunSummary | None) -> dict[str, Any] | None:
    if run is None:
        return None
    return {
        "config": run.config,
        "mode": run.mode,
        "dialect": run.dialect,
        "model_name": run.model_name,
        "output_dir": run.output_dir,
        "reused": run.reused,
        "record_path": run.record_path,
        "started": run.started,
        "ended": run.ended,
        "duration_s": run.duration_s,
        "python": run.python,
        "paddle_version": run.paddle_version,
        "git_commit": run.git_commit,
        "status_counts": run.status_counts(),
        "totals": run.totals(),
        "did": list(run.did),
        "environment": run.environment,
        "environment_lines": run.environment_lines,
        "sandbox": run.sandbox,
        "steps": [
            {
                "id": s.id,
                "stage": s.stage,
                "trainer": s.trainer,
                "status": s.status,
                "exit_code": s.exit_code,
                "duration_s": s.duration_s,
                "peak_rss_bytes": s.peak_rss_bytes,
                "peak_gpu_mem_bytes": s.peak_gpu_mem_bytes,
                "log": s.log,
                "reason": s.reason,
                "causes": [c.to_json() for c in s.causes],
                "log_tail": s.log_tail,
            }
            for s in run.steps
        ],
    }


def report_to_dict(report: Report) -> dict[str, Any]:
    return {
        "schema": REPORT_SCHEMA,
        "tool_version": report.tool_version,
        "created": report.created,
        "repo": report.repo,
        "rulesets": list(report.rulesets),
        "overall": report.overall,
        "exit_code": report.exit_code,
        "counts": report.counts(),
        "run": _run(report.run),
        "lint": [f.to_json() for f in report.findings],
        "rules": [
            {
                "ruleset": r.ruleset,
                "id": r.id,
                "source": r.source,
                "severity": r.severity,
                "description": r.description,
                "verdict": r.verdict.value,
                "summary": r.summary,
                "evidence": [e.to_json() for e in r.evidence],
                "data": r.data,
                "causes": [c.to_json() for c in r.causes],
                "error": r.error,
            }
            for r in report.rules
        ],
        "notes": list(report.notes),
        "lineage": report.lineage,
    }


def render_json(report: Report) -> str:
    # default=str: a check's data holding a value JSON cannot represent must not lose the whole report.
    return (
        json.dumps(
            _finite(report_to_dict(report)), indent=2, ensure_ascii=False, allow_nan=False, default=str
        )
        + "\n"
    )
