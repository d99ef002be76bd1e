"""Start `tipc serve` as a child in its own process group and wait until it answers (no fixed sleeps).

The server binds port 0 and prints `tipc serve: ready on http://HOST:PORT ...` once listening, so no other
process can take a port picked in advance. Readiness = that line in its log, then a 2xx from
/v2/health/ready, both polled under one deadline; a server that exits first is reported with its log tail.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tipc.core.poll import poll
from tipc.execute import proc
from tipc.execute.serving.client import wait_ready

_READY_LINE = re.compile(r"tipc serve: ready on (http://[^\s]+)")
# What `tipc serve` imports to serve a Paddle model (tipc/serve): the model runs in a Paddle predictor.
SERVER_MODULES = ("numpy", "paddle", "uvicorn", "starlette", "anyio", "h11")


@dataclass
class Launched:
    background: proc.Background
    url: str | None  # http://127.0.0.1:PORT when ready
    log: Path
    waited_s: float
    problem: str = ""  # why it is not ready ("" when it is)

    @property
    def ready(self) -> bool:
        return self.url is not None and not self.problem


def log_tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no server log)"
    return "\n".join(text.splitlines()[-lines:]) or "(server log is empty)"


def launch(
    model_dir: Path,
    *,
    log: Path,
    name: str,
    extra: Sequence[str] = (),
    python: str | None = None,
    env: Mapping[str, str] | None = None,
    deadline_s: float = 120.0,
) -> Launched:
    """Start the server and wait for it. The caller stops `background` (also when not ready). It runs
    under `python` when that can run it, else where it can (tipc.execute.own_parts); PartsMissing (exit 3)
    when nowhere."""
    from tipc.execute import own_parts

    placed = own_parts.tell(
        own_parts.place(
            "reference server (tipc serve)", python or sys.executable, SERVER_MODULES, model_dir=model_dir
        )
    )
    argv = placed.argv(
        "tipc", "serve", str(model_dir), "--host", "127.0.0.1", "--port", "0", "--name", name, *extra
    )
    if placed.env:
        env = {**(env if env is not None else proc.base_env()), **placed.env}
    started = time.monotonic()
    background = proc.Background(argv, cwd=log.parent, env=env, log_path=log)
    end = started + deadline_s

    def ready_line(_left: float) -> str | None:
        match = (
            _READY_LINE.search(log.read_text(encoding="utf-8", errors="replace")) if log.is_file() else None
        )
        return match.group(1) if match else None

    polled = poll(
        ready_line,
        deadline_s,
        stop=lambda: background.poll() is not None and ready_line(0) is None,  # its last words count
        interval_s=0.05,
        max_interval_s=0.05,
    )
    url = polled.value
    if polled.stopped:
        return Launched(
            background,
            None,
            log,
            time.monotonic() - started,
            f"the server exited (code {background.poll()}) before it was ready",
        )
    if url is None:
        return Launched(
            background,
            None,
            log,
            time.monotonic() - started,
            f"no ready line in its log after {deadline_s:.0f}s",
        )
    from tipc.execute.sandbox import ports

    port = ports.local_port(url)
    foreign = ports.held_by_others(port, background.tree()) if port is not None else None
    if foreign is not None:  # its ready line names a port another process holds: not this server's
        return Launched(
            background, None, log, time.monotonic() - started, f"{url} is not held by this server ({foreign})"
        )
    remaining = max(1.0, end - time.monotonic())
    ok, why = wait_ready(
        f"{url}/v2/health/ready", deadline_s=remaining, alive=lambda: background.poll() is None
    )
    return Launched(background, url, log, time.monotonic() - started, "" if ok else why)
