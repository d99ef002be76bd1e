"""A small stdlib HTTP client for `tipc serve` and Paddle Serving pipeline servers (no requests/httpx needed).

Responses come back as values (`Reply`), never exceptions, for HTTP errors; connection failures raise OSError.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tipc.execute.serving.ready import wait_ready

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Client", "Reply", "free_port", "tensor_value", "v2_outputs", "wait_ready"]


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any  # parsed JSON, or the raw text when the body is not JSON
    seconds: float

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class Client:
    """One keep-alive HTTP connection to `base_url` (http://host:port). Not thread-safe: one per thread."""

    def __init__(self, base_url: str, *, timeout_s: float = 30.0) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"expected an http://host:port URL, got {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.timeout_s = timeout_s
        self._conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _send(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> None:
        assert self._conn is not None
        # A server may answer before it has read the whole body (a 413 on the declared length) and close; its
        # answer is still in our receive buffer, so getresponse reads it (and raises where there is none).
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._conn.request(method, path, body=body, headers=headers)

    def request(self, method: str, path: str, body: bytes | None = None) -> Reply:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        for attempt in (1, 2):  # one retry when a kept-alive connection was closed by the server
            if self._conn is None:
                self._conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
            started = time.perf_counter()
            try:
                self._send(method, path, body, headers)
                response = self._conn.getresponse()
                raw = response.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()
                if attempt == 2:
                    raise
                continue
            except (OSError, http.client.HTTPException):
                self.close()  # a half-used connection must not be reused
                raise
            elapsed = time.perf_counter() - started
            if response.getheader("connection", "").lower() == "close":
                self.close()
            try:
                parsed: Any = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError):
                parsed = raw.decode("utf-8", errors="replace")
            return Reply(response.status, parsed, elapsed)
        raise AssertionError("unreachable")

    def get(self, path: str) -> Reply:
        return self.request("GET", path)

    def post_json(self, path: str, payload: object) -> Reply:
        return self.request("POST", path, json.dumps(payload).encode())

    # -- Open Inference Protocol v2 -------------------------------------------------------------------------
    def infer_v2(self, model: str, inputs: Mapping[str, np.ndarray]) -> Reply:
        """`inputs`: name -> numpy array."""
        items = [
            {
                "name": n,
                "shape": list(a.shape),
                "datatype": _V2_NAMES[str(a.dtype)],
                "data": a.reshape(-1).tolist(),
            }
            for n, a in inputs.items()
        ]
        return self.post_json(f"/v2/models/{model}/infer", {"inputs": items})

    # -- Paddle Serving pipeline ----------------------------------------------------------------------------
    def predict_pipeline(
        self, service: str, keys: Sequence[str], values: Sequence[str], logid: int = 0
    ) -> Reply:
        return self.post_json(
            f"/{service}/prediction", {"key": list(keys), "value": list(values), "logid": logid}
        )


_V2_NAMES = {
    "bool": "BOOL",
    "uint8": "UINT8",
    "int8": "INT8",
    "int16": "INT16",
    "int32": "INT32",
    "int64": "INT64",
    "float16": "FP16",
    "float32": "FP32",
    "float64": "FP64",
}


def v2_outputs(reply: Reply) -> dict[str, tuple[list[int], str, list[Any]]]:
    """name -> (shape, datatype, flat data) of a successful v2 reply."""
    return {o["name"]: (o["shape"], o["datatype"], o["data"]) for o in reply.body["outputs"]}


def tensor_value(array: np.ndarray) -> str:
    """A pipeline `value` string carrying dtype and shape exactly: {"shape", "datatype", "b64"} as JSON."""
    raw = array.astype(array.dtype.newbyteorder("<")).tobytes()
    return json.dumps(
        {
            "shape": list(array.shape),
            "datatype": _V2_NAMES[str(array.dtype)],
            "b64": base64.b64encode(raw).decode(),
        }
    )


def free_port(host: str = "127.0.0.1") -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port
