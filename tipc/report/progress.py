"""Progress observers, on stderr: the chain's steps (`tipc run`, `tipc check`) and the phases of every verb
(tipc.core.progress events), as a rich live view on a terminal and plain lines for CI and pipes.

Only this module and console.py import rich, and only when an observer is built.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

from tipc.core.causes import hide_own_frames
from tipc.core.console import stream_console
from tipc.core.paths import PathMap
from tipc.core.progress import Kind, ProgressEvent
from tipc.core.steps import Status
from tipc.core.units import human_bytes, human_seconds
from tipc.execute.record import record_location

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live

    from tipc.core.steps import Plan, Step
    from tipc.execute.record import RunRecord, StepResult

TAIL_LINES = 8
FAILURE_TAIL_LINES = 20

_STYLE = {
    Status.PASSED: "green",
    Status.FAILED: "red",
    Status.TIMEOUT: "red",
    Status.INTERRUPTED: "yellow",
    Status.BLOCKED: "magenta",
    Status.SKIPPED: "dim",
}


def _status_word(result: StepResult) -> str:
    return result.status.value + (" (reused)" if result.reused else "")


def log_tail(repo: str, log: str | None, lines: int = FAILURE_TAIL_LINES) -> list[str]:
    """The last `lines` lines of a step's log (repo-relative or absolute path); [] if it cannot be read."""
    if not log:
        return []
    path = os.path.join(repo, log)
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 64 * 1024))
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    return hide_own_frames(text).splitlines()[-lines:]


def _shows_tail(result: StepResult) -> bool:
    return result.status in (Status.FAILED, Status.TIMEOUT) and not result.reused


def _paths(repo: str = ".") -> PathMap:
    """Where the files of the run this process is in really are (tipc.core.paths)."""
    from pathlib import Path

    from tipc.execute.shown import path_map

    return path_map(repo=Path(repo))


def summary_rows(
    record: RunRecord, paths: PathMap | None = None
) -> list[tuple[str, str, str, str, str, str]]:
    """(step, status, time, peak memory, log as it is found on disk, reason) per step in plan order."""
    paths = paths if paths is not None else _paths(record.plan.repo)
    rows = []
    for step in record.plan.steps:
        r = record.result(step.id)
        if r is None:
            rows.append((step.id, "not run", "-", "n/a", "", ""))
            continue
        rows.append(
            (
                step.id,
                _status_word(r),
                human_seconds(r.duration_s),
                human_bytes(r.resources.peak_rss_bytes),
                paths.shown(r.log),
                r.reason,
            )
        )
    return rows


def totals_line(record: RunRecord) -> str:
    from tipc.report.totals import step_totals

    wall = None if record.ended is None else record.ended - record.started
    items = []
    for step in record.plan.steps:
        r = record.result(step.id)
        items.append(
            (step.stage.value, r.status.value if r is not None else "not run", r.reason if r else "")
        )
    return f"{step_totals(items)} in {human_seconds(wall)}"


class PlainObserver:
    """One line per event, no colour, no cursor movement: for CI logs and pipes."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.repo = "."
        self.paths: PathMap | None = None

    def _say(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def notice(self, message: str) -> None:
        self._say(f"tipc: note: {message}")

    def plan_started(self, plan: Plan) -> None:
        self.repo = plan.repo
        self.paths = _paths(plan.repo)
        self._say(f"tipc: running {len(plan.steps)} steps of {plan.config_path} ({plan.mode}) in {plan.repo}")

    def step_started(self, index: int, total: int, step: Step) -> None:
        self._say(f"[{index}/{total}] {step.id} ...")

    def step_output(self, step: Step, line: str) -> None:
        pass

    def step_finished(self, index: int, total: int, step: Step, result: StepResult) -> None:
        extra = f" - {result.reason}" if result.reason else ""
        peak = result.resources.peak_rss_bytes
        mem = f", peak {human_bytes(peak)}" if peak else ""
        paths = self.paths or _paths(self.repo)
        log = f", log {paths.shown(result.log)}" if result.log else ""
        took = human_seconds(result.duration_s)
        self._say(f"[{index}/{total}] {step.id}: {_status_word(result).upper()} ({took}{mem}{log}){extra}")
        for line in cause_lines(result, paths):
            self._say(f"    {line}")
        if _shows_tail(result):
            for line in log_tail(self.repo, result.log):
                self._say(f"    | {line}")

    def plan_finished(self, plan: Plan, record: RunRecord) -> None:
        self._say("tipc: " + totals_line(record))
        self._say(f"tipc: run record {shown_record(plan)}")

    def check_started(self, name: str) -> None:
        self._say(f"tipc: check {name} ...")

    def check_finished(self, name: str, verdict: str, seconds: float) -> None:
        self._say(f"tipc: check {name}: {verdict} ({human_seconds(seconds)})")


def shown_record(plan: Plan) -> str:
    """The run record's path as the user finds it after the run (inside a sandbox: in the run folder)."""
    from pathlib import Path

    from tipc.execute import sandbox

    path = Path(plan.repo) / record_location(plan)
    session = sandbox.current()
    return str(session.real_path(path) if session is not None else path)


