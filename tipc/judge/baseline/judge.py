"""Judge a run against its baseline: PASS / FAIL (regression) / IMPROVED / INCONCLUSIVE / INFO per metric,
with the numbers, the margin and where the margin came from; a missing metric or stage is a FAIL, never a
silent skip; and the environment differences between the baseline and this run, named.

Operators (`ref` = the baseline's reference, the median of its runs, `m` = the margin):
  `<=` PASS when v <= ref + m, IMPROVED when v < ref - m;    `<` the same with a strict bound;
  `>=` PASS when v >= ref - m, IMPROVED when v > ref + m;    `>` the same with a strict bound;
  `==` PASS when |v - ref| <= m;                             `!=` PASS when |v - ref| > m.
A non-finite value (a NaN loss) FAILs.

What keeps a verdict honest:
- INFO: a metric a human set `active: false`, or one that was unstable when recorded (not judged until a
  re-recording finds it stable);
- INCONCLUSIVE: a wall-clock timing taken under load too different from the baseline's (its steps waited
  for a CPU much more, or much less, than the recorded ones), in the direction the load would push it: a
  slower step on a busier machine proves nothing, nor does a faster one on a quieter machine. CPU-time
  metrics feel load less, but not nothing (preemption, other work competing for memory bandwidth, seen by
  the monitor's fixed memory copy): a CPU-time row, and a wall-clock row for memory contention, is
  INCONCLUSIVE only as far as the measured effect of the load difference could explain it. Also an effect
  metric that was identical in every recorded run
  when this run was seeded differently;
- a hollow improvement: an effect metric that improved while the run shows degenerate outputs (a NaN or
  constant training loss, uniform predicted probabilities) is a FAIL, with that reason.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.core.jsontypes import as_list
from tipc.judge.baseline import store
from tipc.judge.baseline.metrics import CPU, HIGHER, LOWER, Metric, RunMetrics, combine, extract

if TYPE_CHECKING:
    from tipc.execute.record import RunRecord
    from tipc.judge.checks.base import CheckOutcome

PASS, FAIL, IMPROVED, INFO, INCONCLUSIVE = "PASS", "FAIL", "IMPROVED", "INFO", "INCONCLUSIVE"
VERDICTS = (PASS, FAIL, IMPROVED, INCONCLUSIVE, INFO)
ENV_KEYS = ("paddle_version", "paddle_commit", "python_version", "cpu_model", "gpus", "repo_commit")
RUNS_FILE = "tipc_check_runs.json"  # beside the run record: the metrics of every run of a --repeat check


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

    def to_json(self) -> dict[str, object]:
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
    load: str = ""  # the load this run's timings were taken under, against the baseline's, in words
    hyper_diff: tuple[str, ...] = ()  # training hyper-parameters that changed, one line each
    repeats: int = 1  # runs of the chain this judgement is the median of

    @property
    def regressed(self) -> bool:
        return bool(self.problem) or any(r.verdict == FAIL for r in self.rows)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(VERDICTS, 0)
        for r in self.rows:
            out[r.verdict] += 1
        return out

    def to_json(self) -> dict[str, object]:
        return {
            "baseline": str(self.baseline) if self.baseline else None,
            "machine_class": self.machine_class,
            "problem": self.problem,
            "counts": self.counts(),
            "rows": [r.to_json() for r in self.rows],
            "env_diff": list(self.env_diff),
            "load": self.load,
            "hyperparameters_changed": list(self.hyper_diff),
            "repeats": self.repeats,
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


# ---- load: how much the steps waited for a CPU, against the baseline's runs

# Wall-clock timings move by about (change in run-queue wait per CPU second) / (1 + the baseline's): past
# this share (or the spread the recorded runs themselves had) they are not comparable.
LOAD_TOLERANCE = 0.10
# CPU time is what load disturbs least, not what it leaves alone: each preemption costs the step its warm
# caches. Measured on the tutorial under two busy loops (run-queue wait 0.12 -> 0.3-0.55 s per CPU second):
# its 2.3 s eval step used up to 10 % more CPU seconds (the median of three runs), its train step up to 5 %.
# A CPU-time row is INCONCLUSIVE only as far as this bound could explain it.
CPU_PER_WAIT = 0.35  # relative CPU-time change per second of run-queue wait per CPU second
# The same with the clock held in the baseline and the check (tipc.execute.clock): part of the change above
# was the clock a busy machine keeps up. Measured held on the tutorial (bench/modelci_noise.py, 20 checks of
# 3 runs under two busy loops, waits 0.08 -> 0.37-0.49): train CPU +1 % on average, at most +6.5 %; the 2 s
# eval step at most +10.4 % at a wait 0.41 higher (0.25 per unit, the runs' own spread included).
CPU_PER_WAIT_HELD = 0.25
# An idle virtual CPU slows down (tipc.execute.clock): the tutorial's eval step took 2.43 s CPU with the
# clock free against 2.16 s held (+12.5 %), its busy train step 12.38 s against 11.96 s (+3.5 %). A check
# at another clock than its baseline's is bounded by this.
CLOCK_EFFECT = 1.15
LOAD_RATIO = 2.0  # without schedstat: 1-minute load average per CPU this many times higher or lower
BUSY_LOAD = 1.5  # ... or above this while the run was measured


@dataclass(frozen=True)
class Load:
    """Whether this run's wall-clock timings can be compared with the baseline's: `shift` is "higher" (this
    run waited for CPUs much more), "lower" or "" (comparable), `text` says so with the numbers."""

    shift: str
    text: str
    # how much this load difference could have stretched (> 1) or shrunk (< 1) this run's CPU times
    factor: float = 1.0


def load_shift(prov: Mapping[str, object], run: RunMetrics, env: Mapping[str, object] | None) -> Load:
    base, now = prov.get("contention"), run.contention
    if isinstance(base, int | float) and now is not None:
        runs = [float(c) for c in as_list(prov.get("contention_runs")) if isinstance(c, int | float)]
        spread = (max(runs) - min(runs)) / (1.0 + float(base)) if len(runs) > 1 else 0.0
        tolerance = max(LOAD_TOLERANCE, spread)
        change = (now - float(base)) / (1.0 + float(base))
        what = (
            f"run-queue wait per CPU second {now:.2f} (baseline {float(base):.2f}; wall-clock timings move "
            f"about {change:+.0%}, tolerance {tolerance:.0%})"
        )
        if abs(change) <= tolerance:
            return Load("", f"comparable load: {what}")
        held = prov.get("clock") == run.clock == "held"
        factor = max(0.5, 1.0 + (CPU_PER_WAIT_HELD if held else CPU_PER_WAIT) * (now - float(base)))
        return Load("higher" if change > 0 else "lower", f"load differs: {what}", factor)
    old, new = prov.get("load_per_cpu"), (env or {}).get("load_per_cpu")
    if isinstance(old, int | float) and isinstance(new, int | float):
        what = f"1-minute load per CPU {new} (baseline {old})"
        low, high = sorted((float(old), float(new)))
        busier = new > BUSY_LOAD and new > 1.25 * old  # busy while measured, and busier than recorded
        if busier or (high > 1.0 and high > LOAD_RATIO * max(low, 0.05)):
            return Load("higher" if new > old else "lower", f"load differs: {what}")
        return Load("", f"comparable load: {what}")
    return Load("", "load unknown (no scheduler statistics or load average)")


# The copy's own run-to-run noise: a smaller change says nothing about the steps.
COPY_TOLERANCE = 0.15
# A step's CPU time moved by 0.34-0.62 of the copy's change on the tutorial's train step (beside a copy
# loop; a noisy neighbour), see docs/model-ci.md: the upper side bounds how much contention could explain.
COPY_EFFECT = 0.5


def memory_shift(prov: Mapping[str, object], run: RunMetrics) -> Load:
    """Whether this run's CPU-time figures can be compared with the baseline's: the monitor's fixed memory
    copy beside the steps, against the recorded runs' (tipc.execute.monitor)."""
    base, now = prov.get("copy_ms"), run.copy_ms
    if not isinstance(base, int | float) or base <= 0 or now is None:
        return Load("", "")
    runs = sorted(float(c) for c in as_list(prov.get("copy_ms_runs")) if isinstance(c, int | float))
    if len(runs) >= 5:  # one outlying recorded run (a neighbour's burst) must not widen the tolerance
        runs = runs[1:-1]
    spread = (runs[-1] - runs[0]) / float(base) if len(runs) > 1 else 0.0
    tolerance = max(COPY_TOLERANCE, spread)
    change = now / float(base) - 1.0
    what = (
        f"a fixed memory copy beside the steps took {now:.3g} ms (baseline {float(base):.3g} ms, "
        f"{change:+.0%}; tolerance {tolerance:.0%})"
    )
    if abs(change) <= tolerance:
        return Load("", f"comparable memory contention: {what}")
    factor = max(0.5, 1.0 + COPY_EFFECT * change)
    return Load("higher" if change > 0 else "lower", f"memory contention differs: {what}", factor)


