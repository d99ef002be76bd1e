"""Issue 22, item 8, and what holds of `tipc serve` today: malformed requests get a 4xx JSON answer; request
heads over 16 KiB (docs/serve.md) are refused, whether one huge header or thousands of small ones."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from tests.conftest import tipc_env
from tests.demo_port import free_port
from tests.security.conftest import contained

pytestmark = pytest.mark.integration

_BUILD = """
import sys
import paddle

class Tiny(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)

net = Tiny()
net.eval()
spec = [paddle.static.InputSpec([None, 4], "float32", name="x")]
paddle.jit.save(net, sys.argv[1] + "/inference", input_spec=spec)
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    folder = tmp_path_factory.mktemp("serve")
    model = folder / "tiny"
    model.mkdir()
    script = folder / "build.py"  # dy2static reads the source: a file, not `python -c`
    script.write_text(_BUILD)
    built = subprocess.run(
        [sys.executable, str(script), str(model)],
        capture_output=True,
        text=True,
        env=tipc_env(),
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    port = free_port()
    log = (folder / "serve.log").open("wb")
    child = subprocess.Popen(
        [sys.executable, "-m", "tipc", "serve", str(model), "--port", str(port), "--name", "tiny"],
        env=tipc_env(),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/health/ready", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            assert child.poll() is None and time.monotonic() < deadline, (folder / "serve.log").read_text()[
                -3000:
            ]
            time.sleep(0.3)
        yield "127.0.0.1", port
    finally:
        child.terminate()
        try:
            child.wait(timeout=15)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        log.close()


def _exchange(address: tuple[str, int], raw: bytes, timeout: float = 30) -> tuple[int, bytes, float]:
    """Send `raw`, read the answer: (status, body, seconds until the answer)."""
    started = time.monotonic()
    with socket.create_connection(address, timeout=timeout) as sock:
        with contextlib.suppress(OSError):  # the server may answer and close before it has read everything
            sock.sendall(raw)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except OSError:
            pass
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.") else 0
    return status, body, time.monotonic() - started


def test_a_malformed_request_line_is_a_4xx_json(server: tuple[str, int]) -> None:
    status, body, _ = _exchange(server, b"NONSENSE\r\n\r\n")
    assert 400 <= status < 500 and json.loads(body)["error"]


def test_a_body_that_is_not_json_is_a_4xx_json(server: tuple[str, int]) -> None:
    payload = b"{not json"
    raw = (
        b"POST /v2/models/tiny/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(len(payload)).encode() + b"\r\nConnection: close\r\n\r\n" + payload
    )
    status, body, _ = _exchange(server, raw)
    assert 400 <= status < 500 and json.loads(body)["error"]


def test_a_request_head_over_16_kib_is_refused(server: tuple[str, int]) -> None:
    raw = (
        b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Big: "
        + b"a" * 100_000
        + b"\r\nConnection: close\r\n\r\n"
    )
    status, _, _ = _exchange(server, raw)
    contained(status in (400, 431), f"a 100 KB head got {status}")


def test_thousands_of_headers_are_refused_quickly(server: tuple[str, int]) -> None:
    headers = b"".join(b"X-H%d: v\r\n" % n for n in range(5000))
    raw = b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n" + headers + b"Connection: close\r\n\r\n"
    status, _, seconds = _exchange(server, raw)
    contained(status in (400, 431), f"5,000 headers got {status} after {seconds:.1f} s")
