"""Judge a run against its baseline: PASS / FAIL (regression) / IMPROVED per metric, with the numbers, the
margin and where the margin came from; a missing metric or stage is a FAIL, never a silent skip; and the
environment differences between the baseline and this run, named.

Operators (`ref` = the baseline's reference, the median of its runs, `m` = the margin):
  `<=` PASS when v <= ref + m, IMPROVED when v < ref - m;    `<` the same with a strict bound;
  `>=` PASS when v >= ref - m, IMPROVED when v > ref + m;    `>` the same with a strict bound;
  `==` PASS when |v - ref| <= m;                             `!=` PASS when |v - ref| > m.
A non-finite value (a NaN loss) FAILs. A metric with `active: false` is shown as INFO and never fails.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tipc.judge.baseline import store
from tipc.judge.baseline.metrics import RunMetrics, extract

PASS, FAIL, IMPROVED, INFO = "PASS", "FAIL", "IMPROVED", "INFO"
ENV_KEYS = ("paddle_version", "paddle_commit", "python_version", "cpu_model", "gpus", "repo_commit")


@dataclass(frozen=True)
class Row:
    metric: str
    verdict: str
    value: float | None
    mean: float
    margin: float
    margin_from: str
    op: str
    unit: str
    why: str

    def to_json(self) -> dict[str, Any]:
        def num(v: float | None) -> float | str | None:
            return None if v is None else (v if math.isfinite(v) else str(v))

        return {
            "metric": self.metric,
            "verdict": self.verdict,
            "value": num(self.value),
            "baseline": num(self.mean),
            "margin": num(self.margin),
            "margin_from": self.margin_from,
            "op": self.op,
            "unit": self.unit,
            "why": self.why,
        }


@dataclass(frozen=True)
class Judgement:
    baseline: Path | None
    machine_class: str
    rows: tuple[Row, ...]
    env_diff: tuple[str, ...]
    problem: str = ""  # why no comparison could be made (no baseline file for this machine class, ...)

    @property
    def regressed(self) -> bool:
        return bool(self.problem) or any(r.verdict == FAIL for r in self.rows)

    def counts(self) -> dict[str, int]:
        out = {PASS: 0, FAIL: 0, IMPROVED: 0, INFO: 0}
        for r in self.rows:
            out[r.verdict] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "baseline": str(self.baseline) if self.baseline else None,
            "machine_class": self.machine_class,
            "problem": self.problem,
            "counts": self.counts(),
            "rows": [r.to_json() for r in self.rows],
            "env_diff": list(self.env_diff),
        }


def _fmt(v: float | None, unit: str = "") -> str:
    if v is None:
        return "missing"
    text = f"{v:.4g}"
    return f"{text} {unit}" if unit else text


def compare(op: str, value: float, ref: float, margin: float) -> str:
    if not math.isfinite(value):
        return FAIL
    if op in ("<=", "<"):
        ok = value <= ref + margin if op == "<=" else value < ref + margin
        return IMPROVED if ok and value < ref - margin else (PASS if ok else FAIL)
    if op in (">=", ">"):
        ok = value >= ref - margin if op == ">=" else value > ref - margin
        return IMPROVED if ok and value > ref + margin else (PASS if ok else FAIL)
    if op == "!=":
        return PASS if abs(value - ref) > margin else FAIL
    return PASS if abs(value - ref) <= margin else FAIL


def judge_metrics(base: store.Baseline, run: RunMetrics, env: dict[str, Any] | None) -> Judgement:
    rows: list[Row] = []
    for stage in base.stages:
        status = run.stages.get(stage)
        if status != "passed":
            what = "is not in this run's plan" if status is None else f"did not pass ({status})"
            rows.append(
                Row(f"stage.{stage}", FAIL, None, math.nan, 0.0, "", "ran", "", f"stage {stage} {what}")
            )
    for name, mb in sorted(base.metrics.items()):
        s = mb.summary
        got = run.metrics.get(name)
        if got is None:
            verdict = FAIL if mb.active else INFO
            rows.append(
                Row(
                    name,
                    verdict,
                    None,
                    s.reference,
                    mb.margin,
                    mb.margin_from,
                    mb.op,
                    mb.unit,
                    f"missing: the baseline has it ({_fmt(s.reference, mb.unit)}, n={s.n}) but this run "
                    "did not produce it",
                )
            )
            continue
        ref = s.reference
        verdict = compare(mb.op, got.value, ref, mb.margin)
        if not mb.active:
            verdict = INFO
        delta = got.value - ref
        rel = f" ({delta / ref:+.1%})" if ref else ""
        why = (
            f"{_fmt(got.value, mb.unit)} vs baseline {_fmt(ref, mb.unit)} ± {mb.margin:.4g}{rel}, "
            f"op {mb.op}; margin from {mb.margin_from}; read at {got.source}"
        )
        rows.append(Row(name, verdict, got.value, ref, mb.margin, mb.margin_from, mb.op, mb.unit, why))
    return Judgement(base.path, base.machine_class, tuple(rows), env_differences(base.provenance, env))


LOAD_RATIO = 2.0  # machine load this many times higher or lower: timings are not comparable
BUSY_LOAD = 1.5  # more runnable tasks than this per CPU: the run's timings competed for the CPUs


def env_differences(prov: dict[str, Any], env: dict[str, Any] | None) -> tuple[str, ...]:
    """What differs between the baseline's provenance and this run's environment, one line each."""
    env = env or {}
    out: list[str] = []
    old_load, new_load = prov.get("load_per_cpu"), env.get("load_per_cpu")
    if isinstance(new_load, int | float) and new_load > BUSY_LOAD:
        out.append(
            f"machine busy while this run was measured: load per CPU {new_load} (baseline {old_load}); "
            "its timings competed for the CPUs"
        )
    elif isinstance(old_load, int | float) and isinstance(new_load, int | float):
        low, high = sorted((float(old_load), float(new_load)))
        if high > 1.0 and high > LOAD_RATIO * max(low, 0.05):
            out.append(
                f"machine load per CPU: {old_load} -> {new_load} (timings taken under such different load "
                "are not comparable)"
            )
    for key in ENV_KEYS:
        if key == "repo_commit":
            continue
        old, new = prov.get(key), env.get(key)
        if old != new and not (old in (None, []) and new in (None, [])):
            out.append(f"{key}: {old} -> {new}")
    old_raw, new_raw = prov.get("packages"), env.get("packages")
    old_pk: dict[str, Any] = old_raw if isinstance(old_raw, dict) else {}
    new_pk: dict[str, Any] = new_raw if isinstance(new_raw, dict) else {}
    for name in sorted(set(old_pk) | set(new_pk)):
        if old_pk.get(name) != new_pk.get(name):
            out.append(f"package {name}: {old_pk.get(name)} -> {new_pk.get(name)}")
    return tuple(out)


def find_baseline(directory: Path, record: Any) -> tuple[Path, str]:
    env = record.environment or {}
    machine = store.machine_class(env)
    plan = record.plan
    return store.baseline_path(directory, plan.model_name, plan.config_path, plan.mode, machine), machine


def judge_record(record: Any, repo: Path, directory: Path) -> Judgement:
    """`record` (a RunRecord) judged against the baseline under `directory` for its machine class."""
    path, machine = find_baseline(directory, record)
    if not path.is_file():
        others = sorted(p.stem for p in path.parent.glob("*.yaml")) if path.parent.is_dir() else []
        hint = f" (baselines exist for: {', '.join(others)})" if others else ""
        return Judgement(
            path,
            machine,
            (),
            (),
            problem=f"no baseline for machine class {machine} at {path}{hint}; record one with "
            "`tipc baseline record`",
        )
    base = store.load(path)
    run = extract(record, repo)
    judgement = judge_metrics(base, run, _env_with_commit(record))
    if record.git_commit != base.provenance.get("repo_commit") and base.provenance.get("repo_commit"):
        judgement = Judgement(
            judgement.baseline,
            judgement.machine_class,
            judgement.rows,
            (
                *judgement.env_diff,
                f"repo_commit: {base.provenance.get('repo_commit')} -> {record.git_commit}",
            ),
        )
    return judgement


def _env_with_commit(record: Any) -> dict[str, Any]:
    return {**(record.environment or {}), "load_per_cpu": store.load_per_cpu()}


def render_text(j: Judgement) -> str:
    """A plain table for the terminal and the Markdown body of a notification."""
    if j.problem:
        return f"baseline: FAIL: {j.problem}\n"
    c = j.counts()
    lines = [
        f"baseline {j.baseline} ({j.machine_class}): {c[PASS]} PASS, {c[IMPROVED]} IMPROVED, {c[FAIL]} FAIL"
        + (f", {c[INFO]} INFO" if c[INFO] else "")
    ]
    for r in j.rows:
        lines.append(f"  {r.verdict:<8} {r.metric}: {r.why}")
    if j.env_diff:
        lines.append("  environment differences from the baseline:")
        lines.extend(f"    {d}" for d in j.env_diff)
    return "\n".join(lines) + "\n"


def to_outcome(j: Judgement) -> Any:
    """The judgement as a CheckOutcome for tipc's rule reports (the `baseline` operator)."""
    from tipc.judge.checks.base import CheckOutcome, Evidence, Verdict

    if j.problem:
        return CheckOutcome(Verdict.FAIL, j.problem, (), {"baseline": j.to_json()})
    c = j.counts()
    failed = [r.metric for r in j.rows if r.verdict == FAIL]
    summary = f"{c[PASS]} PASS, {c[IMPROVED]} IMPROVED, {c[FAIL]} FAIL against {j.baseline}"
    if failed:
        summary += ": regression in " + ", ".join(failed[:6]) + (" ..." if len(failed) > 6 else "")
    evidence = [
        Evidence(
            f"{r.verdict} {r.metric}: {r.why}",
            numbers=(("value", r.value), ("baseline", r.mean), ("margin", r.margin)),
        )
        for r in j.rows
        if r.verdict in (FAIL, IMPROVED)
    ]
    if j.env_diff:
        evidence.append(Evidence("environment differs from the baseline: " + "; ".join(j.env_diff)))
    verdict = Verdict.FAIL if failed else Verdict.PASS
    return CheckOutcome(verdict, summary, tuple(evidence), {"baseline": j.to_json()})
