"""The only module that starts processes.

Every child runs from an argv list in its own process group (a new session), so a timeout or Ctrl-C stops
the child and everything it spawned, and nothing else. Output is teed line by line to a log file and to an
optional callback.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

# How long a process group gets between SIGTERM and SIGKILL.
TERM_GRACE_S = 3.0


@dataclass(frozen=True)
class ProcResult:
    exit_code: int | None  # None if killed before it exited by itself
    timed_out: bool
    interrupted: bool
    started: float
    ended: float
    pid: int

    @property
    def duration_s(self) -> float:
        return self.ended - self.started


def build_env(
    base: Mapping[str, str] | None, set_vars: Mapping[str, str], unset_vars: Sequence[str] = ()
) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    for key in unset_vars:
        env.pop(key, None)
    env.update(set_vars)
    return env


def kill_group(pid: int, grace_s: float = TERM_GRACE_S, reap: Callable[[], object] | None = None) -> None:
    """SIGTERM the process group led by `pid`, then SIGKILL whatever is left after `grace_s`.

    `reap` (e.g. Popen.poll) collects our own exited leader: an unreaped zombie keeps the group "alive" and
    would otherwise cost the whole grace period.
    """
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + grace_s
    pause = 0.005
    while time.monotonic() < deadline:
        if reap is not None:
            reap()
        try:
            os.killpg(pid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """Ignore further Ctrl-C while stopping what an earlier Ctrl-C interrupted.

    Main thread only: other threads can neither set handlers nor receive signals.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def capture(
    argv: Sequence[str],
    *,
    cwd: str | Path,
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = 60.0,
    on_start: Callable[[int], None] | None = None,
) -> tuple[int | None, str]:
    """Run a short query command; (exit code or None if it could not run or timed out, stdout+stderr)."""
    lines: list[str] = []
    try:
        res = run(argv, cwd=cwd, env=env, timeout_s=timeout_s, on_line=lines.append, on_start=on_start)
    except OSError as exc:
        return None, str(exc)
    if res.interrupted:
        raise KeyboardInterrupt  # a query is never worth swallowing the user's Ctrl-C
    return res.exit_code, "\n".join(lines)


def _wait(child: subprocess.Popen[bytes], timeout_s: float | None) -> None:
    """`child.wait(timeout_s)` without its polling loop.

    Popen.wait(timeout) sleeps up to 50 ms between looks, so a step's end would be noticed up to 50 ms late.
    A pidfd becomes readable the moment the child exits; the poll is still interrupted by Ctrl-C. Raises
    subprocess.TimeoutExpired as Popen.wait does.
    """
    if timeout_s is None:
        child.wait()  # a blocking waitpid: no latency
        return
    pidfd_open = getattr(os, "pidfd_open", None)  # Linux >= 5.3, Python >= 3.9
    try:
        fd = pidfd_open(child.pid) if pidfd_open is not None else -1
    except OSError:
        fd = -1
    if fd < 0:
        child.wait(timeout=timeout_s)
        return
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        deadline = time.monotonic() + timeout_s
        while not poller.poll(math.ceil(max(0.0, min(deadline - time.monotonic(), 3600.0)) * 1000)):
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(child.args, timeout_s)
    finally:
        os.close(fd)
    child.wait()  # reaps at once: the child has exited


