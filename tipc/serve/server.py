"""Run `tipc serve`: uvicorn + the app in this process, the model in a worker process (no paddle/numpy here).

uvicorn's own SIGINT/SIGTERM handlers give the graceful shutdown: stop accepting, finish in-flight requests
(bounded by `GRACEFUL_S`), stop the worker, exit 0. Slow clients are closed: a request head must arrive within
`header_timeout_s` of the connection opening (or of the previous response), so connections that trickle their
headers cannot hold the server; bodies have their own deadline in the app. A request head over MAX_HEAD_BYTES
or with more than MAX_HEADERS fields is answered 431 as soon as the bytes received show it, before h11 parses
it (h11 bounds only a head still incomplete: one that arrived whole, however large, was parsed and answered).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import resource
import socket
import sys
from pathlib import Path
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from tipc.serve.app import (
    DEFAULT_BODY_TIMEOUT_S,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_REQUEST_TIMEOUT_S,
    build_app,
)
from tipc.serve.supervisor import WorkerBackend

GRACEFUL_S = 5
DEFAULT_HEADER_TIMEOUT_S = 10.0
# Open sockets beyond this are refused by uvicorn; slow ones are closed by the header deadline long before.
MAX_CONNECTIONS = 1000
MAX_HEAD_BYTES = 16 * 1024  # request line and header fields (docs/serve.md)
MAX_HEADERS = 100  # header fields of one request
_END_OF_HEAD = re.compile(rb"\n\r?\n")  # where h11 ends a head too
_SLOW_BODY = b'{"error": "request headers not received in time"}'
_SLOW_HEAD = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(_SLOW_BODY), _SLOW_BODY)
)


class _GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request head (uvicorn has none of its own) and the
    head limits (`head_over_limits`) applied before h11 parses a head."""

    head_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S
    _head_timer: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_late)

    def _head_late(self) -> None:
        self._head_timer = None
        # Still waiting for a request head (their side IDLE) and not answering one (ours IDLE).
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.IDLE and self.conn.our_state is h11.IDLE:
            with contextlib.suppress(Exception):
                self.transport.write(_SLOW_HEAD)
            self.transport.close()

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def handle_events(self) -> None:
        # Waiting for a request head: what is buffered of it must stay within the limits before h11 parses
        # any of it (also when it arrived whole in one read, or pipelined behind another request).
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            why = head_over_limits(self.conn.trailing_data[0])
            if why is not None:
                self._answer_and_close(431, "Request Header Fields Too Large", f"request head refused: {why}")
                return
        super().handle_events()

    def _answer_and_close(self, status: int, phrase: str, error: str) -> None:
        body = json.dumps({"error": error}).encode()
        head = f"HTTP/1.1 {status} {phrase}\r\ncontent-type: application/json\r\nconnection: close\r\n"
        with contextlib.suppress(Exception):
            self.transport.write(head.encode() + b"content-length: %d\r\n\r\n%s" % (len(body), body))
        self.transport.close()

    def send_400_response(self, msg: str) -> None:
        """A malformed request line or header: 400 with a JSON body, not text."""
        self._answer_and_close(400, "Bad Request", f"malformed HTTP request: {msg}")

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        super().connection_lost(exc)


def _head_guard(timeout_s: float) -> type[H11Protocol]:
    """The guarded protocol with this server's head deadline."""
    return type("HeadDeadline", (_GuardedH11,), {"head_timeout_s": timeout_s})


def head_over_limits(buffered: bytes) -> str | None:
    """Why the request head at the start of `buffered` (complete or not) is refused, or None."""
    end = _END_OF_HEAD.search(buffered)
    head = buffered if end is None else buffered[: end.start()]
    if len(head) > MAX_HEAD_BYTES:
        return f"the request head is over {MAX_HEAD_BYTES} bytes"
    fields = head.count(b"\n")  # the lines after the request line
    if fields > MAX_HEADERS:
        return f"more than {MAX_HEADERS} header fields"
    return None


class _Server(uvicorn.Server):
    """Prints one machine-readable line once the socket is bound (also when --port 0 picked the port)."""

    name: str = ""
    backend: WorkerBackend | None = None

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            for server in self.servers:
                for sock in server.sockets:
                    host, port = sock.getsockname()[:2]
                    print(f"tipc serve: ready on http://{host}:{port} model={self.name}", flush=True)

    async def shutdown(self, sockets: Any = None) -> None:
        print("tipc serve: shutting down (finishing in-flight requests)", flush=True)
        await super().shutdown(sockets=sockets)
        # Here, not after run(): uvicorn re-raises the captured SIGTERM/SIGINT once run() ends.
        if self.backend is not None:
            self.backend.close()
        print("tipc serve: stopped", flush=True)


def _raise_fd_limit(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before the model loads: a busy port fails fast with a clear message."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise InfraError(f"tipc serve: cannot listen on {host}:{port}: {exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        why = exc.strerror or str(exc)
        raise InfraError(f"tipc serve: cannot listen on {host}:{port}: {why}") from None
    sock.set_inheritable(False)
    return sock


class InfraError(Exception):
    """The server cannot run here (the port is taken): exit 3 with this message."""


def serve(
    model_dir: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 9998,
    name: str = "model",
    workers: int = 2,
    cpu_threads: int = 1,
    mkldnn: bool = False,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_batch: int = 64,
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S,
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S,
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S,
) -> int:
    try:
        sock = listen(host, port)
    except InfraError as exc:
        sys.stderr.write(f"{exc}\n")
        return 3
    backend = WorkerBackend(
        model_dir, name=name, workers=workers, cpu_threads=cpu_threads, mkldnn=mkldnn, max_batch=max_batch
    )
    try:
        backend.start()  # UserError (exit 2) when the model cannot be loaded; the worker took any crash
        app = build_app(
            backend,
            name=name,
            max_body_bytes=max_body_bytes,
            body_timeout_s=body_timeout_s,
            request_timeout_s=request_timeout_s,
        )
        inputs = ", ".join(f"{s['name']}:{s['datatype']}{s['shape']}" for s in backend.inputs)
        outputs = ", ".join(f"{s['name']}:{s['datatype']}{s['shape']}" for s in backend.outputs)
        print(
            f"tipc serve: loaded {model_dir} ({backend.size} predictors in worker pid {backend.worker_pid}) "
            f"inputs [{inputs}] outputs [{outputs}]",
            flush=True,
        )
        print(
            f"tipc serve: POST /{name}/prediction (Paddle Serving pipeline), "
            f"POST /v2/models/{name}/infer (v2)",
            flush=True,
        )
        _raise_fd_limit(MAX_CONNECTIONS + 64)
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            http=_head_guard(header_timeout_s),
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=GRACEFUL_S,
            # Backpressure on model work is the app's byte budget; this only bounds open sockets.
            limit_concurrency=MAX_CONNECTIONS,
            lifespan="off",
        )
        server = _Server(config)
        server.name = name
        server.backend = backend
        server.run(sockets=[sock])
    finally:
        backend.close()
        sock.close()
    if not server.started:
        sys.stderr.write(f"tipc serve: could not listen on {host}:{port}\n")
        return 3
    return 0
