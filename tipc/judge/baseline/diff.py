"""Old -> new per metric between two baselines, and the unified file diff a reviewer reads."""

from __future__ import annotations

import difflib

from tipc.judge.baseline.store import Baseline


def metric_lines(old: Baseline | None, new: Baseline) -> list[str]:
    """One line per metric: added, removed, or mean and margin old -> new with the relative change."""
    out: list[str] = []
    old_metrics = old.metrics if old is not None else {}
    for name in sorted(set(old_metrics) | set(new.metrics)):
        a, b = old_metrics.get(name), new.metrics.get(name)
        if a is None and b is not None:
            out.append(
                f"+ {name}: new, {b.summary.reference:.4g} {b.unit} ± {b.margin:.4g} (n={b.summary.n})"
            )
        elif b is None and a is not None:
            out.append(f"- {name}: removed (was {a.summary.reference:.4g} {a.unit} ± {a.margin:.4g})")
        elif a is not None and b is not None:
            change = (
                (b.summary.reference - a.summary.reference) / a.summary.reference
                if a.summary.reference
                else 0.0
            )
            extra = []
            if a.op != b.op:
                extra.append(f"op {a.op} -> {b.op}")
            if a.active != b.active:
                extra.append(f"active {a.active} -> {b.active}")
            out.append(
                f"~ {name}: {a.summary.reference:.4g} -> {b.summary.reference:.4g} {b.unit} ({change:+.1%}), "
                f"margin {a.margin:.4g} -> {b.margin:.4g}, n {a.summary.n} -> {b.summary.n}"
                + (f", {', '.join(extra)}" if extra else "")
            )
    if old is not None:
        for key in ("paddle_version", "paddle_commit", "python_version", "cpu_model", "repo_commit"):
            if old.provenance.get(key) != new.provenance.get(key):
                out.append(f"  provenance {key}: {old.provenance.get(key)} -> {new.provenance.get(key)}")
    return out


def file_diff(old_text: str, new_text: str, path: str) -> str:
    return "".join(
        difflib.unified_diff(
            old_text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
        )
    )
