"""Evaluate rules against a repo and its run: one RuleResult per rule, never an exception per bad repo.

The check registry is a parameter (the seam): `tipc check` passes `tipc.judge.checks.CHECKS`; tests pass
fakes.
A check that raises is a bug in tipc, not in the user's repo: the rule is reported with `error` set
(verdict SKIP) and `tipc check` exits 3.

With `jobs` > 1 and `lanes` (check name -> lane), the calls to those checks that the rules will certainly
make are computed first, one thread per lane (calls in one lane in rule order, lanes side by side, at most
`jobs` at once); then every rule is evaluated in order as before, reading those outcomes. So the results,
their order and the report are those of a sequential evaluation; only the wall time differs.
"""

from __future__ import annotations

import json
import threading
import time
import traceback
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path

from tipc.core.errors import RuleError
from tipc.judge.checks.base import CheckContext, CheckOutcome, Verdict
from tipc.judge.rules.files import RepoFiles
from tipc.judge.rules.model import CheckSpec, Rule, Ruleset, Severity
from tipc.judge.rules.operators import OPERATORS, CheckFn, OpEnv, child_specs


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
        elif isinstance(value, dict):  # a `check` operator's args: {name: ..., args: {chain: ...}}
            for key, arg in value.items():
                if key == "chain" and isinstance(arg, str):
                    found.add(arg)
                walk(arg)

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
    jobs: int = 1,
    lanes: Mapping[str, str] | None = None,
) -> list[RuleResult]:
    rulesets = list(rulesets)
    if jobs <= 1 or not lanes:
        env = make_env(ctx, checks, templates_dir)
        results = []
        for rs, rule in _in_judging_order(rulesets):
            started = time.perf_counter()
            result = evaluate_rule(rule, env, rs.name)
            results.append(replace(result, duration_s=time.perf_counter() - started))
        return _in_rule_order(rulesets, results)
    return _evaluate_parallel(rulesets, ctx, checks, templates_dir, jobs, lanes)


# Checks that judge what every other check did (the calls the sandbox denied the commands the checks
# started): their rules are evaluated after all the others, and reported in their place.
JUDGED_LAST = frozenset({"sandbox_violations"})


def _judged_last(rule: Rule) -> bool:
    return any(
        leaf.op == "check" and leaf.arg_dict.get("name") in JUDGED_LAST for leaf in _certain_specs(rule.check)
    )


def _in_judging_order(rulesets: list[Ruleset]) -> list[tuple[Ruleset, Rule]]:
    pairs = [(rs, rule) for rs in rulesets for rule in rs.rules]
    return [p for p in pairs if not _judged_last(p[1])] + [p for p in pairs if _judged_last(p[1])]


def _in_rule_order(rulesets: list[Ruleset], results: list[RuleResult]) -> list[RuleResult]:
    place = {
        (rs.name, rule.id): n for n, (rs, rule) in enumerate((rs, r) for rs in rulesets for r in rs.rules)
    }
    return sorted(results, key=lambda r: place.get((r.ruleset, r.rule.id), len(place)))


# --- concurrent model-side checks ----------------------------------------------------------------------

_Key = tuple[str, str]


