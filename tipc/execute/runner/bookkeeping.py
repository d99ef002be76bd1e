"""The state of one run and its artefacts (`_Bookkeeping`, the base of the run's classes): the step logs
and results_python.log, the notes, the run record written atomically after every step, the facts merged
in once gathered, a step's status line and causes when it ends, the results reusable from the last
record (--resume, --rerun-failed).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import replace
from pathlib import Path

from tipc.core.errors import ConfigError
from tipc.core.results import append_status_line, log_field, status_line
from tipc.core.steps import Plan, Stage, Status, Step
from tipc.execute import lineage
from tipc.execute.observer import Observer
from tipc.execute.record import RecordWriter, RunRecord, StepResult, load_record, record_location
from tipc.execute.runner.facts import _config_key, _Facts
from tipc.execute.runner.launch import _Server
from tipc.execute.runner.options import (
    _CONCLUDED,
    _DIAGNOSED,
    TIPC_LOG_DIR,
    RunOptions,
    _notice,
    _rel,
    _sanitise,
    _within,
)
from tipc.execute.runner.sandboxed import _sandbox_layers


class _Bookkeeping:
    """The state of one run and its bookkeeping: where logs and the results log go, notes, the record saved
    after every step, facts merged in once gathered, a step's status line and causes when it ends."""

    def __init__(self, plan: Plan, options: RunOptions, observer: Observer) -> None:
        self.plan = plan
        self.options = options
        self.observer = observer
        self.repo = Path(plan.repo).resolve()
        self.out_dir = (self.repo / plan.output_dir).resolve()
        self.record_file = (self.repo / record_location(plan)).resolve()
        self.total = len(plan.steps)
        self.deadline = (
            None if options.run_timeout_s is None else time.monotonic() + max(0.0, options.run_timeout_s)
        )
        self.servers: dict[str, _Server] = {}
        self.last_dependent: dict[str, int] = {}
        for i, step in enumerate(plan.steps):
            for dep in step.depends_on:
                self.last_dependent[dep] = i
        # --only still starts the servers that a selected step talks to
        self.needed_servers = {
            dep
            for s in plan.steps
            if s.stage.value in options.only_stages
            for dep in s.depends_on
            if any(t.id == dep and t.background for t in plan.steps)
        }
        self.unmet_skips: set[str] = set()  # SKIPPED for a missing module: their dependents are skipped too
        self.requirement_cache: dict[tuple[str, tuple[str, ...]], str | None] = {}
        self.notes: list[str] = []
        self.results_log = self._results_log_path()
        self.mapping: dict[str, str] = {}
        self.record: RunRecord
        self.writer = RecordWriter(self.record_file)
        # beside the record; tipc.judge.checks.lineage finds it there
        self.lineage_dir = lineage.dir_for(plan)
        # what each step wrote, as the sandbox's copy-on-write layers show it (native writers included)
        self.layer_watch = lineage.LayerWatch(_sandbox_layers(), ignore=(self.lineage_dir, self.record_file))
        self.facts: _Facts | None = None  # merged into the record once gathered
        self.first_python: str | None = None  # the first python the plan's steps name, if any

    # ---- paths

    def _results_log_path(self) -> Path:
        wanted = (self.repo / self.plan.results_log).resolve()
        if _within(wanted, self.out_dir):
            return wanted
        moved = self.out_dir / wanted.name
        self.notes.append(
            f"results log {self.plan.results_log} is outside the output dir; writing {_rel(self.repo, moved)}"
        )
        return moved

    def _log_path(self, step: Step) -> Path:
        named: str | None = getattr(step, "status_log", None)
        if not step.log and named and _within(self.repo / named, self.out_dir):
            # A console step whose status line names a log (PaddleOCR's copied train log): write the output
            # there, so the path in results_python.log points at a real file.
            return (self.repo / named).resolve()
        if step.log:
            wanted = (self.repo / step.log).resolve()
            if _within(wanted, self.out_dir):
                return wanted
            self._note(f"{step.id}: log {step.log} is outside the output dir; logging under {TIPC_LOG_DIR}/")
        return self.out_dir / TIPC_LOG_DIR / f"{_sanitise(step.id)}.log"

    # ---- record keeping

    def _note(self, message: str) -> None:
        if message in self.notes:
            return
        self.notes.append(message)
        _notice(self.observer, message)
        self.record = replace(self.record, notes=tuple(dict.fromkeys(self.notes)))

    def _save(self, result: StepResult) -> None:
        self.record = self.record.with_result(result)
        self._merge_facts(wait=False)
        self.record = replace(self.record, notes=tuple(dict.fromkeys(self.notes)))
        self.writer.write(self.record)

    def _merge_facts(self, *, wait: bool, timeout_s: float | None = None) -> None:
        facts = self.facts
        if facts is None or not (facts.wait(timeout_s) if wait else facts.done()):
            return
        self.facts = None
        self.record = replace(
            self.record,
            paddle_version=facts.paddle_version,
            git_commit=facts.git_commit,
            host=facts.host,
            environment=facts.environment,
        )
        if facts.probe_versions and facts.paddle_version is None and self.first_python is not None:
            self._note(
                f"paddle is not importable by {facts.python}: steps that import it will fail "
                "(pick the interpreter with --python)"
            )

    def _status_log(self, step: Step, result: StepResult) -> str:
        # `status_log` (newer Step field): the log the script names in its status line when it differs from
        # the one receiving the output (e.g. PaddleOCR's copied train log).
        named: str | None = getattr(step, "status_log", None)
        return named or step.log or result.log or _rel(self.repo, self._log_path(step))

    def _status_line(self, step: Step, result: StepResult, status_command: str) -> None:
        if result.reused or result.status in (Status.SKIPPED, Status.INTERRUPTED):
            return
        if step.stage is Stage.PREPARE:
            return  # prepare.sh is not a command of the script's chain: its log has no line for it
        line = status_line(
            self.plan.status_format,
            ok=result.status is Status.PASSED,
            command=status_command,
            model_name=self.plan.model_name,
            log_path=log_field(self.plan.status_format, self._status_log(step, result), str(self.repo)),
            color=not self.options.no_color,
        )
        try:
            append_status_line(self.results_log, line)
        except OSError as exc:  # the repo's code may have put a link or a folder there
            self._note(
                f"cannot write the status line of {step.id} to {self.results_log}: {exc.strerror or exc}"
            )

    def _finish(self, index: int, step: Step, result: StepResult, status_command: str) -> None:
        result = self._explained(step, result)
        if result.started is not None and not result.reused:
            with contextlib.suppress(OSError):  # lineage is evidence for checks; it never fails the run
                self.layer_watch.finish(self.lineage_dir, step.id)
                lineage.finish_step(self.lineage_dir, step.id)
        self._save(result)
        self._status_line(step, result, status_command)
        self.observer.step_finished(index, self.total, step, result)

    def _fresh_results_log(self) -> None:
        """In a sandbox, this run's status lines start a new results log: one the repo ships (a committed
        results_python.log of "Run successfully" lines) stays in the committed tree, never appended to."""
        from tipc.execute import sandbox

        session = sandbox.current()
        if session is None or session.backend == "none" or self.options.resume or self.options.rerun_failed:
            return
        with contextlib.suppress(OSError):
            if self.results_log.is_file():
                self.results_log.unlink()

    def _explained(self, step: Step, result: StepResult) -> StepResult:
        """A failed step with its plain causes (RunOptions.explain), root cause first."""
        explain = self.options.explain
        if explain is None or result.reused or result.status not in _DIAGNOSED:
            return result
        # The interpreter's Paddle version is a precondition of some causes: wait for the facts (a failed
        # step has already stopped, so nothing else waits).
        self._merge_facts(wait=True, timeout_s=120.0)
        try:
            found = tuple(explain(self.record, step, result, self._log_path(step)))
        except Exception as exc:  # a broken catalogue never breaks the run; the log tail still shows
            self._note(f"{step.id}: its causes could not be found ({type(exc).__name__}: {exc})")
            return result
        return replace(result, causes=(*result.causes, *found))

    # ---- results reused from the last record

    def previous_results(self) -> dict[str, StepResult]:
        if not (self.options.resume or self.options.rerun_failed) or not self.record_file.is_file():
            return {}
        try:
            old = load_record(self.record_file)
        except ConfigError as exc:
            self.notes.append(f"cannot reuse the previous record: {exc.render()}")
            return {}
        if _config_key(old.plan) != _config_key(self.plan):
            self.notes.append("the previous record is of another config or mode; running every step")
            return {}
        keep = _CONCLUDED if self.options.resume else frozenset({Status.PASSED})
        old_steps = {s.id: s for s in old.plan.steps}
        reusable: dict[str, StepResult] = {}
        for step in self.plan.steps:
            prev = old.result(step.id)
            before = old_steps.get(step.id)
            if prev is None or before is None or step.background:
                continue
            if prev.status in keep and before.argv == step.argv and before.env == step.env:
                reusable[step.id] = replace(prev, reused=True)
        return reusable
