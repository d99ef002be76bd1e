"""Which processes a test left behind (for the no-orphan assertions): its own children, the processes
holding a token in their environment, and those whose command line or folder names a marker."""

from __future__ import annotations

import os
from pathlib import Path

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


def alive_with(token: str) -> list[int]:
    """Pids of the processes (but the zombies) whose environment holds `token`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            zombie = " Z " in (entry / "stat").read_text()
            if token.encode() in (entry / "environ").read_bytes() and not zombie:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def leftovers(marker: str) -> list[str]:
    """Processes (other than this one and its parent) whose command line or working folder mentions `marker`:
    what a run or review may have left behind."""
    found = []
    own = {os.getpid(), os.getppid()}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in own:
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if marker in cmdline or cwd.startswith(marker):
            found.append(f"{entry.name}: {cmdline.strip()[:200]} (cwd {cwd})")
    return found
