"""Log watching: the gather recorder (segments after each `model_save`) and the run observer.

Semantics (seed 003): a `model_save` line starts a segment at the last step seen (0 before any step);
step lines after it are recorded until `steps_to_record_after_save` steps have passed since the first
recorded one, so a log that reports every 5th step with 20 steps to record keeps 4 values. Metrics are
read from the step line itself, as the original does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from tipc.convergence.config import TestConfig


@dataclass
class Recording:
    start_step: int
    checkpoint: str  # as logged
    stored: str  # relative to the manifest, after the copy into storage
    results: dict[int, dict[str, dict[str, str]]] = field(default_factory=dict)
    first_step: int | None = None
    closed: bool = False


class Recorder:
    """Feeds on log lines of a gather run; thread-safe (lines arrive on proc's pump thread)."""

    def __init__(self, config: TestConfig, on_save: Callable[[str, int], str]) -> None:
        self.config = config
        self.on_save = on_save
        self.current_step = 0
        self.recordings: list[Recording] = []
        self.notes: list[str] = []
        self._lock = threading.Lock()

    @property
    def _open(self) -> Recording | None:
        if self.recordings and not self.recordings[-1].closed:
            return self.recordings[-1]
        return None

    def feed(self, line: str) -> None:
        with self._lock:
            self._feed(line)

    def _feed(self, line: str) -> None:
        cfg = self.config
        saved = cfg.save_parser.first(line)
        if saved is not None:
            rec = self._open
            if rec is not None:
                rec.closed = True
            try:
                stored = self.on_save(saved, self.current_step)
            except OSError as exc:
                self.notes.append(
                    f"checkpoint {saved!r} at step {self.current_step} could not be stored: {exc}"
                )
                return
            self.recordings.append(Recording(self.current_step, saved, stored))
            return
        raw_step = cfg.step_parser.first(line)
        if raw_step is None:
            return
        try:
            step = int(raw_step)
        except ValueError:
            return
        self.current_step = step
        rec = self._open
        if rec is None:
            return
        if rec.first_step is None:
            rec.first_step = step
        if step >= rec.first_step + cfg.steps_to_record:
            rec.closed = True
            return
        for name in cfg.metrics:
            values = cfg.parsers[name].parse(line)
            if values is not None:
                rec.results.setdefault(step, {})[name] = values


def observe(config: TestConfig, lines: list[str]) -> dict[int, dict[str, dict[str, str]]]:
    """Every step's metrics in a run's log (the first report of a step wins)."""
    seen: dict[int, dict[str, dict[str, str]]] = {}
    for line in lines:
        raw = config.step_parser.first(line)
        if raw is None:
            continue
        try:
            step = int(raw)
        except ValueError:
            continue
        per = seen.setdefault(step, {})
        for name in config.metrics:
            if name in per:
                continue
            values = config.parsers[name].parse(line)
            if values is not None:
                per[name] = values
    return seen
