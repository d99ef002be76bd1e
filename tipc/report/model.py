"""One Report value: everything `tipc check` found, ready for any reporter. Pure data, no I/O.

Overall verdict (and exit code):
- FAIL (1) when an error-severity rule FAILs or lint found an error-level problem in the config;
- otherwise ERROR (3) when a check broke internally (the verdict is incomplete);
- otherwise PASS (0). SKIP, N-A and WARN never fail a check.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tipc.core.causes import Cause, hide_own_frames
from tipc.core.errors import EXIT_CHECK_FAILED, EXIT_INTERNAL, EXIT_OK
from tipc.core.findings import Finding, Level
from tipc.core.paths import PathMap
from tipc.judge.checks.base import Evidence, Verdict
from tipc.report.totals import step_totals

if TYPE_CHECKING:
    from tipc.execute.record import RunRecord
    from tipc.judge.rules.evaluate import RuleResult

REPORT_SCHEMA = "tipc.report/1"
VERDICT_ORDER: tuple[Verdict, ...] = (Verdict.FAIL, Verdict.WARN, Verdict.PASS, Verdict.SKIP, Verdict.NA)
FAILED_STATUSES = frozenset({"failed", "timeout", "interrupted"})  # a step that ran and did not pass


@dataclass(frozen=True)
class StepSummary:
    id: str
    stage: str
    trainer: str | None
    status: str
    exit_code: int | None
    duration_s: float | None
    peak_rss_bytes: int | None
    peak_gpu_mem_bytes: int | None
    log: str | None
    reason: str
    causes: tuple[Cause, ...] = ()  # plain causes of a failure, most specific first
    log_tail: str | None = None  # the end of the log of a step that failed (from the chain rule's evidence)
    started: float | None = None  # unix time the step started (the report's timeline)
    # The monitor's series: (seconds since the step started, memory bytes, CPU %, GPU memory bytes or None).
    samples: tuple[tuple[float, int, float, int | None], ...] = ()

    @property
    def failed(self) -> bool:
        return self.status in FAILED_STATUSES


@dataclass(frozen=True)
class RunSummary:
    config: str
    mode: str
    dialect: str
    model_name: str
    output_dir: str
    started: float | None
    ended: float | None
    python: str
    paddle_version: str | None
    git_commit: str | None
    steps: tuple[StepSummary, ...]
    reused: bool = False  # True when --reuse-run picked up an earlier run record
    record_path: str | None = None
    # tipc.execute.envinfo.EnvInfo.to_json() of the run's interpreter
    environment: dict[str, Any] | None = None
    # tipc.execute.sandbox.Session.to_json(): how the repo was kept untouched
    sandbox: dict[str, Any] | None = None
    # What this run did, beside the interpreter's defaults the environment header states (tipc.report.did):
    # the export format its export steps wrote, the PIR flag in force
    did: tuple[str, ...] = ()

    def sandbox_lines(self, limit: int = 200) -> list[str]:
        """How the run was kept off the repo, then every file it wrote in the repo's tree (up to `limit`)."""
        box = self.sandbox
        if not isinstance(box, dict):
            return []
        backend = box.get("backend")
        if backend == "none":
            return ["no sandbox (--no-sandbox): the chain ran in place, in the repo itself"]
        changes = [c for c in box.get("changes") or () if isinstance(c, dict)]
        total = int(box.get("changes_total") or len(changes))
        where = f", kept in {box.get('folder')}/upper" if backend == "overlay" and box.get("folder") else ""
        net = "allowed" if box.get("network") else "none"
        lines = [
            f"sandbox: {backend}, network {net}; the run wrote {total} file(s) in the repo's tree{where}"
            + (" (the repo itself is unchanged)" if backend == "overlay" else "")
        ]
        weak = [str(w) for w in box.get("weaknesses") or ()]
        if weak:  # said first: a reviewer must know what this run's sandbox did not give
            lines.insert(0, "WEAK SANDBOX: " + "; ".join(weak))
        lines += [f"  {c.get('kind', '?')}: {c.get('path', '?')}" for c in changes[:limit]]
        if total > min(limit, len(changes)):
            lines.append(f"  ... and {total - min(limit, len(changes))} more (report.json lists up to 5000)")
        return lines

    @property
    def environment_lines(self) -> list[str]:
        """The environment header (Paddle, Python and packages, hardware); empty when the run has none."""
        if not isinstance(self.environment, dict):
            return []
        from tipc.execute.envinfo import EnvInfo

        interpreter = [f"interpreter: {self.python}"] if self.python else []
        # the repo's commit heads every format, as it heads the history and the notification (model CI)
        commit = [f"repo commit: {self.git_commit}"] if self.git_commit else []
        return EnvInfo.from_json(self.environment).header_lines() + interpreter + commit + list(self.did)

    @property
    def failed_steps(self) -> tuple[StepSummary, ...]:
        return tuple(s for s in self.steps if s.failed)

    @property
    def duration_s(self) -> float | None:
        if self.started is None or self.ended is None:
            return None
        return self.ended - self.started

    def status_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for s in self.steps:
            counts[s.status] = counts.get(s.status, 0) + 1
        return counts

    def totals(self) -> str:
        """The one count line of the steps every reporter shows (as the chain rules count them)."""
        return step_totals((s.stage, s.status, s.reason) for s in self.steps)


