"""Frozen values shared by the planner (pure) and the runner (effectful).

`plan()` returns a `Plan`; the runner executes its `Step`s and records a `StepResult` per step
(see `tipc.execute.record`). Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from tipc.core.findings import Finding


class Mode(str, Enum):
    """A TIPC mode (the scripts' $MODE). A str enum (StrEnum needs Python 3.11): equal to its text and
    printed as it, so paths, messages and records spell it as the scripts do."""

    LITE_TRAIN_LITE_INFER = "lite_train_lite_infer"
    LITE_TRAIN_WHOLE_INFER = "lite_train_whole_infer"
    WHOLE_TRAIN_WHOLE_INFER = "whole_train_whole_infer"
    WHOLE_INFER = "whole_infer"
    KLQUANT_WHOLE_INFER = "klquant_whole_infer"
    SERVING_INFER = "serving_infer"  # the serving chain's one mode (test_serving*.sh)
    DOCUMENTED = "documented"  # the plan of what a repo documents (tipc.planning.documented); no --mode

    def __str__(self) -> str:  # `lite_train_lite_infer`, not `Mode.LITE_TRAIN_LITE_INFER`, in f-strings too
        return str.__str__(self)


# The train/infer chain's modes (test_train_inference_python.sh), the first the default.
MODES: tuple[Mode, ...] = (
    Mode.LITE_TRAIN_LITE_INFER,
    Mode.LITE_TRAIN_WHOLE_INFER,
    Mode.WHOLE_TRAIN_WHOLE_INFER,
    Mode.WHOLE_INFER,
    Mode.KLQUANT_WHOLE_INFER,
)
DEFAULT_MODE = Mode.LITE_TRAIN_LITE_INFER
TRAIN_MODES: tuple[Mode, ...] = MODES[:3]  # the modes that train before they infer
# The modes that infer with the repo's pretrained model (no training first).
PRETRAINED_MODES: tuple[Mode, ...] = (Mode.WHOLE_INFER, Mode.KLQUANT_WHOLE_INFER)
SERVING_MODE = Mode.SERVING_INFER
ALL_MODES: tuple[Mode, ...] = (*MODES, SERVING_MODE)  # what every verb's --mode accepts


class Stage(str, Enum):
    PREPARE = "prepare"  # the repo's test_tipc/prepare.sh, run before the chain (its failure blocks nothing)
    TRAIN = "train"
    EVAL = "eval"
    EXPORT = "export"
    INFER = "infer"
    QUANT = "quant"  # KL / post-training quantisation commands
    SERVE = "serve"  # a long-running server started in the background
    CLIENT = "client"  # a client talking to a server step
    OTHER = "other"


class Status(str, Enum):
    PASSED = "passed"
    FAILED = "failed"
    BLOCKED = "blocked"  # an input step failed, so this step did not run
    SKIPPED = "skipped"  # deliberately not run (--only, missing optional tool, ...)
    TIMEOUT = "timeout"
    INTERRUPTED = "interrupted"  # Ctrl-C

    @property
    def ok(self) -> bool:
        return self is Status.PASSED


@dataclass(frozen=True)
class Step:
    """One command of the chain, exactly as the repo's own script would run it."""

    id: str  # unique and stable within a plan, e.g. "train/norm_train/gpus_0/autocast_null"
    stage: Stage
    argv: tuple[str, ...]  # argv[0] is the config's `python:` value as written
    cwd: str = "."  # relative to the repo root
    env: tuple[tuple[str, str], ...] = ()  # variables set for this step
    unset_env: tuple[str, ...] = ()  # variables removed for this step
    log: str | None = None  # repo-relative path receiving stdout+stderr, as the script names it
    depends_on: tuple[str, ...] = ()  # ids of steps whose output this step consumes
    trainer: str | None = None
    # The command string the repo's script would print in its status line (results_python.log).
    status_command: str = ""
    shell: bool = False  # True only when the command truly needs shell syntax; argv is then [sh, -c, cmd]
    background: bool = False  # a server: started, polled for readiness, stopped after its dependents
    ready_url: str | None = None  # for background steps: poll this URL (or tcp://host:port) until it answers
    source_lines: tuple[int, ...] = ()  # config lines the command was built from
    timeout_s: float | None = None  # per-step override; None = the run's default
    # The log path the script names in its status line when it differs from `log` (e.g. PaddleOCR's copied
    # `<save_log>.log` for training, which prints to the console); None = no log field / same as `log`.
    status_log: str | None = None
    # Python modules the step's interpreter must be able to import; when one is missing the runner records the
    # step SKIPPED with `requires_reason` (e.g. Paddle Serving, which no longer installs) and does not run it.
    requires_modules: tuple[str, ...] = ()
    requires_reason: str = ""
    # What the command writes, as the planner knows it: (parameter key, path) pairs passed as `key=path`,
    # paths relative to `cwd` as written. `tipc.planning.planner.isolate` redirects the ones outside the
    # output folder.
    writes: tuple[tuple[str, str], ...] = ()
    # Why the step's writes cannot be known or redirected (e.g. a free-form command); "" when they can.
    writes_unknown: str = ""
    # Why the step cannot run on this machine as asked (e.g. a multi-GPU launch under --device cpu); "" when
    # it can. The step stays in the plan; the runner records it SKIPPED with this reason and does not run it.
    not_applicable: str = ""

    @property
    def env_dict(self) -> dict[str, str]:
        return dict(self.env)

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "stage": self.stage.value,
            "trainer": self.trainer,
            "argv": list(self.argv),
            "cwd": self.cwd,
            "env": dict(self.env),
            "unset_env": list(self.unset_env),
            "log": self.log,
            "depends_on": list(self.depends_on),
            "status_command": self.status_command,
            "shell": self.shell,
            "background": self.background,
            "ready_url": self.ready_url,
            "source_lines": list(self.source_lines),
            "timeout_s": self.timeout_s,
            "status_log": self.status_log,
            "requires_modules": list(self.requires_modules),
            "requires_reason": self.requires_reason,
            "writes": [list(w) for w in self.writes],
            "writes_unknown": self.writes_unknown,
            "not_applicable": self.not_applicable,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Step:
        return cls(
            id=data["id"],
            stage=Stage(data["stage"]),
            trainer=data.get("trainer"),
            argv=tuple(data["argv"]),
            cwd=data.get("cwd", "."),
            env=tuple(sorted((str(k), str(v)) for k, v in data.get("env", {}).items())),
            unset_env=tuple(data.get("unset_env", ())),
            log=data.get("log"),
            depends_on=tuple(data.get("depends_on", ())),
            status_command=data.get("status_command", ""),
            shell=bool(data.get("shell", False)),
            background=bool(data.get("background", False)),
            ready_url=data.get("ready_url"),
            source_lines=tuple(data.get("source_lines", ())),
            timeout_s=data.get("timeout_s"),
            status_log=data.get("status_log"),
            requires_modules=tuple(data.get("requires_modules", ())),
            requires_reason=data.get("requires_reason", ""),
            writes=tuple((str(k), str(v)) for k, v in data.get("writes", ())),
            writes_unknown=data.get("writes_unknown", ""),
            not_applicable=data.get("not_applicable", ""),
        )


@dataclass(frozen=True)
class Overrides:
    """In-memory changes to a config; the user's files are never edited."""

    device: str | None = None  # "cpu" rewrites the device slots to their CPU form
    sets: tuple[tuple[str, str], ...] = ()  # --set KEY=VALUE, by slot key or field name, in order
    python: str | None = None  # interpreter to run instead of the config's `python:` value

    def to_json(self) -> dict[str, object]:
        return {"device": self.device, "sets": [list(kv) for kv in self.sets], "python": self.python}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Overrides:
        return cls(
            device=data.get("device"),
            sets=tuple((str(k), str(v)) for k, v in data.get("sets", ())),
            python=data.get("python"),
        )


@dataclass(frozen=True)
class Plan:
    config_path: str  # as given by the user
    repo: str  # absolute repo root (the folder the script runs from)
    mode: Mode  # a plain str once read back from a record (equal to the Mode)
    dialect: str  # name of the dialect profile used
    model_name: str
    output_dir: str  # repo-relative LOG_PATH, e.g. test_tipc/output/<model>/<mode>
    results_log: str  # repo-relative path of results_python.log (PaddleRec: results.log)
    status_format: str  # name of the status-line format of the dialect (see tipc.core.results)
    steps: tuple[Step, ...]
    findings: tuple[Finding, ...] = ()
    overrides: Overrides = field(default_factory=Overrides)
    chain: str = "train_infer_python"
    # True once `tipc.planning.planner.isolate` redirected the writes outside output_dir (what run/check
    # execute).
    isolated: bool = False

    def step(self, step_id: str) -> Step:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)

    def to_json(self) -> dict[str, object]:
        return {
            "config_path": self.config_path,
            "repo": self.repo,
            "mode": self.mode,
            "dialect": self.dialect,
            "chain": self.chain,
            "isolated": self.isolated,
            "model_name": self.model_name,
            "output_dir": self.output_dir,
            "results_log": self.results_log,
            "status_format": self.status_format,
            "overrides": self.overrides.to_json(),
            "steps": [s.to_json() for s in self.steps],
            "findings": [f.to_json() for f in self.findings],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        from tipc.core.findings import Level

        return cls(
            config_path=data["config_path"],
            repo=data["repo"],
            mode=data["mode"],
            dialect=data["dialect"],
            chain=data.get("chain", "train_infer_python"),
            isolated=bool(data.get("isolated", False)),
            model_name=data["model_name"],
            output_dir=data["output_dir"],
            results_log=data["results_log"],
            status_format=data["status_format"],
            overrides=Overrides.from_json(data.get("overrides", {})),
            steps=tuple(Step.from_json(s) for s in data["steps"]),
            findings=tuple(
                Finding(f["path"], f["line"], f["col"], Level(f["level"]), f["code"], f["message"])
                for f in data.get("findings", ())
            ),
        )
