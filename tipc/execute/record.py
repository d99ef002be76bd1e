"""The run record: what happened when a plan ran. JSON with a versioned schema.

Written by the runner to `<repo>/<record_location(plan)>`; read by `tipc check`, `--rerun-failed` and resume.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from tipc.core.causes import Cause
from tipc.core.errors import ConfigError
from tipc.core.fs import atomic_write_text
from tipc.core.steps import Plan, Status

RECORD_SCHEMA = "tipc.run-record/1"
RECORD_FILENAME = "tipc_run.json"
RUNS_DIRNAME = "tipc_runs"  # per config and mode records when output_dir is shared (see record_location)


def record_location(plan: Plan) -> Path:
    """Where `plan`'s run record lives, relative to `plan.repo`: the one place every reader and writer asks.

    `<output_dir>/tipc_run.json` when output_dir already names the model and the mode (most dialects'
    `test_tipc/output/<model>/<mode>`). The template dialect logs every model and mode to the shared
    `test_tipc/output`, so there the record gets its own folder,
    `<output_dir>/tipc_runs/<model>/<config file stem>/<mode>/tipc_run.json`: the model name as well as the
    stem because every template config is called train_infer_python.txt.
    """
    out = PurePosixPath(plan.output_dir or ".")
    if _names_model_and_mode(out.parts, plan.model_name, plan.mode):
        return Path(out, RECORD_FILENAME)
    stem = PurePosixPath(plan.config_path).stem
    return Path(
        out,
        RUNS_DIRNAME,
        _safe_name(plan.model_name),
        _safe_name(stem),
        _safe_name(plan.mode),
        RECORD_FILENAME,
    )


def _names_model_and_mode(parts: tuple[str, ...], model: str, mode: str) -> bool:
    model_parts = PurePosixPath(model).parts if model.strip() else ()
    if not model_parts or not mode:
        return False
    width = len(model_parts)
    return any(
        parts[i : i + width] == model_parts and mode in parts[i + width :] for i in range(len(parts) - width)
    )


def _safe_name(text: str) -> str:
    """One path component: no separators, no `..`, nothing a shell or another OS would trip over."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", text).strip("._") or "_"


@dataclass(frozen=True)
class ResourceSample:
    t: float  # seconds since the step started
    rss_bytes: int
    cpu_percent: float
    gpu_mem_bytes: int | None = None
    gpu_util_percent: float | None = None


