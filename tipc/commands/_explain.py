"""What `tipc run` and `tipc check` share about explaining a run: the causes of its failed steps (found by
tipc.judge.causes from the record and the logs, handed to the runner), the readiness report before the chain
runs, and where each printed path really is."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from tipc.core.causes import Cause
    from tipc.core.steps import Plan, Step
    from tipc.execute.record import RunRecord, StepResult
    from tipc.judge.rules.evaluate import RuleResult


def explainer() -> Callable[[RunRecord, Step, StepResult, Path], Sequence[Cause]]:
    """The runner's RunOptions.explain: the causes of a failed step as it ends, its log shown where it
    really is."""

    def explain(record: RunRecord, step: Step, result: StepResult, log: Path) -> Sequence[Cause]:
        from tipc.execute.shown import path_map
        from tipc.judge.causes import explain_step

        paths = path_map(repo=Path(record.plan.repo))
        return explain_step(record, step, result, log, shown_log=paths.shown(result.log))

    return explain


def explained(record: RunRecord, repo: Path) -> RunRecord:
    """A record read back (`--reuse-run`) with the causes of its failed steps found afresh (the catalogue
    may know more than when it ran); the logs are read where the chain wrote them (the view)."""
    from tipc.execute.shown import path_map
    from tipc.judge.causes import explain_record

    paths = path_map(repo=repo)

    def log_of(result: StepResult) -> Path | None:
        return repo / result.log if result.log else None

    def shown_log(result: StepResult) -> str:
        return paths.shown(result.log)

    return explain_record(record, log_of, repo=repo, shown_log=shown_log)


def readiness(plan: Plan, python: str | None, repo: Path, stderr: IO[str]) -> list[str]:
    """The readiness report of the interpreter for the repo's entry scripts, printed before the chain runs
    (and returned, for the report's notes). Never fails the command: what cannot be learnt is said."""
    import shutil
    import sys

    from tipc.judge import readiness as ready

    interpreter = python or shutil.which("python") or sys.executable
    try:
        found = ready.check(plan, interpreter, repo)
    except Exception as exc:  # a readiness report is advice: it never stops the run
        lines = [f"readiness: could not be established ({type(exc).__name__}: {exc})"]
    else:
        lines = found.lines()
        if found.paddle and found.paddle.split(".")[0].isdigit() and int(found.paddle.split(".")[0]) < 3:
            lines.append(
                f"readiness: Paddle {found.paddle} wheels load a libz of their own: a step failing with "
                "`zlib.error: Error -2 while decompressing data` runs with --paddle-compat zlib"
            )
    lines += _load_lines()
    for line in lines:
        stderr.write(f"tipc: {line}\n")
    stderr.flush()
    return lines


_EXITED = re.compile(r"\bexited (-?\d+)\b")


def rule_causes(results: Sequence[RuleResult], record: RunRecord, repo: Path) -> dict[str, tuple[Cause, ...]]:
    """The causes of the commands a failing check ran itself (predict.py, infer.py: the logs its data names),
    found as for a chain step: {rule id: causes}. A check that says the command exited N or timed out names
    its log last in data['logs']."""
    from tipc.core.steps import Stage, Status, Step
    from tipc.execute.record import StepResult
    from tipc.execute.shown import path_map
    from tipc.judge.causes import explain_step

    paths = path_map(repo=repo)
    out: dict[str, tuple[Cause, ...]] = {}
    for result in results:
        outcome = getattr(result, "outcome", None)
        if outcome is None or getattr(outcome.verdict, "value", "") != "FAIL":
            continue
        logs = outcome.data.get("logs") if isinstance(outcome.data, dict) else None
        if not isinstance(logs, list) or not logs or not isinstance(logs[-1], str):
            continue
        summary = str(outcome.summary)
        exited = _EXITED.search(summary)
        timed_out = "timed out" in summary
        if exited is None and not timed_out:
            continue
        log = repo / logs[-1]
        if not log.is_file():
            continue
        argv = tuple(outcome.evidence[0].text.split()) if outcome.evidence else ()
        step = Step(f"check:{result.rule.id}", Stage.OTHER, argv)
        status = Status.TIMEOUT if timed_out else Status.FAILED
        done = StepResult(step.id, status, exit_code=int(exited.group(1)) if exited else None, argv=argv)
        try:
            found = explain_step(record, step, done, log, repo=repo, shown_log=paths.shown(logs[-1]))
        except Exception:  # a cause is advice: never lose the report for it
            continue
        if found:
            out[result.rule.id] = found
    return out


def _load_lines() -> list[str]:
    """The machine's load, when it is more than its cores: lite steps may need more than their time limit."""
    import os

    try:
        average = os.getloadavg()[0]
    except OSError:
        return []
    cores = os.cpu_count() or 1
    if average <= cores:
        return []
    return [
        f"readiness: the machine is loaded (load average {average:.1f} on {cores} cores): a step may run "
        "past its time limit only because of that; give a stage more with --stage-timeout STAGE=SECONDS"
    ]