@dataclass(frozen=True)
class RuleVerdict:
    ruleset: str
    id: str
    source: str
    severity: str
    description: str
    verdict: Verdict
    summary: str
    evidence: tuple[Evidence, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    duration_s: float | None = None  # wall time the rule's evaluation took
    # the causes of a command the check ran itself and that failed (predict.py, infer.py)
    causes: tuple[Cause, ...] = ()


@dataclass(frozen=True)
class Report:
    tool_version: str
    repo: str
    rulesets: tuple[str, ...]
    created: str  # ISO 8601, UTC
    run: RunSummary | None
    findings: tuple[Finding, ...]
    rules: tuple[RuleVerdict, ...]
    notes: tuple[str, ...] = ()
    # tipc.execute.lineage graph (to_json form) of the run, when recorded
    lineage: dict[str, Any] | None = None

    @property
    def lint_errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level is Level.ERROR)

    @property
    def failed_rules(self) -> tuple[RuleVerdict, ...]:
        return tuple(r for r in self.rules if r.verdict is Verdict.FAIL)

    @property
    def broken_rules(self) -> tuple[RuleVerdict, ...]:
        return tuple(r for r in self.rules if r.error is not None)

    @property
    def overall(self) -> str:
        if self.failed_rules or self.lint_errors:
            return "FAIL"
        if self.broken_rules:
            return "ERROR"
        return "PASS"

    @property
    def exit_code(self) -> int:
        return {"PASS": EXIT_OK, "FAIL": EXIT_CHECK_FAILED, "ERROR": EXIT_INTERNAL}[self.overall]

    def counts(self) -> dict[str, int]:
        counts = {v.value: 0 for v in VERDICT_ORDER}
        for r in self.rules:
            counts[r.verdict.value] += 1
        return counts


