"""The benchmark's output: the kind x repo matrix (Markdown, readable in a terminal too), the evidence of each
cell, the false alarms of each clean repo, and the same as JSON."""

from __future__ import annotations

from typing import Any

from bench.silent.model import Kind
from bench.silent.runner import Cell, RepoResult, State


def short_repo(result: RepoResult) -> str:
    return "demo" if result.spec.source == "demo" else result.spec.name.split("__")[-1]


def short_rule(rule: str) -> str:
    return rule.removeprefix("basic.").removeprefix("competition.")


def cell_text(cell: Cell) -> str:
    star = "*" if cell.native else ""
    if cell.state is State.CAUGHT:
        more = f" +{len(cell.rules) - 1}" if len(cell.rules) > 1 else ""
        return f"CAUGHT{star} {short_rule(cell.rules[0])}{more}"
    if cell.state is State.MISSED:
        return f"MISSED{star}"
    return {State.LOUD: "loud", State.NO_EFFECT: "no effect", State.NA: "n/a", State.ERROR: "ERROR"}[
        cell.state
    ]


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for n, row in enumerate(rows):
        out.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
        if n == 0:
            out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return out


def summary_counts(results: list[RepoResult]) -> dict[str, dict[str, int]]:
    """Per repo: applicable kinds (caught + missed), caught, missed, loud, no effect, false alarms."""
    out = {}
    for res in results:
        states = [c.state for c in res.cells]
        out[short_repo(res)] = {
            "applicable": sum(s in (State.CAUGHT, State.MISSED) for s in states),
            "caught": states.count(State.CAUGHT),
            "missed": states.count(State.MISSED),
            "loud": states.count(State.LOUD),
            "no_effect": states.count(State.NO_EFFECT),
            "error": states.count(State.ERROR),
            "false_alarms": len(res.false_alarms),
        }
    return out


def markdown(kinds: tuple[Kind, ...], results: list[RepoResult]) -> str:
    lines = ["## Silent failures: kind x repo", ""]
    header = ["kind", *(short_repo(r) for r in results)]
    rows = [header]
    for kind in kinds:
        row = [kind.id]
        for res in results:
            cell = next((c for c in res.cells if c.kind == kind.id), None)
            row.append(cell_text(cell) if cell is not None else "-")
        rows.append(row)
    lines += _table(rows)
    lines += [
        "",
        "CAUGHT RULE: the rule FAILs on the planted copy and not on the clean repo (+N: more expected "
        "rules did); `*`: the kind is there natively and was judged on the unmodified repo; MISSED: no "
        "expected rule FAILs; loud: the plant broke a step, which the step rules report (not a silent "
        "failure there); no effect: the planted code never acted on that repo; n/a: the kind cannot be "
        "planted there (reason below).",
        "",
        "### Totals",
        "",
    ]
    counts = summary_counts(results)
    rows = [["repo", "applicable", "caught", "missed", "loud", "no effect", "error", "false alarms"]]
    for repo, c in counts.items():
        rows.append(
            [
                repo,
                *(
                    str(c[k])
                    for k in ("applicable", "caught", "missed", "loud", "no_effect", "error", "false_alarms")
                ),
            ]
        )
    lines += _table(rows)
    lines += ["", "### Evidence per cell", ""]
    for res in results:
        lines.append(f"**{short_repo(res)}** ({res.spec.name}, {res.seconds / 60:.1f} min)")
        lines.append("")
        for cell in sorted(res.cells, key=lambda c: c.state is State.NA):
            lines.append(f"- `{cell.kind}`: {_detail(cell)}")
        lines.append("")
    lines += ["### False alarms on the clean repos", ""]
    for res in results:
        name = short_repo(res)
        if res.false_alarms:
            lines.append(f"- **{name}**: {len(res.false_alarms)}")
            lines += [f"  - `{r}`: {s[:240]}" for r, s in res.false_alarms.items()]
        else:
            labelled = ", ".join(res.clean_failing) or "none"
            lines.append(f"- **{name}**: 0 (failing on the clean repo, all labelled: {labelled})")
        if res.unseen_labels:
            lines.append(f"  - labelled as failing but not failing now: {', '.join(res.unseen_labels)}")
    return "\n".join(lines) + "\n"


def _detail(cell: Cell) -> str:
    star = " (native)" if cell.native else ""
    if cell.state is State.CAUGHT:
        return f"caught{star} by {', '.join(cell.rules)}: {cell.evidence[:300]}"
    if cell.state is State.MISSED:
        planted = f" [planted: {cell.why[:200]}]" if cell.why and not cell.native else f" [{cell.why[:200]}]"
        return f"MISSED{star}: {cell.evidence[:400]}{planted}"
    if cell.state is State.LOUD:
        rules = f"; newly failing: {', '.join(cell.rules)}" if cell.rules else ""
        return f"loud: {cell.evidence}{rules}"
    if cell.state is State.NO_EFFECT:
        return f"no effect: {cell.evidence} [planted: {cell.why[:200]}]"
    if cell.state is State.ERROR:
        return f"ERROR: {cell.evidence[:400]}"
    return f"n/a: {cell.why[:300]}"


def as_json(kinds: tuple[Kind, ...], results: list[RepoResult]) -> dict[str, Any]:
    return {
        "schema": "tipc-bench.silent-matrix/1",
        "kinds": [{"id": k.id, "title": k.title, "expect": list(k.expect)} for k in kinds],
        "repos": [
            {
                "name": r.spec.name,
                "short": short_repo(r),
                "seconds": round(r.seconds, 1),
                "cells": [c.to_json() for c in r.cells],
                "clean_failing": r.clean_failing,
                "false_alarms": r.false_alarms,
                "labels_not_seen": list(r.unseen_labels),
            }
            for r in results
        ],
        "totals": summary_counts(results),
    }
