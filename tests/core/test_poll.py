from __future__ import annotations

from tipc.core.poll import Polled, poll


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.sleeps.append(s)
        self.now += s


def test_returns_the_first_answer() -> None:
    clock = FakeClock()
    answers = iter([None, None, "ready"])
    got: Polled[str] = poll(
        lambda left: next(answers), 10.0, clock=clock, sleep=clock.sleep, interval_s=0.1, growth=2
    )
    assert got.value == "ready" and got.attempts == 3 and not got.timed_out
    assert clock.sleeps == [0.1, 0.2]  # pauses grow


def test_times_out_without_sleeping_past_the_deadline() -> None:
    clock = FakeClock()
    got: Polled[object] = poll(
        lambda left: None, 1.0, clock=clock, sleep=clock.sleep, interval_s=0.3, max_interval_s=0.4
    )
    assert got.value is None and got.timed_out and not got.stopped
    assert abs(clock.now - 1.0) < 1e-9 and max(clock.sleeps) <= 0.4


def test_stop_gives_up_early_and_the_probe_sees_the_time_left() -> None:
    clock = FakeClock()
    lefts: list[float] = []

    def probe(left: float) -> None:
        lefts.append(left)

    got: Polled[object] = poll(
        probe, 5.0, stop=lambda: clock.now >= 0.25, clock=clock, sleep=clock.sleep, interval_s=0.1
    )
    assert got.stopped and not got.timed_out and got.attempts == len(lefts) >= 2
    assert lefts[0] == 5.0 and lefts == sorted(lefts, reverse=True)
