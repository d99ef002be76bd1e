"""The ASGI app of `tipc serve`: Paddle Serving pipeline HTTP + Open Inference Protocol v2 over one model.

Model work runs in worker threads (bounded by the predictor pool), so the event loop keeps answering health
checks and rejecting bad requests while predictions run. Every client mistake is a 4xx with a JSON body.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import anyio
import numpy as np
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tipc import __version__
from tipc.serve import protocol
from tipc.serve.model import RequestError, TensorSpec

log = logging.getLogger("tipc.serve")

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024


class Backend(Protocol):
    """What the app needs from a model (PredictorPool in production, a numpy fake in unit tests)."""

    size: int
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]

    def validate(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]: ...

    def run(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]: ...


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            if int(declared) > limit:
                raise RequestError(
                    413, f"request body of {declared} bytes exceeds the limit of {limit} bytes"
                )
        except ValueError:
            raise RequestError(400, "bad Content-Length header") from None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RequestError(413, f"request body exceeds the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def build_app(backend: Backend, *, name: str, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> Starlette:
    limiter = anyio.CapacityLimiter(max(1, backend.size))

    async def predict(feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        checked = backend.validate(feeds)
        return await anyio.to_thread.run_sync(backend.run, checked, limiter=limiter)

    def v2_error(exc: RequestError) -> JSONResponse:
        return JSONResponse({"error": exc.message}, status_code=exc.status)

    def check_name(model: str) -> None:
        if model != name:
            raise RequestError(404, f"unknown model {model!r}; this server serves {name!r}")

    async def live(_: Request) -> JSONResponse:
        return JSONResponse({"live": True})

    async def ready(_: Request) -> JSONResponse:
        return JSONResponse({"ready": True})

    async def server_metadata(_: Request) -> JSONResponse:
        return JSONResponse({"name": "tipc-serve", "version": __version__, "extensions": []})

    async def model_metadata(request: Request) -> JSONResponse:
        try:
            check_name(request.path_params["model"])
        except RequestError as exc:
            return v2_error(exc)
        return JSONResponse(
            {
                "name": name,
                "versions": ["1"],
                "platform": "paddle_inference",
                "inputs": [s.to_v2() for s in backend.inputs],
                "outputs": [s.to_v2() for s in backend.outputs],
            }
        )

    async def model_ready(request: Request) -> JSONResponse:
        try:
            check_name(request.path_params["model"])
        except RequestError as exc:
            return v2_error(exc)
        return JSONResponse({"name": name, "ready": True})

    async def v2_infer(request: Request) -> JSONResponse:
        try:
            check_name(request.path_params["model"])
            body = protocol.parse_json(await _read_body(request, max_body_bytes))
            feeds, wanted = protocol.decode_v2_request(body, backend.inputs)
            known = [s.name for s in backend.outputs]
            if wanted is not None and (unknown := sorted(set(wanted) - set(known))):
                raise RequestError(400, f"unknown output(s) {unknown}; the model has {known}")
            outputs = await predict(feeds)
        except RequestError as exc:
            return v2_error(exc)
        except Exception as exc:  # the predictor rejected inputs validation could not foresee
            log.exception("inference failed")
            return JSONResponse({"error": f"inference failed: {exc}"}, status_code=500)
        if wanted is not None:
            outputs = {n: outputs[n] for n in wanted}
        request_id = body.get("id") if isinstance(body.get("id"), str) else None
        return JSONResponse(protocol.encode_v2_response(name, outputs, request_id))

    async def pipeline_predict(request: Request) -> JSONResponse:
        if request.path_params["service"] != name:
            return JSONResponse(
                protocol.pipeline_error(
                    protocol.PIPELINE_NO_SERVICE, f"no service {request.path_params['service']!r}"
                ),
                status_code=404,
            )
        try:
            body = protocol.parse_json(await _read_body(request, max_body_bytes))
            outputs = await predict(protocol.decode_pipeline_request(body, backend.inputs))
        except RequestError as exc:
            return JSONResponse(
                protocol.pipeline_error(protocol.PIPELINE_INPUT_ERROR, exc.message), exc.status
            )
        except Exception as exc:
            log.exception("inference failed")
            return JSONResponse(
                protocol.pipeline_error(protocol.PIPELINE_INFER_ERROR, f"inference failed: {exc}"),
                status_code=500,
            )
        return JSONResponse(protocol.encode_pipeline_response(outputs))

    routes: Sequence[Route] = [
        Route("/v2/health/live", live, methods=["GET"]),
        Route("/v2/health/ready", ready, methods=["GET"]),
        Route("/v2", server_metadata, methods=["GET"]),
        Route("/v2/models/{model}", model_metadata, methods=["GET"]),
        Route("/v2/models/{model}/ready", model_ready, methods=["GET"]),
        Route("/v2/models/{model}/infer", v2_infer, methods=["POST"]),
        Route("/{service}/prediction", pipeline_predict, methods=["POST"]),
    ]

    async def not_found(request: Request, exc: Exception) -> JSONResponse:
        status = getattr(exc, "status_code", 404)
        return JSONResponse(
            {"error": f"{request.method} {request.url.path}: {getattr(exc, 'detail', 'not found')}"},
            status_code=status,
        )

    return Starlette(routes=list(routes), exception_handlers={404: not_found, 405: not_found})


def describe(backend: Backend) -> dict[str, Any]:
    return {"inputs": [s.to_v2() for s in backend.inputs], "outputs": [s.to_v2() for s in backend.outputs]}
