"""The ASGI app of `tipc serve`: Paddle Serving pipeline HTTP + Open Inference Protocol v2 over one model.

This is the HTTP side only: no numpy, no paddle. It reads a bounded body (size, time and a shared in-flight
byte budget) and hands the bytes to a Backend; decoding, the model and encoding run in the model worker
process (or, in unit tests, in threads), so the event loop keeps answering health checks and rejecting bad
requests while predictions run. Every client mistake is a 4xx with a JSON body; nothing answers plain text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any, Protocol

import anyio
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tipc.core.version import __version__
from tipc.serve.spec import PIPELINE_INPUT_ERROR, PIPELINE_NO_SERVICE, RequestError, pipeline_error

log = logging.getLogger("tipc.serve")

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
DEFAULT_BODY_TIMEOUT_S = 30.0
DEFAULT_REQUEST_TIMEOUT_S = 120.0


class Unavailable(Exception):
    """The model cannot answer now (its worker crashed and is restarting): a 503 with the reason."""


class Backend(Protocol):
    """What the app needs from a model: v2 metadata, readiness, and body bytes -> (status, JSON bytes)."""

    inputs: list[dict[str, Any]]
    outputs: list[dict[str, Any]]

    def readiness(self) -> tuple[bool, str]: ...

    async def infer(self, op: str, body: bytes | bytearray) -> tuple[int, bytes]: ...


class ByteBudget:
    """Bytes of request bodies held at once; a request waits for its share before its body is read, so
    many large requests at once queue in the clients' sockets instead of in this process's memory."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._changed: asyncio.Condition | None = None

    async def acquire(self, amount: int, timeout_s: float) -> bool:
        if self._changed is None:
            self._changed = asyncio.Condition()
        amount = min(amount, self.limit)
        async with self._changed:
            try:
                await asyncio.wait_for(
                    self._changed.wait_for(lambda: self.used + amount <= self.limit), timeout_s
                )
            except asyncio.TimeoutError:
                return False
            self.used += amount
            return True

    async def release(self, amount: int) -> None:
        assert self._changed is not None
        async with self._changed:
            self.used -= min(amount, self.limit)
            self._changed.notify_all()


async def _read_body(request: Request, limit: int, timeout_s: float) -> bytearray:
    body = bytearray()
    try:
        with anyio.fail_after(timeout_s):
            async for chunk in request.stream():
                if len(body) + len(chunk) > limit:
                    raise RequestError(413, f"request body exceeds the limit of {limit} bytes")
                body += chunk
    except TimeoutError:
        raise RequestError(408, f"request body not received within {timeout_s:g} s") from None
    except ClientDisconnect:
        raise RequestError(400, "the client went away before sending its whole body") from None
    return body  # no copy: a bytearray is what the worker connection sends


def _declared_length(request: Request, limit: int) -> int:
    """The body size to reserve: Content-Length, checked against the limit before any byte is read."""
    declared = request.headers.get("content-length")
    if declared is None:
        return limit  # chunked: it may be as large as allowed
    if not declared.isdigit():
        raise RequestError(400, "bad Content-Length header")
    if int(declared) > limit:
        raise RequestError(413, f"request body of {declared} bytes exceeds the limit of {limit} bytes")
    return int(declared)


# Refused before (or while) its body was read: the rest of the body is not read, so the connection ends.
_CLOSING = {"Connection": "close"}


