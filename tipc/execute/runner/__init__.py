"""Execute a Plan for real: one step at a time, real exit codes, timeouts, process-group shutdown.

Every step runs from its argv through `tipc.execute.proc` (a shell only where `Step.shell` says so), in its
own
process group, with stdout+stderr in a log file under the plan's output dir. Outcomes are values: a failing,
crashing or hanging step becomes a StepResult, never an exception. Steps whose inputs did not pass are BLOCKED
(not run). After every step the run record is written atomically, so an interrupted run can be resumed.
Facts the steps do not need (paddle's version, the repo's commit, the host) are gathered beside the first
step, not before it. Nothing here knows about dialects: formats, names and paths all come from the Plan.

This package's public face; its modules, each importing only those listed before it: `options` (RunOptions
and shared vocabulary), `interpreters` (interpreter substitution), `facts` (facts about the run, the last
record), `launch` (a server as values), `sandboxed` (what the sandbox says about a step), then the run's
classes, each built on the one before: `bookkeeping` (state, logs, the record), `steps` (one foreground
step), `servers` (background steps), `gate` (skip / block decisions), `execution` (the whole run,
`execute`, `exit_code`).
"""

from __future__ import annotations

from tipc.execute.runner.execution import execute, exit_code
from tipc.execute.runner.facts import find_record, git_commit, paddle_version, record_path
from tipc.execute.runner.interpreters import missing_interpreters, python_substitutions
from tipc.execute.runner.options import (
    DEFAULT_READY_TIMEOUT_S,
    DEFAULT_STEP_TIMEOUT_S,
    LOCK_FILENAME,
    TIPC_LOG_DIR,
    Explainer,
    RunOptions,
)

__all__ = [
    "DEFAULT_READY_TIMEOUT_S",
    "DEFAULT_STEP_TIMEOUT_S",
    "LOCK_FILENAME",
    "TIPC_LOG_DIR",
    "Explainer",
    "RunOptions",
    "execute",
    "exit_code",
    "find_record",
    "git_commit",
    "missing_interpreters",
    "paddle_version",
    "python_substitutions",
    "record_path",
]
