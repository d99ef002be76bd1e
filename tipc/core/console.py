"""The one output choke point: a rich Console (imported lazily) and the progress-observer interface.

The runner reports progress to an `Observer`; it never knows how (or whether) it is displayed.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rich.console import Console

    from tipc.core.steps import Plan, Step
    from tipc.execute.record import StepResult

_console: Console | None = None


def human_bytes(n: int | None) -> str:
    """A byte count for people: `512 B`, `3.0 MiB`; "n/a" when unknown."""
    if n is None:
        return "n/a"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def use_color(no_color: bool = False) -> bool:
    if no_color or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def get_console(no_color: bool = False) -> Console:
    """The single rich Console. Imported lazily: rich costs ~50 ms and `--help` must stay instant."""
    global _console
    if _console is None:
        from rich.console import Console

        _console = Console(no_color=no_color or bool(os.environ.get("NO_COLOR")), highlight=False)
    return _console


class Observer(Protocol):
    """Progress callbacks; the runner calls these and nothing else about display."""

    def plan_started(self, plan: Plan) -> None: ...

    def step_started(self, index: int, total: int, step: Step) -> None: ...

    def step_output(self, step: Step, line: str) -> None: ...

    def step_finished(self, index: int, total: int, step: Step, result: StepResult) -> None: ...

    def plan_finished(self, plan: Plan, results: Any) -> None: ...


class NullObserver:
    def plan_started(self, plan: Plan) -> None:
        pass

    def step_started(self, index: int, total: int, step: Step) -> None:
        pass

    def step_output(self, step: Step, line: str) -> None:
        pass

    def step_finished(self, index: int, total: int, step: Step, result: StepResult) -> None:
        pass

    def plan_finished(self, plan: Plan, results: Any) -> None:
        pass
