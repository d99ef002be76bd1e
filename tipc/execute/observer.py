"""The progress-observer interface: the runner reports progress to an `Observer`; it never knows how (or
whether) it is displayed (tipc.report.progress draws it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tipc.core.steps import Plan, Step
    from tipc.execute.record import RunRecord, StepResult


class Observer(Protocol):
    """Progress callbacks; the runner calls these and nothing else about display."""

    def plan_started(self, plan: Plan) -> None: ...

    def step_started(self, index: int, total: int, step: Step) -> None: ...

    def step_output(self, step: Step, line: str) -> None: ...

    def step_finished(self, index: int, total: int, step: Step, result: StepResult) -> None: ...

    def plan_finished(self, plan: Plan, record: RunRecord) -> None: ...


class NullObserver:
    def plan_started(self, plan: Plan) -> None:
        pass

    def step_started(self, index: int, total: int, step: Step) -> None:
        pass

    def step_output(self, step: Step, line: str) -> None:
        pass

    def step_finished(self, index: int, total: int, step: Step, result: StepResult) -> None:
        pass

    def plan_finished(self, plan: Plan, record: RunRecord) -> None:
        pass
