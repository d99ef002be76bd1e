"""After an interrupt `tipc check` starts nothing new: no serving chain, no check that starts a process
(issue 15: after Ctrl-C it used to start the serving chain, 8 processes for about 11 s, then exit 130)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.commands.test_check import CONFIG, RULESET, Fakes, _run
from tipc.core.steps import Status
from tipc.execute import proc
from tipc.judge.checks.base import CheckContext, CheckOutcome, Verdict

SERVING_RULE = """\
  - id: mini.serving_chain
    source: "seed004 §4.2.3"
    severity: error
    description: the serving chain passes
    check: {step_passed: {chain: serving}}
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / CONFIG).parent.mkdir(parents=True)
    (root / CONFIG).write_text("model_name:lenet\n", encoding="utf-8")
    (root / "train.py").write_text("print('train')\n", encoding="utf-8")
    return root


def test_an_interrupted_check_starts_no_serving_chain_and_no_checking_process(
    tmp_path: Path, repo: Path
) -> None:
    ruleset = tmp_path / "rules.yaml"
    ruleset.write_text(RULESET + SERVING_RULE, encoding="utf-8")
    marker = tmp_path / "started"
    fakes = Fakes(repo, {"train": Status.INTERRUPTED})

    def starts_a_process(ctx: CheckContext, **args: Any) -> CheckOutcome:
        proc.run([sys.executable, "-c", f"open({str(marker)!r}, 'w')"], cwd=tmp_path)
        return CheckOutcome(Verdict.PASS, "ran")

    seams = fakes.seams()
    seams.checks = {"log_fields": starts_a_process}
    seams.find_serving_config = lambda repo, config: repo / "serving.txt"
    seams.plan = lambda config, mode, *, repo, overrides, dialect=None: fakes.plan(
        config, mode, repo=repo, overrides=overrides, dialect=dialect
    )
    original = fakes.seams

    def with_serving() -> Any:
        return seams

    fakes.seams = with_serving  # type: ignore[method-assign]
    code, out, err = _run([str(repo), "--ruleset", str(ruleset), "--format", "json"], fakes)
    fakes.seams = original  # type: ignore[method-assign]
    assert code == 130, err
    assert [p.mode for p in fakes.executed] == ["lite_train_lite_infer"]  # the serving chain never ran
    assert not marker.exists()  # the check's process was never started
    assert "not checked: the run was interrupted" in out
    assert "serving chain: not started, the run was interrupted" in out
    # and outside an interrupt the same check does start its process
    fakes.statuses = {}
    fakes.seams = with_serving  # type: ignore[method-assign]
    code, out, err = _run([str(repo), "--ruleset", str(ruleset), "--format", "json"], fakes)
    assert marker.exists() and [p.mode for p in fakes.executed][-1] == "serving_infer", err
