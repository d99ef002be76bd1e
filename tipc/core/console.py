"""The one output choke point: a rich Console (imported lazily); byte counts for people.

The progress-observer interface the runner reports to is tipc.execute.observer.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

_console: Console | None = None


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


def get_console(no_color: bool = False) -> Console:
    """The single rich Console. Imported lazily: rich costs ~50 ms and `--help` must stay instant."""
    global _console
    if _console is None:
        from rich.console import Console

        _console = Console(no_color=no_color or bool(os.environ.get("NO_COLOR")), highlight=False)
    return _console
