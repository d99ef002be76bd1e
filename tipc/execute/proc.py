"""The only module that starts processes.

Every child runs from an argv list in its own process group (a new session), so a timeout or Ctrl-C stops
the child and everything it spawned, and nothing else. Output is read in bounded chunks whatever its line
lengths (a step printing 3 GiB without a newline costs tipc a chunk of memory, not 3 GiB) and teed to a log
file capped at `log_limit` bytes (`CappedLog`: the head and the tail kept, what fell between counted and
stated in the log) and, line by line, to an optional callback (each line cut at `MAX_LINE_BYTES`).
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
from typing import IO, Any, Protocol

from tipc.core.poll import poll

# How long a process group gets between SIGTERM and SIGKILL.
TERM_GRACE_S = 3.0
# A step's log keeps at most this many bytes of its output (--log-limit): the first and the last half.
DEFAULT_LOG_LIMIT = 64 << 20
READ_CHUNK = 64 << 10  # one read of a child's output
MAX_LINE_BYTES = 64 << 10  # what a line callback gets of one line (the log keeps all of it, within its cap)
CAPTURE_LIMIT = 16 << 20  # what `capture` keeps of a query's output
StartHook = Callable[[int], None]
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


class Refused(Exception):
    """Raised instead of starting a process after `refuse_new`: after an interrupt nothing new starts."""


_refusal: str | None = None


@contextlib.contextmanager
def refusing(reason: str) -> Iterator[None]:
    """Inside the block no process is started: run, capture and Background raise Refused(reason)."""
    global _refusal
    saved, _refusal = _refusal, reason
    try:
        yield
    finally:
        _refusal = saved


def _may_start() -> None:
    if _refusal is not None:
        raise Refused(_refusal)


@dataclass(frozen=True)
class ProcResult:
    exit_code: int | None  # None if killed before it exited by itself
    timed_out: bool
    interrupted: bool
    started: float
    ended: float
    pid: int
    log_dropped: int = 0  # bytes of output the capped log left out (0: the log holds all of it)
    denied: tuple[str, ...] = ()  # system calls the sandbox denied it (tipc.execute.sandbox.seccomp)

    @property
    def duration_s(self) -> float:
        return self.ended - self.started


# ---------------------------------------------------------------- the jail every child goes through


class Launched(Protocol):
    """One child as a launcher starts it (tipc.execute.sandbox.jail.Launch)."""

    argv: list[str]
    env: dict[str, str]
    popen: dict[str, Any]

    def started(self) -> None: ...

    def failed(self) -> None: ...

    def denied(self) -> tuple[str, ...]: ...


class Launcher(Protocol):
    def launch(self, argv: Sequence[str], env: Mapping[str, str], cwd: str, label: str) -> Launched: ...

    def make_folder(self, path: Path) -> None:
        """mkdir -p `path` so that the commands it launches may write there too."""


_launcher: Launcher | None = None


def set_launcher(launcher: Launcher | None) -> None:
    """From now on every child is started by `launcher` (the sandbox's jail; None: as it is)."""
    global _launcher
    _launcher = launcher


def launcher() -> Launcher | None:
    return _launcher


# `python -c` with this instead of `python -m MODULE`: -m puts the working directory first on sys.path, so a
# folder named like the module there (a repo's own `tipc/`) would be imported in its place.
_RUN_MODULE = (
    "import sys; sys.path[:1] == [''] and sys.path.pop(0); import runpy; "
    "runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"
)


def module_argv(python: str, module: str, *args: str) -> list[str]:
    """The argv of `python -m module args...` that never imports the module from the working directory."""
    return [python, "-c", _RUN_MODULE.format(module=module), *args]


def _log_folder(log_path: str | Path) -> None:
    """The folder of a log tipc writes for a child: the child may write beside it (its model, its own
    logs), so in the sandbox it belongs to the child's uid."""
    folder = Path(log_path).parent
    if _launcher is not None:
        _launcher.make_folder(folder)
    else:
        folder.mkdir(parents=True, exist_ok=True)


def _popen(
    argv: Sequence[str],
    *,
    cwd: str | Path,
    env: Mapping[str, str] | None,
    label: str | None,
    trusted: bool = False,
    **kwargs: Any,
) -> tuple[subprocess.Popen[bytes], Launched | None]:
    """Popen in a new session, through the launcher when one is set (unless `trusted`: tipc's own helper,
    which builds a sandbox of its own); call with _registry_lock held."""
    if _launcher is None or trusted:
        child = subprocess.Popen(
            list(argv), cwd=str(cwd), env=_env_arg(env), start_new_session=True, **kwargs
        )
        return child, None
    name = label or (os.path.basename(argv[0]) if argv else "command")
    launch = _launcher.launch(argv, dict(env) if env is not None else base_env(), str(cwd), name)
    try:
        # descriptors the jail passes (its seccomp socket) and those the caller passes, together
        fds = (*launch.popen.get("pass_fds", ()), *kwargs.pop("pass_fds", ()))
        popen = {**launch.popen, "pass_fds": fds}
        child = subprocess.Popen(
            launch.argv, cwd=str(cwd), env=launch.env, start_new_session=True, **popen, **kwargs
        )
    except BaseException:
        launch.failed()
        raise
    launch.started()
    return child, launch


# Variables every child started here gets over this process's environment (`child_env`): the one place a
# verb sets what all it starts must see (--paddle-compat switches, the auto_log shim), without touching
# os.environ, which belongs to a library caller as much as to tipc.
_child_defaults: dict[str, str] = {}


def base_env() -> dict[str, str]:
    """The environment a child starts from: this process's, with the `child_env` variables over it."""
    return {**os.environ, **_child_defaults}


@contextlib.contextmanager
def child_env(values: Mapping[str, str]) -> Iterator[None]:
    """Every child started inside the block (its env built from `base_env`, or given none) gets `values`."""
    saved = dict(_child_defaults)
    _child_defaults.update(values)
    try:
        yield
    finally:
        _child_defaults.clear()
        _child_defaults.update(saved)


def _env_arg(env: Mapping[str, str] | None) -> dict[str, str] | None:
    if env is not None:
        return dict(env)
    return base_env() if _child_defaults else None


def build_env(
    base: Mapping[str, str] | None, set_vars: Mapping[str, str], unset_vars: Sequence[str] = ()
) -> dict[str, str]:
    env = base_env() if base is None else dict(base)
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

    def gone(_left: float) -> bool | None:
        if reap is not None:
            reap()
        if _init or _subreaper:
            _reap_adopted()  # members that lost their parent are our zombies now: they hold the group
        try:
            os.killpg(pid, 0)
        except (ProcessLookupError, PermissionError):
            return True
        return None

    if poll(gone, grace_s, interval_s=0.005, max_interval_s=0.05, growth=2.0).value:
        return
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
    limit: int = CAPTURE_LIMIT,
    label: str | None = None,
) -> tuple[int | None, str]:
    """Run a short query command; (exit code or None if it could not run or timed out, stdout+stderr).

    At most `limit` bytes of the output are kept (a query printing without end costs no more); the text
    then ends with a line saying how much was left out."""
    kept = bytearray()
    over = 0

    def collect(chunk: bytes) -> None:
        nonlocal over
        room = limit - len(kept)
        kept.extend(chunk[:room])
        over += max(0, len(chunk) - room)

    try:
        res = run(
            argv, cwd=cwd, env=env, timeout_s=timeout_s, on_chunk=collect, on_start=on_start, label=label
        )
    except OSError as exc:
        return None, str(exc)
    if res.interrupted:
        raise KeyboardInterrupt  # a query is never worth swallowing the user's Ctrl-C
    text = kept.decode("utf-8", errors="replace").replace("\r\n", "\n").removesuffix("\n")
    if over:
        text += f"\n[tipc: {over} more bytes of output not kept]"
    return res.exit_code, text


