"""The entry points: `diagnose` (an output and facts -> causes), `diagnose_log` (the same over a log's
tail), `explain_step` (what the runner is handed: tipc.execute.runner.RunOptions.explain) and
`explain_record` (the causes of every failed step of a record read back, in plan order so that a later
step sees its upstream's causes).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.core.causes import Cause
from tipc.judge.causes.catalogue import Catalogue
from tipc.judge.causes.context import context_for
from tipc.judge.causes.loading import load_catalogue
from tipc.judge.causes.logs import read_tail
from tipc.judge.causes.model import Context

if TYPE_CHECKING:
    from tipc.core.steps import Step
    from tipc.execute.record import RunRecord, StepResult


def diagnose(
    output: str,
    *,
    argv: Sequence[str] = (),
    exit_code: int | None = None,
    signal_name: str | None = None,
    cwd: Path | None = None,
    context: Context | None = None,
    catalogue: Catalogue | None = None,
) -> list[Cause]:
    """The causes of a failed step, its own error first (empty when nothing in the catalogue holds)."""
    cat = catalogue if catalogue is not None else load_catalogue()
    return cat.diagnose(
        output, argv=argv, exit_code=exit_code, signal_name=signal_name, cwd=cwd, context=context
    )


def diagnose_log(
    path: Path,
    *,
    argv: Sequence[str] = (),
    exit_code: int | None = None,
    signal_name: str | None = None,
    cwd: Path | None = None,
    context: Context | None = None,
    catalogue: Catalogue | None = None,
) -> list[Cause]:
    """`diagnose` over the tail (last ~200 KB) of a step's log file; facts alone when the log is missing."""
    return diagnose(
        read_tail(path),
        argv=argv,
        exit_code=exit_code,
        signal_name=signal_name,
        cwd=cwd,
        context=context,
        catalogue=catalogue,
    )


_DIAGNOSED = ("failed", "timeout")


def _machine_load() -> tuple[float, int] | None:
    try:
        return os.getloadavg()[0], os.cpu_count() or 1
    except OSError:
        return None


def explain_step(
    record: RunRecord,
    step: Step,
    result: StepResult,
    log: Path | None,
    *,
    repo: Path | None = None,
    shown_log: str = "",
    catalogue: Catalogue | None = None,
    log_of: Callable[[StepResult], Path | None] | None = None,
) -> tuple[Cause, ...]:
    """The causes of one failed step of a run: what tipc.execute.runner.RunOptions.explain is given. `log`
    is where the step's log is readable now; `repo` where the repo's code is (the plan's repo by default)."""
    if result.status.value not in _DIAGNOSED:
        return ()
    where = repo if repo is not None else Path(record.plan.repo)
    ctx = context_for(
        record,
        step,
        result,
        repo=where,
        shown_log=shown_log or (result.log or ""),
        load=_machine_load(),
        log_of=log_of,
    )
    cwd = where / step.cwd
    return tuple(
        diagnose(
            read_tail(log) if log is not None else "",
            argv=result.argv or step.argv,
            exit_code=result.exit_code,
            cwd=cwd if cwd.is_dir() else None,
            context=ctx,
            catalogue=catalogue,
        )
    )


def explain_record(
    record: RunRecord,
    log_of: Callable[[StepResult], Path | None],
    *,
    repo: Path | None = None,
    catalogue: Catalogue | None = None,
    keep: Iterable[str] = ("resource-limit",),
    shown_log: Callable[[StepResult], str] | None = None,
) -> RunRecord:
    """`record` with the causes of every failed step found afresh from its log (`log_of(result)` says where
    it is readable), in plan order so that a later step sees its upstream's causes. Causes the runner found
    itself (`keep`: sandbox limits) stay first."""
    kept = set(keep)
    by_id = {s.id: s for s in record.plan.steps}
    results = list(record.results)
    for index, result in enumerate(results):
        step = by_id.get(result.step_id)
        if step is None or result.status.value not in _DIAGNOSED:
            continue
        log = log_of(result)
        own = tuple(c for c in result.causes if c.id in kept)
        shown = shown_log(result) if shown_log is not None else ""
        found = explain_step(
            record, step, result, log, repo=repo, catalogue=catalogue, shown_log=shown, log_of=log_of
        )
        results[index] = replace(result, causes=(*own, *found))
        record = replace(record, results=tuple(results))  # later steps see this one's causes
    return record
