"""Rule-level evaluation: severity, applicability, internal errors as values."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.judge.rules.conftest import with_fakes
from tipc.core.errors import RuleError
from tipc.judge.checks.base import CheckContext, CheckOutcome, Verdict
from tipc.judge.rules import evaluate, parse_ruleset

RULESET = """\
schema: tipc.ruleset/1
name: t
rules:
  - id: hard
    source: "seed002 §2.2.1"
    severity: error
    description: d
    check: {file_exists: {path: missing.py}}
  - id: soft
    source: "seed002 §2.2.5"
    severity: warning
    description: d
    check: {file_exists: {path: missing.py}}
  - id: gated
    source: "seed004 §4.2.3"
    severity: error
    description: d
    applies_if: {glob_matches: {pattern: "test_tipc/test_serving*.sh"}}
    check: {check: {name: serving}}
  - id: broken
    source: "seed004 §4.1.3"
    severity: error
    description: d
    check: {check: {name: explodes}}
"""


FAKES = with_fakes("explodes")


def _explodes(ctx: CheckContext, **args: Any) -> CheckOutcome:
    raise ZeroDivisionError("bug in a check")


def test_severity_applicability_and_internal_errors(tree: Callable[..., Path]) -> None:
    repo = tree({})
    rs = parse_ruleset(RULESET, "t.yaml", checks=FAKES)
    results = {r.rule.id: r for r in evaluate([rs], CheckContext(repo=repo), checks={"explodes": _explodes})}
    assert results["hard"].verdict is Verdict.FAIL and results["hard"].blocking
    assert results["soft"].verdict is Verdict.WARN and results["soft"].outcome.verdict is Verdict.FAIL
    assert not results["soft"].blocking
    assert results["gated"].verdict is Verdict.NA and results["gated"].outcome.summary.startswith(
        "does not apply"
    )
    broken = results["broken"]
    assert broken.verdict is Verdict.SKIP and broken.error is not None and "ZeroDivisionError" in broken.error
    assert all(r.ruleset == "t" for r in results.values())


def test_gated_rule_without_its_check_is_skip_not_pass(tree: Callable[..., Path]) -> None:
    repo = tree({"test_tipc": {"test_serving_infer_python.sh": "echo"}})
    rs = parse_ruleset(RULESET, "t.yaml", checks=FAKES)
    gated = next(r for r in evaluate([rs], CheckContext(repo=repo), checks={}) if r.rule.id == "gated")
    assert gated.verdict is Verdict.SKIP and gated.outcome.summary == "serving check not available"


def test_check_returning_a_non_outcome_is_an_internal_error(tree: Callable[..., Path]) -> None:
    rs = parse_ruleset(RULESET, "t.yaml", checks=FAKES)
    results = evaluate([rs], CheckContext(repo=tree({})), checks={"explodes": lambda ctx, **a: "PASS"})  # type: ignore[dict-item]
    broken = next(r for r in results if r.rule.id == "broken")
    assert broken.error is not None and "not CheckOutcome" in broken.error


def test_missing_template_file_is_a_rule_error(tree: Callable[..., Path], tmp_path: Path) -> None:
    text = RULESET.split("  - id: soft")[0].replace(
        "check: {file_exists: {path: missing.py}}", "check: {script_matches_template: {template: nope}}"
    )
    rs = parse_ruleset(text, "t.yaml", checks=FAKES)
    with pytest.raises(RuleError, match="no template hashes named 'nope'"):
        evaluate([rs], CheckContext(repo=tree({})), checks={}, templates_dir=tmp_path)


ORDERED = """\
schema: tipc.ruleset/1
name: o
rules:
  - id: o.violations
    source: "tipc containment (issue 22)"
    severity: error
    description: d
    check: {check: {name: sandbox_violations}}
  - id: o.worker
    source: "seed002 §3.2.1"
    severity: error
    description: d
    check: {check: {name: worker}}
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_violations_rule_is_judged_after_every_other_and_reported_in_its_place(
    tree: Callable[..., Path], jobs: int
) -> None:
    """A check that starts the submission's code (a worker) may make it attempt denied calls: the rule that
    reads those attempts must see them, wherever it stands in the ruleset."""
    calls: list[str] = []

    def worker(ctx: CheckContext, **args: Any) -> CheckOutcome:
        calls.append("worker")
        return CheckOutcome(Verdict.PASS, "ran")

    def violations(ctx: CheckContext, **args: Any) -> CheckOutcome:
        calls.append("violations")
        return CheckOutcome(Verdict.FAIL if "worker" in calls else Verdict.PASS, "read after the worker")

    rs = parse_ruleset(ORDERED, "o.yaml", checks=with_fakes("worker"))
    checks = {"worker": worker, "sandbox_violations": violations}
    results = evaluate([rs], CheckContext(repo=tree({})), checks=checks, jobs=jobs, lanes={"worker": "w"})
    assert calls == ["worker", "violations"]
    assert [r.rule.id for r in results] == ["o.violations", "o.worker"]
    assert results[0].verdict is Verdict.FAIL
