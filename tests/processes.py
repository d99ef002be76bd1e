"""Which child processes of the test process a test started (for the no-orphan assertions)."""

from __future__ import annotations

import psutil

# Helpers the stdlib starts for the test process itself the first time any test uses multiprocessing; they
# live as long as the (xdist worker) process, whatever test ran first, and are not a leftover of ours.
_STDLIB_HELPERS = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")


def _stdlib_helper(process: psutil.Process) -> bool:
    try:
        line = " ".join(process.cmdline())
    except psutil.Error:
        return False
    return any(helper in line for helper in _STDLIB_HELPERS)


def our_children() -> list[psutil.Process]:
    """Running descendants of this process, but the stdlib's own multiprocessing helpers."""
    return [p for p in psutil.Process().children(recursive=True) if p.is_running() and not _stdlib_helper(p)]
