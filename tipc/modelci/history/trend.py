"""The trend of each metric over stored runs, as terminal text: a sparkline, the last values, the Paddle
versions seen, and where the latest value sits against the baseline band."""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Sequence

from tipc.modelci.history.db import StoredRun, iter_metric_names

_BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float]) -> str:
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return ""
    lo, hi = min(finite), max(finite)
    span = hi - lo
    out = []
    for v in values:
        if not math.isfinite(v):
            out.append("!")
        else:
            out.append(_BARS[0 if span == 0 else min(len(_BARS) - 1, int((v - lo) / span * len(_BARS)))])
    return "".join(out)


def series(runs: Sequence[StoredRun], name: str) -> list[tuple[StoredRun, float]]:
    out = []
    for r in runs:
        got = r.metrics.get(name)
        if got is not None and got[0] is not None:
            out.append((r, got[0]))
    return out


def render(
    runs: Sequence[StoredRun],
    metrics: Sequence[str] = (),
    bands: dict[str, tuple[float, float]] | None = None,
    last: int = 5,
) -> str:
    if not runs:
        return "no runs stored for this repo yet (tipc check --baseline, tipc baseline record store them)\n"
    names = list(metrics) or list(iter_metric_names(runs))
    first = _dt.datetime.fromtimestamp(runs[0].started, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
    latest = _dt.datetime.fromtimestamp(runs[-1].started, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
    versions = sorted({r.paddle_version or "?" for r in runs})
    commit = runs[-1].repo_commit
    at = f"; latest at repo commit {commit[:12]}" if commit else ""
    lines = [f"{len(runs)} runs from {first} to {latest} UTC; Paddle {', '.join(versions)}{at}"]
    for name in names:
        points = series(runs, name)
        if not points:
            lines.append(f"{name}: no values")
            continue
        unit = runs[-1].metrics.get(name, (None, ""))[1] or next((r.metrics[name][1] for r, _ in points), "")
        values = [v for _, v in points]
        tail = ", ".join(f"{v:.4g}" for v in values[-last:])
        shown = f"{name} [{unit}]" if unit else name
        line = f"{shown}: {sparkline(values)}  last {min(last, len(values))}: {tail}"
        band = (bands or {}).get(name)
        if band is not None:
            mean, margin = band
            where = "inside" if abs(values[-1] - mean) <= margin else "OUTSIDE"
            line += f"  (latest {where} the baseline band {mean:.4g} ± {margin:.4g})"
        lines.append(line)
    return "\n".join(lines) + "\n"
