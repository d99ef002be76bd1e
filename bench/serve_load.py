"""Load figures for `tipc serve`: N concurrent clients x M requests on loopback, both protocols.

    PYTHONPATH=$PWD python bench/serve_load.py [--clients 8] [--requests 400] [--model DIR]

Builds a tiny exported model (unless --model is given), starts `tipc serve` as a child in its own process
group, and prints clients, requests, errors, p50/p99 latency and throughput. Not a test: figures depend on
the machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.serve.conftest import build_model, start_server  # noqa: E402
from tipc.serve.load import run_load  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2, help="predictors in the server")
    parser.add_argument("--model", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        model = args.model or build_model(work / "tiny_infer")
        server = start_server(model, work / "server.log", "--workers", str(args.workers), name="bench")
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
        finally:
            server.background.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
