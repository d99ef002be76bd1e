"""Run tipc in a child process, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def tipc_env(**extra: str) -> dict[str, str]:
    """This process's environment with this interpreter's folder first on PATH (a config's `python:` resolves
    to it) and FLAGS_enable_pir_api unset (a Paddle flag the host may set); `extra` on top."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("FLAGS_enable_pir_api", None)
    env.update(extra)
    return env


def tipc(
    *args: str, timeout: float = 600, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m tipc ARGS` in a child (`env`: tipc_env() unless given)."""
    return subprocess.run(
        [sys.executable, "-m", "tipc", *args],
        capture_output=True,
        text=True,
        env=tipc_env() if env is None else env,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
