"""The one output choke point: rich Consoles (imported lazily); byte counts for people.

The progress-observer interface the runner reports to is tipc.execute.observer; the phases of every verb
report to tipc.core.progress.
"""

from __future__ import annotations

import os
import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


def human_bytes(n: int | None) -> str:
    """A byte count for people: `512 B`, `3.0 MiB`; "n/a" when unknown."""
    if n is None:
        return "n/a"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def use_color(no_color: bool = False) -> bool:
    if no_color or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def stream_console(stream: IO[str], *, no_color: bool = False) -> Console:
    """A rich Console on `stream` (progress goes to stderr, results to stdout)."""
    from rich.console import Console

    return Console(file=stream, no_color=no_color or bool(os.environ.get("NO_COLOR")), highlight=False)