def _wait(child: _Child, timeout_s: float | None) -> None:
    """`child.wait(timeout_s)` without its polling loop, and interruptible whichever thread gets a signal.

    Popen.wait(timeout) sleeps up to 50 ms between looks, so a step's end would be noticed up to 50 ms late.
    A pidfd becomes readable the moment the child exits. A signal (SIGTERM, SIGHUP, Ctrl-C) may be delivered
    to any thread (an output pump, a monitor): only the main thread runs Python's handlers, and only once its
    own system call returns, so the main thread also polls a wakeup fd that every delivery writes to.
    Raises subprocess.TimeoutExpired as Popen.wait does.
    """
    pidfd_open = getattr(os, "pidfd_open", None)  # Linux >= 5.3, Python >= 3.9
    try:
        fd = pidfd_open(child.pid) if pidfd_open is not None else -1
    except OSError:
        fd = -1
    if fd < 0:
        child.wait(timeout=timeout_s)
        return
    wake_r = wake_w = -1
    previous = -1
    if threading.current_thread() is threading.main_thread():
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            previous = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        except ValueError:
            os.close(wake_r)
            os.close(wake_w)
            wake_r = wake_w = -1
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if wake_r >= 0:
            poller.register(wake_r, select.POLLIN)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            left = 3600.0 if deadline is None else max(0.0, min(deadline - time.monotonic(), 3600.0))
            ready = poller.poll(math.ceil(left * 1000))
            if any(ready_fd == fd for ready_fd, _ in ready):
                break
            if wake_r >= 0:
                with contextlib.suppress(OSError):
                    while os.read(wake_r, 512):  # a signal that raised nothing: keep waiting
                        pass
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(child.args, timeout_s or 0.0)
    finally:
        os.close(fd)
        if wake_r >= 0:
            signal.set_wakeup_fd(previous)
            os.close(wake_r)
            os.close(wake_w)
    child.wait()  # reaps at once: the child has exited