def clock_shift(prov: Mapping[str, object], run: RunMetrics) -> Load:
    """Whether this run's CPUs ran at the clock the baseline's did (tipc.execute.clock): a run that let
    idle CPUs slow down against a baseline held at full clock may be slower by up to CLOCK_EFFECT, one
    held against a free baseline that much faster."""
    base, now = prov.get("clock"), run.clock
    if base not in ("held", "free") or now is None:
        return Load("", "")
    if base == now:
        return Load("", f"same clock: {now} in the baseline and in this run")
    slower = now == "free"
    what = (
        f"clock differs: {now} in this run, {base} in the baseline (an idle CPU slows down; CPU times "
        f"could be up to {CLOCK_EFFECT - 1:.0%} {'longer' if slower else 'shorter'}; `tipc baseline update` "
        "and `tipc check --baseline` hold it unless told --no-hold-clock)"
    )
    return Load("higher" if slower else "lower", what, CLOCK_EFFECT if slower else 1.0 / CLOCK_EFFECT)


def _contention_explains(
    verdict: str, mb: store.MetricBaseline, value: float, margin: float, f: float
) -> bool:
    """Whether contention that could stretch timings by `f` explains `verdict`. What it could move a value
    by (|f - 1| x the reference) is one more source of spread beside the recorded runs' own, so the two add
    in quadrature: a FAIL inside that wider band is INCONCLUSIVE (more contention now), and so is a PASS or
    IMPROVED that the difference could have pushed out of it (less now). Stacked (their sum), the two would
    claim a spread neither source shows together, and hide regressions a little past either."""
    ref = mb.summary.reference
    shift = abs(f - 1.0) * abs(ref)
    wide = math.hypot(margin, shift)
    if mb.better == LOWER:
        if f > 1:
            return verdict == FAIL and value <= ref + wide
        return verdict in (PASS, IMPROVED) and value + shift > ref + wide
    if mb.better == HIGHER:
        if f > 1:
            return verdict == FAIL and value >= ref - wide
        return verdict in (PASS, IMPROVED) and value - shift < ref - wide
    return verdict != PASS


