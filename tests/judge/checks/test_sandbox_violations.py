"""The sandbox_violations check: the denied calls a run's commands attempted, from the run records."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tipc.judge.checks.base import CheckContext, Verdict
from tipc.judge.checks.sandbox import check_sandbox_violations

JAILED = {"bwrap": "/b/bwrap", "seccomp": True, "denials_recorded": True}


def _record(violations: list[dict[str, Any]], jail: dict[str, Any] | None = JAILED) -> Any:
    return SimpleNamespace(sandbox={"backend": "overlay", "jail": jail, "violations": violations})


def test_an_attempt_fails_naming_the_step_and_its_calls(tmp_path: Path) -> None:
    record = _record(
        [{"step": "train/norm_train/1", "calls": ["mount", "umount2"], "count": 3, "examples": []}]
    )
    serving = _record([{"step": "serving/server", "calls": ["ptrace"], "count": 1, "examples": []}])
    out = check_sandbox_violations(CheckContext(repo=tmp_path, record=record, records={"serving": serving}))
    assert out.verdict is Verdict.FAIL
    assert "mount, ptrace, umount2" in out.summary and "train/norm_train/1" in out.summary
    texts = [e.text for e in out.evidence]
    assert any("train/norm_train/1" in t and "umount2" in t and "3 call(s)" in t for t in texts)
    assert any("serving chain" in t for t in texts)


def test_a_clean_jailed_run_passes(tmp_path: Path) -> None:
    out = check_sandbox_violations(CheckContext(repo=tmp_path, record=_record([])))
    assert out.verdict is Verdict.PASS


def test_without_a_jail_or_a_listener_nothing_can_be_claimed(tmp_path: Path) -> None:
    assert check_sandbox_violations(CheckContext(repo=tmp_path)).verdict is Verdict.SKIP
    unjailed = CheckContext(repo=tmp_path, record=_record([], jail=None))
    assert check_sandbox_violations(unjailed).verdict is Verdict.SKIP
    unrecorded = _record([], jail={**JAILED, "denials_recorded": False})
    assert check_sandbox_violations(CheckContext(repo=tmp_path, record=unrecorded)).verdict is Verdict.WARN


def test_unknown_arguments_are_a_fail(tmp_path: Path) -> None:
    out = check_sandbox_violations(CheckContext(repo=tmp_path, record=_record([])), strict=True)
    assert out.verdict is Verdict.FAIL and "strict" in out.summary