class CappedLog:
    """A log file that keeps at most `limit` bytes of what is written to it: the first half as it comes, the
    last half in a ring file beside it (`<name>.tail`, so memory stays one chunk whatever the output), joined
    at `close`, with one line stating how many bytes were dropped between them. Thread-safe."""

    MARKER = (
        "\n[tipc: {dropped} bytes of output dropped here; the log keeps the first {head} and the last "
        "{tail} bytes (--log-limit {limit})]\n"
    )

    def __init__(self, path: str | Path, limit: int = DEFAULT_LOG_LIMIT) -> None:
        if limit <= 0:
            raise ValueError("a log limit is a positive number of bytes")
        self.path = Path(path)
        self.limit = limit
        self.head_limit = limit - limit // 2
        self.tail_limit = limit // 2
        self.written = 0
        self.dropped = 0
        self._ring: int | None = None  # the tail's fd once the head is full
        self._ring_written = 0
        self._lock = threading.Lock()
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)

    @property
    def _ring_path(self) -> Path:
        return self.path.with_name(self.path.name + ".tail")

    def write(self, data: bytes) -> None:
        with self._lock:
            if self._fd is None:
                raise ValueError("write to a closed log")
            view = memoryview(data)
            room = max(0, self.head_limit - self.written)
            self.written += len(view)
            if room:
                _write_all(self._fd, view[:room])
                view = view[room:]
            if view and self.tail_limit:
                self._to_ring(view)

    def _to_ring(self, view: memoryview) -> None:
        if self._ring is None:
            self._ring = os.open(self._ring_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        if len(view) > self.tail_limit:  # only its end can stay
            self._ring_written += len(view) - self.tail_limit
            view = view[len(view) - self.tail_limit :]
        while view:
            at = self._ring_written % self.tail_limit
            piece = view[: self.tail_limit - at]
            os.pwrite(self._ring, piece, at)
            self._ring_written += len(piece)
            view = view[len(piece) :]

    def close(self) -> int:
        """Join head and tail into the log; returns the bytes dropped between them."""
        with self._lock:
            if self._fd is None:
                return self.dropped
            fd, self._fd = self._fd, None
            try:
                if self._ring is not None:
                    self._join_tail(fd)
                else:
                    self.dropped = max(0, self.written - self.head_limit)  # no tail to keep (limit 1)
            finally:
                os.close(fd)
                if self._ring is not None:
                    os.close(self._ring)
                    self._ring = None
                    with contextlib.suppress(OSError):
                        self._ring_path.unlink()
            return self.dropped

    def _join_tail(self, fd: int) -> None:
        assert self._ring is not None
        kept = min(self._ring_written, self.tail_limit)
        self.dropped = self._ring_written - kept
        if self.dropped:
            marker = self.MARKER.format(
                dropped=self.dropped, head=self.head_limit, tail=self.tail_limit, limit=self.limit
            )
            _write_all(fd, memoryview(marker.encode()))
        start = self._ring_written % self.tail_limit if self._ring_written > self.tail_limit else 0
        for offset, length in ((start, kept - start), (0, start)) if start else ((0, kept),):
            done = 0
            while done < length:
                chunk = os.pread(self._ring, min(READ_CHUNK * 16, length - done), offset + done)
                if not chunk:
                    break
                _write_all(fd, memoryview(chunk))
                done += len(chunk)


def _write_all(fd: int, view: memoryview) -> None:
    while view:
        view = view[os.write(fd, view) :]


class _Lines:
    """Splits chunks of output into lines for a callback; a line longer than MAX_LINE_BYTES is cut there (the
    rest of it counted, never held)."""

    def __init__(self, on_line: Callable[[str], None]) -> None:
        self.on_line: Callable[[str], None] | None = on_line
        self.pending = bytearray()
        self.over = 0

    def feed(self, chunk: bytes) -> None:
        start = 0
        while self.on_line is not None:
            end = chunk.find(b"\n", start)
            if end < 0:
                self._keep(chunk[start:])
                return
            self._keep(chunk[start:end])
            self.flush()
            start = end + 1

    def _keep(self, piece: bytes) -> None:
        room = MAX_LINE_BYTES - len(self.pending)
        self.pending += piece[:room]
        self.over += max(0, len(piece) - room)

    def flush(self) -> None:
        text = self.pending.decode("utf-8", errors="replace").rstrip("\r")
        if self.over:
            text += f" [tipc: {self.over} more bytes of this line not shown]"
        self.pending.clear()
        self.over = 0
        if self.on_line is not None:
            try:
                self.on_line(text)
            except Exception:
                self.on_line = None

    def close(self) -> None:
        if self.pending or self.over:
            self.flush()


def _pump(
    stream: IO[bytes],
    sink: CappedLog | None,
    on_line: Callable[[str], None] | None,
    on_chunk: Callable[[bytes], None] | None = None,
) -> None:
    # Keep draining whatever happens to the log or the callback: a pipe nobody reads blocks the child.
    # read1 returns what the pipe holds (up to READ_CHUNK) without waiting for a newline or a full buffer.
    lines = _Lines(on_line) if on_line is not None else None
    read = getattr(stream, "read1", stream.read)
    while chunk := read(READ_CHUNK):
        if sink is not None:
            try:
                sink.write(chunk)
            except (OSError, ValueError):
                sink = None
        if lines is not None:
            lines.feed(chunk)
        if on_chunk is not None:
            try:
                on_chunk(chunk)
            except Exception:
                on_chunk = None
    if lines is not None:
        lines.close()
    stream.close()


def _feed(pipe: IO[bytes], data: bytes) -> None:
    """Write `data` to a child's stdin and close it; a child that exits without reading it all (a failed
    compiler) is judged by its exit status, never by the broken pipe, and is still waited for."""
    with contextlib.suppress(BrokenPipeError):
        pipe.write(data)
    with contextlib.suppress(BrokenPipeError):
        pipe.close()


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
    log_limit: int = DEFAULT_LOG_LIMIT,
    on_chunk: Callable[[bytes], None] | None = None,
    label: str | None = None,
    trusted: bool = False,
    pass_fds: Sequence[int] = (),
) -> ProcResult:
    """Run `argv` to completion (or timeout/Ctrl-C), teeing stdout+stderr to `log_path` (capped at
    `log_limit` bytes), `on_line` (line by line) and `on_chunk` (the raw chunks as read). `label` names it
    where the sandbox records the calls it denied (a step id); `trusted`: tipc's own helper with tipc's own
    argv, started outside the sandbox's jail (it builds its own). `pass_fds`: descriptors the child
    inherits (tipc.execute.handback's channel)."""
    _may_start()
    sink: CappedLog | None = None
    if log_path is not None:
        _log_folder(log_path)
        sink = CappedLog(log_path, log_limit)
    started = time.time()
    dropped = 0
    try:
        with _registry_lock:
            child, launch = _popen(
                argv,
                cwd=cwd,
                env=env,
                label=label,
                trusted=trusted,
                stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=tuple(pass_fds),
            )
            _ours.add(child.pid)
        if on_start is not None:
            on_start(child.pid)
        assert child.stdout is not None
        pump = threading.Thread(target=_pump, args=(child.stdout, sink, on_line, on_chunk), daemon=True)
        pump.start()  # before stdin: a child that prints before it reads must not block the write
        if stdin_data is not None and child.stdin is not None:
            _feed(child.stdin, stdin_data)
        timed_out, interrupted = _await(child, timeout_s)
        pump.join(timeout=5)
        if sink is not None:
            dropped = sink.close()
        code = None if (timed_out or interrupted) else child.returncode
        denied = launch.denied() if launch is not None else ()
        return ProcResult(code, timed_out, interrupted, started, time.time(), child.pid, dropped, denied)
    finally:
        if sink is not None:
            sink.close()


