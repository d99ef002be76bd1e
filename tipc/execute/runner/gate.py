"""The skip / block decisions before a step (`_Gate`): left out by --only, its inputs not passed, the run's
deadline spent, a module its entry script imports missing from the run's interpreter. A step that does not
run gets its StepResult here, with the reason.
"""

from __future__ import annotations

import sys
import time

from tipc.core.steps import Status, Step
from tipc.execute import proc
from tipc.execute.record import StepResult
from tipc.execute.runner.facts import _FIND_MODULES
from tipc.execute.runner.interpreters import _interpreter_of
from tipc.execute.runner.options import _SATISFIED
from tipc.execute.runner.servers import _Servers


class _Gate(_Servers):
    """The decision before a step: run it, or SKIP / BLOCK it (and why)."""

    # ---- the gate before a step

    def _gate(self, step: Step) -> StepResult | None:
        """A SKIPPED/BLOCKED result if `step` must not run, else None."""
        not_applicable: str = getattr(step, "not_applicable", "")
        if not_applicable:
            self.unmet_skips.add(step.id)  # its dependents are skipped with this reason too
            return StepResult(step.id, Status.SKIPPED, reason=f"not applicable: {not_applicable}")
        only = self.options.only_stages
        if only and step.stage.value not in only and step.id not in self.needed_servers:
            return StepResult(
                step.id, Status.SKIPPED, reason=f"stage {step.stage.value} not in --only {','.join(only)}"
            )
        for dep in step.depends_on:
            server = self.servers.get(dep)
            if server is not None and server.handle.poll() is not None:
                self._stop_server(dep)  # it died while its dependents ran: record that before blocking
            dep_result = self.record.result(dep)
            if dep in self.unmet_skips and dep_result is not None:
                self.unmet_skips.add(step.id)  # and so on down the chain: infer after a skipped export
                return StepResult(
                    step.id,
                    Status.SKIPPED,
                    reason=f"not run: its input step {dep} was skipped ({dep_result.reason})",
                )
            if dep_result is None:
                known = any(s.id == dep for s in self.plan.steps)
                why = "has not run" if known else "is not a step of this plan"
                return StepResult(step.id, Status.BLOCKED, reason=f"not run: its input step {dep} {why}")
            if dep_result.status not in _SATISFIED:
                root = dep_result.reason.split("root cause: ", 1)
                cause = (
                    f"root cause: {root[1]}"
                    if len(root) == 2
                    else f"root cause: {dep} {dep_result.status.value}"
                )
                return StepResult(
                    step.id,
                    Status.BLOCKED,
                    reason=f"not run: its input step {dep} did not pass ({dep_result.status.value}); {cause}",
                )
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return StepResult(
                step.id,
                Status.BLOCKED,
                reason=f"not run: the run limit of {self.options.run_timeout_s:g} s was reached",
            )
        unmet = self._unmet_requirement(step)
        if unmet is not None:
            self.unmet_skips.add(step.id)
            return StepResult(step.id, Status.SKIPPED, reason=unmet)
        return None

    def _unmet_requirement(self, step: Step) -> str | None:
        """Why `step` cannot run here (a module its interpreter cannot import), or None.

        `requires_modules` / `requires_reason` are newer Step fields (e.g. Paddle Serving steps); the step's
        own interpreter is asked. If it cannot even start, None: the step then runs and fails with the real
        error.
        """
        modules: tuple[str, ...] = tuple(getattr(step, "requires_modules", ()) or ())
        if not modules:
            return None
        written = _interpreter_of(step)
        interpreter = self.mapping.get(written, written) if written is not None else sys.executable
        key = (interpreter, modules)
        if key not in self.requirement_cache:
            code, out = proc.capture(
                [interpreter, str(_FIND_MODULES), *modules], cwd=self.repo, timeout_s=120
            )
            lines = out.strip().splitlines()
            self.requirement_cache[key] = lines[-1] if code == 1 and lines else None
        missing = self.requirement_cache[key]
        if missing is None:
            return None
        why: str = (
            getattr(step, "requires_reason", "") or f"{interpreter} cannot import a module this step needs"
        )
        return f"{why} [needs {', '.join(missing.split())}]"