def _timing_verdict(verdict: str, better: str, load: Load) -> str:
    """INCONCLUSIVE where the load difference alone could explain the verdict: slower under more load,
    inside the band or faster under less load; for a metric with no better direction, any move."""
    if not load.shift or verdict == INFO:
        return verdict
    if better not in (LOWER, HIGHER):
        return verdict if verdict == PASS else INCONCLUSIVE
    if load.shift == "higher":
        return INCONCLUSIVE if verdict == FAIL else verdict
    return INCONCLUSIVE if verdict in (PASS, IMPROVED) else verdict


# ---- the rows


def _missing_row(name: str, mb: store.MetricBaseline) -> Row:
    s = mb.summary
    judged = mb.active and mb.is_stable
    return Row(
        name,
        FAIL if judged else INFO,
        None,
        s.reference,
        mb.margin,
        mb.margin_from,
        mb.op,
        mb.unit,
        f"missing: the baseline has it ({_fmt(s.reference, mb.unit)}, n={s.n}) but this run did not "
        "produce it",
    )


def _bounded(
    verdict: str, mb: store.MetricBaseline, value: float, margin: float, loads: tuple[Load, ...], what: str
) -> str:
    """Why the measured effects of `loads` together could explain `verdict` ("" where they could not)."""
    causes = [c for c in loads if c.shift and c.factor != 1.0]
    factor = math.prod(c.factor for c in causes)
    if not causes or not _contention_explains(verdict, mb, value, margin, factor):
        return ""
    return f"{'; '.join(c.text for c in causes)}: {what} could move by {factor - 1:+.0%}"