def _await(child: _Child, timeout_s: float | None) -> tuple[bool, bool]:
    """Wait for a child started here (its group stopped on a timeout or Ctrl-C, its leftovers after it
    exited), then sweep the orphans; (timed out, interrupted)."""
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
    finally:
        _forget(child.pid)
    # What left the group (setsid) and lost its parent is an orphan now: nothing outlives its step.
    sweep_orphans()
    return timed_out, interrupted


class _Child(Protocol):
    """What `_await` needs of a child: subprocess.Popen, or `_Forked`."""

    pid: int
    args: Any

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


class _Forked:
    """A child forked by `run_forked`, with the part of Popen's interface `_await` uses."""

    args = ("<forked helper>",)

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: it has exited, its status is lost
                self.returncode = -1
            else:
                if pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            time.sleep(0.005)
        assert self.returncode is not None
        return self.returncode


def run_forked(
    work: Callable[[], int], *, timeout_s: float | None, on_line: Callable[[str], None] | None = None
) -> ProcResult:
    """Run `work` (tipc's own code, never a repo's) in a forked copy of this process, as `run` runs an argv:
    its own session, stdout and stderr line by line to `on_line`, its group stopped on a timeout or Ctrl-C,
    its exit status `work`'s return value (1 and the traceback on its output for an exception). What a
    helper in a new interpreter would do, without paying that interpreter's start and tipc's imports again.

    The child starts afresh where it matters: standard streams, this module's registry, no launcher, default
    signal handlers, `/` as its folder. Locks other threads of this process held at the fork stay held in
    the child, so `work` must not use objects those threads share (progress printers: pass none)."""
    _may_start()
    import sys

    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    started = time.time()
    with _registry_lock:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the forked child; tests see what it prints and returns
            _forked_child(work, read_end, write_end)
        _ours.add(pid)
    os.close(write_end)
    child = _Forked(pid)
    stream = os.fdopen(read_end, "rb")
    pump = threading.Thread(target=_pump, args=(stream, None, on_line), daemon=True)
    pump.start()
    timed_out, interrupted = _await(child, timeout_s)
    pump.join(timeout=5)
    code = None if (timed_out or interrupted) else child.returncode
    return ProcResult(code, timed_out, interrupted, started, time.time(), pid)


