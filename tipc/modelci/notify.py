"""Alerting: POST a versioned JSON summary of a baseline judgement (with a Markdown body) to a webhook.

Payload schema `tipc.notify/1` (documented in docs/model-ci.md; fields are only ever added within a version):
  schema, tool_version, created (UTC ISO 8601), verdict ("PASS" | "FAIL" | "IMPROVED"), exit_code,
  repo, model, config, mode, machine_class, run_id, paddle_version, repo_commit, baseline (file),
  problem (why no comparison was possible, or ""), counts {PASS, FAIL, IMPROVED, INCONCLUSIVE, INFO},
  regressions [row], improvements [row], inconclusive [row] (timings taken under other load), load (that
  load against the baseline's, in words), hyperparameters_changed [str], env_diff [str], markdown (the same
  summary as Markdown). A row: metric, verdict, value, baseline, margin, margin_from, op, unit, why.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tipc.execute.record import RunRecord

SCHEMA = "tipc.notify/1"
TIMEOUT_S = 15.0


def payload(judgement: Any, record: RunRecord, *, repo: str, exit_code: int) -> dict[str, Any]:
    from tipc.core.version import __version__
    from tipc.judge.baseline import judge, store

    rows = [r.to_json() for r in judgement.rows]
    counts = judgement.counts()
    if judgement.regressed:
        verdict = "FAIL"
    elif counts[judge.IMPROVED]:
        verdict = "IMPROVED"
    else:
        verdict = "PASS"
    env = (record.environment or {}) if record is not None else {}
    body: dict[str, Any] = {
        "schema": SCHEMA,
        "tool_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "verdict": verdict,
        "exit_code": exit_code,
        "repo": repo,
        "model": record.plan.model_name if record is not None else "",
        "config": record.plan.config_path if record is not None else "",
        "mode": record.plan.mode if record is not None else "",
        "machine_class": judgement.machine_class,
        "run_id": store.run_id(record) if record is not None else "",
        "paddle_version": env.get("paddle_version"),
        "repo_commit": record.git_commit if record is not None else None,
        "baseline": str(judgement.baseline) if judgement.baseline else None,
        "problem": judgement.problem,
        "counts": counts,
        "regressions": [r for r in rows if r["verdict"] == judge.FAIL],
        "improvements": [r for r in rows if r["verdict"] == judge.IMPROVED],
        "inconclusive": [r for r in rows if r["verdict"] == judge.INCONCLUSIVE],
        "load": judgement.load,
        "hyperparameters_changed": list(judgement.hyper_diff),
        "env_diff": list(judgement.env_diff),
    }
    body["markdown"] = markdown(body)
    return body


def markdown(body: dict[str, Any]) -> str:
    icon = {"FAIL": "FAIL", "PASS": "PASS", "IMPROVED": "IMPROVED"}[body["verdict"]]
    c = body["counts"]
    lines = [
        f"### tipc: {icon} · {body['model']} ({body['mode']}, {body['machine_class']})",
        "",
        f"Paddle {body['paddle_version']} · repo commit `{body['repo_commit'] or 'unknown'}` · run "
        f"`{body['run_id']}` · baseline `{body['baseline']}`",
        "",
    ]
    if body["problem"]:
        lines += [f"**No comparison:** {body['problem']}", ""]
    lines.append(
        f"{c['PASS']} PASS · {c['IMPROVED']} IMPROVED · {c['FAIL']} FAIL"
        + (f" · {c['INCONCLUSIVE']} INCONCLUSIVE" if c.get("INCONCLUSIVE") else "")
    )
    if body.get("load"):
        lines += ["", body["load"]]
    rows = body["regressions"] + body["improvements"] + body.get("inconclusive", [])
    if rows:
        lines += [
            "",
            "| metric | verdict | value | baseline | margin | margin from |",
            "|---|---|---|---|---|---|",
        ]
        for r in rows:
            lines.append(
                f"| `{r['metric']}` | {r['verdict']} | {r['value']} | {r['baseline']} | {r['margin']} | "
                f"{r['margin_from']} |"
            )
    if body["env_diff"]:
        lines += ["", "Environment differences from the baseline:", ""]
        lines += [f"- {d}" for d in body["env_diff"]]
    return "\n".join(lines) + "\n"


def post(url: str, body: dict[str, Any]) -> str | None:
    """POST `body` as JSON; None on a 2xx answer, else why it failed (never raises)."""
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode("utf-8")
    request = urllib.request.Request(
        url,
        data=data,
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": f"tipc ({SCHEMA})"},
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
            status = int(answer.status)
    except urllib.error.HTTPError as exc:
        return f"{url} answered HTTP {exc.code}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return f"cannot post to {url}: {getattr(exc, 'reason', exc)}"
    return None if 200 <= status < 300 else f"{url} answered HTTP {status}"