def _clock_verdict(
    verdict: str, mb: store.MetricBaseline, got: Metric, loads: tuple[Load, Load, Load], margin: float
) -> tuple[str, list[str]]:
    """A timing's verdict given the load it was taken under: INCONCLUSIVE where the load could explain it.
    CPU time, as far as the measured effects of preemption, memory contention and the CPUs' clock go; a
    wall-clock figure, in whichever direction other run-queue load pushes it, and as far as memory
    contention and the clock could."""
    load, memory, speed = loads
    if (got.clock or mb.clock) == CPU:
        why = _bounded(verdict, mb, got.value, margin, (load, memory, speed), "CPU times")
        return (INCONCLUSIVE, [f"CPU-time figure, {why}"]) if why else (verdict, [])
    judged = _timing_verdict(verdict, mb.better, load)
    if judged != verdict:
        return judged, [f"wall-clock timing, {load.text}"]
    # memory contention and the clock stretch a step's work, not its waits: bounded as for CPU time
    why = _bounded(verdict, mb, got.value, margin, (memory, speed), "timings")
    if why:
        return INCONCLUSIVE, [f"wall-clock timing, {why}"]
    ref = mb.summary.reference
    if judged == FAIL and ref and abs(got.value - ref) <= LOAD_TOLERANCE * abs(ref):
        # "comparable load" still lets a wall-clock figure move by up to LOAD_TOLERANCE: a move that
        # small cannot be told from the load (an unchanged rerun's CPU % went 91 -> 99 on CI)
        note = f"wall-clock figure within the {LOAD_TOLERANCE:.0%} a comparable load still moves it"
        return INCONCLUSIVE, [f"{note}, {load.text}"]
    return judged, []


def _metric_row(
    name: str,
    mb: store.MetricBaseline,
    got: Metric,
    loads: tuple[Load, Load, Load],
    seeds: tuple[object, object],
    repeats: int,
) -> Row:
    """`loads`: the run-queue load, the memory contention and the clock, against the baseline's."""
    ref = mb.summary.reference
    margin, origin = mb.margin_for(repeats)
    verdict = compare(mb.op, got.value, ref, margin)
    notes: list[str] = []
    if not mb.active:
        verdict, notes = INFO, ["inactive (active: false in the baseline)"]
    elif not mb.is_stable:
        verdict = INFO
        notes = [
            f"not judged: unstable when recorded (robust spread {mb.summary.relative_spread:.0%} of the "
            "median over the recorded runs, or seen in only some of them); re-record to admit it"
        ]
    elif mb.kind == "effect" and mb.summary.identical and seeds[0] != seeds[1] and verdict != PASS:
        verdict = INCONCLUSIVE
        notes = [f"identical in every recorded run with seed {seeds[0]}, but this run's seed is {seeds[1]}"]
    elif got.clock or mb.clock:
        verdict, notes = _clock_verdict(verdict, mb, got, loads, margin)
    delta = got.value - ref
    rel = f" ({delta / ref:+.1%})" if ref else ""
    clock = " (CPU time: what load disturbs least)" if (got.clock or mb.clock) == CPU else ""
    why = (
        f"{_fmt(got.value, mb.unit)} vs baseline {_fmt(ref, mb.unit)} ± {margin:.4g}{rel}, "
        f"op {mb.op}; margin from {origin}; read at {got.source}{clock}"
    )
    if repeats > 1:
        why += f"; median of {repeats} runs"
    if notes:
        why += "; " + "; ".join(notes)
    return Row(name, verdict, got.value, ref, margin, origin, mb.op, mb.unit, why)


def _hollow(rows: list[Row], base: store.Baseline, run: RunMetrics) -> list[Row]:
    """An effect metric that IMPROVED while the outputs became degenerate is a FAIL (a dead network can
    score a better loss than a learning one)."""
    signs = [d for d in run.degenerate if _sign_kind(d) not in _baseline_sign_kinds(base)]
    if not signs:
        return rows
    out = []
    for r in rows:
        mb = base.metrics.get(r.metric)
        if r.verdict == IMPROVED and mb is not None and mb.kind == "effect":
            r = Row(
                r.metric,
                FAIL,
                r.value,
                r.mean,
                r.margin,
                r.margin_from,
                r.op,
                r.unit,
                f"hollow improvement: {r.why}; but {'; '.join(signs)}",
            )
        out.append(r)
    return out


