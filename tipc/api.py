"""tipc as a Python library: `tipc.lint`, `tipc.plan`, `tipc.run`, `tipc.check`, returning typed values.

All four call the core in this process: the functions the commands call (`tipc.commands.run.run_chain`,
`tipc.commands.check.check`), given the verb's own argparse reading of the same words. Only the sandboxed
chain runs in a child `python -m tipc` (namespaces are entered before any thread starts, and never by a
caller's process): it hands its result (the run record, the check report) back on a private channel
(tipc.execute.handback: an unnamed file the child inherits), never through its stdout; its output lines
are the result's `output` and the `progress` news. Model work never enters the caller's process. Bad input
raises tipc.core.errors' exceptions (UserError, ConfigError) with the same located message the CLI prints.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tipc.core.errors import EXIT_INTERNAL, TipcError, UserError
from tipc.core.findings import Finding, Level
from tipc.core.progress import Progress, ProgressEvent
from tipc.core.steps import DEFAULT_MODE  # a mode: a tipc.core.steps.Mode or its text

if TYPE_CHECKING:
    import argparse

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
    output: str  # the command's progress and messages (a sandboxed child's included)

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
    """The command stopped without a result (a sandboxed child that failed or ran out of time, a mode
    without steps); its message is the output's tail."""

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


class _Lines(io.TextIOBase):
    """A text stream that hands each complete line to `on_line` (the command's messages, as a child's
    output lines are handed over)."""

    def __init__(self, on_line: Callable[[str], None]) -> None:
        self._on_line = on_line
        self._pending = ""

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        *complete, self._pending = (self._pending + text).split("\n")
        for line in complete:
            self._on_line(line)
        return len(text)

    def close(self) -> None:
        if self._pending:
            self._on_line(self._pending)
            self._pending = ""
        super().close()


def _parsed(verb: str, words: Sequence[str]) -> argparse.Namespace:
    """The verb's own argparse reading of `words` (as `tipc VERB WORDS` would); a bad word is a UserError.
    A sandboxed command re-runs itself as a child `python -m tipc VERB WORDS` (this process is the caller's,
    not tipc's own: it never enters namespaces)."""
    import contextlib

    from tipc.cli import build_parser, join_option_values

    argv = join_option_values([verb, *words])
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            args = build_parser(only=verb).parse_args(argv)
    except SystemExit:
        lines = [line for line in said.getvalue().splitlines() if line.strip()]
        raise UserError(
            lines[-1].removeprefix("tipc: error: ") if lines else f"bad arguments: {argv}"
        ) from None
    args.own_process = False
    args.invocation = tuple(argv)
    return args


def _call(
    verb: str,
    words: Sequence[str],
    timeout_s: float | None,
    progress: Progress | None,
    core: Callable[..., int],
) -> tuple[int, str, dict[str, Any]]:
    """Run the verb's core in this process (`core(args, stdout=, stderr=, launch=, hand_back=)`); its
    messages and a sandboxed child's output go to `progress` and the result's `output`, its document comes
    back as a value (from a child: on tipc.execute.handback's private channel)."""
    from tipc.commands._sandboxed import Launch
    from tipc.core.progress import no_progress, phase

    args = _parsed(verb, words)
    lines: list[str] = []
    documents: list[dict[str, Any]] = []
    with phase(progress or no_progress, f"tipc {verb} {words[0]}") as ph:

        def on_line(line: str) -> None:
            lines.append(line)
            ph.child_line(line)  # the steps and checks, as they happen

        stream = _Lines(on_line)
        try:
            code = core(
                args,
                stdout=stream,
                stderr=stream,
                launch=Launch(on_line=on_line, timeout_s=timeout_s),
                hand_back=documents.append,
            )
        except KeyboardInterrupt:
            ph.outcome = "interrupted"
            raise
        finally:
            stream.close()
        ph.outcome = f"exit {code}"
    if not documents:
        tail = "\n".join(line for line in lines[-20:] if line.strip())
        raise CommandError(f"tipc {verb} gave no result (exit {code}):\n{tail}", code or EXIT_INTERNAL)
    return code, "\n".join(lines), documents[-1]


def _run_core(args: argparse.Namespace, **io_: Any) -> int:
    from tipc.commands.run import run_chain

    return run_chain(args, **io_).exit_code


def _check_core(args: argparse.Namespace, **io_: Any) -> int:
    from tipc.commands.check import check, default_seams

    return check(args, default_seams(), **io_)


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
    finished. `timeout_s` bounds the sandboxed child (an in-place run, `extra_args=["--no-sandbox"]`, runs
    in this process: `--timeout` bounds it)."""
    words = [str(repo), *_options(config, mode, device, sets, python, dialect), "--no-color"]
    for stage in only:
        words += ["--only", stage]
    code, output, record = _call("run", [*words, *extra_args], timeout_s, progress, _run_core)
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
    words = [str(repo), *_options(config, mode, device, sets, python, dialect), "--no-color"]
    for name in rulesets:
        words += ["--ruleset", name]
    if reuse_run:
        words.append("--reuse-run")
    if report_dir is not None:
        words += ["--report-dir", str(report_dir)]
    code, output, report = _call("check", [*words, *extra_args], timeout_s, progress, _check_core)
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