def cause_lines(result: StepResult, paths: PathMap | None = None) -> list[str]:
    """The plain cause and remedy of a failed step, shown before its log tail (its own error first, then
    the earlier step it follows from, if any); paths as they are found on disk."""
    causes = getattr(result, "causes", ())
    if not causes:
        return []
    text = paths.text if paths is not None else (lambda t: t)
    first = causes[0]
    lines = [f"cause: {text(first.cause)}"]
    if first.evidence:
        lines.append(f"  seen: {first.evidence.strip()[:200]}")
    if first.remedy:
        lines.append(f"remedy: {text(first.remedy)}")
    lines += [f"also: {text(c.cause)}" for c in causes[1:3]]
    return lines


class RichObserver:
    """A live panel (step i/N, elapsed time, tail of the current log) and a summary table at the end."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live: Live | None = None
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)
        self.lock = threading.Lock()
        self.current: tuple[int, int, Step] | None = None
        self.step_t0 = 0.0
        self.run_t0 = 0.0
        self.repo = "."
        self.phases = RichProgress(console)
        self.paths: PathMap | None = None

    def __rich__(self) -> RenderableType:
        from rich.console import Group
        from rich.panel import Panel
        from rich.text import Text

        with self.lock:
            tail = list(self.tail)
            current = self.current
        if current is None:
            return Text("")
        index, total, step = current
        now = time.monotonic()
        title = (
            f"[{index}/{total}] {step.id}  step {human_seconds(now - self.step_t0)}"
            f"  run {human_seconds(now - self.run_t0)}"
        )
        body = Text("\n".join(line[-200:] for line in tail) or "(no output yet)", style="dim")
        return Group(Panel(body, title=title, title_align="left"))

    def notice(self, message: str) -> None:
        self.console.print(f"[yellow]note:[/] {message}", markup=True, highlight=False)

    def check_started(self, name: str) -> None:
        # a live line with its spinner and time while the check works (agreement, serving: 10-30 s)
        self.phases(ProgressEvent(Kind.STARTED, f"check {name}"))

    def check_finished(self, name: str, verdict: str, seconds: float) -> None:
        self.phases(ProgressEvent(Kind.FINISHED, f"check {name}", outcome=verdict, elapsed_s=seconds))

    def plan_started(self, plan: Plan) -> None:
        from rich.live import Live

        self.run_t0 = time.monotonic()
        self.repo = plan.repo
        self.paths = _paths(plan.repo)
        self.console.print(
            f"Running {len(plan.steps)} steps of {plan.config_path} ({plan.mode})", markup=False
        )
        self.live = Live(self, console=self.console, refresh_per_second=4, transient=True)
        self.live.start()

    def step_started(self, index: int, total: int, step: Step) -> None:
        with self.lock:
            self.current = (index, total, step)
            self.tail.clear()
        self.step_t0 = time.monotonic()

    def step_output(self, step: Step, line: str) -> None:
        with self.lock:
            self.tail.append(line)

    def step_finished(self, index: int, total: int, step: Step, result: StepResult) -> None:
        from rich.text import Text

        with self.lock:
            self.current = None
        line = Text(f"[{index}/{total}] ")
        line.append(_status_word(result).upper(), style=_STYLE.get(result.status, ""))
        line.append(f" {step.id} ({human_seconds(result.duration_s)})")
        if result.reason:
            line.append(f"  {result.reason}", style="dim")
        self.console.print(line)
        for text in cause_lines(result, self.paths):
            self.console.print(Text(f"    {text}", style="bold"))
        if _shows_tail(result):
            tail = log_tail(self.repo, result.log)
            if tail:
                self.console.print(Text("\n".join(f"    | {t}" for t in tail), style="dim"))

    def plan_finished(self, plan: Plan, record: RunRecord) -> None:
        from rich.table import Table

        if self.live is not None:
            self.live.stop()
            self.live = None
        table = Table(title=totals_line(record), title_justify="left")
        for col in ("step", "status", "time", "peak memory", "log"):
            table.add_column(col, overflow="fold")
        for step_id, status, took, mem, log, _reason in summary_rows(record, self.paths):
            style = next((v for k, v in _STYLE.items() if status.startswith(k.value)), "")
            table.add_row(step_id, f"[{style}]{status}[/]" if style else status, took, mem, log)
        self.console.print(table)
        self.console.print(f"run record: {shown_record(plan)}", markup=False)


def wants_plain(stream: IO[str] | None = None) -> bool:
    stream = stream if stream is not None else sys.stderr
    ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    isatty = getattr(stream, "isatty", None)
    return ci or isatty is None or not isatty()


def make_observer(
    *, no_color: bool = False, plain: bool | None = None, stream: IO[str] | None = None
) -> PlainObserver | RichObserver:
    """The rich observer on an interactive terminal, the plain one in CI (CI=true) or when output is piped;
    on stderr unless `stream` says otherwise."""
    stream = stream if stream is not None else sys.stderr
    if plain is None:
        plain = wants_plain(stream)
    if plain:
        return PlainObserver(stream)
    return RichObserver(stream_console(stream, no_color=no_color))


# --- checks: the model-side work after the chain (ONNX, agreement, predict/infer, a server under load) ---

_Outcome = TypeVar("_Outcome")  # what a check returns (a CheckOutcome), passed through untouched
CHECK_QUIET_S = 0.5  # a check that ends sooner is not announced: most read a log and take milliseconds


@runtime_checkable
class CheckObserver(Protocol):
    """An observer told of the checks that take long (the terminal views); one without these methods (the
    NullObserver) is told nothing."""

    def check_started(self, name: str) -> None: ...

    def check_finished(self, name: str, verdict: str, seconds: float) -> None: ...


def announced_checks(
    checks: Mapping[str, Callable[..., _Outcome]],
    observer: object,  # told only when it is a CheckObserver
    *,
    quiet_s: float = CHECK_QUIET_S,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Callable[..., _Outcome]]:
    """The check registry with each call that runs past `quiet_s` told to the observer (`check_started`
    when it passes `quiet_s`, `check_finished` with its verdict and seconds), so the terminal is never silent
    while a check works. An observer without those methods (NullObserver) is told nothing."""
    if not isinstance(observer, CheckObserver):
        return dict(checks)
    started_fn, finished_fn = observer.check_started, observer.check_finished

    def announced(name: str, fn: Callable[..., _Outcome]) -> Callable[..., _Outcome]:
        def call(ctx: object, **args: object) -> _Outcome:
            t0 = clock()
            lock = threading.Lock()
            state = {"done": False, "told": False}

            def tell() -> None:
                with lock:  # never a "started" line after the "finished" one
                    if not state["done"]:
                        state["told"] = True
                        started_fn(name)

            timer = threading.Timer(quiet_s, tell)
            timer.daemon = True
            timer.start()
            verdict = "error"
            try:
                outcome = fn(ctx, **args)
                verdict = str(getattr(getattr(outcome, "verdict", None), "value", "done"))
                return outcome
            finally:
                timer.cancel()
                with lock:
                    state["done"] = True
                    told = state["told"]
                if told:
                    finished_fn(name, verdict, clock() - t0)

        return call

    return {name: announced(name, fn) for name, fn in checks.items()}


# --- phases: the long work of every verb (tipc.core.progress events), on stderr ---

HEARTBEAT_S = 30.0  # a log file gets a still-working line for a phase silent this long


class _Active:
    """A running phase as a display keeps it: when it started, its latest news, when it last printed."""

    __slots__ = ("count", "detail", "said", "started")

    def __init__(self, now: float) -> None:
        self.started = now
        self.said = now
        self.detail = ""
        self.count = 1


def _outcome_style(outcome: str) -> str:
    word = outcome.lower()
    if word.startswith(("fail", "error", "broken", "timeout")):
        return "red"
    if word.startswith(("interrupt", "stop", "skip")):
        return "yellow"
    return "green"


class PlainProgress:
    """Phases as plain lines (CI logs, pipes): a line when one starts, on each notable piece of news and
    when it ends, and a still-working line (with its latest news) for a phase silent `heartbeat_s`."""

    def __init__(
        self,
        stream: IO[str] | None = None,
        *,
        prefix: str = "tipc: ",
        heartbeat_s: float = HEARTBEAT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.prefix = prefix
        self.heartbeat_s = heartbeat_s
        self.clock = clock
        self._lock = threading.Lock()
        self._active: dict[str, _Active] = {}
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def _say(self, text: str) -> None:
        try:
            self.stream.write(f"{self.prefix}{text}\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed pipe: progress is never a reason to fail
            pass

    def __call__(self, event: ProgressEvent) -> None:
        now = self.clock()
        with self._lock:
            state = self._active.get(event.phase)
            if event.kind is Kind.STARTED:
                if state is None:
                    self._active[event.phase] = _Active(now)
                else:
                    state.count += 1
            elif event.kind is Kind.UPDATE and state is not None:
                state.detail = event.detail
                if event.notable:
                    state.said = now
            elif event.kind is Kind.FINISHED and state is not None:
                state.count -= 1
                if state.count <= 0:
                    del self._active[event.phase]
            if event.kind is not Kind.UPDATE or event.notable:
                self._say(event.text())
            if self._active and self._ticker is None and self.heartbeat_s > 0:
                self._ticker = threading.Thread(target=self._tick, name="tipc-progress", daemon=True)
                self._ticker.start()

    def tick(self) -> None:
        """Say which phases have been silent `heartbeat_s` (the ticker thread calls this every second)."""
        now = self.clock()
        with self._lock:
            for label, state in self._active.items():
                if now - state.said >= self.heartbeat_s:
                    state.said = now
                    news = f": {state.detail}" if state.detail else ""
                    self._say(f"{label}: still working ({human_seconds(now - state.started)}){news}")

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            self.tick()

    def close(self) -> None:
        self._stop.set()

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RichProgress:
    """Phases on a terminal: a live line per running phase (spinner, elapsed time, latest news), redrawn
    while it runs, and a line that stays when it ends. The live view exists only while a phase runs."""

    def __init__(self, console: Console, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.console = console
        self.clock = clock
        self._lock = threading.RLock()
        self._active: dict[str, _Active] = {}
        self.live: Live | None = None

    def __rich__(self) -> RenderableType:
        from rich.spinner import Spinner
        from rich.table import Table
        from rich.text import Text

        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(no_wrap=True)
        grid.add_column(no_wrap=True, overflow="ellipsis")
        now = self.clock()
        with self._lock:
            for label, state in self._active.items():
                news = Text(state.detail, style="dim")
                grid.add_row(Spinner("dots", text=Text(label)), human_seconds(now - state.started), news)
        return grid

    def __call__(self, event: ProgressEvent) -> None:
        from rich.text import Text

        with self._lock:
            state = self._active.get(event.phase)
            if event.kind is Kind.STARTED:
                if state is None:
                    self._active[event.phase] = _Active(self.clock())
                else:
                    state.count += 1
                self._start(event.phase)
            elif event.kind is Kind.UPDATE and state is not None:
                state.detail = event.detail
            elif event.kind is Kind.FINISHED:
                if state is not None:
                    state.count -= 1
                    if state.count <= 0:
                        del self._active[event.phase]
                line = Text(f"{event.phase}: ")
                line.append(event.outcome or "done", style=_outcome_style(event.outcome))
                if event.elapsed_s is not None:
                    line.append(f" ({human_seconds(event.elapsed_s)})", style="dim")
                self.console.print(line)
                if not self._active:
                    self._stop()

    def _start(self, label: str) -> None:
        if self.live is not None:
            return
        from rich.errors import LiveError
        from rich.live import Live

        # Stdout keeps what a verb prints there (a table, JSON) unless it is this same terminal.
        live = Live(
            self,
            console=self.console,
            refresh_per_second=4,
            transient=True,
            redirect_stdout=sys.stdout.isatty(),
            redirect_stderr=True,
        )
        try:
            live.start()
        except LiveError:  # another live view holds this console (a run's step panel): lines only
            self.console.print(f"{label} ...", markup=False, highlight=False)
            return
        self.live = live

    def _stop(self) -> None:
        if self.live is not None:
            live, self.live = self.live, None
            live.stop()

    def close(self) -> None:
        with self._lock:
            self._stop()

    def __enter__(self) -> RichProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_progress(
    stream: IO[str] | None = None,
    *,
    no_color: bool = False,
    plain: bool | None = None,
    prefix: str = "tipc: ",
) -> PlainProgress | RichProgress:
    """Where phases are shown: a live view on a terminal (stderr by default), plain lines in CI (CI=true)
    or when the stream is piped. Close it (or use it as a context manager) when the verb is done."""
    stream = stream if stream is not None else sys.stderr
    if plain is None:
        plain = wants_plain(stream)
    if plain:
        return PlainProgress(stream, prefix=prefix)
    return RichProgress(stream_console(stream, no_color=no_color))