def _forked_child(work: Callable[[], int], read_end: int, write_end: int) -> None:  # pragma: no cover
    global _registry_lock, _launcher, _refusal, _init, _subreaper, _parent_gone
    import io
    import sys
    import traceback

    code = 1
    try:
        os.setsid()
        _die_with_parent()
        os.close(read_end)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(write_end, 1)
        os.dup2(write_end, 2)
        os.close(write_end)
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=True)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True)
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with contextlib.suppress(ValueError):
            signal.set_wakeup_fd(-1)
        _registry_lock = threading.Lock()
        _ours.clear()
        _launcher = _refusal = _parent_gone = None
        _init = _subreaper = False  # the subreaper flag is not inherited; nor is pid 1
        os.chdir("/")
        code = work()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        with contextlib.suppress(Exception):
            traceback.print_exc()
        code = 1
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def run_attached(
    argv: Sequence[str], *, env: Mapping[str, str] | None = None, pass_fds: Sequence[int] = ()
) -> int:
    """Run a child tipc on this terminal (stdin, stdout and stderr shared) and return its exit code.

    Used only to re-run tipc itself in a fresh process (the sandbox must be entered before any thread
    starts). SIGINT, SIGTERM and SIGHUP received here are passed on to the child, which stops its own steps
    and writes its record; the child also dies if this process is killed outright.
    """
    import sys

    # Where this process's stdout/stderr are not real files (a caller that captures them in memory), the
    # child's output is copied into them; otherwise the child writes to the same terminal or files.
    piped = not (_has_fd(sys.stdout) and _has_fd(sys.stderr))
    with _registry_lock:
        child = subprocess.Popen(
            list(argv),
            env=_env_arg(env),
            preexec_fn=_die_with_parent,
            stdout=subprocess.PIPE if piped else None,
            stderr=subprocess.PIPE if piped else None,
            pass_fds=tuple(pass_fds),
        )
        _ours.add(child.pid)
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
                _wait(child, None)  # wakes for a signal whichever thread it reached
                code = child.returncode
                break
            except KeyboardInterrupt:
                child.send_signal(signal.SIGINT)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    _forget(child.pid)
    for pump in pumps:
        pump.join(timeout=10)
    return code


