"""The whole run (`_Execution`): begin (reuse earlier results, start gathering facts), every step in plan
order through the gate, Ctrl-C (the running step's group stopped, INTERRUPTED recorded), close; `execute`
under one lock per output folder, and the run's `exit_code`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path

from tipc.core.errors import UserError
from tipc.core.steps import Plan, Stage, Status, Step
from tipc.core.version import __version__
from tipc.execute import proc
from tipc.execute.observer import NullObserver, Observer
from tipc.execute.record import RunRecord, StepResult
from tipc.execute.runner.facts import _Facts
from tipc.execute.runner.gate import _Gate
from tipc.execute.runner.interpreters import _interpreter_of, _substituted, python_substitutions
from tipc.execute.runner.options import _SATISFIED, LOCK_FILENAME, RunOptions, _notice
from tipc.execute.runner.sandboxed import _sandbox_json


class _Execution(_Gate):
    """The whole run: begin (reuse earlier results), each step in plan order, Ctrl-C, close."""

    def run(self) -> RunRecord:
        reusable = self._begin()
        current: tuple[int, Step] | None = None
        interrupted = False
        try:
            for index, step in enumerate(self.plan.steps, start=1):
                current = (index, step)
                self._next(index, step, reusable)
                current = None
            for sid in list(self.servers):
                self._stop_server(sid)
        except KeyboardInterrupt:
            interrupted = True
            self._interrupted(current)
        finally:
            self._close(interrupted=interrupted)
        self.observer.plan_finished(self.plan, self.record)
        return self.record

    def _begin(self) -> dict[str, StepResult]:
        """Folders, interpreter substitution, the first record, facts gathering; the results to reuse."""
        plan, options = self.plan, self.options
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.record_file.parent.mkdir(parents=True, exist_ok=True)
        reusable = self.previous_results()
        self.mapping, subst_notes = python_substitutions(plan, options)
        self.notes.extend(subst_notes)
        for note in self.notes:
            _notice(self.observer, note)
        self.first_python, run_python = self._run_python()
        self._fresh_results_log()
        self.record = RunRecord(
            plan=plan,
            results=(),
            started=time.time(),
            tipc_version=__version__,
            python=run_python,
            notes=tuple(self.notes),
        )
        self.writer.write(self.record)
        facts_env = {**proc.base_env(), **dict(options.extra_env), **dict(options.forced_env)}
        self.facts = _Facts(run_python, self.repo, options.probe_versions, facts_env).start()
        self.observer.plan_started(plan)
        return reusable

    def _run_python(self) -> tuple[str | None, str]:
        """The first python the plan's steps name, and the interpreter the run reports (substituted)."""
        interpreters = [_interpreter_of(s) for s in self.plan.steps]
        first = next((p for p in interpreters if p is not None), None)
        run_python = self.mapping.get(first, first) if first is not None else sys.executable
        return first, shutil.which(run_python) or run_python

    def _next(self, index: int, step: Step, reusable: Mapping[str, StepResult]) -> None:
        """Reuse, gate or run one step; a step Ctrl-C cut short is recorded, then KeyboardInterrupt raised."""
        _, status_command = _substituted(step, self.mapping)
        if step.id in reusable:
            self._finish(index, step, reusable[step.id], status_command)
            return
        gated = self._gate(step)
        if gated is not None:
            self._finish(index, step, gated, status_command)
            self._stop_servers_done_with(index - 1)
            return
        self.observer.step_started(index, self.total, step)
        with contextlib.suppress(OSError):
            self.layer_watch.start()
        if step.background:
            result = self._start_server(index, step)
            if step.id in self.servers:
                self._save(result)  # provisional; the final status is written when it stops
                self.observer.step_finished(index, self.total, step, result)
            else:
                self._finish(index, step, result, status_command)
        else:
            result = self._run_step(index, step)
            self._finish(index, step, result, status_command)
            if result.status is Status.INTERRUPTED:
                raise KeyboardInterrupt
        self._stop_servers_done_with(index - 1)

    def _interrupted(self, current: tuple[int, Step] | None) -> None:
        """After Ctrl-C: the facts probes cancelled, the step it cut short recorded, the servers stopped."""
        with proc.shielded():
            if self.facts is not None:
                self.facts.cancel()
            if current is not None and self.record.result(current[1].id) is None:
                index, step = current
                self._finish(
                    index,
                    step,
                    StepResult(step.id, Status.INTERRUPTED, reason="interrupted (Ctrl-C)"),
                    "",
                )
            for sid in list(self.servers):
                self._stop_server(sid, interrupted=True)

    def _close(self, *, interrupted: bool) -> None:
        """Whatever happened: servers stopped, facts merged, the final record written."""
        with proc.shielded():
            for sid in list(self.servers):
                self._stop_server(sid, interrupted=True)
            # The probes end by themselves (each has a time limit); after Ctrl-C they are not waited for.
            self._merge_facts(wait=True, timeout_s=2.0 if interrupted else None)
            self.record = replace(
                self.record,
                ended=time.time(),
                notes=tuple(dict.fromkeys(self.notes)),
                sandbox=_sandbox_json(),
            )
            self.writer.write(self.record)


def execute(
    plan: Plan,
    options: RunOptions = RunOptions(),  # noqa: B008 - frozen value
    observer: Observer | None = None,
) -> RunRecord:
    """Run every step of `plan`; returns the run record (also written to `<repo>/<record_location(plan)>`).

    Ctrl-C stops the running step's process group, records it INTERRUPTED and returns the record; callers map
    that to exit 130 (see `exit_code`).
    """
    execution = _Execution(plan, options, observer if observer is not None else NullObserver())
    execution.out_dir.mkdir(parents=True, exist_ok=True)
    # The lock stays per output dir, not per record: runs sharing an output dir still share its logs.
    with _exclusive(execution.out_dir / LOCK_FILENAME):
        return execution.run()


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """One run per output dir at a time: two runs would interleave logs and overwrite each other's record."""
    import fcntl

    with open(lock_path, "a+", encoding="utf-8") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            raise UserError(
                f"{lock_path.parent}: another tipc run is using this output folder ({holder}); "
                "wait for it or stop it first"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}\n")
        fh.flush()
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def exit_code(record: RunRecord) -> int:
    """0 all passed (or skipped), 130 interrupted, 1 anything failed, timed out or was blocked.

    The prepare step (the repo's prepare.sh) counts only when interrupted: what it fails to make shows in the
    step that needs it, and offline it often fails on a download the mode does not use."""
    prepare = {s.id for s in record.plan.steps if s.stage is Stage.PREPARE}
    statuses = {
        r.status for r in record.results if r.step_id not in prepare or r.status is Status.INTERRUPTED
    }
    if Status.INTERRUPTED in statuses:
        return 130
    return 0 if statuses <= _SATISFIED else 1
