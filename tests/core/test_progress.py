"""tipc.core.progress: phases as events, and the news picked from a child tipc's output."""

from __future__ import annotations

import pytest

from tipc.core.progress import Kind, ProgressEvent, child_news, phase


def test_a_phase_is_started_updated_and_finished_with_its_outcome_and_time() -> None:
    events: list[ProgressEvent] = []
    ticks = iter([10.0, 12.5])
    with phase(events.append, "baseline run 1/3", clock=lambda: next(ticks)) as ph:
        ph.update("  [1/5] train ...  ")
        ph.update("")  # nothing to say: no event
        ph.update("a log line", notable=False)
        ph.outcome = "passed"
    assert [(e.kind, e.phase) for e in events] == [
        (Kind.STARTED, "baseline run 1/3"),
        (Kind.UPDATE, "baseline run 1/3"),
        (Kind.UPDATE, "baseline run 1/3"),
        (Kind.FINISHED, "baseline run 1/3"),
    ]
    assert events[1].detail == "[1/5] train ..." and events[1].notable and not events[2].notable
    assert events[-1].outcome == "passed" and events[-1].elapsed_s == 2.5
    assert [e.text() for e in (events[0], events[1], events[-1])] == [
        "baseline run 1/3 ...",
        "baseline run 1/3: [1/5] train ...",
        "baseline run 1/3: passed (2.5s)",
    ]


def test_an_interrupted_or_failing_phase_says_so_and_the_exception_goes_on() -> None:
    events: list[ProgressEvent] = []
    with pytest.raises(KeyboardInterrupt), phase(events.append, "segment"):
        raise KeyboardInterrupt
    with pytest.raises(ValueError), phase(events.append, "segment"):
        raise ValueError("boom")
    assert [e.outcome for e in events if e.kind is Kind.FINISHED] == ["interrupted", "error"]


def test_child_news_keeps_what_a_child_tipc_is_doing() -> None:
    assert child_news("[2/5] eval/norm_train/gpus_-1 ...") == "[2/5] eval/norm_train/gpus_-1 ..."
    done = "[2/5] eval: PASSED (8.2s, peak 298.7 MiB)"
    assert child_news(done + "\n") == done
    assert child_news("tipc: check agreement ...") == "check agreement ..."
    assert child_news("tipc: running 3 steps of cfg.txt (serving_infer) in /r") is not None
    assert child_news("tipc: 5 steps: 5 passed in 32.6s") == "5 steps: 5 passed in 32.6s"
    for noise in ("tipc: Paddle 3.3.1 (cpu build)", "    | Traceback", '  "steps": [', "{", "", "[x] no"):
        assert child_news(noise) is None, noise
    long = "[1/1] " + "s" * 500
    shown = child_news(long)
    assert shown is not None and len(shown) == 160 and shown.endswith("...")
