"""File helpers shared across tipc: one atomic write; what a repo-relative path may be.

A reader (another tipc, a CI step, a browser) never sees half a file: the text goes to a hidden temporary file
in the same folder (same filesystem, so the rename is atomic), which then replaces the target. The temporary
name carries the process id, so two writers of one target never share a temporary file.
"""

from __future__ import annotations

import os
import re
from pathlib import Path


def atomic_write_text(
    path: str | Path, text: str, *, encoding: str = "utf-8", newline: str | None = None
) -> Path:
    """Write `text` to `path` atomically (parents created); returns the path. OSError propagates, and the
    temporary file is removed when the write fails."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding=encoding, newline=newline) as fh:
            fh.write(text)
        tmp.replace(target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def is_safe_relative(path: str) -> bool:
    """A rule path must stay inside the repo: relative, no `..` segment, no drive or home prefix."""
    if not path or path.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", path):
        return False
    return ".." not in re.split(r"[\\/]", path)
