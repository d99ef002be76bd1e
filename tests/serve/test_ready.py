"""The one readiness probe: 2xx/3xx is ready; 404, 5xx, refused and silence are not; tcp:// is a connect."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator

import pytest

from tipc.core.errors import UserError
from tipc.execute.serving.ready import probe, wait_ready


class _Status(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status = int(self.path.strip("/") or 200)
        self.send_response(status)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture(scope="module")
def http_port() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Status)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("status", "ready"), [(200, True), (204, True), (302, True), (404, False), (503, False)]
)
def test_http_status_decides(http_port: int, status: int, ready: bool) -> None:
    result = probe(f"http://127.0.0.1:{http_port}/{status}", 2.0)
    assert bool(result) is ready and result.detail == f"HTTP {status}"


def test_nothing_listening_is_not_ready_for_http_and_tcp() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: connections are refused
        assert not probe(f"http://127.0.0.1:{port}/", 0.5)
        assert not probe(f"tcp://127.0.0.1:{port}", 0.5)


def test_tcp_is_ready_once_a_connection_is_accepted(http_port: int) -> None:
    assert probe(f"tcp://127.0.0.1:{http_port}", 1.0)


def test_bad_urls_are_user_errors() -> None:
    with pytest.raises(UserError):
        probe("ftp://127.0.0.1:1/", 1.0)
    with pytest.raises(UserError):
        probe("http://127.0.0.1:99999/", 1.0)


def test_wait_ready_reports_the_last_answer(http_port: int) -> None:
    ok, why = wait_ready(f"http://127.0.0.1:{http_port}/404", deadline_s=0.5, interval_s=0.05)
    assert not ok and "HTTP 404" in why
    assert wait_ready(f"http://127.0.0.1:{http_port}/", deadline_s=5) == (True, "")
    ok, why = wait_ready(f"http://127.0.0.1:{http_port}/", deadline_s=5, alive=lambda: False)
    assert not ok and "exited" in why
