"""The one output choke point: rich Consoles (imported lazily).

The progress-observer interface the runner reports to is tipc.execute.observer; the phases of every verb
report to tipc.core.progress.
"""

from __future__ import annotations

import os
import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


def use_color(no_color: bool = False) -> bool:
    if no_color or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def stream_console(stream: IO[str], *, no_color: bool = False) -> Console:
    """A rich Console on `stream` (progress goes to stderr, results to stdout)."""
    from rich.console import Console

    return Console(file=stream, no_color=no_color or bool(os.environ.get("NO_COLOR")), highlight=False)
