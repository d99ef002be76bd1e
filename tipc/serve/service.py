"""One prediction request, from body bytes to response bytes: decode, check, run, encode (numpy side).

It runs in the model worker process (`tipc.serve.worker`), never on the HTTP server's event loop, so a large
body parsed here cannot stall health checks. `LocalBackend` runs the same code in threads of the calling
process: the unit-test seam for the app, with the same contract as the worker.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

import anyio
import numpy as np

from tipc.serve import protocol
from tipc.serve.spec import RequestError, TensorSpec

DEFAULT_MAX_BATCH = 64


class Model(Protocol):
    """What a request needs from a model (PredictorPool in production, a numpy fake in unit tests)."""

    size: int
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]

    def validate(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]: ...

    def run(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]: ...


def _check_batch(model: Model, feeds: Mapping[str, np.ndarray], max_batch: int) -> None:
    specs = {s.name: s for s in model.inputs}
    for name, array in feeds.items():
        spec = specs.get(name)
        if (
            spec is not None
            and spec.shape
            and spec.shape[0] < 0
            and array.ndim
            and array.shape[0] > max_batch
        ):
            raise RequestError(
                413, f"input {name!r}: a batch of {array.shape[0]} exceeds this server's limit of {max_batch}"
            )


def _dumps(payload: Any) -> bytes:
    # allow_nan: a model that outputs NaN/inf is reported as it is, not turned into a server error.
    return json.dumps(payload, allow_nan=True).encode()


def handle(
    model: Model, op: str, body: bytes | bytearray, *, name: str, max_batch: int = DEFAULT_MAX_BATCH
) -> tuple[int, bytes]:
    """`op` is "v2" or "pipeline"; returns (HTTP status, JSON body). Client mistakes are 4xx; a model
    failure is a JSON 500 with the model's message."""
    pipeline = op == "pipeline"
    try:
        parsed = protocol.parse_json(body)
        del body  # no copy of the request is kept while the model runs
        wanted: list[str] | None = None
        if pipeline:
            feeds = protocol.decode_pipeline_request(parsed, model.inputs)
        else:
            feeds, wanted = protocol.decode_v2_request(parsed, model.inputs)
            known = [s.name for s in model.outputs]
            if wanted is not None and (unknown := sorted(set(wanted) - set(known))):
                raise RequestError(400, f"unknown output(s) {unknown}; the model has {known}")
        raw_id = parsed.get("id") if isinstance(parsed, dict) else None
        request_id = raw_id if isinstance(raw_id, str) else None
        del parsed
        _check_batch(model, feeds, max_batch)
        checked = model.validate(feeds)
        del feeds
    except RequestError as exc:
        if pipeline:
            return exc.status, _dumps(protocol.pipeline_error(protocol.PIPELINE_INPUT_ERROR, exc.message))
        return exc.status, _dumps({"error": exc.message})
    try:
        outputs = model.run(checked)
    except Exception as exc:  # the predictor rejected inputs validation could not foresee
        message = f"inference failed: {type(exc).__name__}: {str(exc)[:2000]}"
        if pipeline:
            return 500, _dumps(protocol.pipeline_error(protocol.PIPELINE_INFER_ERROR, message))
        return 500, _dumps({"error": message})
    if pipeline:
        return 200, _dumps(protocol.encode_pipeline_response(outputs))
    if wanted is not None:
        outputs = {n: outputs[n] for n in wanted}
    return 200, _dumps(protocol.encode_v2_response(name, outputs, request_id))


class LocalBackend:
    """A Model served from threads of this process (tests; the app's contract without a worker process)."""

    def __init__(self, model: Model, *, name: str, max_batch: int = DEFAULT_MAX_BATCH) -> None:
        self.model = model
        self.name = name
        self.max_batch = max_batch
        self.inputs = [s.to_v2() for s in model.inputs]
        self.outputs = [s.to_v2() for s in model.outputs]
        self._limiter = anyio.CapacityLimiter(max(1, model.size))

    def readiness(self) -> tuple[bool, str]:
        return True, ""

    async def infer(self, op: str, body: bytes | bytearray) -> tuple[int, bytes]:
        return await anyio.to_thread.run_sync(
            lambda: handle(self.model, op, body, name=self.name, max_batch=self.max_batch),
            limiter=self._limiter,
        )
