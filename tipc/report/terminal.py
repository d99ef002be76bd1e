"""The terminal reporter: rich tables (steps, lint, rules) and the overall verdict, rendered to a string.

Lines that carry paths (failed steps, logs, notes, lineage) are never wrapped, so a path can be copied whole.
By default the rules that need no attention (PASS, SKIP, N/A, with no internal error) fold into one count
line, their figures with them, and a lineage with nothing odd into one line, so a PASS fits a screen;
`verbose` lists every rule (`tipc check -v`). The report files always hold every rule.

rich is imported inside the function so importing tipc.report stays cheap. All user text goes through
`rich.text.Text`, never markup, so a log line like "[red]" prints as itself.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from tipc.core.units import human_bytes, human_seconds
from tipc.judge.checks.base import Verdict
from tipc.report.model import (
    NO_CAUSE,
    TAIL_LINES,
    Report,
    RuleVerdict,
    agreement_caption,
    curve_points,
    evidence_text,
    matrix_table,
    remedy_text,
    sparkline,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

VERDICT_STYLE = {
    Verdict.PASS: "bold green",
    Verdict.FAIL: "bold red",
    Verdict.WARN: "bold yellow",
    Verdict.SKIP: "dim",
    Verdict.NA: "dim",
}
STATUS_STYLE = {
    "passed": "green",
    "failed": "red",
    "timeout": "red",
    "blocked": "yellow",
    "interrupted": "red",
}
OVERALL_STYLE = {"PASS": "bold green", "FAIL": "bold red", "ERROR": "bold magenta"}
QUIET = frozenset({Verdict.PASS, Verdict.SKIP, Verdict.NA})  # folded into a count unless verbose
MAX_EVIDENCE = 3
EXCERPT_LINES = 3  # the tail of a failing step's log


def shown_rules(report: Report, *, verbose: bool) -> tuple[tuple[RuleVerdict, ...], dict[str, int]]:
    """(the rules printed in full, {verdict: count} of those folded): FAIL, WARN and any rule whose check
    had an internal error are always printed."""
    if verbose:
        return report.rules, {}
    shown = tuple(r for r in report.rules if r.verdict not in QUIET or r.error)
    folded: dict[str, int] = {}
    for r in report.rules:
        if r not in shown:
            folded[r.verdict.value] = folded.get(r.verdict.value, 0) + 1
    return shown, folded


def render_terminal(report: Report, *, color: bool = False, width: int = 110, verbose: bool = False) -> str:
    from rich.console import Console
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        highlight=False,
        emoji=False,
    )
    console.print(Text(f"tipc {report.tool_version} check of {report.repo}", style="bold"), soft_wrap=True)
    if report.run is not None:
        _print_run(console, report)
    else:
        console.print(Text("no run: rules that need the chain are SKIP", style="dim"), soft_wrap=True)
    _print_lint(console, report)
    shown, folded = shown_rules(report, verbose=verbose)
    _print_rules(console, shown, folded)
    _print_figures(console, shown)
    _print_lineage(console, report, verbose=verbose)
    for note in report.notes:
        console.print(Text(f"note: {note}", style="dim"), soft_wrap=True)
    counts = ", ".join(f"{n} {v}" for v, n in report.counts().items() if n)
    line = Text("Overall: ")
    line.append(report.overall, style=OVERALL_STYLE[report.overall])
    line.append(
        f"  ({counts}" + (f"; {len(report.lint_errors)} lint error(s)" if report.lint_errors else "") + ")"
    )
    console.print(line)
    return buffer.getvalue()


def _print_run(console: Console, report: Report) -> None:
    """The run's config and environment, the steps table, then the failed steps."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    run = report.run
    assert run is not None
    reused = " (reused run record)" if run.reused else ""
    console.print(
        Text(f"config {run.config}, mode {run.mode}, dialect {run.dialect}{reused}"), soft_wrap=True
    )
    for env_line in run.environment_lines:
        console.print(Text(env_line, style="cyan"), soft_wrap=True)
    for box_line in run.sandbox_lines(limit=10):
        console.print(Text(box_line, style="dim"), soft_wrap=True)
    steps = Table(title=f"Steps ({run.totals()})", box=box.SIMPLE, title_justify="left", expand=False)
    for column in ("step", "stage", "status", "time", "peak RSS", "peak GPU mem"):
        steps.add_column(column, overflow="fold")
    for s in run.steps:
        status = Text(s.status, style=STATUS_STYLE.get(s.status, ""))
        if s.exit_code not in (None, 0):
            status.append(f" (exit {s.exit_code})")
        steps.add_row(
            Text(s.id),
            Text(s.stage),
            status,
            Text(human_seconds(s.duration_s)),
            Text(human_bytes(s.peak_rss_bytes)),
            Text(human_bytes(s.peak_gpu_mem_bytes)),
        )
    console.print(steps)
    _print_failed_steps(console, report)


def _print_lint(console: Console, report: Report) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    if report.findings:
        lint = Table(title="Config lint", box=box.SIMPLE, title_justify="left")
        lint.add_column("finding", overflow="fold")
        for f in report.findings:
            lint.add_row(Text(f.format(), style="red" if f.level.value == "error" else "yellow"))
        console.print(lint)