def _has_fd(stream: object) -> bool:
    try:
        return isinstance(stream.fileno(), int)  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return False


def _copy_text(stream: IO[bytes], sink: IO[str]) -> None:
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    read = getattr(stream, "read1", stream.read)
    while chunk := read(READ_CHUNK):
        with contextlib.suppress(Exception):
            sink.write(decoder.decode(chunk))
            sink.flush()
    with contextlib.suppress(Exception):
        sink.write(decoder.decode(b"", final=True))
    stream.close()


def _prctl(option: int, value: int) -> int:
    import ctypes

    try:
        result: int = ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        return -1
    return result


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the parent dies (prctl PR_SET_PDEATHSIG)."""
    _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))


# ---------------------------------------------------------------- nothing outlives tipc
#
# Every child runs in its own process group, but a process can leave it (setsid) and outlive its parent.
# Two ways to keep such orphans under tipc's hand:
# - a PID namespace (the sandbox unshares one): tipc carries on as its init (pid 1), so every orphan of
#   the run becomes tipc's child, and when tipc ends, however it ends (SIGKILL included: the process that
#   waits for it outside passes PR_SET_PDEATHSIG on), the kernel kills every process left in it;
# - elsewhere tipc is a child subreaper (PR_SET_CHILD_SUBREAPER): orphans become tipc's own children.
# Either way, after every step and every stopped server the orphans are killed (`sweep_orphans`).

_registry_lock = threading.Lock()
_ours: set[int] = set()  # children started here and not yet reaped (not orphans, whoever their parent is)
_init = False  # this process is pid 1 of the run's own PID namespace
_subreaper = False
_NO_NAMESPACE = 121  # the forked init's exit status when it could not set its namespace up
_parent_gone: int | None = None  # (the init) read end of a pipe the waiting parent holds open until it ends


def _forget(pid: int) -> None:
    with _registry_lock:
        _ours.discard(pid)


def containment() -> str:
    """How this process's children are kept from outliving it: pid-namespace, subreaper or none."""
    return "pid-namespace" if _init else "subreaper" if _subreaper else "none"


def become_namespace_init(prepare: Callable[[], None]) -> bool:
    """After unshare(CLONE_NEWPID), which moves only this process's future children: fork, and let the
    child carry on as this very tipc, as init of the new namespace. Returns True in that child. The parent
    never returns: it waits, passes SIGINT, SIGTERM and SIGHUP on, and exits with the child's status.

    `prepare` runs first in the child (mounting the namespace's own /proc); if it fails the child exits and
    False is returned here, in the parent, which then carries on as before. Call before any thread starts.
    """
    global _init
    import sys

    sys.stdout.flush()
    sys.stderr.flush()
    ready_r, ready_w = os.pipe()
    alive_r, alive_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; the coverage of the rest of the run is measured in it
        global _parent_gone
        os.close(ready_r)
        os.close(alive_w)
        _parent_gone = alive_r
        try:
            _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
            prepare()
            # Its own process group: a terminal's Ctrl-C reaches the parent, which passes it on once.
            os.setpgid(0, 0)
            os.write(ready_w, b"1")
        except BaseException:
            os._exit(_NO_NAMESPACE)
        os.close(ready_w)
        _init = True
        return True
    os.close(ready_w)
    os.close(alive_r)  # alive_w stays open until this process ends, however it ends
    ok = os.read(ready_r, 1) == b"1"
    os.close(ready_r)
    if not ok:
        os.waitpid(pid, 0)
        return False
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: _pass_on(pid, signum))
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except KeyboardInterrupt:  # a handler installed before ours
            _pass_on(pid, signal.SIGINT)
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


