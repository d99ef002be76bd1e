"""The baseline file: one reviewable YAML document per model, config, mode and machine class.

Path: `<baseline dir>/<model>/<config stem>/<mode>/<machine class>.yaml` (default dir `test_tipc/baselines`),
so a CPU baseline never judges a GPU run. Each metric keeps n, mean, std, min, max, the samples and its unit,
the operator and the derived margin with its origin; a human may add `margin:` overrides (kept `margin_from:
explicit`), switch `op:` or set `active: false`, and re-recording keeps those choices. `stable` (the
recorder's admission gate: a metric too noisy when recorded is not judged) and `deterministic` (identical in
every recorded run: judged exactly) are recomputed at every recording.
"""

from __future__ import annotations

import datetime as _dt
import functools
import getpass
import hashlib
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.core.errors import ConfigError
from tipc.judge.baseline import stats
from tipc.judge.baseline.metrics import HIGHER, LOWER, Metric, RunMetrics, joint_clock, median_of

if TYPE_CHECKING:
    from tipc.core.yamlschema import Map
    from tipc.execute.record import RunRecord

SCHEMA = "tipc.baseline/1"
DEFAULT_DIR = "test_tipc/baselines"


def baseline_dir(repo: Path, given: str | None) -> Path:
    """Where the baselines of `repo` live: `given` (a --baseline-dir or --baseline DIR), else the default."""
    return Path(given).resolve() if given else repo / DEFAULT_DIR


OPS = ("==", "!=", "<=", "<", ">=", ">")
DEFAULT_OP = {LOWER: "<=", HIGHER: ">="}


@dataclass
class MetricBaseline:
    name: str
    kind: str
    unit: str
    better: str
    op: str
    summary: stats.Summary
    samples: list[float]
    margin: float
    margin_from: str
    active: bool = True
    description: str = ""
    clock: str = ""  # "wall" | "cpu" for timings (tipc.judge.baseline.metrics)
    stable: bool | None = None  # None: from the summary

    @property
    def is_stable(self) -> bool:
        return self.summary.stable if self.stable is None else self.stable

    def margin_for(self, repeats: int) -> tuple[float, str]:
        """The margin for the median of `repeats` runs: the file's for one run or an explicit one, else the
        prediction interval re-derived for that many."""
        if repeats <= 1 or self.margin_from == "explicit":
            return self.margin, self.margin_from
        return stats.derive_margin(self.summary, self.kind, self.unit, repeats)

    def to_yaml(self) -> dict[str, object]:
        s = self.summary
        out: dict[str, object] = {
            "kind": self.kind,
            "unit": self.unit,
            "better": self.better,
            "op": self.op,
            **({"clock": self.clock} if self.clock else {}),
            "n": s.n,
            "mean": _num(s.mean),
            "std": _num(s.std),
            "min": _num(s.min),
            "max": _num(s.max),
            "median": _num(s.median),
            "robust_std": _num(s.robust_std),
            "samples": [_num(v) for v in self.samples],
            "margin": _num(self.margin),
            "margin_from": self.margin_from,
            "deterministic": s.identical,
            "stable": self.is_stable,
            "active": self.active,
        }
        if self.description:
            out["description"] = self.description
        return out


@dataclass
class Baseline:
    model: str
    config: str
    mode: str
    machine_class: str
    provenance: dict[str, object]
    metrics: dict[str, MetricBaseline]
    stages: list[str] = field(default_factory=list)
    not_available: list[str] = field(default_factory=list)
    path: Path | None = None

    def to_yaml(self) -> dict[str, object]:
        return {
            "schema": SCHEMA,
            "model": self.model,
            "config": self.config,
            "mode": str(self.mode),  # a plain str: YAML cannot dump a Mode
            "machine_class": self.machine_class,
            "tolerance_rule": (
                "reference = median; identical runs: exact (effect) or 2% (others); else a one-sided "
                f"prediction interval t(1-{stats.ALPHA:g}, n-1) x std x sqrt(1 + 1/n); unstable metrics "
                "(robust spread above 10%) are not judged; margin_from 'explicit' is a human's; see "
                "docs/model-ci.md"
            ),
            "stages": list(self.stages),
            "not_available": list(self.not_available),
            "provenance": self.provenance,
            "metrics": {name: m.to_yaml() for name, m in sorted(self.metrics.items())},
        }

    def dumps(self) -> str:
        import yaml

        return yaml.safe_dump(self.to_yaml(), sort_keys=False, allow_unicode=True, width=110)


