"""`tipc serve MODEL_DIR`: a reference server for an exported Paddle inference model.

Speaks Paddle Serving's pipeline HTTP protocol (`POST /{name}/prediction`) and the Open Inference Protocol v2
(`/v2/...`), so a repo's serving client can be checked without Paddle Serving, which no longer installs.
The model runs in a worker process; this process (the HTTP server) never imports paddle or numpy.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tipc.commands import positive_int
from tipc.core.errors import UserError


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 0..65535, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not 0 < value < 86400:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"expected seconds in (0, 86400), got {text!r}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "model_dir", type=Path, help="folder with inference.json|.pdmodel + inference.pdiparams"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=_port, default=9998, help="port (default 9998; 0 picks a free one)")
    parser.add_argument(
        "--name", default=None, help="service/model name in the URLs (default: the folder name)"
    )
    parser.add_argument(
        "--workers",
        "--threads",
        dest="workers",
        type=positive_int,
        default=2,
        help="predictors serving requests concurrently (default 2)",
    )
    parser.add_argument(
        "--cpu-threads", type=positive_int, default=1, help="math threads per predictor (default 1)"
    )
    parser.add_argument(
        "--enable-mkldnn", action="store_true", help="use oneDNN on CPU (default off, as TIPC's mkldnn=False)"
    )
    parser.add_argument(
        "--max-body-bytes",
        type=positive_int,
        default=16 * 1024 * 1024,
        help="reject larger request bodies with 413 (default 16 MiB)",
    )
    parser.add_argument(
        "--max-batch",
        type=positive_int,
        default=64,
        help="reject a larger batch (first dimension of a dynamic-batch input) with 413 (default 64)",
    )
    parser.add_argument(
        "--header-timeout",
        type=_seconds,
        default=10.0,
        help="close a connection whose request headers are not complete in this many seconds (default 10)",
    )
    parser.add_argument(
        "--body-timeout",
        type=_seconds,
        default=30.0,
        help="answer 408 and close when a request body takes longer than this to arrive (default 30)",
    )


def run(args: argparse.Namespace) -> int:
    model_dir: Path = args.model_dir
    from tipc.serve.spec import find_model_files

    find_model_files(model_dir)  # a clear exit-2 message before any worker starts
    try:
        from tipc.serve.server import serve
    except ImportError as exc:
        raise UserError(
            f"tipc serve needs uvicorn and starlette (pip install 'tipc[serve]'): {exc}"
        ) from None
    name = args.name or model_dir.resolve().name
    return serve(
        model_dir,
        host=args.host,
        port=args.port,
        name=name,
        workers=args.workers,
        cpu_threads=args.cpu_threads,
        mkldnn=args.enable_mkldnn,
        max_body_bytes=args.max_body_bytes,
        max_batch=args.max_batch,
        header_timeout_s=args.header_timeout,
        body_timeout_s=args.body_timeout,
    )
