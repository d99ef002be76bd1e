"""A run's steps counted once, the same way everywhere (the progress line, the report): apart from the report
model, which imports every check, so that `tipc run` does not load them to print its last line."""

from __future__ import annotations

from collections.abc import Iterable


def step_totals(items: Iterable[tuple[str, str, str]]) -> str:
    """A run's steps counted once, the same way everywhere: prepare.sh apart (it is no step of the chain and
    its failure blocks nothing), the chain's steps that apply on this machine by status (what the chain
    rules count: `N of M step(s) did not pass`), then those that do not apply here (skipped as not
    applicable, and the steps after them). `items`: (stage, status, reason) per step in plan order."""
    items = list(items)
    prepare = [status for stage, status, _ in items if stage == "prepare"]
    chain = [(status, reason) for stage, status, reason in items if stage != "prepare"]
    elsewhere = [s for s, reason in chain if s == "skipped" and "not applicable" in reason]
    applies = [s for s, reason in chain if not (s == "skipped" and "not applicable" in reason)]
    counts: dict[str, int] = {}
    for status in applies:
        counts[status] = counts.get(status, 0) + 1
    order = ("passed", "failed", "timeout", "blocked", "skipped", "interrupted", "not run")
    parts = [f"{counts[k]} {k}" for k in order if counts.get(k)]
    parts += [f"{n} {k}" for k, n in counts.items() if k not in order]
    text = f"{len(items)} steps: "
    if prepare:
        text += f"prepare.sh {prepare[0]}; "
    text += f"the chain's {len(applies)} step(s) that apply here: " + (", ".join(parts) or "none")
    if elsewhere:
        text += f"; {len(elsewhere)} not applicable on this machine"
    return text
