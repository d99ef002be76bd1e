"""Run the `tipc serve` app under uvicorn in this process (the model loads here, not in the CLI's parent).

uvicorn's own SIGINT/SIGTERM handlers give the graceful shutdown: stop accepting, finish in-flight requests
(bounded by `GRACEFUL_S`), exit 0.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import uvicorn

from tipc.errors import UserError
from tipc.serve.app import DEFAULT_MAX_BODY_BYTES, build_app
from tipc.serve.model import PredictorPool

GRACEFUL_S = 5


class _Server(uvicorn.Server):
    """Prints one machine-readable line once the socket is bound (also when --port 0 picked the port)."""

    name: str = ""

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
        print("tipc serve: stopped", flush=True)


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
) -> int:
    try:
        pool = PredictorPool(model_dir, size=workers, cpu_threads=cpu_threads, mkldnn=mkldnn)
    except UserError:
        raise
    except Exception as exc:  # Paddle raises RuntimeError/ValueError/... for corrupt or incompatible models
        raise UserError(
            f"{model_dir}: Paddle Inference cannot load this model: {type(exc).__name__}: {exc}"
        ) from None
    app = build_app(pool, name=name, max_body_bytes=max_body_bytes)
    inputs = ", ".join(f"{s.name}:{s.datatype}{list(s.shape)}" for s in pool.inputs)
    outputs = ", ".join(f"{s.name}:{s.datatype}{list(s.shape)}" for s in pool.outputs)
    print(
        f"tipc serve: loaded {model_dir} ({pool.size} predictors) inputs [{inputs}] outputs [{outputs}]",
        flush=True,
    )
    print(
        f"tipc serve: POST /{name}/prediction (Paddle Serving pipeline), POST /v2/models/{name}/infer (v2)",
        flush=True,
    )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_S,
        # Backpressure: beyond this many open connections/requests uvicorn answers 503 instead of queueing.
        limit_concurrency=max(64, 16 * workers),
        lifespan="off",
    )
    server = _Server(config)
    server.name = name
    server.run()
    if not server.started:
        sys.stderr.write(f"tipc serve: could not listen on {host}:{port}\n")
        return 3
    print("tipc serve: stopped", flush=True)
    return 0
