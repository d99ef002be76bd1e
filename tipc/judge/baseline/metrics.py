"""The metrics of one run, taken from its run record and the logs it names.

Names are dotted and stable, so a baseline file and the history database can key on them:
- effect: `train.loss.first|last|min`, `train.loss.window<i>of<w>` (mean loss over the i-th of w equal
  windows of the iteration lines), `train.eval.<key>` (the last evaluation line the training log prints),
  `eval.<key>` (the eval stage's log);
- performance on the CPU clock (what machine load disturbs least): `stage.<stage>.cpu_s` (CPU time of the
  stage's processes);
- performance on the wall clock (comparable only under similar load): `train.avg_ips` (median of the
  per-line throughput, the first line dropped as warm-up), `stage.<stage>.time_s` (wall time of the stage's
  steps), `infer.<engine>.<field>_ms` (latencies an inference log prints, e.g. `inference_time(ms)`);
- resources: `resources.peak_rss_mb` (the sampled peak of a step's whole process tree, at least its largest
  process's), `resources.peak_process_rss_mb` (the kernel's high-water RSS of the largest process: what
  sampling cannot miss, so it hardly varies between runs), `resources.mean_cpu_percent` (wall-clock), and
  with a GPU
  `resources.peak_gpu_mem_mb`, `resources.mean_gpu_util_percent` (absent, listed as n/a, without one).
A stage's figures count when every step of it that ran passed; steps that were not applicable on this
machine (a 2-GPU launch on a CPU run) neither make nor break a stage.

Besides the metrics a run gives: how much its steps waited for a CPU (`contention`, the run-queue wait per
CPU second of their main threads: the load its wall-clock timings were taken under), how long the
monitor's fixed memory copy took beside them (`copy_ms`: the memory contention its CPU-time figures were
taken under), the training
hyper-parameters it ran with (the train command's options, the `Namespace(...)` line a script prints, the
learning rate of the first logged iteration) and signs that its outputs are degenerate (a non-finite or
constant training loss, predicted probabilities that are exactly uniform), which make an "improved" effect
metric hollow.
"""

from __future__ import annotations

import ast
import math
import re
import shlex
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from tipc.judge.checks._common import argv_options, norm_key, physical_lines
from tipc.judge.checks.logparse import METRIC_KEYS, ParsedLine, parse_line

if TYPE_CHECKING:
    from tipc.core.steps import Step
    from tipc.execute.clock import State
    from tipc.execute.record import RunRecord, StepResult

EFFECT, PERFORMANCE, RESOURCE = "effect", "performance", "resource"
LOWER, HIGHER, NEITHER = "lower", "higher", "neither"  # which way is better
WALL, CPU = "wall", "cpu"  # the clock a timing is taken on ("" for what is no timing)
LOSS_WINDOWS = 4
_STAGES = ("train", "eval", "export", "infer", "quant", "serve", "client")
_LATENCY_KEY = re.compile(r"^(?P<name>[A-Za-z_]*time[A-Za-z_]*)\(ms\)$", re.IGNORECASE)
_IPS_KEY = re.compile(r"(^|_)ips$", re.IGNORECASE)


@dataclass(frozen=True)
class Metric:
    name: str
    value: float
    unit: str
    kind: str  # EFFECT | PERFORMANCE | RESOURCE
    better: str  # LOWER | HIGHER | NEITHER
    source: str = ""  # where it was read (log path:line, or "run record")
    clock: str = ""  # WALL | CPU for timings: wall-clock ones are comparable only under similar load