def _pump(stream: IO[bytes], sink: IO[bytes] | None, on_line: Callable[[str], None] | None) -> None:
    # Keep draining whatever happens to the log or the callback: a pipe nobody reads blocks the child.
    for raw in iter(stream.readline, b""):
        if sink is not None:
            try:
                sink.write(raw)
                sink.flush()
            except (OSError, ValueError):
                sink = None
        if on_line is not None:
            try:
                on_line(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
            except Exception:
                on_line = None
    stream.close()


def run(
    argv: Sequence[str],
    *,
    cwd: str | Path,
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
    log_path: str | Path | None = None,
    on_line: Callable[[str], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    stdin_data: bytes | None = None,
) -> ProcResult:
    """Run `argv` to completion (or timeout/Ctrl-C), teeing stdout+stderr to `log_path` and `on_line`."""
    sink: IO[bytes] | None = None
    if log_path is not None:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        sink = open(log_path, "wb")  # noqa: SIM115 - closed in finally
    started = time.time()
    try:
        child = subprocess.Popen(
            list(argv),
            cwd=str(cwd),
            env=dict(env) if env is not None else None,
            stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        if on_start is not None:
            on_start(child.pid)
        if stdin_data is not None and child.stdin is not None:
            child.stdin.write(stdin_data)
            child.stdin.close()
        assert child.stdout is not None
        pump = threading.Thread(target=_pump, args=(child.stdout, sink, on_line), daemon=True)
        pump.start()
        timed_out = interrupted = False
        try:
            _wait(child, timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(child.pid, reap=child.poll)
            child.wait()
        except KeyboardInterrupt:
            interrupted = True
            with shielded():  # a second Ctrl-C must not leave the group half-stopped
                kill_group(child.pid, reap=child.poll)
                child.wait()
        else:
            # The leader exited; stop any of its children still holding the group (e.g. data loaders).
            kill_group(child.pid, grace_s=1.0)
        pump.join(timeout=5)
        code = None if (timed_out or interrupted) else child.returncode
        return ProcResult(code, timed_out, interrupted, started, time.time(), child.pid)
    finally:
        if sink is not None:
            sink.close()


def run_attached(argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> int:
    """Run a child tipc on this terminal (stdin, stdout and stderr shared) and return its exit code.

    Used only to re-run tipc itself in a fresh process (the sandbox must be entered before any thread
    starts). SIGINT, SIGTERM and SIGHUP received here are passed on to the child, which stops its own steps
    and writes its record; the child also dies if this process is killed outright.
    """
    import sys

    # Where this process's stdout/stderr are not real files (a caller that captures them in memory), the
    # child's output is copied into them; otherwise the child writes to the same terminal or files.
    piped = not (_has_fd(sys.stdout) and _has_fd(sys.stderr))
    child = subprocess.Popen(
        list(argv),
        env=dict(env) if env is not None else None,
        preexec_fn=_die_with_parent,
        stdout=subprocess.PIPE if piped else None,
        stderr=subprocess.PIPE if piped else None,
    )
    pumps = []
    if piped:
        for stream, sink in ((child.stdout, sys.stdout), (child.stderr, sys.stderr)):
            assert stream is not None
            pump = threading.Thread(target=_copy_text, args=(stream, sink), daemon=True)
            pump.start()
            pumps.append(pump)
    forwarded = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in forwarded:
            previous[sig] = signal.signal(sig, lambda signum, frame: child.send_signal(signum))
    try:
        while True:
            try:
                code = child.wait()
                break
            except KeyboardInterrupt:
                child.send_signal(signal.SIGINT)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    for pump in pumps:
        pump.join(timeout=10)
    return code


def _has_fd(stream: object) -> bool:
    try:
        return isinstance(stream.fileno(), int)  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return False


def _copy_text(stream: IO[bytes], sink: IO[str]) -> None:
    for raw in iter(stream.readline, b""):
        with contextlib.suppress(Exception):
            sink.write(raw.decode("utf-8", errors="replace"))
            sink.flush()
    stream.close()


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the parent dies (prctl PR_SET_PDEATHSIG)."""
    import ctypes

    with contextlib.suppress(Exception):
        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)


class Background:
    """A long-running child (a server) in its own process group; stop it by its own group only."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path,
        env: Mapping[str, str] | None = None,
        log_path: str | Path | None = None,
    ) -> None:
        self._sink: IO[bytes] | int = subprocess.DEVNULL
        if log_path is not None:
            Path(log_path).parent.mkdir(parents=True, exist_ok=True)
            self._sink = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.started = time.time()
        self.child = subprocess.Popen(
            list(argv),
            cwd=str(cwd),
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            stdout=self._sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.child.pid

    def poll(self) -> int | None:
        return self.child.poll()

    def stop(self, grace_s: float = TERM_GRACE_S) -> int | None:
        """Stop the server's group; returns its exit code (None if it had to be killed)."""
        code = self.child.poll()
        if code is None:
            kill_group(self.child.pid, grace_s=grace_s, reap=self.child.poll)
            code = self.child.wait()
        else:
            kill_group(self.child.pid, grace_s=0.5)
        if not isinstance(self._sink, int):
            self._sink.close()
        return code
