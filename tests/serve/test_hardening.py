"""`tipc serve` under hostile clients, on loopback with bounded load: malformed requests, slow clients,
large bodies, a crashing model worker, a corrupt model. Each probe answers 4xx JSON or the server stays up."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest

from tests.serve.conftest import RunningServer, child_env, start_server
from tipc.execute import proc
from tipc.execute.serving.client import Client

pytestmark = pytest.mark.integration

HEADER_TIMEOUT_S = 4.0
BODY_TIMEOUT_S = 2.0
MAX_BODY = 8_000_000


@pytest.fixture(scope="module")
def hardened(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    running = start_server(
        tiny_model,
        tmp_path_factory.mktemp("hardened") / "server.log",
        "--workers",
        "2",
        "--max-body-bytes",
        str(MAX_BODY),
        "--max-batch",
        "16",
        "--header-timeout",
        str(HEADER_TIMEOUT_S),
        "--body-timeout",
        str(BODY_TIMEOUT_S),
    )
    try:
        yield running
    finally:
        running.background.stop()


def v2(shape: object, data: str, datatype: str = "FP32", name: str = "x") -> str:
    return f'{{"name": "{name}", "shape": {json.dumps(shape)}, "datatype": "{datatype}", "data": {data}}}'


ZEROS = "[" + ", ".join(["0.0"] * 64) + "]"
GOOD = v2([1, 1, 8, 8], ZEROS)
INFER = "/v2/models/tiny/infer"
PREDICT = "/tiny/prediction"


def pipeline(value: str) -> bytes:
    return json.dumps({"key": ["x"], "value": [value]}).encode()


MALFORMED = {
    "integer of 5,000 digits": (INFER, f'{{"inputs": [{v2([1], "[" + "7" * 5000 + "]")}]}}'.encode()),
    "100k-deep nesting": (INFER, b"[" * 100_000 + b"]" * 100_000),
    "100k-deep nesting in a pipeline value": (PREDICT, pipeline("[" * 100_000 + "]" * 100_000)),
    "shape overflow with empty data": (INFER, f'{{"inputs": [{v2([2**62, 4, 1, 1], "[]")}]}}'.encode()),
    "pipeline shape overflow": (PREDICT, pipeline(json.dumps({"shape": [2**62, 4, 1, 1], "data": []}))),
    "boolean in shape": (INFER, f'{{"inputs": [{v2([True, 1, 8, 8], ZEROS)}]}}'.encode()),
    "boolean shape": (INFER, f'{{"inputs": [{v2(True, ZEROS)}]}}'.encode()),
    "FP32 overflow 1e39": (INFER, f'{{"inputs": [{v2([1, 1, 8, 8], "[1e39" + ", 0" * 63 + "]")}]}}'.encode()),
    "pipeline FP32 overflow": (PREDICT, pipeline(json.dumps([[[[1e39] + [0] * 7] + [[0] * 8] * 7]]))),
    "NaN": (INFER, f'{{"inputs": [{v2([1, 1, 8, 8], "[NaN" + ", 0" * 63 + "]")}]}}'.encode()),
    "1e999": (INFER, f'{{"inputs": [{v2([1, 1, 8, 8], "[1e999" + ", 0" * 63 + "]")}]}}'.encode()),
    "Infinity": (INFER, f'{{"inputs": [{v2([1, 1, 8, 8], "[-Infinity" + ", 0" * 63 + "]")}]}}'.encode()),
    "duplicate input names": (INFER, f'{{"inputs": [{GOOD}, {GOOD}]}}'.encode()),
    "duplicate pipeline keys": (PREDICT, json.dumps({"key": ["x", "x"], "value": [ZEROS, ZEROS]}).encode()),
    "batch over --max-batch": (
        INFER,
        f'{{"inputs": [{v2([17, 1, 8, 8], "[" + ", ".join(["0"] * 64 * 17) + "]")}]}}'.encode(),
    ),
    "integer overflow INT64": (INFER, f'{{"inputs": [{v2([1], "[" + str(2**70) + "]", "INT64")}]}}'.encode()),
    "shape of 40 dimensions": (INFER, f'{{"inputs": [{v2([1] * 40, "[0]")}]}}'.encode()),
    "not UTF-8": (INFER, b'{"inputs": "\xff\xfe"}'),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_requests_are_4xx_json_and_the_server_keeps_serving(
    hardened: RunningServer, case: str
) -> None:
    path, body = MALFORMED[case]
    with Client(hardened.url) as client:
        reply = client.request("POST", path, body)
        assert 400 <= reply.status < 500, (case, reply.status, reply.body)
        assert isinstance(reply.body, dict), f"{case}: not JSON: {reply.body!r}"[:300]
        assert reply.body.get("error") or reply.body.get("err_msg")
        if path == PREDICT:
            assert reply.body["err_no"] != 0
        follow_up = client.request("POST", INFER, f'{{"inputs": [{GOOD}]}}'.encode())
    assert follow_up.status == 200, follow_up.body
    assert hardened.background.poll() is None


def _address(server: RunningServer) -> tuple[str, int]:
    parts = urlsplit(server.url)
    return parts.hostname or "127.0.0.1", parts.port or 80


def test_trickling_clients_do_not_block_new_requests_and_are_closed(hardened: RunningServer) -> None:
    host, port = _address(hardened)
    slow = []
    for _ in range(80):
        sock = socket.create_connection((host, port), timeout=5)
        sock.sendall(b"POST /v2/models/tiny/infer HTTP/1.1\r\nHost: x\r\n")
        slow.append(sock)
    opened = time.monotonic()
    try:
        # While all 80 stay open and trickle, new requests are answered at once (not 503).
        latencies = []
        with Client(hardened.url, timeout_s=5) as client:
            for _ in range(5):
                reply = client.request("POST", INFER, f'{{"inputs": [{GOOD}]}}'.encode())
                assert reply.status == 200, reply.body
                latencies.append(reply.seconds)
                for sock in slow:
                    sock.sendall(b"X")
        assert time.monotonic() - opened < HEADER_TIMEOUT_S, "the check must run while the slow clients stay"
        assert max(latencies) < 2.0, latencies
        # Then each is closed (after a 408) once its head is later than the deadline, trickling or not.
        closed = 0
        end = opened + HEADER_TIMEOUT_S + 5.0
        pending = list(slow)
        while pending and time.monotonic() < end:
            for sock in list(pending):
                try:
                    sock.sendall(b"Y")
                    sock.settimeout(0.01)
                    data = sock.recv(4096)
                except (TimeoutError, BlockingIOError):
                    continue
                except OSError:  # reset: closed by the server
                    data = b""
                if not data or data.startswith(b"HTTP/1.1 408"):
                    closed += 1
                    pending.remove(sock)
            time.sleep(0.25)
        assert closed == 80, f"{80 - closed} slow clients still open {time.monotonic() - opened:.1f}s on"
    finally:
        for sock in slow:
            sock.close()


def test_a_body_that_trickles_gets_408_json(hardened: RunningServer) -> None:
    host, port = _address(hardened)
    with socket.create_connection((host, port), timeout=BODY_TIMEOUT_S + 10) as sock:
        sock.sendall(
            b"POST /v2/models/tiny/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 1000\r\n\r\n{"inputs": '
        )
        started = time.monotonic()
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
        waited = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]
    assert BODY_TIMEOUT_S - 0.5 < waited < BODY_TIMEOUT_S + 5


def _large_body(batch: int = 10_900) -> bytes:
    # Parsed in full by the model worker, then refused (413: the batch is over --max-batch).
    values = batch * 64
    data = ", ".join(["0.123456"] * values)
    return f'{{"inputs": [{v2([batch, 1, 8, 8], "[" + data + "]")}]}}'.encode()


def _tree_rss(pid: int) -> int:
    process = psutil.Process(pid)
    total = process.memory_info().rss
    for child in process.children(recursive=True):
        with contextlib.suppress(psutil.Error):  # a child that just ended
            total += child.memory_info().rss
    return total


def test_health_answers_and_memory_comes_back_under_large_bodies(hardened: RunningServer) -> None:
    body = _large_body()
    assert len(body) < MAX_BODY
    with Client(hardened.url, timeout_s=60) as client:  # warm-up: the first large parse sizes the heaps
        assert client.request("POST", INFER, body).status == 413
    time.sleep(0.5)
    before = _tree_rss(hardened.background.pid)
    stop = threading.Event()
    statuses: list[int] = []
    peak = [before]

    def poster() -> None:
        with Client(hardened.url, timeout_s=60) as client:
            for _ in range(3):
                statuses.append(client.request("POST", INFER, body).status)

    def sampler() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _tree_rss(hardened.background.pid))
            time.sleep(0.05)

    posters = [threading.Thread(target=poster) for _ in range(4)]
    watcher = threading.Thread(target=sampler)
    watcher.start()
    for t in posters:
        t.start()
    latencies = []
    with Client(hardened.url, timeout_s=10) as client:
        while any(t.is_alive() for t in posters):
            reply = client.get("/v2/health/live")
            assert reply.status == 200
            latencies.append(reply.seconds)
            time.sleep(0.05)
    for t in posters:
        t.join()
    stop.set()
    watcher.join()
    time.sleep(1.0)
    after = _tree_rss(hardened.background.pid)
    mb = 1024 * 1024
    print(
        f"health: {len(latencies)} probes, median {1000 * statistics.median(latencies):.1f} ms, "
        f"max {1000 * max(latencies):.1f} ms; RSS before {before / mb:.0f} MB, peak {peak[0] / mb:.0f} MB, "
        f"after {after / mb:.0f} MB"
    )
    assert statuses == [413] * 12
    assert len(latencies) >= 5
    # The figure was a 2.8 s stall; JSON parsing now happens in the worker process.
    assert max(latencies) < 2.0 and statistics.median(latencies) < 0.25, latencies
    # Generous: what the burst took is handed back (the issue saw +1.2 GB kept after it).
    assert after - before < 150 * mb, (before / mb, peak[0] / mb, after / mb)


def _worker_of(server: RunningServer) -> psutil.Process:
    [worker] = [
        p
        for p in psutil.Process(server.background.pid).children(recursive=True)
        if "tipc.serve.worker" in " ".join(p.cmdline())
    ]
    return worker


def test_the_parent_never_loads_paddle_or_numpy(hardened: RunningServer) -> None:
    maps = Path(f"/proc/{hardened.background.pid}/maps").read_text()
    assert "libpaddle" not in maps and "_multiarray_umath" not in maps
    worker_maps = Path(f"/proc/{_worker_of(hardened).pid}/maps").read_text()
    assert "libpaddle" in worker_maps  # the model is in the worker, so the check above can fail


def test_a_worker_crash_is_a_503_json_then_a_restart(tiny_model: Path, tmp_path: Path) -> None:
    running = start_server(tiny_model, tmp_path / "server.log", "--workers", "1", name="tiny")
    try:
        first = _worker_of(running)
        os.kill(first.pid, signal.SIGSEGV)  # what a fault inside Paddle does to the process holding it
        with Client(running.url, timeout_s=10) as client:
            deadline = time.monotonic() + 10
            ready = client.get("/v2/health/ready")
            while ready.status == 200 and time.monotonic() < deadline:
                time.sleep(0.01)
                ready = client.get("/v2/health/ready")
            assert ready.status == 503 and "SIGSEGV" in ready.body["reason"], ready.body
            down = client.request("POST", INFER, f'{{"inputs": [{GOOD}]}}'.encode())
            if down.status != 200:  # unless the restart was already done
                assert down.status == 503 and "SIGSEGV" in down.body["error"], down.body
            deadline = time.monotonic() + 120
            while client.get("/v2/health/ready").status != 200 and time.monotonic() < deadline:
                time.sleep(0.2)
            again = client.request("POST", INFER, f'{{"inputs": [{GOOD}]}}'.encode())
        assert again.status == 200, again.body
        assert running.background.poll() is None
        assert _worker_of(running).pid != first.pid
        assert "model worker died (killed by SIGSEGV); restarting it" in running.log.read_text()
        # The server killed outright: its worker follows and removes the server's private folder.
        worker = _worker_of(running)
        cmdline = worker.cmdline()
        folder = Path(cmdline[cmdline.index("--connect") + 1]).parent
        assert folder.is_dir() and folder.name.startswith("tipc-serve-")
        running.background.child.kill()
        running.background.child.wait(timeout=10)
        gone = psutil.wait_procs([worker], timeout=10)[1] == []
        assert gone or worker.status() == psutil.STATUS_ZOMBIE
        assert not folder.exists()
    finally:
        running.background.stop()


@pytest.mark.parametrize("corrupt", ["zero params", "unknown op"])
def test_a_corrupt_model_is_exit_2_with_a_clear_message(
    tiny_model: Path, tmp_path: Path, corrupt: str
) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    program = (tiny_model / "inference.json").read_text()
    params = (tiny_model / "inference.pdiparams").read_bytes()
    if corrupt == "zero params":
        params = bytes(len(params))
    else:
        assert '"1.conv2d"' in program
        program = program.replace('"1.conv2d"', '"1.conv2x"', 1)
    (broken / "inference.json").write_text(program)
    (broken / "inference.pdiparams").write_bytes(params)
    lines: list[str] = []
    result = proc.run(
        [sys.executable, "-m", "tipc", "serve", str(broken), "--port", "0"],
        cwd=tmp_path,
        env=child_env(),
        timeout_s=120,
        on_line=lines.append,
    )
    assert result.exit_code == 2, lines[-10:]
    assert any("Paddle Inference cannot load this model" in line for line in lines), lines[-10:]
    assert not any(line.startswith("Traceback") for line in lines)


def test_a_busy_port_is_a_clear_exit_3_before_the_model_loads(tiny_model: Path, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        lines: list[str] = []
        result = proc.run(
            [sys.executable, "-m", "tipc", "serve", str(tiny_model), "--port", str(port)],
            cwd=tmp_path,
            env=child_env(),
            timeout_s=60,
            on_line=lines.append,
        )
    assert result.exit_code == 3
    assert any(f"cannot listen on 127.0.0.1:{port}" in line and "in use" in line for line in lines), lines
    assert not result.timed_out  # it ended by itself, refused (how fast is the timing tier's to judge)


def test_a_worker_that_dies_while_loading_is_a_user_error_naming_the_signal(tmp_path: Path) -> None:
    from tipc.core.errors import UserError
    from tipc.serve.supervisor import WorkerBackend

    crashing = tmp_path / "python"
    crashing.write_text("#!/bin/sh\necho 'loading...'\nkill -SEGV $$\n")
    crashing.chmod(0o755)
    backend = WorkerBackend(tmp_path, name="m", python=str(crashing), load_timeout_s=30)
    with pytest.raises(UserError) as info:
        backend.start()
    assert "cannot load this model" in str(info.value)
    assert "died while loading (killed by SIGSEGV)" in str(info.value) and "loading..." in str(info.value)


@pytest.mark.parametrize(
    "raw",
    [
        b"NONSENSE\r\n\r\n",
        b"POST /v2/models/tiny/infer HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
    ],
)
def test_malformed_http_is_a_json_400(hardened: RunningServer, raw: bytes) -> None:
    with socket.create_connection(_address(hardened), timeout=10) as sock:
        sock.sendall(raw)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), answer[:200]
    assert b"application/json" in head.lower() and json.loads(body)["error"]


def _exchange(server: RunningServer, raw: bytes) -> tuple[bytes, bytes, float]:
    """Send `raw` (the server may answer and close before it has read it all); (head, body, seconds)."""
    started = time.monotonic()
    with socket.create_connection(_address(server), timeout=30) as sock:
        with contextlib.suppress(OSError):
            sock.sendall(raw)
        answer = b""
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return head, body, time.monotonic() - started


def _get(headers: bytes, end: bytes = b"Connection: close\r\n\r\n") -> bytes:
    return b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n" + headers + end


HEADS_REFUSED = {
    "one 100 KB header": _get(b"X-Big: " + b"a" * 100_000 + b"\r\n"),
    "5,000 headers": _get(b"".join(b"X-H%d: v\r\n" % n for n in range(5000))),
    "150 headers in 2 KB": _get(b"".join(b"h%d:\r\n" % n for n in range(150))),
    "30 KB of a head that never ends": _get(b"X-Big: " + b"a" * 30_000, end=b""),
}


@pytest.mark.parametrize("raw", list(HEADS_REFUSED.values()), ids=list(HEADS_REFUSED))
def test_a_request_head_over_the_limits_is_a_json_431_and_the_server_keeps_serving(
    hardened: RunningServer, raw: bytes
) -> None:
    """docs/serve.md: a head over 16 KiB or with more than 100 fields is refused (issue 22: a 100 KB head and
    5,000 headers got 200, the headers after 5 s), whether it arrives whole or not."""
    head, body, _ = _exchange(hardened, raw)
    assert head.startswith(b"HTTP/1.1 431"), head[:200]
    assert b"application/json" in head.lower() and "request head refused" in json.loads(body)["error"]
    head, _, _ = _exchange(hardened, _get(b""))
    assert head.startswith(b"HTTP/1.1 200"), head[:200]


def test_a_head_within_the_limits_is_served(hardened: RunningServer) -> None:
    """100 fields and a head just under 16 KiB are allowed; a pipelined head over the limits is refused."""
    fields = b"".join(b"X-H%02d: %s\r\n" % (n, b"v" * 150) for n in range(98))
    within = _get(fields)
    assert 15_000 < len(within) < 16 * 1024
    head, _, _ = _exchange(hardened, within)
    assert head.startswith(b"HTTP/1.1 200"), head[:200]
    keep = b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n"
    pipelined = keep + HEADS_REFUSED["5,000 headers"]
    with socket.create_connection(_address(hardened), timeout=30) as sock:
        with contextlib.suppress(OSError):
            sock.sendall(pipelined)
        answer = b""
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 200") and b"HTTP/1.1 431" in answer, answer[:400]


@pytest.mark.timing
def test_a_head_over_the_limits_is_refused_at_once(hardened: RunningServer) -> None:
    """Timing tier: the refusal comes as soon as the bytes show it (5,000 headers took 5.1 s to a 200)."""
    for raw in HEADS_REFUSED.values():
        head, _, seconds = _exchange(hardened, raw)
        assert head.startswith(b"HTTP/1.1 431") and seconds < 1.0, (head[:80], seconds)