def _finite(value: Any) -> Any:
    """JSON has no NaN/Infinity: write them as strings so every reporter's output stays valid."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def steps_of(record: RunRecord) -> tuple[StepSummary, ...]:
    steps = []
    for step in record.plan.steps:
        result = record.result(step.id)
        if result is None:
            steps.append(
                StepSummary(
                    step.id, step.stage.value, step.trainer, "not run", None, None, None, None, step.log, ""
                )
            )
            continue
        steps.append(
            StepSummary(
                id=step.id,
                stage=step.stage.value,
                trainer=step.trainer,
                status=result.status.value,
                exit_code=result.exit_code,
                duration_s=result.duration_s,
                peak_rss_bytes=result.resources.peak_rss_bytes,
                peak_gpu_mem_bytes=result.resources.peak_gpu_mem_bytes,
                log=result.log or step.log,
                reason=result.reason,
                causes=tuple(_causes(getattr(result, "causes", ()))),
                started=result.started,
                samples=tuple(
                    (x.t, x.rss_bytes, x.cpu_percent, x.gpu_mem_bytes) for x in result.resources.samples
                ),
            )
        )
    return tuple(steps)


def _causes(raw: Iterable[object]) -> list[Cause]:
    """Cause values, or their JSON dicts (a record read back), as Causes."""
    out = []
    for c in raw:
        if isinstance(c, Cause):
            out.append(c)
        elif isinstance(c, dict) and "id" in c:
            out.append(Cause.from_json(c))
    return out


def with_log_tails(run: RunSummary, rules: Iterable[RuleVerdict]) -> RunSummary:
    """Each failed step gets the log tail a rule already quoted for its log (the chain rules read it)."""
    tails: dict[str, str] = {}
    for r in rules:
        for e in r.evidence:
            if e.path and e.excerpt and e.path not in tails:
                tails[e.path] = e.excerpt
    steps = tuple(
        replace(s, log_tail=tails.get(s.log)) if s.failed and s.log and s.log_tail is None else s
        for s in run.steps
    )
    return replace(run, steps=steps)


def run_summary(
    record: RunRecord, *, reused: bool = False, record_path: str | None = None, did: Sequence[str] = ()
) -> RunSummary:
    plan = record.plan
    return RunSummary(
        config=plan.config_path,
        mode=plan.mode,
        dialect=plan.dialect,
        model_name=plan.model_name,
        output_dir=plan.output_dir,
        started=record.started,
        ended=record.ended,
        python=record.python,
        paddle_version=record.paddle_version,
        git_commit=record.git_commit,
        steps=steps_of(record),
        reused=reused,
        record_path=record_path,
        environment=env if isinstance(env := getattr(record, "environment", None), dict) else None,
        sandbox=box if isinstance(box := getattr(record, "sandbox", None), dict) else None,
        did=tuple(did),
    )


def rule_verdicts(results: Iterable[RuleResult]) -> tuple[RuleVerdict, ...]:
    """From tipc.judge.rules.RuleResult values."""
    return tuple(
        RuleVerdict(
            ruleset=r.ruleset,
            id=r.rule.id,
            source=r.rule.source,
            severity=r.rule.severity.value,
            description=r.rule.description,
            verdict=r.verdict,
            summary=r.outcome.summary,
            evidence=tuple(r.outcome.evidence),
            data=_finite(dict(r.outcome.data)),
            error=r.error,
            duration_s=getattr(r, "duration_s", None),
        )
        for r in results
    )


def build_report(
    *,
    repo: str,
    rulesets: Sequence[str],
    results: Iterable[RuleResult],
    record: RunRecord | None = None,
    findings: Iterable[Finding] = (),
    tool_version: str = "",
    reused: bool = False,
    record_path: str | None = None,
    notes: Sequence[str] = (),
    created: str | None = None,
    lineage: dict[str, Any] | None = None,
    paths: PathMap | None = None,
    did: Sequence[str] = (),
    rule_causes: dict[str, tuple[Cause, ...]] | None = None,
) -> Report:
    """Every path in the report is shown where the file is on disk (`paths`: tipc.core.paths); tracebacks
    in log excerpts lose tipc's own injected frames."""
    if not tool_version:
        from tipc.core.version import __version__

        tool_version = __version__
    findings = tuple(findings)
    rules = (*lint_verdict(findings), *rule_verdicts(results))
    if rule_causes:
        rules = tuple(replace(r, causes=rule_causes.get(r.id, ())) for r in rules)
    run = run_summary(record, reused=reused, record_path=record_path, did=did) if record is not None else None
    # The lineage checks each carry the run's lineage graph: it is shown once, at the report's top level.
    for r in rules:
        if lineage is None and isinstance(r.data.get("lineage"), dict):
            lineage = r.data["lineage"]
    rules = tuple(
        replace(r, data={k: v for k, v in r.data.items() if k != "lineage"}) if "lineage" in r.data else r
        for r in rules
    )
    report = Report(
        tool_version=tool_version,
        repo=repo,
        rulesets=tuple(rulesets),
        created=created or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        run=with_log_tails(run, rules) if run is not None else None,
        findings=tuple(findings),
        rules=rules,
        notes=tuple(notes),
        lineage=lineage,
    )
    return shown(report, paths)


def _file_shown(f: Mapping[str, object], paths: PathMap) -> dict[str, object]:
    seen = str(f["path"])
    where = paths.shown(seen)
    return {**f, "path": where} if where == seen else {**f, "path": where, "seen_as": seen}


def shown(report: Report, paths: PathMap | None) -> Report:
    """`report` with every path as it is found on disk after the run (`paths`), and tipc's injected frames
    hidden from the tracebacks it quotes."""
    if paths is None:
        from tipc.core.paths import in_place

        paths = in_place(Path(report.repo))
    return replace(
        report,
        rules=tuple(_rule_shown(r, paths) for r in report.rules),
        run=_run_shown(report.run, paths) if report.run is not None else None,
        notes=tuple(paths.text(n) for n in report.notes),
        lineage=_lineage_shown(report.lineage, paths),
    )


