"""Where `tipc check` keeps its reports so that later runs never delete them: a folder per check,
`<run folder>/reports/<UTC time>/`, with `<run folder>/reports/latest` pointing at the newest. A new run of
the same config and mode empties the run folder's layers, never `reports/` (tipc.execute.sandbox keeps it);
the oldest reports beyond KEEP are removed, and the check says so."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

REPORTS_DIR = "reports"  # in the run folder: kept when a new run empties the rest
LATEST = "latest"
KEEP = 20  # report folders kept per config and mode


def new_role(folder: Path | None) -> str:
    """The sandbox role (a folder of the run folder) that this check's reports are bound from."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    name, n = stamp, 1
    while folder is not None and (folder / REPORTS_DIR / name).exists():
        n += 1
        name = f"{stamp}-{n}"
    return f"{REPORTS_DIR}/{name}"


def point_latest(folder: Path, role: str) -> list[str]:
    """Before the check enters the sandbox (inside it the run folder is read-only): make this check's
    folder, point `reports/latest` at it, remove the oldest beyond KEEP. Lines to tell the user."""
    if not role.startswith(REPORTS_DIR + "/"):
        return []
    reports = folder / REPORTS_DIR
    name = role.split("/", 1)[1]
    link = reports / LATEST
    try:
        (reports / name).mkdir(parents=True, exist_ok=True)
        temporary = reports / f".{LATEST}.{os.getpid()}"
        if temporary.is_symlink():
            temporary.unlink()
        temporary.symlink_to(name)
        os.replace(temporary, link)  # atomic: a reader never finds no `latest`
    except OSError as exc:
        return [f"could not point {link} at this check's reports ({exc.strerror or exc})"]
    kept = sorted(p for p in reports.iterdir() if p.is_dir() and not p.is_symlink())
    removed = kept[:-KEEP] if len(kept) > KEEP else []
    for old in removed:
        shutil.rmtree(old, ignore_errors=True)
    lines = [f"this check's reports go to {reports / name}; {link} points at the newest check's"]
    if removed:
        lines.append(f"removed the {len(removed)} oldest report folder(s) in {reports} (keeping {KEEP})")
    return lines