def die_with_parent_again() -> None:
    """After a change of this thread's credentials (setfsuid: the kernel then clears PR_SET_PDEATHSIG), the
    init of the run's namespace dies with the parent that waits for it again; if that parent already ended
    (its pipe's end is closed), now."""
    if _parent_gone is None:
        return
    _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    import select

    ready, _, _ = select.select([_parent_gone], [], [], 0)
    if ready:  # end of file: nobody outside waits for this run any more
        os._exit(128 + int(signal.SIGKILL))


def succeeds_in_child(attempt: Callable[[], None]) -> bool:
    """Whether `attempt` runs without an exception in a forked child (which then exits): a way to learn what
    the kernel allows (a namespace, a mount) without committing this process to it. Before any thread."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked child
        try:
            attempt()
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _pass_on(pid: int, signum: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signum)


def become_subreaper() -> bool:
    """Make this process the reaper of its descendants' orphans (where no PID namespace could be had)."""
    global _subreaper
    _subreaper = _prctl(_PR_SET_CHILD_SUBREAPER, 1) == 0
    return _subreaper


_Row = tuple[int, int, int, str]  # ppid, process group, session, state


def _table() -> dict[int, _Row]:
    """pid -> (ppid, process group, session, state) of every visible process."""
    out: dict[int, _Row] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                raw = fh.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = raw[raw.rfind(")") + 2 :].split()
        with contextlib.suppress(IndexError, ValueError):
            out[int(name)] = (int(fields[1]), int(fields[2]), int(fields[3]), fields[0])
    return out