def _evidence_cell(r: RuleVerdict) -> Text:
    """A rule's summary, its first evidence (a FAIL's with its log excerpt's tail) and any internal error."""
    from rich.text import Text

    evidence = Text(r.summary)
    shown = 1 if r.verdict is Verdict.PASS else MAX_EVIDENCE
    for e in r.evidence[:shown]:
        evidence.append("\n  " + evidence_text(e), style="dim")
        if r.verdict is Verdict.FAIL and e.excerpt:
            for tail in e.excerpt.splitlines()[-EXCERPT_LINES:]:
                evidence.append("\n    | " + tail, style="dim")
    if len(r.evidence) > shown:
        evidence.append(f"\n  ... {len(r.evidence) - shown} more in the report files", style="dim")
    for c in r.causes[:1]:
        evidence.append(f"\n  cause: {c.cause}", style="yellow")
        evidence.append(f"\n  remedy: {remedy_text(c)}", style="green")
    if r.error:
        evidence.append(f"\n  internal error: {r.error}", style="magenta")
    return evidence


def _print_rules(console: Console, shown: tuple[RuleVerdict, ...], folded: dict[str, int]) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    if folded:
        counts = ", ".join(f"{n} {v}" for v, n in folded.items())
        console.print(
            Text(f"Rules: {sum(folded.values())} not listed ({counts}); -v lists every rule", style="dim"),
            soft_wrap=True,
        )
    if not shown:
        return
    rules = Table(title="Rules", box=box.SIMPLE, title_justify="left", expand=True)
    id_width = min(max((len(r.id) for r in shown), default=10), 44)
    rules.add_column("rule", overflow="fold", min_width=id_width)
    rules.add_column("verdict", no_wrap=True)
    rules.add_column("evidence", overflow="fold", ratio=1)
    for r in shown:
        rule_cell = Text(r.id)
        rule_cell.append(f"\n{r.source}" + (" (warning)" if r.severity == "warning" else ""), style="dim")
        rules.add_row(rule_cell, Text(r.verdict.value, style=VERDICT_STYLE[r.verdict]), _evidence_cell(r))
    console.print(rules)


def _print_lineage(console: Console, report: Report, *, verbose: bool) -> None:
    from rich.text import Text

    if report.lineage:
        from tipc.report.lineage import summary_lines

        entries = summary_lines(report.lineage)
        if not verbose and not any("! " in entry for entry in entries):  # nothing read from an odd origin
            console.print(
                Text(f"Lineage: {len(entries)} step(s), each read only what this run wrote (-v lists them)"),
                style="dim",
                soft_wrap=True,
            )
            return
        console.print(Text("Lineage (weights and model files each step read and wrote):"), soft_wrap=True)
        for entry in entries:
            console.print(Text("  " + entry, style="red" if "! " in entry else "dim"), soft_wrap=True)


def _print_failed_steps(console: Console, report: Report) -> None:
    """Each failed step: its cause and remedy first, then the end of its log."""
    from rich.text import Text

    if report.run is None or not report.run.failed_steps:
        return
    console.print(Text("Failed steps", style="bold"), soft_wrap=True)
    for s in report.run.failed_steps:
        head = Text(f"{s.id} ", style="bold")
        exit_note = f" (exit {s.exit_code})" if s.exit_code not in (None, 0) else ""
        head.append(s.status + exit_note, style="red")
        if s.reason:
            head.append(f": {s.reason}")
        console.print(head)
        if not s.causes:
            console.print(Text(f"  cause: {NO_CAUSE}", style="yellow"), soft_wrap=True)
        for c in s.causes:
            console.print(Text(f"  cause: {c.cause}", style="bold yellow"), soft_wrap=True)
            console.print(Text(f"  remedy: {remedy_text(c)}", style="green"), soft_wrap=True)
            if c.evidence:
                console.print(Text(f"  seen: {c.evidence}", style="dim"), soft_wrap=True)
        if s.log_tail:
            console.print(Text(f"  log tail ({s.log}):", style="dim"), soft_wrap=True)
            for tail in s.log_tail.splitlines()[-TAIL_LINES:]:
                console.print(Text(f"    | {tail}", style="dim"), soft_wrap=True)
        elif s.log:
            console.print(Text(f"  log: {s.log}", style="dim"), soft_wrap=True)


def _print_figures(console: Console, shown: tuple[RuleVerdict, ...]) -> None:
    """The numbers behind the verdicts of the rules shown: engine x engine agreement matrices, loss curves."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    for r in shown:
        table = matrix_table(r.data)
        if table:
            header, rows = table
            caption = agreement_caption(r.data)
            # the title on its own line: a table title wraps at the (narrow) table's width
            console.print(
                Text(f"{r.id}: engine x engine agreement" + (f" ({caption})" if caption else "")),
                soft_wrap=True,
            )
            grid = Table(box=box.SIMPLE)
            for h in header:
                grid.add_column(h, overflow="fold")
            for row in rows:
                grid.add_row(*(Text(c) for c in row))
            console.print(grid)
        points = curve_points(r.data)
        if points:
            ys = [y for _, y in points]
            console.print(
                Text(
                    f"{r.id}: loss over {len(points)} points, first {ys[0]:.4g}, last {ys[-1]:.4g}, "
                    f"min {min(ys):.4g}, max {max(ys):.4g}"
                )
            )
            console.print(Text("  " + sparkline(ys), style="cyan"), soft_wrap=True)