def _sign_kind(sign: str) -> str:
    return sign.split(" at ", 1)[0].split(" = ", 1)[0].split(" over ", 1)[0]


def _baseline_sign_kinds(base: store.Baseline) -> set[str]:
    raw = base.provenance.get("degenerate")
    return {_sign_kind(str(s)) for s in raw} if isinstance(raw, list) else set()


def judge_metrics(
    base: store.Baseline, run: RunMetrics, env: Mapping[str, object] | None, *, repeats: int = 1
) -> Judgement:
    rows: list[Row] = []
    for stage in base.stages:
        status = run.stages.get(stage)
        if status != "passed":
            what = "is not in this run's plan" if status is None else f"did not pass ({status})"
            rows.append(
                Row(f"stage.{stage}", FAIL, None, math.nan, 0.0, "", "ran", "", f"stage {stage} {what}")
            )
    load = load_shift(base.provenance, run, env)
    memory = memory_shift(base.provenance, run)
    speed = clock_shift(base.provenance, run)
    seeds = (base.provenance.get("seed"), run.seed)
    for name, mb in sorted(base.metrics.items()):
        got = run.metrics.get(name)
        if got is None:
            rows.append(_missing_row(name, mb))
        else:
            rows.append(_metric_row(name, mb, got, (load, memory, speed), seeds, repeats))
    rows = _hollow(rows, base, run)
    hyper = hyper_differences(base.provenance, run)
    diff = env_differences(base.provenance, env)
    if seeds[0] != seeds[1]:
        diff = (f"seed: {seeds[0]} -> {seeds[1]}", *diff)
    return Judgement(
        base.path,
        base.machine_class,
        tuple(rows),
        (*hyper, *diff),
        load="; ".join(t for t in (load.text, memory.text, speed.text) if t),
        hyper_diff=hyper,
        repeats=repeats,
    )


def hyper_differences(prov: Mapping[str, object], run: RunMetrics) -> tuple[str, ...]:
    """The training hyper-parameters that differ from the baseline's, each with where it was read."""
    raw = prov.get("hyperparameters")
    old: Mapping[str, object] = raw if isinstance(raw, dict) else {}
    out: list[str] = []
    for name in sorted(set(old) | set(run.hyper)):
        before = old.get(name)
        was = str(before.get("value")) if isinstance(before, dict) else None
        now, where = run.hyper.get(name, (None, ""))
        if was != now:
            at = f" (read at {where})" if where else ""
            out.append(f"hyper-parameter {name}: {was} -> {now}{at}")
    return tuple(out)


def env_differences(prov: Mapping[str, object], env: Mapping[str, object] | None) -> tuple[str, ...]:
    """What differs between the baseline's provenance and this run's environment, one line each."""
    env = env or {}
    out: list[str] = []
    for key in ENV_KEYS:
        if key == "repo_commit":
            continue
        old, new = prov.get(key), env.get(key)
        if old != new and not (old in (None, []) and new in (None, [])):
            out.append(f"{key}: {old} -> {new}")
    old_raw, new_raw = prov.get("packages"), env.get("packages")
    old_pk: Mapping[str, object] = old_raw if isinstance(old_raw, dict) else {}
    new_pk: Mapping[str, object] = new_raw if isinstance(new_raw, dict) else {}
    for name in sorted(set(old_pk) | set(new_pk)):
        if old_pk.get(name) != new_pk.get(name):
            out.append(f"package {name}: {old_pk.get(name)} -> {new_pk.get(name)}")
    return tuple(out)


def find_baseline(directory: Path, record: RunRecord) -> tuple[Path, str]:
    env = record.environment or {}
    machine = store.machine_class(env)
    plan = record.plan
    return store.baseline_path(directory, plan.model_name, plan.config_path, plan.mode, machine), machine


# ---- the runs of a check: one, or the --repeat runs saved beside the record


def runs_file(record: RunRecord, repo: Path) -> Path:
    from tipc.execute.record import record_location
    from tipc.judge.baseline.metrics import log_file

    rel = (record_location(record.plan).parent / RUNS_FILE).as_posix()
    return log_file(record, repo, rel)


