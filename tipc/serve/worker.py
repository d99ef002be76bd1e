"""The model worker of `tipc serve`: `python -m tipc.serve.worker --connect SOCKET MODEL_DIR ...`.

Paddle runs here, not in the HTTP server: a crash in Paddle (a corrupt model, a kernel fault) ends this
process only, and the server answers 503 and starts a new worker. The worker connects to the server's Unix
socket, loads the model, says hello (the model's tensors, or why it cannot load), then answers request frames
from a pool of `--workers` threads (one predictor each). It exits when the server goes away.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import shutil
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tipc.serve import frames

# After a request this large, freed memory is handed back to the OS (glibc keeps it otherwise).
TRIM_AFTER_BYTES = 1 << 20


def _trim() -> None:
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _clean_if_orphaned(parent: int, folder: Path, wait_s: float) -> None:
    """A server killed outright cannot remove its private folder (sockets, worker logs): the worker does,
    once it is re-parented (which comes a moment after the server's end closed our connection)."""
    end = time.monotonic() + wait_s
    while os.getppid() == parent:
        if time.monotonic() >= end:
            return
        time.sleep(0.02)
    if folder.name.startswith("tipc-serve-"):
        shutil.rmtree(folder, ignore_errors=True)


def _watch_parent(parent: int, folder: Path) -> None:
    """Exit when the server dies, however it died (SIGKILL included): we are re-parented then."""
    while True:
        if os.getppid() != parent:
            _clean_if_orphaned(parent, folder, 0)
            os._exit(0)
        time.sleep(0.5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tipc.serve.worker")
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--connect", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cpu-threads", type=int, default=1)
    parser.add_argument("--enable-mkldnn", action="store_true")
    parser.add_argument("--max-batch", type=int, default=64)
    parser.add_argument("--parent", type=int, default=os.getppid())
    args = parser.parse_args(argv)
    threading.Thread(target=_watch_parent, args=(args.parent, Path(args.connect).parent), daemon=True).start()

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(args.connect)
    try:
        from tipc.serve.model import PredictorPool
        from tipc.serve.service import handle

        pool = PredictorPool(
            args.model_dir, size=args.workers, cpu_threads=args.cpu_threads, mkldnn=args.enable_mkldnn
        )
    except Exception as exc:  # Paddle raises RuntimeError/ValueError/... for corrupt or incompatible models
        frames.send(sock, {"type": "hello", "ok": False, "error": f"{type(exc).__name__}: {exc}"})
        return 2
    frames.send(
        sock,
        {
            "type": "hello",
            "ok": True,
            "pid": os.getpid(),
            "size": pool.size,
            "inputs": [s.to_v2() for s in pool.inputs],
            "outputs": [s.to_v2() for s in pool.outputs],
        },
    )
    send_lock = threading.Lock()

    def answer(request_id: int, op: str, body: bytearray) -> None:
        large = len(body) >= TRIM_AFTER_BYTES
        try:
            status, payload = handle(pool, op, body, name=args.name, max_batch=args.max_batch)
        except Exception as exc:  # never leave the server waiting: an unexpected error is a JSON 500
            status, payload = 500, json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode()
        del body
        try:
            with send_lock:
                frames.send(sock, {"id": request_id, "status": status}, payload)
        except OSError:
            os._exit(0)  # the server is gone
        del payload
        if large:
            _trim()

    with ThreadPoolExecutor(max_workers=pool.size, thread_name_prefix="predict") as executor:
        while True:
            frame = frames.recv(sock)
            if frame is None or frame[0].get("type") == "bye":
                # The server is stopping (bye) or gone (EOF without one): in-flight work is unwanted.
                if frame is None:
                    _clean_if_orphaned(args.parent, Path(args.connect).parent, 2.0)
                os._exit(0)
            header, body = frame
            executor.submit(answer, int(header["id"]), str(header["op"]), body)
            del frame, body


if __name__ == "__main__":
    sys.exit(main())
