"""How a plan is run (`RunOptions`, the explainer it may be handed) and the small vocabulary the runner's
modules share: the statuses that count as concluded, satisfied or diagnosed, step log names, paths shown
repo-relative, exits in words. Values and pure helpers only.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tipc.core.causes import Cause
from tipc.core.steps import Status, Step
from tipc.execute import proc
from tipc.execute.observer import Observer
from tipc.execute.record import RunRecord, StepResult

DEFAULT_STEP_TIMEOUT_S = 1800.0


DEFAULT_READY_TIMEOUT_S = 120.0


TIPC_LOG_DIR = "tipc_logs"


LOCK_FILENAME = ".tipc_run.lock"


# Statuses that mean "this step ran to a conclusion"; --resume keeps them, --rerun-failed keeps only PASSED.
_CONCLUDED = frozenset({Status.PASSED, Status.FAILED, Status.TIMEOUT})


# A dependency in one of these states lets its dependents run (SKIPPED = left out by --only: its outputs are
# expected on disk from an earlier run).
_SATISFIED = frozenset({Status.PASSED, Status.SKIPPED})


Explainer = Callable[[RunRecord, Step, StepResult, Path], Sequence[Cause]]


@dataclass(frozen=True)
class RunOptions:
    """How to run a plan. A background step's `timeout_s` (else `ready_timeout_s`) bounds its readiness wait;
    once ready it runs until its last dependent finishes."""

    step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S  # default per step; Step.timeout_s overrides it
    run_timeout_s: float | None = None  # whole run; steps not started by then are BLOCKED
    python: str | None = None  # force this interpreter for every python step (--python)
    only_stages: tuple[str, ...] = ()  # Stage values to run; the others are SKIPPED
    rerun_failed: bool = False  # reuse PASSED results of the last record of the same config+mode
    resume: bool = False  # reuse every concluded result of the last record (continue an interrupted run)
    no_color: bool = False  # write results_python.log without the ANSI codes
    ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S  # background steps: deadline to answer on ready_url
    monitor: bool = True  # sample resources (psutil / NVML)
    probe_versions: bool = True  # ask the run's python for paddle's version, git for the commit
    extra_env: tuple[tuple[str, str], ...] = field(default=(("PYTHONUNBUFFERED", "1"),))
    forced_env: tuple[tuple[str, str], ...] = ()  # set for every step over the environment (--paddle-compat)
    log_limit_bytes: int = proc.DEFAULT_LOG_LIMIT  # each step's log keeps its head and tail (--log-limit)
    # Finds the plain causes of a failed step (the record so far, the step, its result, its log file); the
    # commands hand in tipc.judge.causes.explain_step. None: failed steps get no causes here.
    explain: Explainer | None = field(default=None, compare=False)


def _notice(observer: Observer, message: str) -> None:
    notice = getattr(observer, "notice", None)
    if callable(notice):
        notice(message)


def _sanitise(step_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", step_id).strip("_") or "step"


def _rel(repo: Path, path: Path) -> str:
    try:
        return str(path.relative_to(repo))
    except ValueError:
        return str(path)


def _within(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name} (exit {code})"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


_DIAGNOSED = frozenset({Status.FAILED, Status.TIMEOUT})
