"""The HTTP parent's side of the model worker: start it, talk to it, restart it when it dies (stdlib only).

The worker (`python -m tipc.serve.worker`) is started through tipc.execute.proc and connects back over a Unix
socket
in a private temporary folder. Requests go out as frames with an id and come back in any order; a reader
thread resolves them. When the worker dies (a segfault in Paddle, an OOM kill), every request waiting on it
gets a 503 with the reason, /v2/health/ready says 503, and a new worker is started with backoff.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from tipc.core.errors import UserError
from tipc.core.poll import poll
from tipc.execute import proc
from tipc.serve import frames
from tipc.serve.app import Unavailable

DEFAULT_LOAD_TIMEOUT_S = 300.0
_BACKOFF_S = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)


def describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _exit_code(background: proc.Background, wait_s: float) -> int | None:
    return poll(lambda _left: background.poll(), wait_s, max_interval_s=0.02).value


def _log_tail(path: Path, lines: int = 12) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


class _Worker:
    """One started worker process and its connection."""

    def __init__(
        self, background: proc.Background, sock: socket.socket, hello: dict[str, Any], log: Path
    ) -> None:
        self.background = background
        self.log = log
        self.sock = sock
        self.hello = hello
        self.send_lock = threading.Lock()
        self.pending: dict[int, concurrent.futures.Future[tuple[int, bytes]]] = {}


class WorkerBackend:
    """The app's Backend, served by a model worker process."""

    def __init__(
        self,
        model_dir: Path,
        *,
        name: str,
        workers: int = 2,
        cpu_threads: int = 1,
        mkldnn: bool = False,
        max_batch: int = 64,
        load_timeout_s: float = DEFAULT_LOAD_TIMEOUT_S,
        python: str | None = None,
    ) -> None:
        self.model_dir = model_dir
        self.argv_tail = [
            str(model_dir.resolve()),  # the worker runs in a folder of its own
            "--name",
            name,
            "--workers",
            str(workers),
            "--cpu-threads",
            str(cpu_threads),
            "--max-batch",
            str(max_batch),
            *(["--enable-mkldnn"] if mkldnn else []),
        ]
        self.python = python or sys.executable
        self.load_timeout_s = load_timeout_s
        self.inputs: list[dict[str, Any]] = []
        self.outputs: list[dict[str, Any]] = []
        self.size = workers
        self._dir = Path(tempfile.mkdtemp(prefix="tipc-serve-"))
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._worker: _Worker | None = None
        self._why_not = "the model worker is starting"
        self._closing = threading.Event()
        self._generation = 0

    @property
    def worker_pid(self) -> int | None:
        worker = self._worker
        return worker.background.pid if worker is not None else None

    # -- starting ------------------------------------------------------------------------------------------
    def _spawn(self) -> _Worker:
        """Start a worker and wait for its hello; OSError/RuntimeError with the reason when it cannot load."""
        self._generation += 1
        path = self._dir / f"worker{self._generation}.sock"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(path))
            listener.listen(1)
            listener.settimeout(0.2)
            env = proc.build_env(None, {"GLOG_minloglevel": "2", "PYTHONUNBUFFERED": "1"})
            root = str(Path(__file__).resolve().parents[2])
            env["PYTHONPATH"] = root + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            log = self._dir / f"worker{self._generation}.log"
            background = proc.Background(
                [self.python, "-m", "tipc.serve.worker", "--connect", str(path), *self.argv_tail],
                cwd=self._dir,
                env=env,
                log_path=log,
            )
            deadline = time.monotonic() + self.load_timeout_s
            conn: socket.socket | None = None
            hello: dict[str, Any] | None = None
            try:
                while conn is None and time.monotonic() < deadline:
                    if background.poll() is not None:
                        break
                    with contextlib.suppress(TimeoutError):
                        conn, _ = listener.accept()
                if conn is not None:
                    conn.settimeout(max(1.0, deadline - time.monotonic()))
                    frame = frames.recv(conn)
                    conn.settimeout(None)
                    hello = frame[0] if frame is not None else None
            except OSError:
                hello = None
            if hello is None or not hello.get("ok"):
                if conn is not None:
                    conn.close()
                code = _exit_code(background, 2.0)  # an EOF comes a moment before the exit status
                background.stop(grace_s=1.0 if hello is None else 5.0)
                if hello is not None:
                    raise RuntimeError(str(hello.get("error", "the worker could not load the model")))
                if code is None:
                    raise RuntimeError(f"the model worker did not load within {self.load_timeout_s:g} s")
                tail = _log_tail(log)
                raise RuntimeError(
                    f"the model worker died while loading ({describe_exit(code)})"
                    + (f"; its log ends:\n{tail}" if tail else "")
                )
            assert conn is not None
            return _Worker(background, conn, hello, log)
        finally:
            listener.close()
            with contextlib.suppress(OSError):
                path.unlink()

    def start(self) -> None:
        """Start the first worker; UserError (exit 2) when the model cannot be loaded."""
        try:
            worker = self._spawn()
        except (OSError, RuntimeError) as exc:
            self.close()
            raise UserError(f"{self.model_dir}: Paddle Inference cannot load this model: {exc}") from None
        self._adopt(worker)

    def _adopt(self, worker: _Worker) -> None:
        self.inputs = list(worker.hello.get("inputs", []))
        self.outputs = list(worker.hello.get("outputs", []))
        self.size = int(worker.hello.get("size", self.size))
        with self._lock:
            self._worker = worker
            self._why_not = ""
        threading.Thread(target=self._read, args=(worker,), name="worker-reader", daemon=True).start()

    # -- running -------------------------------------------------------------------------------------------
    def _read(self, worker: _Worker) -> None:
        try:
            while True:
                frame = frames.recv(worker.sock)
                if frame is None:
                    break
                header, body = frame
                with self._lock:
                    future = worker.pending.pop(int(header.get("id", -1)), None)
                if future is not None:
                    with contextlib.suppress(concurrent.futures.InvalidStateError):  # its client left
                        future.set_result((int(header.get("status", 500)), bytes(body)))
        except (OSError, ValueError):
            pass
        self._lost(worker)

    def _lost(self, worker: _Worker) -> None:
        with self._lock:
            if self._worker is not worker or self._closing.is_set():
                return
        code = _exit_code(worker.background, 2.0)  # tells a crash from a close; it comes just after EOF
        if code is None:
            why = "the connection to the model worker broke"
        else:
            why = f"the model worker died ({describe_exit(code)})"
        with self._lock:
            if self._worker is not worker or self._closing.is_set():
                return
            # Not ready, with the reason, in one step: readiness never says 503 without saying why.
            self._worker = None
            self._why_not = f"{why}; restarting it"
            pending, worker.pending = worker.pending, {}
        with contextlib.suppress(OSError):
            worker.sock.close()
        for future in pending.values():
            # A request whose client left was cancelled meanwhile (wrap_future cancels its future).
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                future.set_exception(Unavailable(f"{why} while answering this request; retry shortly"))
        worker.background.stop(grace_s=1.0)
        tail = _log_tail(worker.log)
        print(f"tipc serve: {why}; restarting it" + (f"\n{tail}" if tail else ""), flush=True)
        threading.Thread(target=self._restart, name="worker-restart", daemon=True).start()

    def _restart(self) -> None:
        for attempt in itertools.count():
            if self._closing.is_set():
                return
            try:
                worker = self._spawn()
            except (OSError, RuntimeError) as exc:
                pause = _BACKOFF_S[min(attempt, len(_BACKOFF_S) - 1)]
                with self._lock:
                    self._why_not = f"the model worker cannot be restarted ({exc}); trying again"
                print(f"tipc serve: restarting the model worker failed: {exc}", flush=True)
                if self._closing.wait(pause):
                    return
                continue
            if self._closing.is_set():
                worker.sock.close()
                worker.background.stop(grace_s=1.0)
                return
            self._adopt(worker)
            print(f"tipc serve: model worker restarted (pid {worker.background.pid})", flush=True)
            return

    def readiness(self) -> tuple[bool, str]:
        with self._lock:
            return self._worker is not None, self._why_not

    def _send(self, worker: _Worker, request_id: int, op: str, body: bytes | bytearray) -> None:
        with worker.send_lock:
            frames.send(worker.sock, {"id": request_id, "op": op}, body)

    async def infer(self, op: str, body: bytes | bytearray) -> tuple[int, bytes]:
        future: concurrent.futures.Future[tuple[int, bytes]] = concurrent.futures.Future()
        request_id = next(self._ids)
        with self._lock:
            worker = self._worker
            if worker is None:
                raise Unavailable(self._why_not or "the model worker is not running")
            worker.pending[request_id] = future
        try:
            try:
                await asyncio.to_thread(self._send, worker, request_id, op, body)
            except OSError:
                raise Unavailable("the model worker went away; retry shortly") from None
            del body
            return await asyncio.wrap_future(future)
        finally:
            with self._lock:
                worker.pending.pop(request_id, None)

    # -- stopping ------------------------------------------------------------------------------------------
    def close(self) -> None:
        self._closing.set()
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            with contextlib.suppress(OSError), worker.send_lock:
                frames.send(worker.sock, {"type": "bye"})  # a plain EOF would mean "the server died"
            with contextlib.suppress(OSError):
                worker.sock.shutdown(socket.SHUT_RDWR)
                worker.sock.close()
            worker.background.stop(grace_s=2.0)  # EOF makes it exit at once; the grace is for a hung one
        shutil.rmtree(self._dir, ignore_errors=True)