class _Endpoints:
    """The app's endpoints over one backend serving the model `name`, with the request limits."""

    def __init__(
        self,
        backend: Backend,
        name: str,
        max_body_bytes: int,
        body_timeout_s: float,
        request_timeout_s: float,
        budget: ByteBudget,
    ) -> None:
        self.backend = backend
        self.name = name
        self.max_body_bytes = max_body_bytes
        self.body_timeout_s = body_timeout_s
        self.request_timeout_s = request_timeout_s
        self.budget = budget

    def check_name(self, model: str) -> None:
        if model != self.name:
            raise RequestError(404, f"unknown model {model!r}; this server serves {self.name!r}")

    async def infer(self, request: Request, op: str) -> Response:
        reserve = _declared_length(request, self.max_body_bytes)
        if not await self.budget.acquire(reserve, self.body_timeout_s):
            raise Unavailable("too many large requests at once; retry shortly")
        try:
            body = await _read_body(request, self.max_body_bytes, self.body_timeout_s)
            try:
                with anyio.fail_after(self.request_timeout_s):
                    status, payload = await self.backend.infer(op, body)
            except TimeoutError:
                return JSONResponse(
                    {"error": f"no answer from the model within {self.request_timeout_s:g} s"},
                    status_code=504,
                )
        finally:
            await self.budget.release(reserve)
        return Response(payload, status_code=status, media_type="application/json")

    async def live(self, _: Request) -> JSONResponse:
        return JSONResponse({"live": True})

    async def ready(self, _: Request) -> JSONResponse:
        ok, why = self.backend.readiness()
        if ok:
            return JSONResponse({"ready": True})
        return JSONResponse({"ready": False, "reason": why}, status_code=503)

    async def server_metadata(self, _: Request) -> JSONResponse:
        return JSONResponse({"name": "tipc-serve", "version": __version__, "extensions": []})

    async def model_metadata(self, request: Request) -> JSONResponse:
        try:
            self.check_name(request.path_params["model"])
        except RequestError as exc:
            return JSONResponse({"error": exc.message}, status_code=exc.status)
        return JSONResponse(
            {
                "name": self.name,
                "versions": ["1"],
                "platform": "paddle_inference",
                "inputs": self.backend.inputs,
                "outputs": self.backend.outputs,
            }
        )

    async def model_ready(self, request: Request) -> JSONResponse:
        try:
            self.check_name(request.path_params["model"])
        except RequestError as exc:
            return JSONResponse({"error": exc.message}, status_code=exc.status)
        ok, why = self.backend.readiness()
        return JSONResponse(
            {"name": self.name, "ready": ok, **({"reason": why} if why else {})},
            status_code=200 if ok else 503,
        )

    async def v2_infer(self, request: Request) -> Response:
        try:
            self.check_name(request.path_params["model"])
            return await self.infer(request, "v2")
        except RequestError as exc:
            return JSONResponse({"error": exc.message}, status_code=exc.status, headers=_CLOSING)
        except Unavailable as exc:
            return JSONResponse(
                {"error": str(exc)}, status_code=503, headers={**_CLOSING, "Retry-After": "1"}
            )

    async def pipeline_predict(self, request: Request) -> Response:
        if request.path_params["service"] != self.name:
            return JSONResponse(
                pipeline_error(PIPELINE_NO_SERVICE, f"no service {request.path_params['service']!r}"),
                status_code=404,
                headers=_CLOSING,
            )
        try:
            return await self.infer(request, "pipeline")
        except RequestError as exc:
            return JSONResponse(
                pipeline_error(PIPELINE_INPUT_ERROR, exc.message), exc.status, headers=_CLOSING
            )
        except Unavailable as exc:
            return JSONResponse(
                pipeline_error(PIPELINE_NO_SERVICE, str(exc)),
                status_code=503,
                headers={**_CLOSING, "Retry-After": "1"},
            )


async def _not_found(request: Request, exc: Exception) -> JSONResponse:
    status = getattr(exc, "status_code", 404)
    return JSONResponse(
        {"error": f"{request.method} {request.url.path}: {getattr(exc, 'detail', 'not found')}"},
        status_code=status,
    )


async def _internal(request: Request, exc: Exception) -> JSONResponse:
    log.error("internal error on %s %s: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
    return JSONResponse({"error": f"internal server error: {type(exc).__name__}"}, status_code=500)


def build_app(
    backend: Backend,
    *,
    name: str,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S,
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S,
    inflight_bytes: int | None = None,
) -> Starlette:
    budget = ByteBudget(inflight_bytes or 4 * max_body_bytes)
    ep = _Endpoints(backend, name, max_body_bytes, body_timeout_s, request_timeout_s, budget)
    routes: Sequence[Route] = [
        Route("/v2/health/live", ep.live, methods=["GET"]),
        Route("/v2/health/ready", ep.ready, methods=["GET"]),
        Route("/v2", ep.server_metadata, methods=["GET"]),
        Route("/v2/models/{model}", ep.model_metadata, methods=["GET"]),
        Route("/v2/models/{model}/ready", ep.model_ready, methods=["GET"]),
        Route("/v2/models/{model}/infer", ep.v2_infer, methods=["POST"]),
        Route("/{service}/prediction", ep.pipeline_predict, methods=["POST"]),
    ]
    return Starlette(
        routes=list(routes), exception_handlers={404: _not_found, 405: _not_found, Exception: _internal}
    )