@dataclass(frozen=True)
class RunMetrics:
    """What one run measured: its metrics, the stages that ran and passed, and what is n/a on this machine."""

    metrics: dict[str, Metric]
    stages: dict[str, str]  # stage -> "passed" | "failed" | ... (worst status of the steps that ran)
    not_available: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    # run-queue wait per CPU second of the measured steps' main threads (None: not measured)
    contention: float | None = None
    # median CPU time (ms) of the monitor's fixed memory copy beside the measured steps (None: not probed)
    copy_ms: float | None = None
    hyper: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (value, where it was read)
    degenerate: tuple[str, ...] = ()  # signs, in words with their log line, that the outputs are degenerate
    seed: int | None = None  # what the steps were seeded with (tipc.execute.seeding)
    # "held" (no CPU idled into a slower clock: tipc.execute.clock), "free", or None where unknown
    clock: State | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "metrics": [
                [
                    m.name,
                    m.value if math.isfinite(m.value) else str(m.value),
                    m.unit,
                    m.kind,
                    m.better,
                    m.source,
                    m.clock,
                ]
                for m in self.metrics.values()
            ],
            "stages": self.stages,
            "not_available": list(self.not_available),
            "notes": list(self.notes),
            "contention": self.contention,
            "copy_ms": self.copy_ms,
            "hyper": {k: list(v) for k, v in self.hyper.items()},
            "degenerate": list(self.degenerate),
            "seed": self.seed,
            "clock": self.clock,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunMetrics:
        metrics = {}
        for name, value, unit, kind, better, source, clock in data["metrics"]:
            metrics[str(name)] = Metric(
                str(name), float(value), str(unit), str(kind), str(better), str(source), str(clock)
            )
        return cls(
            metrics,
            {str(k): str(v) for k, v in data["stages"].items()},
            tuple(str(n) for n in data.get("not_available", ())),
            tuple(str(n) for n in data.get("notes", ())),
            contention=data.get("contention"),
            copy_ms=data.get("copy_ms"),
            hyper={str(k): (str(v[0]), str(v[1])) for k, v in data.get("hyper", {}).items()},
            degenerate=tuple(str(d) for d in data.get("degenerate", ())),
            seed=data.get("seed"),
            clock=_clock_of(data),  # a file in the run folder: only the two known values
        )


def median_of(values: Iterable[float | None]) -> float | None:
    """The median of the values that are there, to 3 decimals; None when none is."""
    present = [v for v in values if v is not None]
    return round(statistics.median(present), 3) if present else None


def joint_clock(values: Iterable[State | None]) -> State | None:
    """The clock several runs were measured at: "free" if any was (its CPU times may be the slower ones),
    "held" if all were, None where none is known."""
    known = {v for v in values if v is not None}
    return "free" if "free" in known else ("held" if known else None)


def _median_metrics(runs: list[RunMetrics]) -> dict[str, Metric]:
    metrics: dict[str, Metric] = {}
    for name in dict.fromkeys(n for r in runs for n in r.metrics):
        seen = [r.metrics[name] for r in runs if name in r.metrics]
        last = seen[-1]
        value = statistics.median([m.value for m in seen])
        source = f"median of {len(seen)} runs; last {last.source}"
        metrics[name] = Metric(name, value, last.unit, last.kind, last.better, source, last.clock)
    return metrics


def _worst_stages(runs: list[RunMetrics]) -> dict[str, str]:
    stages: dict[str, str] = {}
    for r in runs:
        for stage, status in r.stages.items():
            if _RANK.get(status, 6) >= _RANK.get(stages.get(stage, "passed"), 6):
                stages[stage] = status
    return stages


def combine(runs: list[RunMetrics]) -> RunMetrics:
    """Several runs of one check (--repeat) as one: each metric's median over the runs that have it (its
    source says so), each stage's worst status, the median contention and copy time, every sign of
    degenerate outputs. Hyper-parameters and seed are the last run's."""
    if len(runs) == 1:
        return runs[0]
    return RunMetrics(
        _median_metrics(runs),
        _worst_stages(runs),
        tuple(dict.fromkeys(n for r in runs for n in r.not_available)),
        tuple(dict.fromkeys(n for r in runs for n in r.notes)),
        contention=median_of(r.contention for r in runs),
        copy_ms=median_of(r.copy_ms for r in runs),
        hyper=runs[-1].hyper,
        degenerate=tuple(dict.fromkeys(d for r in runs for d in r.degenerate)),
        seed=runs[-1].seed,
        clock=joint_clock(r.clock for r in runs),
    )


