"""tipc.execute.serving.load: the load loop's time budget sizes it to the server's speed (a stdlib fake
server)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from tipc.execute.serving.load import run_load

DELAY_S = 0.05  # each answer takes this long: 4 clients answer ~80 requests a second


class _Slow(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        time.sleep(DELAY_S)
        body = json.dumps({"outputs": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def slow_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


SAMPLES = [{"x": np.zeros((1, 2), dtype=np.float32)}]


def test_time_budget_stops_handing_out_requests(slow_url: str) -> None:
    load = run_load(slow_url, "m", SAMPLES, requests=10_000, concurrency=4, time_budget_s=0.4)
    # ~0.4 s of 4 clients at 50 ms a request: tens of requests, far from the 10,000 asked for (the count says
    # the budget stopped it; the wall time is the timing tier's to judge, on a machine nothing else shares).
    assert 4 <= load.requests < 200, load.to_json()
    assert (load.ok, load.errors) == (load.requests, 0), load.first_errors
    assert load.to_json()["planned"] == 10_000 and load.to_json()["time_budget_s"] == 0.4


def test_every_client_sends_once_even_past_the_budget(slow_url: str) -> None:
    load = run_load(slow_url, "m", SAMPLES, requests=100, concurrency=3, time_budget_s=0.0)
    assert load.requests == 3 and load.ok == 3


def test_without_a_budget_every_request_is_sent(slow_url: str) -> None:
    load = run_load(slow_url, "m", SAMPLES, requests=12, concurrency=4)
    assert (load.requests, load.ok, load.errors) == (12, 12, 0)
    assert load.to_json()["planned"] == 12 and load.to_json()["time_budget_s"] is None
