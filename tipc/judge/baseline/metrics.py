"""The metrics of one run, taken from its run record and the logs it names.

Names are dotted and stable, so a baseline file and the history database can key on them:
- effect: `train.loss.first|last|min`, `train.loss.window<i>of<w>` (mean loss over the i-th of w equal
  windows of the iteration lines), `train.eval.<key>` (the last evaluation line the training log prints),
  `eval.<key>` (the eval stage's log);
- performance: `train.avg_ips` (median of the per-line throughput, first line dropped as warm-up),
  `stage.<stage>.time_s` (wall time of the stage's steps; only when all of them passed),
  `infer.<engine>.<field>_ms` (latencies an inference log prints, e.g. `inference_time(ms)`);
- resources: `resources.peak_rss_mb`, `resources.mean_cpu_percent`, and with a GPU
  `resources.peak_gpu_mem_mb`, `resources.mean_gpu_util_percent` (absent, listed as n/a, without one).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from tipc.judge.checks._common import physical_lines
from tipc.judge.checks.logparse import METRIC_KEYS, ParsedLine, parse_line

EFFECT, PERFORMANCE, RESOURCE = "effect", "performance", "resource"
LOWER, HIGHER, NEITHER = "lower", "higher", "neither"  # which way is better
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


@dataclass(frozen=True)
class RunMetrics:
    """What one run measured: its metrics, the stages that ran and passed, and what is n/a on this machine."""

    metrics: dict[str, Metric]
    stages: dict[str, str]  # stage -> "passed" | "failed" | ... (worst status of its steps)
    not_available: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


def log_file(record: Any, repo: Path, rel: str) -> Path:
    """Where a log the run wrote at repo-relative `rel` is now: in the sandbox run folder after a sandboxed
    run (logs/ for the output folder, upper/ for the rest), else in the repo (in place, or inside the
    sandbox's view while the check runs)."""
    path = Path(rel)
    if path.is_absolute():
        return path
    sb = record.sandbox if isinstance(getattr(record, "sandbox", None), dict) else {}
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


def _stage_of(step: Any) -> str:
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
            "train.avg_ips", statistics.median(ips), unit, PERFORMANCE, HIGHER, f"{where} ({len(ips)} lines)"
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
                    out[name] = Metric(name, f.value, "ms", PERFORMANCE, LOWER, f"{rel}:{p.line_no}")


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
            "resources.mean_cpu_percent", 100.0 * cpu_time / wall, "%", RESOURCE, NEITHER, "run record"
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


def extract(record: Any, repo: Path) -> RunMetrics:
    """Every metric the run left. Never raises on a missing or unreadable log: that metric is just absent."""
    out: dict[str, Metric] = {}
    stages: dict[str, str] = {}
    notes: list[str] = []
    times: dict[str, float] = {}
    all_passed: dict[str, bool] = {}
    rss: list[int] = []
    gpu_mem: list[int] = []
    gpu_util: list[float] = []
    cpu_time = wall = 0.0
    for step in record.plan.steps:
        stage = _stage_of(step)
        if stage not in _STAGES:
            continue
        result = record.result(step.id)
        status = "not run" if result is None else str(result.status.value)
        if stages.get(stage) in (None, "passed", "skipped"):
            stages[stage] = status
        passed = result is not None and status == "passed"
        all_passed[stage] = all_passed.get(stage, True) and passed
        if not passed:
            continue
        times[stage] = times.get(stage, 0.0) + (result.duration_s or 0.0)
        res = result.resources
        if res.peak_rss_bytes:
            rss.append(res.peak_rss_bytes)
        if res.peak_gpu_mem_bytes is not None:
            gpu_mem.append(res.peak_gpu_mem_bytes)
        if res.mean_gpu_util_percent is not None:
            gpu_util.append(res.mean_gpu_util_percent)
        if res.cpu_time_s is not None and result.duration_s:
            cpu_time += res.cpu_time_s
            wall += result.duration_s
        rel = result.log or step.log
        if not rel:
            continue
        path = log_file(record, repo, rel)
        if not path.is_file():
            notes.append(f"{step.id}: its log {rel} is missing")
            continue
        _log_metrics(stage, _parsed(path), rel, step.id, out)
    for stage, total in times.items():
        if all_passed.get(stage):
            name = f"stage.{stage}.time_s"
            out[name] = Metric(name, total, "s", PERFORMANCE, LOWER, "run record")
    na = _resource_metrics(rss, cpu_time, wall, gpu_mem, gpu_util, out)
    return RunMetrics(out, stages, tuple(na), tuple(notes))