def log_file(record: RunRecord, repo: Path, rel: str) -> Path:
    """Where a log the run wrote at repo-relative `rel` is now: in the sandbox run folder after a sandboxed
    run (logs/ for the output folder, upper/ for the rest), else in the repo (in place, or inside the
    sandbox's view while the check runs)."""
    path = Path(rel)
    if path.is_absolute():
        return path
    raw = getattr(record, "sandbox", None)  # a fake record in a test may have none
    sb: dict[str, Any] = raw if isinstance(raw, dict) else {}
    folder = sb.get("folder")
    if sb.get("backend") == "overlay" and isinstance(folder, str):
        out = str(record.plan.output_dir or "").strip("/").removeprefix("./")
        norm = PurePosixPath(rel.removeprefix("./")).as_posix()
        if out and (norm == out or norm.startswith(out + "/")):
            stored = repo / folder / "logs" / norm[len(out) :].lstrip("/")
        else:
            stored = repo / folder / "upper" / norm
        if stored.is_file():
            return stored
    return repo / rel


def _parsed(path: Path) -> list[ParsedLine]:
    return [parse_line(text, no) for no, text in physical_lines(path)]


def _stage_of(step: Step) -> str:
    return str(getattr(step.stage, "value", step.stage))


def _eval_fields(lines: Iterable[ParsedLine]) -> dict[str, tuple[float, int]]:
    """The last value of each evaluation metric (a known metric key or a loss) over the eval lines."""
    found: dict[str, tuple[float, int]] = {}
    for p in lines:
        if not p.is_eval:
            continue
        for f in p.fields:
            key = f.key.lower()
            if key in METRIC_KEYS or key.endswith("loss"):
                found[f.key] = (f.value, p.line_no)
    return found


