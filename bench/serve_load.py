"""Load figures for `tipc serve`: N concurrent clients x M requests on loopback, both protocols.

    PYTHONPATH=$PWD python bench/serve_load.py [--clients 8] [--requests 400] [--model DIR] [--hostile]

Builds a tiny exported model (unless --model is given), starts `tipc serve` as a child in its own process
group, and prints clients, requests, errors, p50/p99 latency and throughput. `--hostile` adds: health latency
while 4 clients post 6 MB bodies, the server's RSS (HTTP process + model worker) before, at peak and after,
and the latency of new requests while 80 connections trickle their headers. Not a test: figures depend on
the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.serve.conftest import build_model, start_server  # noqa: E402
from tipc.execute.serving.client import Client  # noqa: E402
from tipc.execute.serving.load import run_load  # noqa: E402

MB = 1024 * 1024


def _rss(pid: int) -> int:
    total = 0
    process = psutil.Process(pid)
    for p in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):  # a process that just ended
            total += p.memory_info().rss
    return total


def hostile(url: str, pid: int) -> None:
    batch = 10_900  # ~6 MB of JSON, parsed in full by the worker, then refused: over --max-batch
    body = (
        f'{{"inputs": [{{"name": "x", "shape": [{batch}, 1, 8, 8], "datatype": "FP32", "data": ['
        + ", ".join(["0.123456"] * batch * 64)
        + "]}]}"
    ).encode()
    with Client(url, timeout_s=60) as client:
        client.request("POST", "/v2/models/bench/infer", body)
    before, peak, stop = _rss(pid), [0], threading.Event()

    def post() -> None:
        with Client(url, timeout_s=60) as client:
            for _ in range(3):
                client.request("POST", "/v2/models/bench/infer", body)

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _rss(pid))
            time.sleep(0.05)

    posters = [threading.Thread(target=post) for _ in range(4)]
    sampler = threading.Thread(target=sample)
    sampler.start()
    for t in posters:
        t.start()
    health: list[float] = []
    with Client(url, timeout_s=10) as client:
        while any(t.is_alive() for t in posters):
            health.append(client.get("/v2/health/live").seconds)
            time.sleep(0.05)
    for t in posters:
        t.join()
    stop.set()
    sampler.join()
    time.sleep(1.0)
    after = _rss(pid)
    print(
        f"health under 4 x {len(body) / MB:.1f} MB bodies: {len(health)} probes, median "
        f"{1000 * statistics.median(health):.1f} ms, max {1000 * max(health):.1f} ms"
    )
    print(
        f"RSS (server + worker): before {before / MB:.0f} MB, peak {peak[0] / MB:.0f} MB, "
        f"after {after / MB:.0f} MB"
    )
    parts = urlsplit(url)
    assert parts.port is not None, url  # the server this script started, on its own port
    slow = [socket.create_connection((parts.hostname, parts.port), timeout=5) for _ in range(80)]
    for sock in slow:
        sock.sendall(b"POST /v2/models/bench/infer HTTP/1.1\r\nHost: x\r\n")
    sample_x = np.zeros((1, 1, 8, 8), np.float32)
    with Client(url, timeout_s=10) as client:
        replies = [client.infer_v2("bench", {"x": sample_x}) for _ in range(20)]
    for sock in slow:
        sock.close()
    ok = sum(r.ok for r in replies)
    print(
        f"with 80 trickling connections: {ok}/20 answered 200, "
        f"max {1000 * max(r.seconds for r in replies):.1f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2, help="predictors in the server")
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--hostile", action="store_true", help="also large bodies and slow clients")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        model = args.model or build_model(work / "tiny_infer")
        server = start_server(
            model, work / "server.log", "--workers", str(args.workers), "--max-batch", "64", name="bench"
        )
        try:
            rng = np.random.default_rng(0)
            samples = [{"x": rng.standard_normal((1, 1, 8, 8)).astype(np.float32)} for _ in range(16)]
            run_load(server.url, "bench", samples, requests=20, concurrency=2)  # warm-up, not reported
            print(f"tipc serve bench: model={model} server workers={args.workers}")
            header = ("protocol", "clients", "requests", "errors", "p50 ms", "p99 ms", "req/s")
            print(f"{header[0]:<10}" + "".join(f"{h:>10}" for h in header[1:]))
            for protocol in ("v2", "pipeline"):
                r = run_load(
                    server.url,
                    "bench",
                    samples,
                    requests=args.requests,
                    concurrency=args.clients,
                    protocol=protocol,
                )
                p50, p99 = r.percentile_ms(50) or 0.0, r.percentile_ms(99) or 0.0
                row = f"{r.concurrency:>10}{r.requests:>10}{r.errors:>10}{p50:>10.2f}{p99:>10.2f}"
                print(f"{protocol:<10}{row}{r.throughput_rps:>10.1f}")
            if args.hostile:
                hostile(server.url, server.background.pid)
        finally:
            server.background.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
