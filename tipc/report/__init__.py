"""Reporters: pure functions from one `Report` value to text. Writing happens at the edge (write_reports).

Formats: text (rich terminal table), json ("tipc.report/1"), markdown (PR comment / CI summary),
junit (JUnit XML), html (self-contained page). Each reporter module is imported only when used.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tipc.core.fs import atomic_write_text

if TYPE_CHECKING:
    from tipc.report.model import REPORT_SCHEMA, Report, build_report

# The report model imports every check: loaded on first use, so `tipc run` (which needs only
# tipc.report.progress) does not pay for them.
_MODEL_NAMES = ("REPORT_SCHEMA", "Report", "build_report")


def __getattr__(name: str) -> Any:
    if name in _MODEL_NAMES:
        from tipc.report import model

        return getattr(model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


FORMATS: tuple[str, ...] = ("text", "json", "markdown", "junit", "html")
# The files `tipc check` writes into the report folder, by format.
REPORT_FILES: dict[str, str] = {
    "json": "report.json",
    "markdown": "report.md",
    "junit": "report.junit.xml",
    "html": "report.html",
}


def render(
    report: Report, fmt: str, *, color: bool = False, width: int | None = None, verbose: bool = False
) -> str:
    """`width`: of the terminal report; by default $COLUMNS, else 110. `verbose`: the terminal report lists
    every rule (by default those that need no attention fold into a count)."""
    if fmt == "text":
        import os

        from tipc.report.terminal import render_terminal

        if width is None:
            columns = os.environ.get("COLUMNS", "")
            width = int(columns) if columns.isdigit() and int(columns) >= 40 else 110

        return render_terminal(report, color=color, width=width, verbose=verbose)
    if fmt == "json":
        from tipc.report.json import render_json

        return render_json(report)
    if fmt == "markdown":
        from tipc.report.markdown import render_markdown

        return render_markdown(report)
    if fmt == "junit":
        from tipc.report.junit import render_junit

        return render_junit(report)
    if fmt == "html":
        from tipc.report.html import render_html

        return render_html(report)
    raise ValueError(f"unknown report format {fmt!r}; known: {', '.join(FORMATS)}")


def write_reports(report: Report, directory: Path) -> list[Path]:
    """Write every report file into `directory` (created if needed), each atomically. Returns the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt, name in REPORT_FILES.items():
        written.append(atomic_write_text(directory / name, render(report, fmt)))
    return written


__all__ = ["FORMATS", "REPORT_FILES", "REPORT_SCHEMA", "Report", "build_report", "render", "write_reports"]