def _loss_metrics(iters: list[ParsedLine], where: str, out: dict[str, Metric]) -> None:
    """The loss's first, last and lowest value, and its mean over each window of the iteration lines."""
    losses = [(p.loss(), p.line_no) for p in iters]
    values = [(f.value, no) for f, no in losses if f is not None]
    if not values:
        return
    first, last = values[0], values[-1]
    out["train.loss.first"] = Metric("train.loss.first", first[0], "", EFFECT, NEITHER, f"{where}:{first[1]}")
    out["train.loss.last"] = Metric("train.loss.last", last[0], "", EFFECT, LOWER, f"{where}:{last[1]}")
    finite = [v for v, _ in values if math.isfinite(v)]
    low = min(finite) if finite else math.nan
    out["train.loss.min"] = Metric("train.loss.min", low, "", EFFECT, LOWER, where)
    if len(values) >= LOSS_WINDOWS:
        for i in range(LOSS_WINDOWS):
            chunk = values[i * len(values) // LOSS_WINDOWS : (i + 1) * len(values) // LOSS_WINDOWS]
            name = f"train.loss.window{i + 1}of{LOSS_WINDOWS}"
            span = f"{where}:{chunk[0][1]}-{chunk[-1][1]}"
            out[name] = Metric(name, _mean([v for v, _ in chunk]), "", EFFECT, LOWER, span)


def _mean(values: list[float]) -> float:
    """The mean; nan for a window holding both +inf and -inf (a diverged log), which has none."""
    try:
        return statistics.fmean(values)
    except ValueError:
        return math.nan


def _ips_metric(iters: list[ParsedLine], where: str, out: dict[str, Metric]) -> None:
    """The median throughput over the iteration lines (one ips field a line)."""
    ips: list[float] = []
    unit = ""
    for p in iters[1:]:  # the first line carries start-up (reader warm-up, lazy init)
        for f in p.fields:
            if _IPS_KEY.search(f.key) and math.isfinite(f.value):
                ips.append(f.value)
                unit = unit or (f.unit or "")
                break
    if ips:
        out["train.avg_ips"] = Metric(
            "train.avg_ips",
            statistics.median(ips),
            unit,
            PERFORMANCE,
            HIGHER,
            f"{where} ({len(ips)} lines)",
            WALL,
        )


def _train_metrics(lines: list[ParsedLine], where: str, out: dict[str, Metric]) -> None:
    iters = [p for p in lines if p.is_iteration]
    _loss_metrics(iters, where, out)
    _ips_metric(iters, where, out)
    for key, (value, no) in _eval_fields(lines).items():
        name = f"train.eval.{key}"
        better = LOWER if key.lower().endswith("loss") else HIGHER
        out[name] = Metric(name, value, "", EFFECT, better, f"{where}:{no}")


def _label(step_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", step_id.rsplit("/", 1)[-1]).strip("_") or "engine"


def _log_metrics(stage: str, lines: list[ParsedLine], rel: str, step_id: str, out: dict[str, Metric]) -> None:
    """The metrics one passed step's log shows: training curves, eval fields, inference latencies."""
    if stage == "train":
        _train_metrics(lines, rel, out)
    elif stage == "eval":
        for key, (value, no) in _eval_fields(lines).items():
            better = LOWER if key.lower().endswith("loss") else HIGHER
            out[f"eval.{key}"] = Metric(f"eval.{key}", value, "", EFFECT, better, f"{rel}:{no}")
    elif stage == "infer":
        label = _label(step_id)
        for p in lines:
            for f in p.fields:
                m = _LATENCY_KEY.match(f.key)
                if m and math.isfinite(f.value):
                    name = f"infer.{label}.{m.group('name').lower()}_ms"
                    out[name] = Metric(name, f.value, "ms", PERFORMANCE, LOWER, f"{rel}:{p.line_no}", WALL)


def _resource_metrics(
    rss: list[int],
    cpu_time: float,
    wall: float,
    gpu_mem: list[int],
    gpu_util: list[float],
    out: dict[str, Metric],
) -> list[str]:
    """The run record's resource metrics into `out`; returns those that do not apply (no GPU measured)."""
    na: list[str] = []
    if rss:
        out["resources.peak_rss_mb"] = Metric(
            "resources.peak_rss_mb", max(rss) / 2**20, "MiB", RESOURCE, LOWER, "run record"
        )
    if wall > 0:
        out["resources.mean_cpu_percent"] = Metric(
            "resources.mean_cpu_percent", 100.0 * cpu_time / wall, "%", RESOURCE, NEITHER, "run record", WALL
        )
    if gpu_mem:
        out["resources.peak_gpu_mem_mb"] = Metric(
            "resources.peak_gpu_mem_mb", max(gpu_mem) / 2**20, "MiB", RESOURCE, LOWER, "run record"
        )
    else:
        na.append("resources.peak_gpu_mem_mb")
    if gpu_util:
        out["resources.mean_gpu_util_percent"] = Metric(
            "resources.mean_gpu_util_percent",
            statistics.fmean(gpu_util),
            "%",
            RESOURCE,
            NEITHER,
            "run record",
        )
    else:
        na.append("resources.mean_gpu_util_percent")
    return na


@dataclass
class _Stage:
    """What the steps of one stage that ran add up to."""

    status: str = ""  # worst status of the steps that ran ("" while none did)
    wall: float = 0.0
    cpu: float | None = 0.0  # None once a step's CPU time is unknown
    ran: int = 0

    def add(self, status: str, result: StepResult | None) -> None:
        if not self.status or self.status == "skipped" or _RANK.get(status, 6) > _RANK.get(self.status, 6):
            self.status = status
        if status != "passed" or result is None:
            return
        self.ran += 1
        self.wall += result.duration_s or 0.0
        cpu = result.resources.cpu_time_s
        self.cpu = None if cpu is None or self.cpu is None else self.cpu + cpu


@dataclass
class _Resources:
    """The run record's resource figures over the steps that passed."""

    rss: list[int] = field(default_factory=list)
    process_rss: list[int] = field(default_factory=list)
    gpu_mem: list[int] = field(default_factory=list)
    gpu_util: list[float] = field(default_factory=list)
    cpu_time: float = 0.0
    wall: float = 0.0
    sched_run: float = 0.0
    sched_wait: float = 0.0
    copies: list[float] = field(default_factory=list)  # each step's probe median, once per probe it took

    def add(self, result: StepResult) -> None:
        res = result.resources
        if res.peak_rss_bytes:
            self.rss.append(res.peak_rss_bytes)
        if res.peak_process_rss_bytes:
            self.process_rss.append(res.peak_process_rss_bytes)
        if res.peak_gpu_mem_bytes is not None:
            self.gpu_mem.append(res.peak_gpu_mem_bytes)
        if res.mean_gpu_util_percent is not None:
            self.gpu_util.append(res.mean_gpu_util_percent)
        if res.cpu_time_s is not None and result.duration_s:
            self.cpu_time += res.cpu_time_s
            self.wall += result.duration_s
        if res.sched_run_s and res.sched_wait_s is not None:
            self.sched_run += res.sched_run_s
            self.sched_wait += res.sched_wait_s
        if res.copy_probe_ms is not None and res.copy_probes:
            self.copies.extend([res.copy_probe_ms] * res.copy_probes)

    @property
    def copy_ms(self) -> float | None:
        return median_of(self.copies)

    @property
    def contention(self) -> float | None:
        return round(self.sched_wait / self.sched_run, 3) if self.sched_run > 0 else None


_RANK = {"passed": 0, "skipped": 1, "not run": 2, "blocked": 3, "interrupted": 4, "timeout": 5, "failed": 6}


def _not_applicable(result: StepResult) -> bool:
    """A step skipped because it does not apply on this machine (or to this run): it says nothing about the
    stage (a 2-GPU launch on a CPU run)."""
    return str(result.status.value) == "skipped" and bool(result.reason)


def _stage_metrics(per_stage: dict[str, _Stage], out: dict[str, Metric]) -> dict[str, str]:
    """Each stage's status, and the wall and CPU time of each stage whose steps that ran all passed."""
    stages: dict[str, str] = {}
    for stage, st in per_stage.items():
        stages[stage] = st.status or "not run"
        if st.status != "passed" or not st.ran:
            continue
        name = f"stage.{stage}.time_s"
        out[name] = Metric(name, st.wall, "s", PERFORMANCE, LOWER, "run record", WALL)
        if st.cpu is not None:
            name = f"stage.{stage}.cpu_s"
            out[name] = Metric(name, st.cpu, "s", PERFORMANCE, LOWER, "run record", CPU)
    return stages


def extract(record: RunRecord, repo: Path) -> RunMetrics:
    """Every metric the run left. Never raises on a missing or unreadable log: that metric is just absent."""
    from tipc.execute.seeding import seed_of

    out: dict[str, Metric] = {}
    per_stage: dict[str, _Stage] = {}
    notes: list[str] = []
    resources = _Resources()
    degenerate: list[str] = []
    train_logs: list[tuple[str, list[ParsedLine]]] = []
    train_argv: tuple[str, ...] = ()
    for step in record.plan.steps:
        stage = _stage_of(step)
        if stage not in _STAGES:
            continue
        result = record.result(step.id)
        st = per_stage.setdefault(stage, _Stage())
        if result is not None and _not_applicable(result):
            st.status = st.status or "skipped"
            continue
        status = "not run" if result is None else str(result.status.value)
        st.add(status, result)
        if result is None or status != "passed":
            continue
        resources.add(result)
        if stage == "train" and not train_argv:
            train_argv = tuple(result.argv or step.argv)
        parsed = _step_log(record, repo, step, result, notes)
        if parsed is None:
            continue
        rel, lines = parsed
        _log_metrics(stage, lines, rel, step.id, out)
        if stage == "train":
            train_logs.append((rel, lines))
        degenerate.extend(degenerate_signs(stage, lines, rel))
    stages = _stage_metrics(per_stage, out)
    r = resources
    na = _resource_metrics(r.rss, r.cpu_time, r.wall, r.gpu_mem, r.gpu_util, out)
    if r.process_rss:
        out["resources.peak_process_rss_mb"] = Metric(
            "resources.peak_process_rss_mb", max(r.process_rss) / 2**20, "MiB", RESOURCE, LOWER, "run record"
        )
    return RunMetrics(
        out,
        stages,
        tuple(na),
        tuple(notes),
        contention=r.contention,
        copy_ms=r.copy_ms,
        hyper=hyperparameters(train_argv, train_logs),
        degenerate=tuple(dict.fromkeys(degenerate)),
        seed=seed_of(record.results),
        clock=_clock_of(record.host),
    )


def _clock_of(host: Mapping[str, object]) -> State | None:
    value = host.get("clock")
    return "held" if value == "held" else "free" if value == "free" else None


def _step_log(
    record: RunRecord, repo: Path, step: Step, result: StepResult, notes: list[str]
) -> tuple[str, list[ParsedLine]] | None:
    """The parsed log of a passed step, with its repo-relative path; None (and a note) when it is missing."""
    rel = result.log or step.log
    if not rel:
        return None
    path = log_file(record, repo, rel)
    if not path.is_file():
        notes.append(f"{step.id}: its log {rel} is missing")
        return None
    return rel, _parsed(path)


# ---- training hyper-parameters (seed 000: every setting but the network should be known to the framework)

_NAMESPACE = re.compile(r"\bNamespace\((?P<body>.*)\)\s*$")
_MAX_NAMESPACE = 20000  # characters: a longer line is not parsed
_LOGGED_LR = ("lr", "learning_rate")


def _namespace(text: str) -> dict[str, str] | None:
    """The keyword values of an argparse `Namespace(...)` dump, as text; None for anything else."""
    m = _NAMESPACE.search(text)
    if m is None or len(text) > _MAX_NAMESPACE:
        return None
    try:
        call = ast.parse("f(" + m.group("body") + ")", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(call, ast.Call):
        return None
    out: dict[str, str] = {}
    for kw in call.keywords:
        if kw.arg is None:
            continue
        try:
            value = ast.literal_eval(kw.value)
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            value = ast.unparse(kw.value)
        out[kw.arg] = str(value)[:200]
    return out


def hyperparameters(
    argv: tuple[str, ...], logs: list[tuple[str, list[ParsedLine]]]
) -> dict[str, tuple[str, str]]:
    """The training settings a run used: the train command's options, then (winning, as what really ran)
    the `Namespace(...)` the script printed, and the learning rate its first iteration line logged."""
    out: dict[str, tuple[str, str]] = {}
    words = list(argv)
    if len(words) >= 3 and words[-2] == "-c":  # a shell step: sh -c "python train.py ..."
        try:
            words = shlex.split(words[-1])
        except ValueError:
            words = words[-1].split()
    for key, value in argv_options(tuple(words)):
        out[norm_key(key)] = (value, "train command")
    for rel, lines in logs:
        for p in lines:
            found = _namespace(p.text)
            if found:
                for key, value in found.items():
                    out[norm_key(key)] = (value, f"{rel}:{p.line_no}")
                break
        first = next((p for p in lines if p.is_iteration), None)
        if first is not None:
            for f in first.fields:
                if f.key.lower() in _LOGGED_LR and math.isfinite(f.value):
                    out["logged_lr"] = (f"{f.value:g}", f"{rel}:{first.line_no}")
                    break
    return out


# ---- degenerate outputs: what makes an improvement hollow

_FLAT_LOSSES = 3  # this many last logged losses identical: the loss no longer moves
_PROB_KEYS = re.compile(r"^(prob|probs|probability|score|scores|confidence)$", re.IGNORECASE)
_UNIFORM_REL = 1e-5


def _uniform_over(value: float) -> int | None:
    """K when `value` is 1/K (a probability spread evenly over K classes), else None."""
    if not 0 < value <= 0.5:
        return None
    k = round(1.0 / value)
    return k if k >= 2 and abs(value * k - 1.0) <= _UNIFORM_REL else None


def degenerate_signs(stage: str, lines: list[ParsedLine], rel: str) -> list[str]:
    """Signs in one step's log that the model's outputs are degenerate, each with its line."""
    out: list[str] = []
    if stage == "train":
        losses = [(f.value, p.line_no) for p in lines if p.is_iteration and (f := p.loss()) is not None]
        bad = next(((v, no) for v, no in losses if not math.isfinite(v)), None)
        if bad is not None:
            out.append(f"the training loss is {bad[0]} at {rel}:{bad[1]}")
        tail = losses[-_FLAT_LOSSES:]
        if len(losses) > _FLAT_LOSSES and len({v for v, _ in tail}) == 1 and math.isfinite(tail[0][0]):
            out.append(
                f"the training loss is constant at {tail[0][0]:g} over the last {_FLAT_LOSSES} logged "
                f"iterations ({rel}:{tail[0][1]}-{tail[-1][1]}): the network no longer learns"
            )
    for p in lines:
        for f in p.fields:
            k = _uniform_over(f.value) if _PROB_KEYS.match(f.key) else None
            if k is not None:
                out.append(
                    f"{f.key} {f.value:g} = 1/{k} at {rel}:{p.line_no}: the output is uniform over {k} "
                    "classes (a dead network predicts nothing)"
                )
                break
    return out
