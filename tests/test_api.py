"""The Python API (tipc.api, re-exported as tipc.lint / plan / run / check): typed values, not Namespaces."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import tipc
from tests.helpers.demo import DEMO, DemoRun
from tipc.api import CheckResult, LintResult, RunResult
from tipc.core.errors import ConfigError, UserError
from tipc.core.findings import Level
from tipc.core.steps import Plan

CONFIG = DEMO / "test_tipc" / "configs" / "lenet_digits" / "train_infer_python.txt"
# Two static rules (no engine work): one the demo passes, one it fails.
RULESET = """\
schema: tipc.ruleset/1
name: api-test
rules:
  - id: api.has_train
    source: test
    severity: error
    description: train.py is there
    check: {glob_matches: {pattern: "train.py"}}
  - id: api.has_setup_cfg
    source: test
    severity: error
    description: a setup.cfg the demo does not have
    check: {glob_matches: {pattern: "setup.cfg"}}
"""


def test_import_tipc_stays_cheap() -> None:
    import subprocess

    code = "import sys, tipc; print(sorted(m for m in sys.modules if m.startswith('tipc')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['tipc']"


def test_lint_returns_findings(tmp_path: Path) -> None:
    result = tipc.lint(DEMO)
    assert isinstance(result, LintResult) and result.ok and not result.errors
    bad = tmp_path / "train_infer_python.txt"
    bad.write_text(CONFIG.read_text().replace("train_model_name:", "train_model_name :", 1), encoding="utf-8")
    found = tipc.lint(bad)
    assert all(f.path.endswith("train_infer_python.txt") and f.line >= 1 for f in found.findings)
    assert found.ok == (not any(f.level is Level.ERROR for f in found.findings))
    with pytest.raises(ConfigError):
        tipc.lint(tmp_path / "missing.txt")


def test_plan_is_a_plan_with_overrides() -> None:
    plain = tipc.plan(CONFIG)
    assert isinstance(plain, Plan) and plain.mode == "lite_train_lite_infer"
    assert {s.stage.value for s in plain.steps} >= {"train", "export", "infer"}
    cpu = tipc.plan(CONFIG, "whole_infer", device="cpu", isolated=True)
    assert cpu.mode == "whole_infer" and cpu.isolated
    assert "train" not in {s.stage.value for s in cpu.steps}


def test_run_and_check_find_bad_input_in_this_process(tmp_path: Path) -> None:
    # The verb's own argparse and target checks run in the caller's process: the exceptions themselves,
    # raised before any child starts.
    with pytest.raises(UserError, match="--only 'nonsense'"):
        tipc.run(DEMO, only=["nonsense"])
    with pytest.raises(UserError, match="unrecognized arguments: --no-such-flag"):
        tipc.check(DEMO, extra_args=["--no-such-flag"])
    with pytest.raises(UserError):
        tipc.run(tmp_path / "missing")


@pytest.mark.integration
def test_check_and_run_on_the_shared_demo(demo_run: DemoRun, tmp_path: Path) -> None:
    repo = demo_run.copy(tmp_path / "lenet_digits")
    ruleset = tmp_path / "api.yaml"
    ruleset.write_text(RULESET)
    events: list[tipc.ProgressEvent] = []
    checked = tipc.check(repo, rulesets=[str(ruleset)], reuse_run=True, progress=events.append)
    assert isinstance(checked, CheckResult)
    assert checked.exit_code == 1 and checked.overall == "FAIL" and not checked.ok
    assert {r.id: r.verdict for r in checked.rules} == {"api.has_train": "PASS", "api.has_setup_cfg": "FAIL"}
    assert [r.id for r in checked.failed] == ["api.has_setup_cfg"]
    assert checked.report["run"]["reused"] is True
    assert [e.kind.value for e in (events[0], events[-1])] == ["started", "finished"]
    assert events[0].phase.startswith("tipc check") and events[-1].outcome == "exit 1"

    events.clear()
    ran = tipc.run(repo, only=["train"], sets={"epoch": "1"}, python=sys.executable, progress=events.append)
    assert isinstance(ran, RunResult)
    news = [e.detail for e in events if e.kind.value == "update"]
    assert any(n.startswith("[") and "train/" in n and n.endswith("...") for n in news), news  # started
    assert any("train/" in n and "PASSED" in n for n in news), news  # and finished
    assert ran.ok and ran.steps and {s.stage for s in ran.steps if s.status == "passed"} == {"train"}
    assert all(s.duration_s is not None for s in ran.steps if s.status == "passed")
