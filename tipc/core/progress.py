"""Progress of long work, as values: a verb tells a `Progress` callable what phase it is in and what is new,
and never knows how (or whether) that is shown. tipc.report.progress draws it (rich on a terminal, plain
lines elsewhere); a library caller passes any callable (`tipc.check(..., progress=print)`).

A phase is started, updated with news, and finished with an outcome and its seconds (`phase()` does the
bookkeeping). Child `tipc` processes say what they do in lines; `child_news` picks the ones worth passing on.
"""

from __future__ import annotations

import enum
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tipc.core.units import human_seconds


class Kind(str, enum.Enum):
    STARTED = "started"
    UPDATE = "update"
    FINISHED = "finished"


@dataclass(frozen=True)
class ProgressEvent:
    kind: Kind
    phase: str  # what is under way, e.g. "baseline run 2/3", "Paddle 3.3.1"
    detail: str = ""  # UPDATE: the latest news (a step of a child run, a checkpoint saved)
    outcome: str = ""  # FINISHED: "done", "passed", "failed", "interrupted", ...
    elapsed_s: float | None = None  # FINISHED: how long the phase took
    # UPDATE: False for chatter (an application's log line): a terminal shows it in the phase's live line,
    # a log file only in its still-working lines
    notable: bool = True

    def text(self) -> str:
        """One line for people: what a plain display prints for this event."""
        if self.kind is Kind.STARTED:
            return f"{self.phase} ..."
        if self.kind is Kind.UPDATE:
            return f"{self.phase}: {self.detail}"
        took = f" ({human_seconds(self.elapsed_s)})" if self.elapsed_s is not None else ""
        return f"{self.phase}: {self.outcome or 'done'}{took}"


Progress = Callable[[ProgressEvent], None]


def no_progress(event: ProgressEvent) -> None:
    """The Progress that shows nothing (library calls and tests that do not ask for any)."""


class Phase:
    """The handle `phase()` yields: news for the phase, and its outcome when it is not plain "done"."""

    def __init__(self, progress: Progress, label: str) -> None:
        self.progress = progress
        self.label = label
        self.outcome = ""

    def update(self, detail: str, *, notable: bool = True) -> None:
        detail = detail.strip()
        if detail:
            self.progress(ProgressEvent(Kind.UPDATE, self.label, detail, notable=notable))

    def child_line(self, line: str) -> None:
        """A line of a child `tipc`'s output: passed on when it says what the child is doing."""
        news = child_news(line)
        if news is not None:
            self.update(news)


@contextmanager
def phase(
    progress: Progress, label: str, *, clock: Callable[[], float] = time.monotonic
) -> Iterator[Phase]:
    """STARTED now, FINISHED when the block ends: with the handle's outcome (default "done"), "interrupted"
    on Ctrl-C, "error" on an exception (which goes on)."""
    t0 = clock()
    handle = Phase(progress, label)
    progress(ProgressEvent(Kind.STARTED, label))
    outcome = ""
    try:
        yield handle
    except KeyboardInterrupt:
        outcome = "interrupted"
        raise
    except BaseException:
        outcome = "error"
        raise
    finally:
        outcome = outcome or handle.outcome or "done"
        progress(ProgressEvent(Kind.FINISHED, label, outcome=outcome, elapsed_s=clock() - t0))


# What a child tipc prints about its progress (tipc.report.progress.PlainObserver and the checks' lines):
# `[2/5] eval/... ...`, `[2/5] eval/...: PASSED (...)`, `tipc: check agreement ...`, `tipc: running 3 steps`.
_CHILD_NEWS = re.compile(r"^(?:\[\d+/\d+\] \S|tipc: (?:check \S|running \d+ steps|\d+ steps: ))")
MAX_NEWS = 160


def child_news(line: str) -> str | None:
    """The news in a child tipc's output line (a step started or finished, a check under way), shortened;
    None for the rest (environment lines, log tails, JSON)."""
    text = line.rstrip()
    if not _CHILD_NEWS.match(text):
        return None
    text = text.removeprefix("tipc: ")
    return text if len(text) <= MAX_NEWS else text[: MAX_NEWS - 3] + "..."