def _causes_shown(causes: Iterable[Cause], paths: PathMap) -> tuple[Cause, ...]:
    return tuple(replace(c, cause=paths.text(c.cause), remedy=paths.text(c.remedy)) for c in causes)


def _evidence_shown(e: Evidence, paths: PathMap) -> Evidence:
    return replace(
        e,
        text=paths.text(e.text),
        path=paths.shown(e.path) if e.path else e.path,
        excerpt=hide_own_frames(e.excerpt) if e.excerpt else e.excerpt,
    )


def _data_shown(value: Any, paths: PathMap) -> Any:
    if isinstance(value, str):
        return paths.text(value)
    if isinstance(value, dict):
        return {k: _data_shown(v, paths) for k, v in value.items()}
    if isinstance(value, list):
        return [_data_shown(v, paths) for v in value]
    return value


def _rule_shown(r: RuleVerdict, paths: PathMap) -> RuleVerdict:
    return replace(
        r,
        summary=paths.text(r.summary),
        evidence=tuple(_evidence_shown(e, paths) for e in r.evidence),
        data=_data_shown(r.data, paths),
        causes=_causes_shown(r.causes, paths),
    )


def _run_shown(run: RunSummary, paths: PathMap) -> RunSummary:
    steps = tuple(
        replace(
            s,
            log=paths.shown(s.log) if s.log else s.log,
            reason=paths.text(s.reason),
            causes=_causes_shown(s.causes, paths),
            log_tail=hide_own_frames(s.log_tail) if s.log_tail else s.log_tail,
        )
        for s in run.steps
    )
    return replace(
        run, steps=steps, record_path=paths.shown(run.record_path) if run.record_path else run.record_path
    )


def _lineage_shown(lineage: dict[str, Any] | None, paths: PathMap) -> dict[str, Any] | None:
    if not (isinstance(lineage, dict) and isinstance(lineage.get("files"), list)):
        return lineage
    # "path": where the file lies on disk; "seen_as", where that differs: the path as the chain saw it
    files = [_file_shown(f, paths) if isinstance(f, dict) and "path" in f else f for f in lineage["files"]]
    renamed = {
        str(old["path"]): new["path"]
        for old, new in zip(lineage["files"], files, strict=True)
        if isinstance(old, dict) and "path" in old
    }
    edges = [
        {**e, "file": renamed.get(str(e.get("file")), e.get("file"))} if isinstance(e, dict) else e
        for e in lineage.get("edges", [])
    ]
    return {**lineage, "files": files, "edges": edges}


LINT_RULE_ID = "lint.config"


def lint_verdict(findings: Iterable[Finding]) -> tuple[RuleVerdict, ...]:
    """Error-level lint findings on the checked config as one FAIL row of the verdict table (none without
    errors), so a reader of the rules table sees why the check failed and where (file:line)."""
    errors = [f for f in findings if f.level is Level.ERROR]
    if not errors:
        return ()
    first = errors[0]
    return (
        RuleVerdict(
            ruleset="lint",
            id=LINT_RULE_ID,
            source="tipc lint (docs/lint-codes.md)",
            severity="error",
            description="The checked train_infer_python config has no lint error (the chain cannot be "
            "trusted to run what the repo's own script would).",
            verdict=Verdict.FAIL,
            summary=f"{len(errors)} lint error(s) in the config, first {first.code} at "
            f"{first.path}:{first.line}: {first.message}",
            evidence=tuple(Evidence(f"{f.code} {f.message}", path=f.path, line=f.line) for f in errors[:20]),
        ),
    )


# --- small formatting helpers shared by the reporters ---------------------------------------------------


