from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from rich.console import Console

from tipc.core.progress import Kind, ProgressEvent
from tipc.core.steps import Mode, Plan, Stage, Step
from tipc.execute.runner import RunOptions, execute
from tipc.report.progress import (
    PlainObserver,
    PlainProgress,
    RichObserver,
    RichProgress,
    log_tail,
    make_observer,
    make_progress,
)

OUT = "out"


def _plan(repo: Path) -> Plan:
    steps = (
        Step("train", Stage.TRAIN, (sys.executable, "-c", "print('epoch 1 loss 2.0')")),
        Step(
            "eval",
            Stage.EVAL,
            (sys.executable, "-c", "import sys; print('bad weights'); sys.exit(2)"),
            depends_on=("train",),
        ),
        Step("infer", Stage.INFER, (sys.executable, "-c", "print(1)"), depends_on=("eval",)),
    )
    return Plan(
        "cfg.txt",
        str(repo),
        Mode.LITE_TRAIN_LITE_INFER,
        "template",
        "m",
        OUT,
        f"{OUT}/r.log",
        "template",
        steps,
    )


OPTS = RunOptions(probe_versions=False, monitor=False)


def test_plain_observer_reports_each_step_and_the_failure_tail(tmp_path: Path) -> None:
    stream = io.StringIO()
    execute(_plan(tmp_path), OPTS, PlainObserver(stream))
    text = stream.getvalue()
    assert "[1/3] train: PASSED" in text
    assert "[2/3] eval: FAILED" in text and "exit code 2" in text
    assert "    | bad weights" in text  # the log tail of the failing step
    assert "[3/3] infer: BLOCKED" in text and "root cause: eval failed" in text
    assert "3 steps: the chain's 3 step(s) that apply here: 1 passed, 1 failed, 1 blocked" in text
    assert "\x1b" not in text


def test_rich_observer_prints_a_summary_table(tmp_path: Path) -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=200, color_system=None)
    execute(_plan(tmp_path), OPTS, RichObserver(console))
    text = buf.getvalue()
    for word in ("step", "status", "peak memory", "train", "passed", "eval", "failed", "infer", "blocked"):
        assert word in text
    assert "bad weights" in text


def test_observer_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("CI", raising=False)
    assert isinstance(make_observer(stream=io.StringIO()), PlainObserver)  # piped
    assert isinstance(make_observer(stream=Tty()), RichObserver)
    monkeypatch.setenv("CI", "true")
    assert isinstance(make_observer(stream=Tty()), PlainObserver)


def test_helpers(tmp_path: Path) -> None:
    (tmp_path / "x.log").write_text("".join(f"line {i}\n" for i in range(50)))
    assert log_tail(str(tmp_path), "x.log", 2) == ["line 48", "line 49"]
    assert log_tail(str(tmp_path), "missing.log") == []


# --- checks announced while they work -------------------------------------------------------------------


class _Outcome:
    def __init__(self, verdict: str) -> None:
        from tipc.judge.checks.base import Verdict

        self.verdict = Verdict(verdict)


def test_slow_checks_are_announced_and_fast_ones_stay_quiet() -> None:
    import time

    from tipc.report.progress import announced_checks

    stream = io.StringIO()

    def slow(ctx: object, **args: object) -> _Outcome:
        time.sleep(0.3)
        return _Outcome("FAIL")

    checks = {"quick": lambda ctx, **args: _Outcome("PASS"), "slow": slow}
    wrapped = announced_checks(checks, PlainObserver(stream), quiet_s=0.1)
    assert wrapped["quick"](None).verdict.value == "PASS"
    assert wrapped["slow"](None, x=1).verdict.value == "FAIL"
    lines = stream.getvalue().splitlines()
    assert lines[0] == "tipc: check slow ..."
    assert lines[1].startswith("tipc: check slow: FAIL (") and len(lines) == 2


def test_a_check_that_raises_is_still_closed_and_re_raises() -> None:
    from tipc.report.progress import announced_checks

    stream = io.StringIO()

    def broken(ctx: object) -> None:
        import time

        time.sleep(0.2)
        raise RuntimeError("boom")

    wrapped = announced_checks({"broken": broken}, PlainObserver(stream), quiet_s=0.05)
    with pytest.raises(RuntimeError, match="boom"):
        wrapped["broken"](None)
    assert stream.getvalue().splitlines()[-1].startswith("tipc: check broken: error (")


def test_an_observer_without_check_methods_gets_the_checks_unchanged() -> None:
    from tipc.execute.observer import NullObserver
    from tipc.report.progress import announced_checks

    def fn(ctx: object) -> None:
        return None

    assert announced_checks({"a": fn}, NullObserver()) == {"a": fn}


# --- phases (tipc.core.progress events) ---


def _events(label: str = "baseline run 1/1") -> list[ProgressEvent]:
    return [
        ProgressEvent(Kind.STARTED, label),
        ProgressEvent(Kind.UPDATE, label, "[1/5] train ..."),
        ProgressEvent(Kind.UPDATE, label, "iteration 7 loss 0.3", notable=False),
        ProgressEvent(Kind.FINISHED, label, outcome="passed", elapsed_s=61.0),
    ]


def test_plain_progress_prints_a_line_per_start_news_and_end_but_not_chatter() -> None:
    stream = io.StringIO()
    with PlainProgress(stream, heartbeat_s=0) as display:
        for event in _events():
            display(event)
    assert stream.getvalue().splitlines() == [
        "tipc: baseline run 1/1 ...",
        "tipc: baseline run 1/1: [1/5] train ...",
        "tipc: baseline run 1/1: passed (1m01s)",
    ]


def test_plain_progress_says_which_phase_has_been_silent_with_its_latest_news() -> None:
    stream = io.StringIO()
    now = [100.0]
    display = PlainProgress(stream, heartbeat_s=30, clock=lambda: now[0])
    start, _news, chatter, end = _events()
    display(start)
    display(chatter)  # chatter does not count as something said
    now[0] = 129.0
    display.tick()
    now[0] = 131.0
    display.tick()
    display.tick()  # said just now: not again
    display(end)
    display.tick()  # finished: never again
    display.close()
    lines = stream.getvalue().splitlines()
    assert lines[1] == "tipc: baseline run 1/1: still working (31.0s): iteration 7 loss 0.3"
    assert len(lines) == 3 and lines[-1].endswith("passed (1m01s)")


def test_rich_progress_draws_a_live_line_and_keeps_the_finished_one() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=120, color_system=None)
    display = RichProgress(console)
    start, news, _chatter, end = _events()
    display(start)
    display(news)
    assert display.live is not None  # a phase runs: the live view is on
    display.live.refresh()  # what its refresh thread draws 4 times a second
    display(end)
    assert display.live is None  # nothing runs: the terminal is the user's again
    text = buf.getvalue()
    assert "baseline run 1/1" in text and "[1/5] train ..." in text
    assert "baseline run 1/1: passed (1m01s)\n" in text  # the line that stays


def test_progress_display_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("CI", raising=False)
    assert isinstance(make_progress(io.StringIO()), PlainProgress)
    rich_display = make_progress(Tty())
    assert isinstance(rich_display, RichProgress)
    rich_display.close()
    monkeypatch.setenv("CI", "true")
    assert isinstance(make_progress(Tty()), PlainProgress)