def _key(name: str, args: Mapping[str, object]) -> _Key | None:
    try:
        return name, json.dumps(args, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return None  # not comparable: such a call is simply not shared


@dataclass
class _Done:
    outcome: CheckOutcome | None = None
    error: BaseException | None = None
    seconds: float = 0.0
    counted: bool = False  # its seconds already went to the first rule that read it


class _Memo:
    """The check registry with each (name, args) call computed once: by a lane thread, or on first use."""

    def __init__(self, ctx: CheckContext, checks: Mapping[str, CheckFn]) -> None:
        self.ctx = ctx
        self.checks = checks
        self.done: dict[_Key, _Done] = {}
        self.lock = threading.Lock()
        self.charged = 0.0  # lane seconds read by the rule being evaluated (its duration includes them)

    def compute(self, name: str, args: dict[str, object]) -> None:
        key = _key(name, args)
        if key is None or key in self.done:
            return
        started = time.perf_counter()
        try:
            done = _Done(outcome=self.checks[name](self.ctx, **args))
        except Exception as exc:  # re-raised where the rule reads it: the same internal error as in sequence
            done = _Done(error=exc)
        done.seconds = time.perf_counter() - started
        with self.lock:
            self.done[key] = done

    def registry(self) -> dict[str, CheckFn]:
        def wrapped(name: str, fn: CheckFn) -> CheckFn:
            def call(ctx: CheckContext, **args: object) -> CheckOutcome:
                key = _key(name, args)
                with self.lock:
                    done = self.done.get(key) if key is not None else None
                if done is None:
                    if key is None:
                        return fn(ctx, **args)
                    done = _Done(counted=True)  # computed here, inside the timing of the rule that asks
                    try:
                        done.outcome = fn(ctx, **args)
                    except Exception as exc:
                        done.error = exc
                    with self.lock:
                        self.done[key] = done
                if not done.counted:
                    done.counted = True
                    self.charged += done.seconds
                if done.error is not None:
                    raise done.error
                if done.outcome is None:  # a call ends with an outcome or an error
                    raise RuntimeError(f"check {name!r} left neither an outcome nor an error")
                return done.outcome

            return call

        return {name: wrapped(name, fn) for name, fn in self.checks.items()}


class _Recorder(Mapping[str, CheckFn]):
    """A check registry that notes the calls an operator makes to lane checks instead of making them."""

    def __init__(self, checks: Mapping[str, CheckFn], lanes: Mapping[str, str]) -> None:
        self._names = [n for n in checks if n in lanes]
        self.calls: list[tuple[str, dict[str, object]]] = []

    def __getitem__(self, name: str) -> CheckFn:
        if name not in self._names:
            raise KeyError(name)

        def note(ctx: CheckContext, **args: object) -> CheckOutcome:
            self.calls.append((name, dict(args)))
            return CheckOutcome(Verdict.SKIP, "noted")

        return note

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def _certain_specs(spec: CheckSpec) -> list[CheckSpec]:
    """The leaf specs a rule's check surely evaluates: every all_of member, an any_of's first one only."""
    args = spec.arg_dict
    if spec.op == "all_of":
        return [leaf for child in child_specs(args) for leaf in _certain_specs(child)]
    if spec.op == "any_of":
        children = child_specs(args)
        return _certain_specs(children[0]) if children else []
    return [spec]


def planned_calls(
    rulesets: Iterable[Ruleset], env: OpEnv, lanes: Mapping[str, str]
) -> list[tuple[str, dict[str, object]]]:
    """The lane-check calls (name, args) the rules will make, in rule order. A gated rule's `applies_if` is
    evaluated here (through `env`, so its outcome is the one the rule later reads); a rule that does not
    apply contributes nothing, so nothing starts that the sequential evaluation would not start."""
    from tipc.execute import proc

    calls: list[tuple[str, dict[str, object]]] = []
    for rs in rulesets:
        for rule in rs.rules:
            if rule.applies_if is not None:
                try:
                    if env.evaluate(rule.applies_if).verdict is not Verdict.PASS:
                        continue
                except Exception:
                    continue  # the rule reports it when evaluated
            for leaf in _certain_specs(rule.check):
                recorder = _Recorder(env.checks, lanes)
                noting = OpEnv(ctx=env.ctx, checks=recorder, files=env.files, templates_dir=env.templates_dir)
                noting.evaluate = lambda spec: CheckOutcome(Verdict.SKIP, "noted")
                op = OPERATORS.get(leaf.op)
                if op is None:
                    continue
                try:
                    with proc.refusing("only noting which checks the rules call"):
                        op.fn(noting, leaf.arg_dict)
                except Exception:
                    pass  # an operator that cannot be looked at ahead is simply evaluated in order
                calls.extend(recorder.calls)
    return calls


def _evaluate_parallel(
    rulesets: list[Ruleset],
    ctx: CheckContext,
    checks: Mapping[str, CheckFn],
    templates_dir: Path | None,
    jobs: int,
    lanes: Mapping[str, str],
) -> list[RuleResult]:
    memo = _Memo(ctx, checks)
    env = make_env(ctx, memo.registry(), templates_dir)
    by_lane: dict[str, list[tuple[str, dict[str, object]]]] = {}
    for name, args in planned_calls(rulesets, env, lanes):
        by_lane.setdefault(lanes[name], []).append((name, args))
    if len(by_lane) > 1:
        _run_lanes(memo, list(by_lane.values()), jobs)
    results = []
    for rs, rule in _in_judging_order(rulesets):
        memo.charged = 0.0
        started = time.perf_counter()
        result = evaluate_rule(rule, env, rs.name)
        seconds = time.perf_counter() - started + memo.charged
        results.append(replace(result, duration_s=seconds))
    return _in_rule_order(rulesets, results)


def _run_lanes(memo: _Memo, lanes: list[list[tuple[str, dict[str, object]]]], jobs: int) -> None:
    """Each lane's calls in order, lanes side by side. Ctrl-C stops every child any lane started (their
    threads cannot be told: only the main thread gets the signal), lets the lanes end, and is re-raised."""
    from tipc.execute import proc

    def lane(calls: list[tuple[str, dict[str, object]]]) -> None:
        for name, args in calls:
            memo.compute(name, args)

    pool = ThreadPoolExecutor(max_workers=min(jobs, len(lanes)), thread_name_prefix="tipc-check")
    futures: list[Future[None]] = []
    try:
        futures = [pool.submit(lane, calls) for calls in lanes]
        pending = set(futures)
        while pending:
            _, pending = wait(pending, timeout=0.5, return_when=FIRST_EXCEPTION)
    except KeyboardInterrupt:
        with proc.shielded(), proc.refusing("interrupted: nothing new is started after Ctrl-C"):
            for future in futures:
                future.cancel()
            running = {f for f in futures if not f.done()}
            while running:  # again until every lane ends: one may have been past its refusal check
                proc.stop_children()
                _, running = wait(running, timeout=0.2)
        raise
    finally:
        pool.shutdown(wait=True)