def save_runs(path: Path, record: RunRecord, runs: list[RunMetrics]) -> None:
    """The metrics of every run of a --repeat check, keyed by the last run's start."""
    from tipc.core.fs import atomic_write_text

    data = {"schema": "tipc.check-runs/1", "started": record.started, "runs": [r.to_json() for r in runs]}
    atomic_write_text(path, json.dumps(data))


def check_runs(record: RunRecord, repo: Path) -> list[RunMetrics]:
    """The metrics this check is judged on: every run of a --repeat check when the file beside the record
    belongs to this record, else this record's."""
    path = runs_file(record, repo)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("started") == record.started and data.get("runs"):
            return [RunMetrics.from_json(r) for r in data["runs"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        pass
    return [extract(record, repo)]


def judge_record(record: RunRecord, repo: Path, directory: Path) -> Judgement:
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
    runs = check_runs(record, repo)
    judgement = judge_metrics(base, combine(runs), _env_with_load(record), repeats=len(runs))
    if record.git_commit != base.provenance.get("repo_commit") and base.provenance.get("repo_commit"):
        judgement = Judgement(
            judgement.baseline,
            judgement.machine_class,
            judgement.rows,
            (
                *judgement.env_diff,
                f"repo_commit: {base.provenance.get('repo_commit')} -> {record.git_commit}",
            ),
            load=judgement.load,
            hyper_diff=judgement.hyper_diff,
            repeats=judgement.repeats,
        )
    return judgement


def _env_with_load(record: RunRecord) -> dict[str, object]:
    return {**(record.environment or {}), "load_per_cpu": store.load_per_cpu()}


# ---- words


def _counts_text(c: dict[str, int]) -> str:
    return ", ".join(f"{c[v]} {v}" for v in VERDICTS if c[v] or v in (PASS, IMPROVED, FAIL))


def render_text(j: Judgement) -> str:
    """A plain table for the terminal and the Markdown body of a notification."""
    if j.problem:
        return f"baseline: FAIL: {j.problem}\n"
    lines = [f"baseline {j.baseline} ({j.machine_class}): {_counts_text(j.counts())}"]
    for r in j.rows:
        lines.append(f"  {r.verdict:<12} {r.metric}: {r.why}")
    if j.load:
        lines.append(f"  {j.load}")
    if j.env_diff:
        lines.append("  differences from the baseline:")
        lines.extend(f"    {d}" for d in j.env_diff)
    return "\n".join(lines) + "\n"


def to_outcome(j: Judgement) -> CheckOutcome:
    """The judgement as a CheckOutcome for tipc's rule reports (the `baseline` operator): FAIL on a
    regression, WARN when only INCONCLUSIVE rows stand in the way of a PASS."""
    from tipc.judge.checks.base import CheckOutcome, Evidence, Verdict

    if j.problem:
        return CheckOutcome(Verdict.FAIL, j.problem, (), {"baseline": j.to_json()})
    c = j.counts()
    failed = [r.metric for r in j.rows if r.verdict == FAIL]
    summary = f"{_counts_text(c)} against {j.baseline}"
    if failed:
        summary += ": regression in " + ", ".join(failed[:6]) + (" ..." if len(failed) > 6 else "")
        if j.hyper_diff:
            summary += "; training hyper-parameters changed: " + "; ".join(
                d.removeprefix("hyper-parameter ") for d in j.hyper_diff[:4]
            )
    elif c[INCONCLUSIVE]:
        summary += f": {c[INCONCLUSIVE]} timing(s) not comparable ({j.load})"
    evidence = [
        Evidence(
            f"{r.verdict} {r.metric}: {r.why}",
            numbers=(("value", r.value), ("baseline", r.mean), ("margin", r.margin)),
        )
        for r in j.rows
        if r.verdict in (FAIL, IMPROVED, INCONCLUSIVE)
    ]
    if j.load:
        evidence.append(Evidence(j.load))
    if j.env_diff:
        evidence.append(Evidence("differs from the baseline: " + "; ".join(j.env_diff)))
    verdict = Verdict.FAIL if failed else (Verdict.WARN if c[INCONCLUSIVE] else Verdict.PASS)
    return CheckOutcome(verdict, summary, tuple(evidence), {"baseline": j.to_json()})
