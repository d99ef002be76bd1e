"""Fixture builders: a repo tree from a dict, and RunRecords with real Step/StepResult values."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.helpers.trees import write_tree as write_tree  # re-exported: the check tests import it from here
from tipc.core.steps import Mode, Plan, Stage, Status, Step
from tipc.execute.record import RunRecord, StepResult
from tipc.judge.checks.base import CheckContext

OUTPUT_DIR = "test_tipc/output/demo/lite_train_lite_infer"


def make_record(
    repo: Path,
    steps: Sequence[tuple[str, Stage, list[str], str | None, Status | None]],
    *,
    started: float | None = None,
    host: dict[str, Any] | None = None,
    model_name: str = "demo",
    mode: Mode = Mode.LITE_TRAIN_LITE_INFER,
) -> RunRecord:
    """steps: (id, stage, argv, log, status or None for "no result")."""
    t0 = started if started is not None else time.time()
    plan_steps = tuple(Step(id=i, stage=st, argv=tuple(argv), log=log) for i, st, argv, log, _ in steps)
    results = tuple(
        StepResult(
            step_id=i,
            status=status,
            exit_code=0 if status is Status.PASSED else 1,
            started=t0 + n,
            ended=t0 + n + 0.5,
            log=log,
            argv=tuple(argv),
        )
        for n, (i, _, argv, log, status) in enumerate(steps)
        if status is not None
    )
    plan = Plan(
        config_path="test_tipc/configs/demo/train_infer_python.txt",
        repo=str(repo),
        mode=mode,
        dialect="template",
        model_name=model_name,
        output_dir=OUTPUT_DIR,
        results_log=f"{OUTPUT_DIR}/results_python.log",
        status_format="template",
        steps=plan_steps,
    )
    return RunRecord(plan=plan, results=results, started=t0, python=sys.executable, host=host or {})


def ctx_for(repo: Path, record: RunRecord | None, settings: Any = None) -> CheckContext:
    return CheckContext(repo=repo, record=record, settings=settings if settings is not None else {})