def _descendants(roots: set[int], table: Mapping[int, _Row]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, row in table.items():
        children.setdefault(row[0], []).append(pid)
    found: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid in found:
            continue
        found.add(pid)
        todo.extend(children.get(pid, ()))
    return found


def _reap_adopted() -> None:
    with _registry_lock:
        try:
            table = _table()
        except OSError:
            return
        me = os.getpid()
        dead = [p for p, row in table.items() if row[0] == me and row[3] in ("Z", "X") and p not in _ours]
    for pid in dead:
        with contextlib.suppress(OSError):
            os.waitpid(pid, os.WNOHANG)


def process_tree(leader: int) -> set[int]:
    """The processes started from `leader`: its process group and session (it leads both) and every
    descendant of those, however they regrouped. Empty where /proc cannot be read."""
    try:
        table = _table()
    except OSError:
        return set()
    roots = {pid for pid, row in table.items() if pid == leader or leader in (row[1], row[2])}
    return _descendants(roots, table) if roots else set()


def sweep_orphans(rounds: int = 5) -> list[int]:
    """Kill every orphan (a process whose parent died and that was left to this process, the namespace's
    init or a subreaper) with its descendants; returns their pids. Children started here are not orphans."""
    if not (_init or _subreaper):
        return []
    parent = os.getpid()
    killed: list[int] = []
    for _ in range(rounds):
        with _registry_lock:
            try:
                table = _table()
            except OSError:
                break
            orphans = {pid for pid, row in table.items() if row[0] == parent and pid not in _ours}
            dead = {pid for pid in orphans if table[pid][3] in ("Z", "X")}
            victims = _descendants(orphans - dead, table)
        for pid in dead:  # they are our children now: collect them, or they stay zombies
            with contextlib.suppress(OSError):
                os.waitpid(pid, os.WNOHANG)
        if not victims:
            break
        for pid in victims:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        killed.extend(sorted(victims))
        time.sleep(0.02)  # they die and are collected; their children are reparented meanwhile
    return killed


class Background:
    """A long-running child (a server) in its own process group; stop it by its own group only. Its output
    goes to `log_path` through a pump, capped like a step's (`CappedLog`); `log_dropped` once stopped."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path,
        env: Mapping[str, str] | None = None,
        log_path: str | Path | None = None,
        log_limit: int = DEFAULT_LOG_LIMIT,
        label: str | None = None,
    ) -> None:
        _may_start()
        self._log: CappedLog | None = None
        self._pump: threading.Thread | None = None
        self._drained = False
        self.log_dropped = 0
        if log_path is not None:
            _log_folder(log_path)
            self._log = CappedLog(log_path, log_limit)
        self.started = time.time()
        with _registry_lock:
            try:
                self.child, self._launch = _popen(
                    argv,
                    cwd=cwd,
                    env=env,
                    label=label,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL if self._log is None else subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                )
            except BaseException:
                if self._log is not None:
                    self._log.close()  # nothing started: stop() will never be called to close it
                raise
            _ours.add(self.child.pid)
        if self._log is not None:
            assert self.child.stdout is not None
            self._pump = threading.Thread(
                target=_pump, args=(self.child.stdout, self._log, None), daemon=True
            )
            self._pump.start()

    @property
    def pid(self) -> int:
        return self.child.pid

    def poll(self) -> int | None:
        """The exit code once the server exited (its output then all in the log: its last words count)."""
        code = self.child.poll()
        if code is not None and self._pump is not None and not self._drained:
            self._drained = True
            self._pump.join(timeout=1.0)  # longer only when something it started still holds the pipe
        return code

    def stop(self, grace_s: float = TERM_GRACE_S) -> int | None:
        """Stop the server's group; returns its exit code (None if it had to be killed)."""
        code = self.child.poll()
        if code is None:
            kill_group(self.child.pid, grace_s=grace_s, reap=self.child.poll)
            code = self.child.wait()
        else:
            kill_group(self.child.pid, grace_s=0.5)
        _forget(self.child.pid)
        sweep_orphans()
        if self._pump is not None:
            self._pump.join(timeout=5)
        if self._log is not None:
            self.log_dropped = self._log.close()
        return code

    def tree(self) -> set[int]:
        """The pids of this server's process tree (its group, its session and their descendants)."""
        return process_tree(self.child.pid)

    def denied(self) -> tuple[str, ...]:
        """The system calls the sandbox denied this server so far."""
        return self._launch.denied() if self._launch is not None else ()


class Pipe:
    """A child this process talks to through its stdin and stdout (a `git cat-file --batch`), in its own
    process group. Its stderr is drained into the last STDERR_KEPT bytes (`errors`); past `timeout_s` its
    group is killed (reads then end). `close` stops the group and returns the exit code (None: killed)."""

    STDERR_KEPT = 4096

    def __init__(
        self, argv: Sequence[str], *, cwd: str | Path, env: Mapping[str, str] | None, timeout_s: float
    ) -> None:
        _may_start()
        with _registry_lock:
            self.child, self._launch = _popen(
                argv,
                cwd=cwd,
                env=env,
                label=None,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            _ours.add(self.child.pid)
        assert self.child.stdin is not None and self.child.stdout is not None
        self.stdin: IO[bytes] = self.child.stdin
        self.stdout: IO[bytes] = self.child.stdout
        self._errors = bytearray()
        self.timed_out = False
        self._drain = threading.Thread(target=self._keep_errors, daemon=True)
        self._drain.start()
        self._timer = threading.Timer(timeout_s, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _keep_errors(self) -> None:
        stream = self.child.stderr
        assert stream is not None
        read = getattr(stream, "read1", stream.read)
        while chunk := read(READ_CHUNK):
            self._errors += chunk
            del self._errors[: max(0, len(self._errors) - self.STDERR_KEPT)]
        stream.close()

    def _expire(self) -> None:
        self.timed_out = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.child.pid, signal.SIGKILL)

    @property
    def errors(self) -> str:
        return bytes(self._errors).decode("utf-8", errors="replace").strip()

    def close(self) -> int | None:
        self._timer.cancel()
        for stream in (self.stdin, self.stdout):
            with contextlib.suppress(OSError, ValueError):
                stream.close()
        try:
            code: int | None = self.child.wait(timeout=TERM_GRACE_S)
        except subprocess.TimeoutExpired:
            code = None
        kill_group(self.child.pid, grace_s=0.5 if code is not None else TERM_GRACE_S, reap=self.child.poll)
        if code is None:
            self.child.wait()
        _forget(self.child.pid)
        self._drain.join(timeout=5)
        return None if self.timed_out else code

    def __enter__(self) -> Pipe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def stop_children(grace_s: float = TERM_GRACE_S) -> list[int]:
    """Stop the process group of every child started here that still runs, whichever thread started it
    (a Ctrl-C reaches only the main thread; children of other threads are stopped here). Returns the
    leaders' pids. Call under `refusing`, so no thread starts another one meanwhile."""
    with _registry_lock:
        leaders = sorted(_ours)
    for pid in leaders:  # all told at once, so their grace periods overlap
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGTERM)
    for pid in leaders:
        kill_group(pid, grace_s=grace_s)
    return leaders