@dataclass(frozen=True)
class Resources:
    peak_rss_bytes: int | None = None
    cpu_time_s: float | None = None
    # GPU figures are None ("n/a") when there is no GPU or no NVML.
    peak_gpu_mem_bytes: int | None = None
    mean_gpu_util_percent: float | None = None
    samples: tuple[ResourceSample, ...] = ()
    # CPU time tipc's own sampler thread spent watching this step (evidence for the <= 1% overhead budget).
    monitor_cpu_s: float | None = None
    # The step's processes' main threads: time on a CPU and time runnable but waiting for one (schedstat);
    # their ratio is how much the step competed with other work (model CI's load, tipc.execute.monitor).
    sched_run_s: float | None = None
    sched_wait_s: float | None = None
    # The largest high-water RSS the kernel kept for one of the step's processes (VmHWM): a figure sampling
    # cannot miss or blur (tipc.execute.monitor).
    peak_process_rss_bytes: int | None = None
    # The median CPU time of the sampler's fixed memory copy while the step ran, and how many were timed:
    # slower when other work competes for memory bandwidth, which CPU time also feels (tipc.execute.monitor).
    copy_probe_ms: float | None = None
    copy_probes: int = 0

    def to_json(self) -> dict[str, object]:
        return {
            "peak_rss_bytes": self.peak_rss_bytes,
            "cpu_time_s": self.cpu_time_s,
            "peak_gpu_mem_bytes": self.peak_gpu_mem_bytes if self.peak_gpu_mem_bytes is not None else "n/a",
            "mean_gpu_util_percent": (
                self.mean_gpu_util_percent if self.mean_gpu_util_percent is not None else "n/a"
            ),
            "samples": [
                [s.t, s.rss_bytes, s.cpu_percent, s.gpu_mem_bytes, s.gpu_util_percent] for s in self.samples
            ],
            "monitor_cpu_s": self.monitor_cpu_s,
            "sched_run_s": self.sched_run_s,
            "sched_wait_s": self.sched_wait_s,
            "peak_process_rss_bytes": self.peak_process_rss_bytes,
            "copy_probe_ms": self.copy_probe_ms,
            "copy_probes": self.copy_probes,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Resources:
        def opt(v: Any) -> Any:
            return None if v == "n/a" else v

        return cls(
            peak_rss_bytes=data.get("peak_rss_bytes"),
            cpu_time_s=data.get("cpu_time_s"),
            peak_gpu_mem_bytes=opt(data.get("peak_gpu_mem_bytes")),
            mean_gpu_util_percent=opt(data.get("mean_gpu_util_percent")),
            samples=tuple(ResourceSample(*row) for row in data.get("samples", ())),
            monitor_cpu_s=data.get("monitor_cpu_s"),
            sched_run_s=data.get("sched_run_s"),
            sched_wait_s=data.get("sched_wait_s"),
            peak_process_rss_bytes=data.get("peak_process_rss_bytes"),
            copy_probe_ms=data.get("copy_probe_ms"),
            copy_probes=int(data.get("copy_probes") or 0),
        )


@dataclass(frozen=True)
class StepResult:
    step_id: str
    status: Status
    exit_code: int | None = None  # None when the step never ran (blocked/skipped)
    started: float | None = None  # unix time
    ended: float | None = None
    log: str | None = None  # repo-relative
    reason: str = ""  # why blocked/skipped/failed, in words
    argv: tuple[str, ...] = ()  # what actually ran (after --python and friends)
    env_delta: tuple[tuple[str, str | None], ...] = ()  # None value = unset
    resources: Resources = field(default_factory=Resources)
    pid: int | None = None  # process(-group) id of the step's leader, for audits that nothing was left alive
    reused: bool = False  # taken from an earlier record (--rerun-failed / --resume), not run this time
    causes: tuple[Cause, ...] = ()  # plain causes of a failure, root cause first (found by tipc.judge.causes)
    log_dropped: int = 0  # bytes of output its capped log left out (the log says where)

    @property
    def duration_s(self) -> float | None:
        if self.started is None or self.ended is None:
            return None
        return self.ended - self.started

    def to_json(self) -> dict[str, object]:
        return {
            "step_id": self.step_id,
            "status": self.status.value,
            "exit_code": self.exit_code,
            "started": self.started,
            "ended": self.ended,
            "duration_s": self.duration_s,
            "log": self.log,
            "reason": self.reason,
            "argv": list(self.argv),
            "env_delta": {k: v for k, v in self.env_delta},
            "resources": self.resources.to_json(),
            "pid": self.pid,
            "reused": self.reused,
            "causes": [c.to_json() for c in self.causes],
            "log_dropped_bytes": self.log_dropped,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StepResult:
        return cls(
            step_id=data["step_id"],
            status=Status(data["status"]),
            exit_code=data.get("exit_code"),
            started=data.get("started"),
            ended=data.get("ended"),
            log=data.get("log"),
            reason=data.get("reason", ""),
            argv=tuple(data.get("argv", ())),
            env_delta=tuple(data.get("env_delta", {}).items()),
            resources=Resources.from_json(data.get("resources", {})),
            pid=data.get("pid"),
            reused=bool(data.get("reused", False)),
            causes=tuple(Cause.from_json(c) for c in data.get("causes", ())),
            log_dropped=int(data.get("log_dropped_bytes", 0) or 0),
        )


@dataclass(frozen=True)
class RunRecord:
    plan: Plan
    results: tuple[StepResult, ...]
    started: float
    ended: float | None = None
    tipc_version: str = ""
    paddle_version: str | None = None  # None when paddle is not importable by the run's python
    git_commit: str | None = None  # of the user's repo
    python: str = ""  # the interpreter that ran the steps
    host: dict[str, object] = field(default_factory=dict)
    schema: str = RECORD_SCHEMA
    notes: tuple[str, ...] = ()  # things the user must know about this run (interpreter substituted, ...)
    # tipc.execute.envinfo.EnvInfo.to_json() of the run's interpreter
    environment: dict[str, object] | None = None
    # How the run was kept off the user's repo (tipc.execute.sandbox.Session.to_json), with every file it
    # created,
    # changed or deleted in the repo's tree; None for runs made before the sandbox existed.
    sandbox: dict[str, object] | None = None

    def result(self, step_id: str) -> StepResult | None:
        for r in self.results:
            if r.step_id == step_id:
                return r
        return None

    @property
    def passed(self) -> bool:
        return all(r.status in (Status.PASSED, Status.SKIPPED) for r in self.results)

    def with_result(self, result: StepResult) -> RunRecord:
        kept = tuple(r for r in self.results if r.step_id != result.step_id)
        return replace(self, results=(*kept, result))

    def to_json(self) -> dict[str, object]:
        return {
            **self._head_json(),
            "plan": self.plan.to_json(),
            "results": [r.to_json() for r in self.results],
        }

    def _head_json(self) -> dict[str, object]:
        """Everything but the plan and the results (which RecordWriter encodes once and reuses)."""
        return {
            "schema": self.schema,
            "tipc_version": self.tipc_version,
            "started": self.started,
            "ended": self.ended,
            "paddle_version": self.paddle_version,
            "git_commit": self.git_commit,
            "python": self.python,
            "host": self.host,
            "notes": list(self.notes),
            "environment": self.environment,
            "sandbox": self.sandbox,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunRecord:
        return cls(
            schema=data["schema"],
            tipc_version=data.get("tipc_version", ""),
            started=data["started"],
            ended=data.get("ended"),
            paddle_version=data.get("paddle_version"),
            git_commit=data.get("git_commit"),
            python=data.get("python", ""),
            host=data.get("host", {}),
            notes=tuple(data.get("notes", ())),
            environment=env if isinstance(env := data.get("environment"), dict) else None,
            sandbox=data.get("sandbox"),
            plan=Plan.from_json(data["plan"]),
            results=tuple(StepResult.from_json(r) for r in data["results"]),
        )

    def write(self, path: Path) -> None:
        RecordWriter(path).write(self)


def _nested(text: str, depth: int) -> str:
    """`text` (json.dumps(..., indent=2) output) re-indented to sit `depth` levels deep in a document."""
    return text.replace("\n", "\n" + "  " * depth)


class RecordWriter:
    """Writes successive versions of one run's record to `path`, each atomically.

    The runner rewrites the record after every step. The plan and each finished result do not change once
    written, so their JSON text is encoded once and reused; the output is byte for byte what
    `json.dumps(record.to_json(), indent=2)` gives.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._plan: Plan | None = None
        self._plan_text = ""
        self._results: dict[int, tuple[StepResult, str]] = {}  # id -> (the object, to keep the id, its text)

    def dumps(self, record: RunRecord) -> str:
        if record.plan is not self._plan:
            self._plan = record.plan
            self._plan_text = _nested(json.dumps(record.plan.to_json(), indent=2), 1)
        cache: dict[int, tuple[StepResult, str]] = {}
        for result in record.results:
            hit = self._results.get(id(result))
            if hit is None or hit[0] is not result:
                hit = (result, _nested(json.dumps(result.to_json(), indent=2), 2))
            cache[id(result)] = hit
        self._results = cache
        items = [cache[id(r)][1] for r in record.results]
        results = "[\n    " + ",\n    ".join(items) + "\n  ]" if items else "[]"
        head = json.dumps(record._head_json(), indent=2)  # never empty: it always holds the schema
        return head[: -len("\n}")] + ',\n  "plan": ' + self._plan_text + ',\n  "results": ' + results + "\n}"

    def write(self, record: RunRecord) -> None:
        atomic_write_text(self.path, self.dumps(record))  # an interrupted write never leaves half a record


def load_record(path: Path) -> RunRecord:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(str(path), exc.lineno, f"cannot read run record: invalid JSON: {exc.msg}") from None
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: not UTF-8
        raise ConfigError(str(path), None, f"cannot read run record: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != RECORD_SCHEMA:
        raise ConfigError(str(path), None, f"not a run record of schema {RECORD_SCHEMA}")
    try:
        return RunRecord.from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        # A hand-edited or truncated record: every field is read by shape, so any of these means "malformed".
        raise ConfigError(str(path), None, f"malformed run record: {exc!r}") from None
