"""tipc as a Python library: `tipc.lint`, `tipc.plan`, `tipc.run`, `tipc.check`, returning typed values.

`lint` and `plan` work in-process (they only read files). `run` and `check` start a child `python -m tipc`
through tipc.execute.proc (the chain runs in a sandbox of its own, model work never enters the caller's
process) and
return what the command wrote as JSON: the run record, the check report. Bad input raises tipc.core.errors'
exceptions (UserError, ConfigError) with the same located message the CLI prints.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tipc.core.errors import EXIT_INTERNAL, TipcError
from tipc.core.findings import Finding, Level
from tipc.core.progress import Progress, ProgressEvent
from tipc.core.steps import DEFAULT_MODE  # a mode: a tipc.core.steps.Mode or its text

if TYPE_CHECKING:
    from tipc.core.steps import Plan



@dataclass(frozen=True)
class LintResult:
    findings: tuple[Finding, ...]

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level is Level.ERROR)

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level is Level.WARNING)

    @property
    def ok(self) -> bool:
        """True when no finding is an error (what `tipc lint` exits 0 on)."""
        return not self.errors


@dataclass(frozen=True)
class StepOutcome:
    id: str
    stage: str
    status: str  # passed, failed, timeout, blocked, skipped, ...
    exit_code: int | None
    duration_s: float | None
    log: str | None


@dataclass(frozen=True)
class RunResult:
    exit_code: int
    steps: tuple[StepOutcome, ...]
    record: dict[str, Any]  # the run record ("tipc.run/..." JSON) as `tipc run --format json` prints it
    output: str  # the child's progress and messages

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


@dataclass(frozen=True)
class RuleOutcome:
    id: str
    ruleset: str
    severity: str
    verdict: str  # PASS, FAIL, WARN, SKIP, N-A
    summary: str
    error: str | None


@dataclass(frozen=True)
class CheckResult:
    exit_code: int
    overall: str  # PASS, FAIL, ERROR
    rules: tuple[RuleOutcome, ...]
    report: dict[str, Any]  # the "tipc.report/1" JSON
    output: str

    @property
    def ok(self) -> bool:
        return self.overall == "PASS"

    @property
    def failed(self) -> tuple[RuleOutcome, ...]:
        return tuple(r for r in self.rules if r.verdict == "FAIL")


class CommandError(TipcError):
    """The child tipc stopped without a result (bad input, internal error); its message is the text."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def lint(
    *paths: str | Path, dialect: str | None = None, strict: bool = True, max_steps: int | None = None
) -> LintResult:
    """Lint config files, or each repo folder's test_tipc/configs/** (as `tipc lint` does; `strict=False`
    makes a named file that is not a config an info finding instead of an error)."""
    from tipc.planning.lint import lint_paths

    found = lint_paths([Path(p) for p in paths], dialect=dialect, strict=strict, max_steps=max_steps)
    return LintResult(tuple(found))


def plan(
    config: str | Path,
    mode: str = DEFAULT_MODE,
    *,
    repo: str | Path | None = None,
    device: str | None = None,
    sets: Mapping[str, str] | Iterable[str] = (),
    dialect: str | None = None,
    isolated: bool = False,
    max_steps: int | None = None,
) -> Plan:
    """The Plan `tipc plan` prints: the steps the config's script would run in `mode`."""
    from tipc.commands._target import parse_sets
    from tipc.core.steps import Overrides
    from tipc.planning.planner import isolate
    from tipc.planning.planner import plan as make_plan

    words = [f"{k}={v}" for k, v in sets.items()] if isinstance(sets, Mapping) else list(sets)
    result = make_plan(
        Path(config),
        mode,
        repo=Path(repo) if repo is not None else None,
        overrides=Overrides(device=device, sets=parse_sets(words)),
        dialect=dialect,
        max_steps=max_steps,
    )
    return isolate(result) if isolated else result


def _options(
    config: str | Path | None,
    mode: str,
    device: str | None,
    sets: Mapping[str, str] | Iterable[str],
    python: str | None,
    dialect: str | None,
) -> list[str]:
    argv = ["--mode", mode]
    if config is not None:
        argv += ["--config", str(config)]
    if device is not None:
        argv += ["--device", device]
    for word in [f"{k}={v}" for k, v in sets.items()] if isinstance(sets, Mapping) else sets:
        argv.append(f"--set={word}")
    if python is not None:
        argv += ["--python", python]
    if dialect is not None:
        argv += ["--dialect", dialect]
    return argv