def fmt_number(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return "n/a" if v is None else str(v)


def evidence_text(e: Evidence) -> str:
    """One line: `path:line text [k=v ...]` (excerpts are rendered separately)."""
    parts = []
    if e.location():
        parts.append(e.location())
    if e.text:
        parts.append(e.text)
    if e.numbers:
        parts.append("[" + ", ".join(f"{k}={fmt_number(v)}" for k, v in e.numbers) + "]")
    return " ".join(parts)


def curve_points(data: Mapping[str, object]) -> list[tuple[float, float]]:
    """The loss curve in CheckOutcome.data["curve"] ([[iter, loss], ...]), finite points only."""
    raw = data.get("curve")
    points: list[tuple[float, float]] = []
    if not isinstance(raw, list):
        return points
    for item in raw:
        if isinstance(item, (list, tuple)) and len(item) >= 2:
            x, y = item[0], item[1]
            if (
                isinstance(x, (int, float))
                and isinstance(y, (int, float))
                and not isinstance(x, bool)
                and not isinstance(y, bool)
                and math.isfinite(x)
                and math.isfinite(y)
            ):
                points.append((float(x), float(y)))
    return points


def matrix_cell(value: object) -> str:
    """One engine-pair cell: a number, or the agreement check's {within, max_abs, max_rel, cosine} dict."""
    if value is None:
        return "—"
    if isinstance(value, dict):
        parts = []
        if "within" in value:
            parts.append("agree" if value["within"] else "DIFFER")
        for key, label in (("max_abs", "max_abs"), ("max_rel", "max_rel"), ("cosine", "cos")):
            v = value.get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                parts.append(f"{label}={v:.8f}" if key == "cosine" else f"{label}={v:.3g}")
        agree = value.get("argmax_agree")
        if isinstance(agree, (int, float)) and not isinstance(agree, bool):
            parts.append(f"argmax={agree:.0%}")
        return " ".join(parts) or "…"
    return fmt_number(value)


def matrix_table(data: Mapping[str, object]) -> tuple[list[str], list[list[str]]] | None:
    """An agreement matrix as (header, rows), from data["matrix"] in one of two shapes:
    {"engines": [a, b], "values": [[...], [...]]} or {a: {b: value}} (tipc.judge.checks.agreement's shape,
    cells
    {within, max_abs, max_rel, cosine, ...} or null). None when absent or malformed."""
    m = data.get("matrix")
    if isinstance(m, dict) and isinstance(m.get("engines"), list) and isinstance(m.get("values"), list):
        names = [str(x) for x in m["engines"]]
        rows = []
        for name, row in zip(names, m["values"], strict=False):
            if not isinstance(row, list):
                return None
            rows.append([name, *(matrix_cell(v) for v in row)])
        return ["", *names], rows
    if isinstance(m, dict) and m and all(isinstance(v, dict) for v in m.values()):
        cols: list[str] = []
        for v in m.values():
            for k in v:
                if str(k) not in cols:
                    cols.append(str(k))
        rows = [[str(a), *(matrix_cell(row.get(c)) for c in cols)] for a, row in m.items()]
        return ["", *cols], rows
    return None


def agreement_caption(data: Mapping[str, object]) -> str:
    """What an agreement matrix was measured on: inputs, model and tolerances (empty when unknown)."""
    parts = []
    inputs = data.get("inputs")
    if isinstance(inputs, dict):
        feeds = inputs.get("feeds")
        shapes = (
            ", ".join(f"{k} {v.get('shape')}" for k, v in feeds.items() if isinstance(v, dict))
            if isinstance(feeds, dict)
            else ""
        )
        source = inputs.get("path") if inputs.get("source") == "file" else inputs.get("source")
        if source or shapes:
            parts.append(f"inputs {source or '?'}" + (f" ({shapes})" if shapes else ""))
    tol = data.get("tolerances")
    if isinstance(tol, dict) and tol:
        parts.append("tolerances " + " ".join(f"{k}={fmt_number(v)}" for k, v in tol.items()))
    return "; ".join(parts)


SPARK = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], width: int = 60) -> str:
    """A one-line picture of a curve (bucket means, scaled min..max onto eight block heights)."""
    if not values:
        return ""
    n = len(values)
    buckets = [values[i * n // min(width, n) : (i + 1) * n // min(width, n)] for i in range(min(width, n))]
    means = [sum(b) / len(b) for b in buckets if b]
    lo, hi = min(means), max(means)
    if hi - lo <= 0:
        return SPARK[0] * len(means)
    return "".join(SPARK[min(7, int((m - lo) / (hi - lo) * 8))] for m in means)


def remedy_text(cause: Cause) -> str:
    """The remedy, naming the tipc switch that applies it when the text does not already."""
    if cause.switch and cause.switch not in cause.remedy:
        return f"{cause.remedy} (tipc switch: {cause.switch})"
    return cause.remedy


NO_CAUSE = "no known cause matched: see the log"
TAIL_LINES = 12  # lines of a failed step's log shown after its cause