def _num(v: float) -> float | str:
    if v != v or v in (float("inf"), float("-inf")):
        return str(v)
    return round(float(v), 6)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", text.strip()).strip("-.").lower() or "unknown"


def machine_class(env: Mapping[str, object] | None) -> str:
    """`cpu` without a GPU, else `gpu-<model of the first GPU>` (so an H100 baseline judges H100 runs)."""
    gpus = (env or {}).get("gpus")
    if isinstance(gpus, list) and gpus:
        return "gpu-" + _slug(str(gpus[0]))
    return "cpu"


def baseline_path(directory: Path, model: str, config: str, mode: str, machine: str) -> Path:
    return directory / _slug(model) / _slug(Path(config).stem) / _slug(mode) / f"{machine}.yaml"


def run_id(record: RunRecord) -> str:
    """A short stable id of one run: when it started and what it ran."""
    when = _dt.datetime.fromtimestamp(record.started, _dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    digest = hashlib.sha1(
        f"{record.started}|{record.plan.config_path}|{record.plan.mode}".encode()
    ).hexdigest()[:6]
    return f"{when}-{digest}"


def load_per_cpu() -> float | None:
    """This machine's 1-minute load average per CPU (None where the OS has none): how busy it was while the
    chain just ran. Timings taken under very different load are not comparable, and the judge says so."""
    import os

    try:
        return round(os.getloadavg()[0] / (os.cpu_count() or 1), 2)
    except (AttributeError, OSError):
        return None


def provenance(
    record: RunRecord, run_ids: list[str], load: float | None = None, run: RunMetrics | None = None
) -> dict[str, object]:
    env = record.environment or {}
    raw = env.get("packages")
    packages: dict[str, object] = raw if isinstance(raw, dict) else {}
    try:
        who = getpass.getuser()
    except (KeyError, OSError):
        who = "unknown"
    return {
        "recorded": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "recorded_by": f"{who}@{socket.gethostname()}",
        "repo_commit": record.git_commit,
        "paddle_version": env.get("paddle_version") or record.paddle_version,
        "paddle_commit": env.get("paddle_commit"),
        "python_version": env.get("python_version"),
        "packages": dict(sorted(packages.items())),
        "cpu_model": env.get("cpu_model"),
        "cpu_count": env.get("cpu_count"),
        "gpus": env.get("gpus"),
        "machine_class": machine_class(env),
        "tipc_version": record.tipc_version,
        "runs": run_ids,
        "load_per_cpu": load,
        "seed": run.seed if run is not None else None,
        "contention": run.contention if run is not None else None,
        "degenerate": list(run.degenerate) if run is not None else [],
        "hyperparameters": (
            {k: {"value": v, "from": src} for k, (v, src) in sorted(run.hyper.items())}
            if run is not None
            else {}
        ),
    }


def _metric_baseline(name: str, runs: list[RunMetrics], old: MetricBaseline | None) -> MetricBaseline:
    """One metric over the recorded runs; `old` (the previous file's) lends the human choices."""
    seen: list[Metric] = [r.metrics[name] for r in runs if name in r.metrics]
    samples = [m.value for m in seen]
    first = seen[0]
    summary = stats.summarise(samples)
    margin, origin = stats.derive_margin(summary, first.kind, first.unit)
    if len(seen) < len(runs):
        origin = f"{origin}; seen in {len(seen)} of {len(runs)} runs"
    mb = MetricBaseline(
        name=name,
        kind=first.kind,
        unit=first.unit,
        better=first.better,
        op=DEFAULT_OP.get(first.better, "=="),
        summary=summary,
        samples=samples,
        margin=margin,
        margin_from=origin,
        clock=first.clock,
        # a metric some runs lack is not stable, whatever its spread
        stable=summary.stable and len(seen) == len(runs),
    )
    if old is not None:
        mb.op, mb.active, mb.description = old.op, old.active, old.description
        if old.margin_from == "explicit":
            mb.margin, mb.margin_from = old.margin, "explicit"
    return mb


def build(
    record: RunRecord,
    runs: list[RunMetrics],
    run_ids: list[str],
    previous: Baseline | None = None,
    load: float | None = None,
) -> Baseline:
    """The baseline from `runs` (metrics of one chain run n times); `previous` lends the human choices."""
    names = sorted({name for r in runs for name in r.metrics})
    old = previous.metrics if previous is not None else {}
    metrics = {name: _metric_baseline(name, runs, old.get(name)) for name in names}
    stages = [s for s in runs[0].stages if all(r.stages.get(s) == "passed" for r in runs)]
    na = sorted({n for r in runs for n in r.not_available})
    env = record.environment or {}
    prov = provenance(record, run_ids, load, runs[-1])
    prov["contention"] = median_of(r.contention for r in runs)
    prov["contention_runs"] = [r.contention for r in runs if r.contention is not None]
    prov["copy_ms"] = median_of(r.copy_ms for r in runs)
    prov["copy_ms_runs"] = [r.copy_ms for r in runs if r.copy_ms is not None]
    prov["clock"] = joint_clock(r.clock for r in runs)
    return Baseline(
        model=record.plan.model_name,
        config=repo_relative(record.plan.config_path, record.plan.repo),
        mode=record.plan.mode,
        machine_class=machine_class(env),
        provenance=prov,
        metrics=metrics,
        stages=stages,
        not_available=na,
    )


def repo_relative(path: str, repo: str) -> str:
    try:
        return Path(path).relative_to(repo).as_posix()
    except ValueError:
        return path


@functools.cache
def _schema() -> Map:
    # tipc.core.yamlschema is imported on first use: `tipc --help` never reads a baseline.
    from tipc.core.yamlschema import Anything, Bool, Enum, Field, Int, Map, Num, Scalar, Seq

    number = Num(nonfinite=True)
    text = Field(Scalar())
    metric = Map(
        {
            "kind": text,
            "unit": text,
            "better": text,
            "op": Field(Enum(OPS), default="=="),
            "n": Field(Int(minimum=0), True),
            **{key: Field(number, True) for key in ("mean", "std", "min", "max")},
            "median": Field(number),
            "robust_std": Field(number),
            "samples": Field(Seq(number, nullable=True)),
            "margin": Field(Num(minimum=0, nonfinite=True), True),
            "margin_from": text,
            "clock": Field(Enum(("wall", "cpu", ""))),
            "deterministic": Field(Anything()),
            "stable": Field(Bool()),
            "active": Field(Bool(), default=True),
            "description": text,
        }
    )
    return Map(
        {
            "schema": Field(Enum((SCHEMA,)), identifies=True),
            **{key: text for key in ("model", "config", "mode", "machine_class", "tolerance_rule")},
            "stages": Field(Seq(Scalar(), nullable=True)),
            "not_available": Field(Seq(Scalar(), nullable=True)),
            "provenance": Field(Map(closed=False, nullable=True)),
            "metrics": Field(Map(values=metric, what="a mapping of metric names to their baselines"), True),
        },
        what=f"a baseline mapping (schema {SCHEMA})",
    )


def _text(value: object, default: str = "") -> str:
    return default if value is None else str(value)


def load(path: Path) -> Baseline:
    """Read a baseline file; a bad one is a ConfigError naming the file and the line."""
    from tipc.core.yamlschema import Document

    try:
        data = Document.from_bytes(path.read_bytes(), str(path)).conform(_schema())
    except OSError as exc:
        raise ConfigError(str(path), None, f"cannot read the baseline: {exc}") from None
    metrics: dict[str, MetricBaseline] = {}
    for name, m in data["metrics"].items():
        mean, std = float(m["mean"]), float(m["std"])
        metrics[name] = MetricBaseline(
            name=name,
            kind=_text(m.get("kind"), "performance"),
            unit=_text(m.get("unit")),
            better=_text(m.get("better"), "neither"),
            op=m["op"],
            summary=stats.Summary(
                m["n"],
                mean,
                std,
                float(m["min"]),
                float(m["max"]),
                float(m.get("median", mean)),
                float(m.get("robust_std", std)),
            ),
            samples=[float(v) for v in m.get("samples", [])],
            margin=float(m["margin"]),
            margin_from=_text(m.get("margin_from"), "explicit"),
            active=m["active"],
            description=_text(m.get("description")),
            clock=_text(m.get("clock")),
            stable=m.get("stable"),
        )
    return Baseline(
        model=_text(data.get("model")),
        config=_text(data.get("config")),
        mode=_text(data.get("mode")),
        machine_class=_text(data.get("machine_class")),
        provenance=data.get("provenance", {}),
        metrics=metrics,
        stages=[str(s) for s in data.get("stages", [])],
        not_available=[str(s) for s in data.get("not_available", [])],
        path=path,
    )
