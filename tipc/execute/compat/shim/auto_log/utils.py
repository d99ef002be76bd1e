"""Stage timing: `start()`, one `stamp()` after each stage, `end()`; each interval is filed under a key."""

from __future__ import annotations

import time
from collections.abc import Sequence

DEFAULT_KEYS = ("preprocess_time", "inference_time", "postprocess_time")


class Times:
    def __init__(self, keys: Sequence[str] | None = None, warmup: int = 0) -> None:
        self.keys = list(keys) if keys is not None else list(DEFAULT_KEYS)
        self.warmup = max(0, int(warmup or 0))
        self.reset()

    def reset(self) -> None:
        self.times: dict[str, list[float]] = {k: [] for k in self.keys}
        self.total_time: list[float] = []
        self._stamps: list[float] = []

    def init(self) -> None:
        self._stamps = []

    def start(self, stamp: bool = True) -> None:
        self._stamps = [time.time()] if stamp else []

    def stamp(self) -> None:
        now = time.time()
        if not self._stamps:
            self._stamps.append(now)  # a stamp without start() starts the run
            return
        self._stamps.append(now)
        index = len(self._stamps) - 2  # which interval this stamp closes
        if index >= len(self.keys):
            self.keys.append(f"stamps_{index + 1}")
        key = self.keys[index]
        self.times.setdefault(key, []).append(self._stamps[-1] - self._stamps[-2])

    def end(self, stamp: bool = False) -> None:
        if stamp:
            self.stamp()
        if len(self._stamps) >= 2:
            self.total_time.append(self._stamps[-1] - self._stamps[0])
        self._stamps = []

    def set_keys(self, keys: Sequence[str]) -> None:
        self.keys = list(keys)
        for k in self.keys:
            self.times.setdefault(k, [])
        self.init()

    def _kept(self, values: Sequence[float]) -> list[float]:
        return list(values[self.warmup :])

    def mean(self, values: Sequence[float]) -> float:
        kept = self._kept(values)
        return sum(kept) / len(kept) if kept else 0.0

    def sum(self, values: Sequence[float]) -> float:
        return float(sum(self._kept(values)))

    def value(self, key: Sequence[str] | None = None, mode: str | None = None) -> dict[str, object]:
        wanted = list(self.keys) if key is None else list(key)
        out: dict[str, object] = {}
        for k in wanted:
            values = self.times.get(k, [])
            if mode == "mean":
                out[k] = self.mean(values)
            elif mode == "sum":
                out[k] = self.sum(values)
            else:
                out[k] = list(values)
        return out

    def _num_counts(self) -> int:
        return len(self.total_time)

    def _report_total_time(self, mode: str = "avg") -> object:
        if mode == "avg":
            return self.mean(self.total_time)
        if mode == "sum":
            return self.sum(self.total_time)
        return list(self.total_time)
