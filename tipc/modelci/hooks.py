"""What `tipc check --baseline/--history/--notify` adds to a check, kept here so check.py calls two functions.

- `rule_result(ctx, directory)`: the `baseline` rule's result (a tipc.judge.rules RuleResult), added to the
report
  like any rule, so its FAIL makes the check exit 1 and every report format shows the rows;
- `repeat_chain(...)`: with `--repeat N`, the chain runs N times in the check's sandbox, one after another;
  the metrics of every run are saved beside the last run's record and the baseline rule judges their
  medians (the other rules check the last run);
- `after(...)` / `after_child(...)`: store the run in the history database and post the notification,
  from tipc's own process outside the sandbox (a sandboxed check runs as a child for that).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from tipc.core.steps import Plan
    from tipc.execute.record import RunRecord
    from tipc.execute.sandbox import SandboxOptions
    from tipc.judge.checks.base import CheckContext
    from tipc.judge.rules.evaluate import RuleResult

RULE_ID = "model-ci.baseline"


@dataclass(frozen=True)
class ModelCiOptions:
    """The model CI switches of `tipc check` / `tipc run` (built from argparse in tipc.commands._modelci)."""

    baseline: str | None = None  # the baseline folder ("" the default one); None: no baseline judgement
    history: str | None = None  # a history database (path or URL); None: the default one with --baseline
    notify: str | None = None  # a webhook URL
    repeat: int = 1  # with a baseline: runs of the chain whose medians are judged

    def check(self) -> None:
        """Usage errors of the model CI switches, found before anything runs."""
        from tipc.core.errors import UserError

        if self.repeat > 1 and self.baseline is None:
            raise UserError("--repeat N judges the median of N runs against a baseline: give --baseline too")

    @property
    def wanted(self) -> bool:
        """Whether this check stores history or notifies: work done outside the sandbox (which has no
        network and keeps writes outside the repo's output folder from lasting)."""
        return any(v is not None for v in (self.baseline, self.history, self.notify))


def repeat_chain(
    options: ModelCiOptions, repo: Path, record: RunRecord, rerun: Callable[[], RunRecord], stderr: IO[str]
) -> RunRecord:
    """With --baseline and --repeat N > 1: N - 1 more runs of the chain after `record`, their metrics and
    its saved beside the last record (tipc.judge.baseline.judge.RUNS_FILE); the last record is returned.
    Stops early after an interrupted run."""
    from tipc.core.steps import Status
    from tipc.judge.baseline import judge
    from tipc.judge.baseline.metrics import extract

    times = options.repeat or 1
    if options.baseline is None or times <= 1 or record is None:
        return record
    runs = [extract(record, repo)]
    for k in range(2, times + 1):
        stderr.write(f"tipc: --repeat: run {k} of {times} of the chain\n")
        record = rerun()
        runs.append(extract(record, repo))
        if any(r.status is Status.INTERRUPTED for r in record.results):
            break
    try:
        judge.save_runs(judge.runs_file(record, repo), record, runs)
    except OSError as exc:
        stderr.write(f"tipc: warning: cannot keep the metrics of the repeated runs: {exc}\n")
    return record


def rule_result(ctx: CheckContext, directory: str) -> RuleResult:
    from tipc.judge.baseline.store import DEFAULT_DIR, baseline_dir
    from tipc.judge.checks.base import Verdict
    from tipc.judge.rules.evaluate import RuleResult
    from tipc.judge.rules.files import RepoFiles
    from tipc.judge.rules.model import CheckSpec, Rule, Severity
    from tipc.judge.rules.operators import OPERATORS, OpEnv

    rule = Rule(
        id=RULE_ID,
        source="issue 9 (model CI); seed 000",
        severity=Severity.ERROR,
        description="every metric of the run is within its baseline's margin; no metric or stage is missing",
        check=CheckSpec("baseline", (("dir", directory or DEFAULT_DIR),)),
    )
    where = str(baseline_dir(Path(ctx.repo), directory))
    env = OpEnv(ctx=ctx, checks={}, files=RepoFiles(Path(ctx.repo)))
    outcome = OPERATORS["baseline"].fn(env, {"dir": where})
    verdict = outcome.verdict if outcome.verdict is not Verdict.SKIP else Verdict.FAIL
    return RuleResult(ruleset="model-ci", rule=rule, verdict=verdict, outcome=outcome)


def outside_needed(options: ModelCiOptions, sandbox_options: SandboxOptions, *, in_child: bool) -> bool:
    """True when the check must run as a sandboxed child so that this process can store and notify after
    (`in_child`: this process is already that child)."""
    return options.wanted and sandbox_options.backend != "none" and not in_child


def after_child(
    options: ModelCiOptions, repo: Path, plan: Plan, exit_code: int, stderr: IO[str], *, kind: str = "check"
) -> int:
    """After a sandboxed child check: find its run record in the run folder, then store and notify."""
    from tipc.core.errors import ConfigError
    from tipc.execute import sandbox
    from tipc.execute.record import load_record, record_location

    key = sandbox.run_key(plan.model_name, plan.config_path, plan.mode)
    path = sandbox.stored_path(repo, key, plan.output_dir, record_location(plan).as_posix())
    try:
        record = load_record(path)
    except ConfigError as exc:
        stderr.write(f"tipc: warning: no run record to store or notify about: {exc.render()}\n")
        return exit_code
    after(options, repo, record, exit_code, stderr, kind=kind)
    return exit_code


def after(
    options: ModelCiOptions,
    repo: Path,
    record: RunRecord,
    exit_code: int,
    stderr: IO[str],
    *,
    kind: str = "check",
) -> None:
    """History and notification. Neither changes the exit code; a failure of either is said on stderr."""
    from tipc.judge.baseline import judge as judging
    from tipc.judge.baseline.metrics import extract
    from tipc.judge.baseline.store import baseline_dir

    judgement = None
    if options.baseline is not None:
        judgement = judging.judge_record(record, repo, baseline_dir(repo, options.baseline))
    history = options.history
    if history is not None or judgement is not None:
        from tipc.core.errors import UserError
        from tipc.modelci.history import open_history

        verdicts = {r.metric: r.verdict for r in judgement.rows} if judgement is not None else {}
        try:
            with open_history(history) as db:
                db.store_run(
                    record,
                    extract(record, repo),
                    kind=kind,
                    repo=repo,
                    verdict="regressed" if judgement is not None and judgement.regressed else None,
                    verdicts=verdicts,
                )
                where = db.where
            stderr.write(f"tipc: stored in the history {where}\n")
        except UserError as exc:
            stderr.write(f"tipc: warning: history not stored: {exc.render()}\n")
    url = options.notify
    if url and judgement is not None:
        from tipc.modelci import notify

        body = notify.payload(judgement, record, repo=str(repo), exit_code=exit_code)
        problem = notify.post(url, body)
        stderr.write(
            f"tipc: warning: notification failed: {problem}\n" if problem else f"tipc: notified {url}\n"
        )
