"""A background step (server) as values: the running server (`_Server`), one just launched (`_Launched`),
and the outcomes decided from them alone: refused before it starts (no working directory, an unusable
ready_url, its port already taken) or not ready (exited first, or never answered in time).
"""

from __future__ import annotations

import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from tipc.core.steps import Status, Step
from tipc.execute import proc
from tipc.execute.record import Resources, StepResult
from tipc.execute.runner.options import _describe_exit


@dataclass
class _Server:
    step: Step
    index: int
    handle: proc.Background
    monitor: Callable[[], Resources]
    result: StepResult
    log: Path


@dataclass(frozen=True)
class _Launched:
    """A background step's process, just started: what its readiness wait and outcome need."""

    handle: proc.Background
    stop_monitor: Callable[[], Resources]
    base: StepResult  # FAILED, with its start time and pid
    port: int | None  # the port its ready_url names on this machine


def _server_refused(step: Step, cwd: Path, base: StepResult) -> StepResult | None:
    """Why a background step cannot even start: a missing working directory or an unusable ready_url."""
    if not cwd.is_dir():
        return replace(base, reason=f"working directory {step.cwd} does not exist")
    if step.ready_url and urllib.parse.urlsplit(step.ready_url).scheme not in ("http", "https", "tcp"):
        return replace(
            base, reason=f"ready_url {step.ready_url!r}: expected http://, https:// or tcp://host:port"
        )
    return None


def _port_taken(port: int | None, base: StepResult) -> StepResult | None:
    """FAILED if something already listens on the server's port before it starts."""
    from tipc.execute.sandbox import ports

    holder = ports.taken_by(port) if port is not None and ports.readable() else None
    if port is not None and holder is not None:
        # Whatever answers there is not this run's server, which cannot bind the port: never a pass.
        return replace(
            base,
            started=time.time(),
            ended=time.time(),
            reason=f"port {port} was already in use before the server started (held by {holder}); "
            "the server cannot bind it and what answers there is not the repo's server",
        )
    return None


def _not_ready(launched: _Launched, url: str | None, limit: float) -> StepResult:
    """A server that exited before it answered (FAILED) or never answered in time (TIMEOUT), stopped."""
    code = launched.handle.poll()
    with proc.shielded():
        stopped = launched.handle.stop()
    resources = launched.stop_monitor()
    base = replace(launched.base, log_dropped=launched.handle.log_dropped)
    if code is not None:
        return replace(
            base,
            ended=time.time(),
            exit_code=code,
            resources=resources,
            reason=f"server {_describe_exit(code)} before it answered at {url}",
        )
    return replace(
        base,
        status=Status.TIMEOUT,
        ended=time.time(),
        exit_code=None,
        resources=resources,
        reason=f"server never answered at {url} within {limit:g} s; stopped (exit {stopped})",
    )
