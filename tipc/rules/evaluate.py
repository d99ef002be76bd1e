"""Evaluate rules against a repo and its run: one RuleResult per rule, never an exception per bad repo.

The check registry is a parameter (the seam): `tipc check` passes `tipc.checks.CHECKS`; tests pass fakes.
A check that raises is a bug in tipc, not in the user's repo: the rule is reported with `error` set
(verdict SKIP) and `tipc check` exits 3.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from tipc.checks.base import CheckContext, CheckOutcome, Verdict
from tipc.errors import RuleError
from tipc.rules.files import RepoFiles
from tipc.rules.model import CheckSpec, Rule, Ruleset, Severity
from tipc.rules.operators import OPERATORS, CheckFn, OpEnv


@dataclass(frozen=True)
class RuleResult:
    ruleset: str
    rule: Rule
    verdict: Verdict  # after severity: a warning rule's FAIL becomes WARN
    outcome: CheckOutcome  # what the check itself said
    error: str | None = None  # an internal error while evaluating (tipc bug or broken check)
    duration_s: float | None = None  # wall time spent evaluating the rule (JUnit's time=)

    @property
    def blocking(self) -> bool:
        """True when this result fails `tipc check` (exit 1)."""
        return self.verdict is Verdict.FAIL


def chains_named(rulesets: Iterable[Ruleset]) -> set[str]:
    """Chains (other than the main one) whose run records some rule asks for, via a `chain:` argument."""
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, CheckSpec):
            for key, arg in value.args:
                if key == "chain" and isinstance(arg, str):
                    found.add(arg)
                walk(arg)
        elif isinstance(value, tuple | list):
            for item in value:
                walk(item)

    for rs in rulesets:
        for rule in rs.rules:
            walk(rule.check)
            walk(rule.applies_if)
    return found


def make_env(ctx: CheckContext, checks: Mapping[str, CheckFn], templates_dir: Path | None = None) -> OpEnv:
    env = OpEnv(ctx=ctx, checks=checks, files=RepoFiles(Path(ctx.repo)), templates_dir=templates_dir)

    def evaluate_spec(spec: CheckSpec) -> CheckOutcome:
        return OPERATORS[spec.op].fn(env, spec.arg_dict)

    env.evaluate = evaluate_spec
    return env


def evaluate_rule(rule: Rule, env: OpEnv, ruleset: str = "") -> RuleResult:
    try:
        if rule.applies_if is not None:
            gate = env.evaluate(rule.applies_if)
            if gate.verdict is not Verdict.PASS:
                outcome = CheckOutcome(
                    Verdict.NA, f"does not apply: {gate.summary}", gate.evidence, gate.data
                )
                return RuleResult(ruleset, rule, Verdict.NA, outcome)
        outcome = env.evaluate(rule.check)
    except RuleError:
        raise  # a broken ruleset or template file is the user's (or packager's) input error: exit 2
    except Exception as exc:
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        outcome = CheckOutcome(Verdict.SKIP, f"internal error while checking: {detail}")
        return RuleResult(ruleset, rule, Verdict.SKIP, outcome, error=detail)
    verdict = outcome.verdict
    if verdict is Verdict.FAIL and rule.severity is Severity.WARNING:
        verdict = Verdict.WARN
    return RuleResult(ruleset, rule, verdict, outcome)


def evaluate(
    rulesets: Iterable[Ruleset],
    ctx: CheckContext,
    *,
    checks: Mapping[str, CheckFn],
    templates_dir: Path | None = None,
) -> list[RuleResult]:
    env = make_env(ctx, checks, templates_dir)
    results = []
    for rs in rulesets:
        for rule in rs.rules:
            started = time.perf_counter()
            result = evaluate_rule(rule, env, rs.name)
            results.append(replace(result, duration_s=time.perf_counter() - started))
    return results
