"""git for tests: a fixed identity, so commits work under the suite's temp HOME (no ~/.gitconfig there)."""

from __future__ import annotations

import subprocess
from pathlib import Path

IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false")


def git(repo: Path, *args: str, stdin: str | None = None) -> str:
    """`git -C REPO ARGS` with IDENTITY; its stdout, stripped (a failure raises CalledProcessError)."""
    done = subprocess.run(
        ["git", "-C", str(repo), *IDENTITY, *args], input=stdin, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()
