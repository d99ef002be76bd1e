"""One polling loop for tipc: ask until an answer, a stop, or the deadline, with growing pauses.

Callers (readiness of a server, a process group's exit) give a `probe` that returns a value when done and
None to keep waiting, and optionally `stop` (e.g. "the server process exited") to give up early. The pause
starts short, so a fast answer costs little, and grows to `max_interval_s`, so a slow one costs little CPU;
the last pause is cut to the deadline, never past it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Polled(Generic[T]):
    value: T | None  # the probe's answer, None when it never answered
    stopped: bool  # `stop()` turned true before an answer
    waited_s: float
    attempts: int

    @property
    def timed_out(self) -> bool:
        return self.value is None and not self.stopped


def poll(
    probe: Callable[[float], T | None],
    timeout_s: float,
    *,
    stop: Callable[[], bool] | None = None,
    interval_s: float = 0.005,
    max_interval_s: float = 0.5,
    growth: float = 1.5,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Polled[T]:
    """Call `probe(seconds_left)` until it returns a value (not None), `stop()` is true or `timeout_s` passed.

    The probe gets the time left so it can bound its own blocking (a connect timeout)."""
    start = clock()
    pause = interval_s
    attempts = 0
    while True:
        left = timeout_s - (clock() - start)
        if stop is not None and stop():
            return Polled(None, True, clock() - start, attempts)
        if left <= 0:
            return Polled(None, False, clock() - start, attempts)
        attempts += 1
        value = probe(left)
        if value is not None:
            return Polled(value, False, clock() - start, attempts)
        left = timeout_s - (clock() - start)
        if left <= 0:
            return Polled(None, False, clock() - start, attempts)
        sleep(min(pause, left))
        pause = min(pause * growth, max_interval_s)
