from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tipc.core.steps import Mode, Plan, Stage, Status, Step
from tipc.core.yamlschema import Map, Schema
from tipc.execute.record import RunRecord, StepResult
from tipc.judge.checks.base import CheckContext

Tree = dict[str, Any]


def with_fakes(*names: str) -> dict[str, Schema]:
    """The registered checks' argument schemas plus fake checks (any arguments) that a test wires in."""
    from tipc.judge.rules.schema import registered_checks

    return {**registered_checks(), **{n: Map(closed=False) for n in names}}


def build_tree(root: Path, spec: Tree) -> Path:
    """Files from a dict: str/bytes values are file contents, dict values are folders."""
    for name, value in spec.items():
        target = root / name
        if isinstance(value, dict):
            target.mkdir(parents=True, exist_ok=True)
            build_tree(target, value)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(value, bytes):
                target.write_bytes(value)
            else:
                target.write_text(value, encoding="utf-8")
    return root


@pytest.fixture
def tree(tmp_path: Path) -> Callable[[Tree], Path]:
    def make(spec: Tree) -> Path:
        repo = tmp_path / "repo"
        repo.mkdir(exist_ok=True)
        return build_tree(repo, spec)

    return make


def make_record(
    repo: Path,
    steps: list[tuple[str, Stage, Status | None]],
    *,
    mode: Mode = Mode.LITE_TRAIN_LITE_INFER,
    logs: dict[str, str] | None = None,
) -> RunRecord:
    """A run record: (step id, stage, status or None for 'no result')."""
    logs = logs or {}
    plan_steps = tuple(
        Step(
            id=sid,
            stage=stage,
            argv=("python", "x.py"),
            log=logs.get(sid),
            trainer="norm_train" if stage is Stage.TRAIN else None,
        )
        for sid, stage, _ in steps
    )
    plan = Plan(
        config_path="test_tipc/configs/m/train_infer_python.txt",
        repo=str(repo),
        mode=mode,
        dialect="template",
        model_name="m",
        output_dir=f"test_tipc/output/m/{mode}",
        results_log=f"test_tipc/output/m/{mode}/results_python.log",
        status_format="template",
        steps=plan_steps,
    )
    results = tuple(
        StepResult(
            step_id=sid,
            status=status,
            exit_code=0 if status is Status.PASSED else (1 if status is Status.FAILED else None),
            started=100.0,
            ended=101.5,
            log=logs.get(sid),
            reason="" if status is Status.PASSED else "boom",
        )
        for sid, _, status in steps
        if status is not None
    )
    return RunRecord(plan=plan, results=results, started=100.0, ended=110.0)


def ctx_for(repo: Path, record: RunRecord | None = None) -> CheckContext:
    return CheckContext(repo=repo, record=record, settings={})


@pytest.fixture
def record_of() -> Callable[..., RunRecord]:
    return make_record


@pytest.fixture
def ctx_of() -> Callable[..., CheckContext]:
    return ctx_for