def json_document(output: str) -> dict[str, Any] | None:
    """The one top-level JSON object a `--format json` command printed, among its progress lines: from the
    line that is exactly `{` to the last line that is exactly `}` (the object is indented inside)."""
    lines = output.splitlines()
    try:
        start = lines.index("{")
        end = len(lines) - 1 - lines[::-1].index("}")
    except ValueError:
        return None
    try:
        value = json.loads("\n".join(lines[start : end + 1]))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _tipc(
    argv: Sequence[str], cwd: Path, timeout_s: float | None, progress: Progress | None = None
) -> tuple[int, str, dict[str, Any] | None]:
    from tipc.core.progress import no_progress, phase
    from tipc.execute import proc

    lines: list[str] = []
    with phase(progress or no_progress, f"tipc {argv[0]} {argv[1]}") as ph:

        def on_line(line: str) -> None:
            lines.append(line)
            ph.child_line(line)  # the child's steps and checks, as they happen

        res = proc.run(
            proc.module_argv(sys.executable, "tipc", *argv),
            cwd=cwd,
            env=proc.build_env(None, {}),
            timeout_s=timeout_s,
            on_line=on_line,
        )
        ph.outcome = "interrupted" if res.interrupted else f"exit {res.exit_code}"
    if res.interrupted:
        raise KeyboardInterrupt
    output = "\n".join(lines)
    code = res.exit_code if res.exit_code is not None else EXIT_INTERNAL
    document = json_document(output)
    if document is None:
        tail = "\n".join(line for line in lines[-20:] if line.strip())
        raise CommandError(f"tipc {argv[0]} gave no result (exit {code}):\n{tail}", code if code else 3)
    return code, output, document


def run(
    repo: str | Path,
    *,
    config: str | Path | None = None,
    mode: str = DEFAULT_MODE,
    device: str | None = None,
    sets: Mapping[str, str] | Iterable[str] = (),
    python: str | None = None,
    dialect: str | None = None,
    only: Sequence[str] = (),
    extra_args: Sequence[str] = (),
    timeout_s: float | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Run the repo's chain (as `tipc run`); returns the steps' outcomes and the run record. `progress`
    (any callable) hears tipc.core.progress.ProgressEvent values as the run goes: each step started and
    finished."""
    argv = [
        "run",
        str(repo),
        *_options(config, mode, device, sets, python, dialect),
        "--format",
        "json",
        "--no-color",
    ]
    for stage in only:
        argv += ["--only", stage]
    code, output, record = _tipc([*argv, *extra_args], Path.cwd(), timeout_s, progress)
    assert record is not None
    stages = {s.get("id"): s.get("stage") for s in record.get("plan", {}).get("steps", [])}
    steps = tuple(
        StepOutcome(
            id=str(r.get("step_id")),
            stage=str(stages.get(r.get("step_id"), "")),
            status=str(r.get("status")),
            exit_code=r.get("exit_code"),
            duration_s=r.get("duration_s"),
            log=r.get("log"),
        )
        for r in record.get("results", [])
    )
    return RunResult(code, steps, record, output)


def check(
    repo: str | Path,
    *,
    config: str | Path | None = None,
    mode: str = DEFAULT_MODE,
    rulesets: Sequence[str] = (),
    reuse_run: bool = False,
    report_dir: str | Path | None = None,
    device: str | None = None,
    sets: Mapping[str, str] | Iterable[str] = (),
    python: str | None = None,
    dialect: str | None = None,
    extra_args: Sequence[str] = (),
    timeout_s: float | None = None,
    progress: Progress | None = None,
) -> CheckResult:
    """Check the repo against the rulesets (as `tipc check`); returns the verdicts and the report.
    `progress` (any callable) hears tipc.core.progress.ProgressEvent values as the check goes: each step
    of the chain and each check that takes a while (`tipc.check(repo, progress=print)` prints them)."""
    argv = [
        "check",
        str(repo),
        *_options(config, mode, device, sets, python, dialect),
        "--format",
        "json",
        "--no-color",
    ]
    for name in rulesets:
        argv += ["--ruleset", name]
    if reuse_run:
        argv.append("--reuse-run")
    if report_dir is not None:
        argv += ["--report-dir", str(report_dir)]
    code, output, report = _tipc([*argv, *extra_args], Path.cwd(), timeout_s, progress)
    assert report is not None
    rules = tuple(
        RuleOutcome(
            id=str(r.get("id")),
            ruleset=str(r.get("ruleset", "")),
            severity=str(r.get("severity", "")),
            verdict=str(r.get("verdict")),
            summary=str(r.get("summary", "")),
            error=r.get("error"),
        )
        for r in report.get("rules", [])
    )
    return CheckResult(code, str(report.get("overall", "ERROR")), rules, report, output)


__all__ = [
    "DEFAULT_MODE",
    "CheckResult",
    "CommandError",
    "LintResult",
    "ProgressEvent",
    "RuleOutcome",
    "RunResult",
    "StepOutcome",
    "check",
    "lint",
    "plan",
    "run",
]
