"""A bounded load loop against a running server: N client threads share M requests; latencies and errors.

Used by the serving check and bench/serve_load.py. Numbers are measurements, never asserted in tests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from tipc.execute.serving.client import Client, tensor_value

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class LoadResult:
    requests: int
    concurrency: int
    ok: int
    errors: int
    wall_s: float
    latencies_s: tuple[float, ...]
    first_errors: tuple[str, ...] = field(default=())
    planned: int | None = None  # requests asked for; more than `requests` when the time budget ran out
    time_budget_s: float | None = None

    def percentile_ms(self, q: float) -> float | None:
        if not self.latencies_s:
            return None
        ordered = sorted(self.latencies_s)
        index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))  # nearest-rank
        return ordered[index] * 1000.0

    @property
    def throughput_rps(self) -> float:
        return self.ok / self.wall_s if self.wall_s > 0 else 0.0

    def to_json(self) -> dict[str, object]:
        p50, p99 = self.percentile_ms(50), self.percentile_ms(99)
        return {
            "requests": self.requests,
            "concurrency": self.concurrency,
            "ok": self.ok,
            "errors": self.errors,
            "wall_s": round(self.wall_s, 4),
            "p50_ms": None if p50 is None else round(p50, 3),
            "p99_ms": None if p99 is None else round(p99, 3),
            "throughput_rps": round(self.throughput_rps, 2),
            "first_errors": list(self.first_errors),
            "planned": self.requests if self.planned is None else self.planned,
            "time_budget_s": self.time_budget_s,
        }


def run_load(
    base_url: str,
    name: str,
    samples: Sequence[Mapping[str, np.ndarray]],
    *,
    requests: int = 200,
    concurrency: int = 4,
    protocol: Literal["v2", "pipeline"] = "v2",
    timeout_s: float = 30.0,
    time_budget_s: float | None = None,
) -> LoadResult:
    """Send `requests` predictions (cycling over `samples`: name -> array) from `concurrency` threads.

    With `time_budget_s`, no request starts after the budget is spent (those in flight finish), so a slow
    model gets fewer requests and a fast one all of them: the loop's length is sized to the model.
    """
    if not samples:
        raise ValueError("run_load needs at least one sample")
    lock = threading.Lock()
    next_index = 0
    latencies: list[float] = []
    errors: list[str] = []

    deadline: float | None = None

    def take() -> int | None:
        nonlocal next_index
        with lock:
            if next_index >= requests:
                return None
            # The first `concurrency` requests always go: a result has at least one round of every client.
            if deadline is not None and next_index >= concurrency and time.perf_counter() >= deadline:
                return None
            next_index += 1
            return next_index - 1

    def worker() -> None:
        with Client(base_url, timeout_s=timeout_s) as client:
            while (index := take()) is not None:
                sample = samples[index % len(samples)]
                try:
                    if protocol == "v2":
                        reply = client.infer_v2(name, sample)
                    else:
                        reply = client.predict_pipeline(
                            name, list(sample), [tensor_value(a) for a in sample.values()]
                        )
                except Exception as exc:  # every request is accounted for: answered or an error
                    with lock:
                        errors.append(f"request {index}: {type(exc).__name__}: {exc}")
                    continue
                good = reply.ok and (protocol == "v2" or reply.body.get("err_no") == 0)
                with lock:
                    if good:
                        latencies.append(reply.seconds)
                    else:
                        errors.append(f"request {index}: HTTP {reply.status}: {str(reply.body)[:200]}")

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, concurrency))]
    started = time.perf_counter()
    if time_budget_s is not None:
        deadline = started + time_budget_s
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    return LoadResult(
        requests=min(next_index, requests),
        concurrency=concurrency,
        ok=len(latencies),
        errors=len(errors),
        wall_s=wall,
        latencies_s=tuple(latencies),
        first_errors=tuple(errors[:5]),
        planned=requests,
        time_budget_s=time_budget_s,
    )
