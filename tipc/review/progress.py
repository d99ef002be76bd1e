"""The review's live progress on stderr: a table of submissions (state, time, verdict) redrawn in place on a
terminal, one line per event elsewhere. An observer only: it never decides anything."""

from __future__ import annotations

import threading
import time
from typing import IO, Any

from tipc.core.units import human_bytes, human_seconds
from tipc.review.summary import Row

_MAX_WIDTH = {"state": 60, "first failing rule": 70}  # a running check's state is its current stage


class PlainReviewObserver:
    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self._lock = threading.Lock()
        self.total = 0
        self.done = 0

    def _say(self, text: str) -> None:
        with self._lock:
            self.stream.write(text + "\n")
            self.stream.flush()

    def notice(self, text: str) -> None:
        self._say(f"review: {text}")

    def queued(self, names: list[str]) -> None:
        self.total += len(names)

    def started(self, name: str) -> None:
        self._say(f"review: started {name}")

    def stage(self, name: str, text: str) -> None:
        self._say(f"review: {name}: {text}")

    def finished(self, row: Row) -> None:
        self.done += 1
        what = f"{row.first_failure}: {row.cause}" if row.first_failure else ""
        cached = " (cached)" if row.cached else ""
        took, peak = human_seconds(row.wall_s), human_bytes(row.peak_rss_bytes or None)
        where = f"[{self.done}/{self.total}]"
        self._say(f"review: {where} {row.name} {row.verdict}{cached} {took} {peak} {what}".rstrip())

    def close(self) -> None:
        pass


class RichReviewObserver:
    """A live table: one line per submission, its state and elapsed time, then its verdict."""

    def __init__(self, stream: IO[str], no_color: bool = False) -> None:
        from rich.console import Console
        from rich.live import Live

        self.console = Console(file=stream, no_color=no_color, highlight=False)
        self._lock = threading.Lock()
        self.order: list[str] = []
        self.state: dict[str, tuple[str, float | None, Row | None]] = {}
        self.live = Live(self, console=self.console, refresh_per_second=2, transient=False)
        self.live.start()

    def __rich__(self) -> Any:
        from rich.table import Table

        table = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
        for col in ("submission", "state", "time", "peak mem", "first failing rule"):
            table.add_column(
                col, overflow="ellipsis", no_wrap=True, max_width=_MAX_WIDTH.get(col)
            )
        now = time.monotonic()
        with self._lock:
            for name in self.order:
                state, since, row = self.state[name]
                if row is not None:
                    colour = "green" if row.verdict == "PASS" else "red"
                    verdict = f"[{colour}]{row.verdict}[/]" + (" (cached)" if row.cached else "")
                    failing = f"{row.first_failure}: {row.cause}" if row.first_failure else ""
                    took, peak = human_seconds(row.wall_s), human_bytes(row.peak_rss_bytes or None)
                    table.add_row(name, verdict, took, peak, failing)
                else:
                    elapsed = human_seconds(now - since) if since is not None else ""
                    table.add_row(name, state, elapsed, "", "")
        return table

    def notice(self, text: str) -> None:
        self.console.print(f"review: {text}", markup=False)

    def queued(self, names: list[str]) -> None:
        with self._lock:
            for n in names:
                if n not in self.state:
                    self.order.append(n)
                self.state[n] = ("queued", None, None)

    def started(self, name: str) -> None:
        with self._lock:
            self.state[name] = ("running", time.monotonic(), None)

    def stage(self, name: str, text: str) -> None:
        with self._lock:
            _state, since, row = self.state.get(name, ("running", time.monotonic(), None))
            if row is None:
                self.state[name] = (text, since, None)

    def finished(self, row: Row) -> None:
        with self._lock:
            if row.name not in self.state:
                self.order.append(row.name)
            self.state[row.name] = ("done", None, row)

    def close(self) -> None:
        self.live.stop()


def make_review_observer(stream: IO[str], *, no_color: bool = False) -> Any:
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        return RichReviewObserver(stream, no_color=no_color)
    return PlainReviewObserver(stream)
