"""Request decoding and response encoding for the two protocols `tipc serve` speaks. Pure: no I/O, no paddle.

(a) Paddle Serving pipeline HTTP (`POST /{name}/prediction`), as Paddle Serving 0.7-0.9 web services do:
    request  {"key": ["x", ...], "value": ["<tensor>", ...], "logid": 1}
    response {"err_no": 0, "err_msg": "", "key": ["out", ...], "value": ["<json list>", ...], "tensors": []}
    A `<tensor>` value is a string: a JSON nested list (`"[[0.1, ...]]"`), a JSON object
    `{"shape": [..], "datatype": "FP32", "data": [..]}` (or `"b64"` in place of `"data"`), or base64 of the
    raw little-endian bytes in the model's dtype and shape (one dynamic dimension is inferred). Paddle
    Serving's own error numbers are used: 5000 input error, 3002 no such service, 9000 inference error.
(b) Open Inference Protocol v2 (KServe/Triton REST): `/v2/models/{name}/infer` with
    {"inputs": [{"name", "shape", "datatype", "data"}], "outputs": [{"name"}]}.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

import numpy as np

from tipc.core.jsontypes import JSONValue
from tipc.serve.spec import (
    NUMPY_TO_V2,
    PIPELINE_INFER_ERROR,
    PIPELINE_INPUT_ERROR,
    PIPELINE_NO_SERVICE,
    PIPELINE_OK,
    V2_TO_NUMPY,
    RequestError,
    TensorSpec,
    pipeline_error,
)

__all__ = [
    "PIPELINE_INFER_ERROR",
    "PIPELINE_INPUT_ERROR",
    "PIPELINE_NO_SERVICE",
    "PIPELINE_OK",
    "decode_pipeline_request",
    "decode_v2_request",
    "encode_pipeline_response",
    "encode_v2_response",
    "parse_json",
    "pipeline_error",
]

# numpy refuses more dimensions than this; a deeper shape or nesting is a client mistake, not a crash.
MAX_RANK = 32


def _no_constants(token: str) -> NoReturn:
    raise ValueError(f"{token} is not a number JSON allows")


def parse_json(body: bytes | bytearray) -> JSONValue:
    """JSON -> value; any malformed body (bad syntax, NaN/Infinity, 5,000-digit integers, 100k-deep nesting)
    is a RequestError(400), never an internal error."""
    try:
        value: JSONValue = json.loads(body, parse_constant=_no_constants)
        return value
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, int digit limit
        text = str(exc) or type(exc).__name__
        if isinstance(exc, RecursionError):
            text = "nested too deeply"
        raise RequestError(400, f"request body is not valid JSON: {text[:200]}") from None


def check_shape(shape: object, what: str) -> list[int]:
    """A list of non-negative ints (booleans are not integers here), at most MAX_RANK long."""
    if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
        raise RequestError(400, f"{what}: 'shape' must be a list of non-negative integers")
    if len(shape) > MAX_RANK:
        raise RequestError(400, f"{what}: 'shape' has {len(shape)} dimensions (at most {MAX_RANK})")
    return shape


def _fill(array: np.ndarray, shape: list[int], what: str) -> np.ndarray:
    # math.prod on Python ints: [2**62, 4, 1, 1] cannot wrap around to a size that matches.
    if math.prod(shape) != array.size:
        raise RequestError(400, f"{what}: {array.size} values do not fill shape {shape}")
    return array.reshape(shape)


def _finite(array: np.ndarray, what: str) -> np.ndarray:
    if array.dtype.kind == "f" and array.size and not bool(np.isfinite(array).all()):
        raise RequestError(
            400, f"{what}: NaN, infinity or a value out of the {array.dtype} range is not a valid input"
        )
    return array


def _array(data: object, dtype: str, what: str) -> np.ndarray:
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # overflow becomes inf, refused just below
            array = np.asarray(data, dtype=dtype)
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise RequestError(
            400, f"{what}: not a rectangular array of {dtype} numbers ({str(exc)[:200]})"
        ) from None
    if array.dtype == object:
        raise RequestError(400, f"{what}: not a numeric array")
    return _finite(array, what)


def _infer_shape(nbytes: int, itemsize: int, spec: TensorSpec, what: str) -> tuple[int, ...]:
    if nbytes % itemsize:
        raise RequestError(400, f"{what}: {nbytes} bytes is not a whole number of {spec.dtype} items")
    count = nbytes // itemsize
    dynamic = [i for i, d in enumerate(spec.shape) if d < 0]
    fixed = math.prod(d for d in spec.shape if d >= 0)
    if len(dynamic) > 1:
        raise RequestError(400, f"{what}: raw base64 needs a shape; send {{'shape': [...], 'b64': ...}}")
    if not dynamic:
        if count != fixed:
            raise RequestError(
                400, f"{what}: {count} items but the model's shape {list(spec.shape)} holds {fixed}"
            )
        return spec.shape
    if fixed == 0 or count % fixed:
        raise RequestError(400, f"{what}: {count} items do not fit the model's shape {list(spec.shape)}")
    shape = list(spec.shape)
    shape[dynamic[0]] = count // fixed
    return tuple(shape)


def _decode_b64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise RequestError(400, f"{what}: neither a JSON array nor valid base64") from None


def decode_pipeline_value(value: object, spec: TensorSpec) -> np.ndarray:
    what = f"value for {spec.name!r}"
    if isinstance(value, list):  # a client that skipped the string encoding
        return _array(value, spec.dtype, what)
    if not isinstance(value, str):
        raise RequestError(
            400, f"{what}: must be a string (JSON tensor or base64), got {type(value).__name__}"
        )
    text = value.strip()
    if text.startswith("["):
        return _array(parse_json(text.encode()), spec.dtype, what)
    if text.startswith("{"):
        obj = parse_json(text.encode())
        if not isinstance(obj, dict):
            raise RequestError(400, f"{what}: expected a JSON object")
        return _decode_tensor_object(obj, spec, what)
    raw = _decode_b64(text, what)
    itemsize = np.dtype(spec.dtype).itemsize
    shape = _infer_shape(len(raw), itemsize, spec, what)
    array = np.frombuffer(raw, dtype=np.dtype(spec.dtype).newbyteorder("<")).astype(spec.dtype)
    return _finite(array.reshape(shape), what)


def _decode_tensor_object(obj: Mapping[str, object], spec: TensorSpec, what: str) -> np.ndarray:
    dtype = spec.dtype
    if "datatype" in obj:
        datatype = obj["datatype"]
        if not isinstance(datatype, str) or datatype not in V2_TO_NUMPY:
            raise RequestError(400, f"{what}: unknown datatype {datatype!r}")
        dtype = V2_TO_NUMPY[datatype]
    shape = obj.get("shape")
    if shape is not None:
        shape = check_shape(shape, what)
    if "b64" in obj:
        if not isinstance(obj["b64"], str):
            raise RequestError(400, f"{what}: 'b64' must be a string")
        raw = _decode_b64(obj["b64"], what)
        itemsize = np.dtype(dtype).itemsize
        if len(raw) % itemsize:
            raise RequestError(400, f"{what}: {len(raw)} bytes is not a whole number of {dtype} items")
        array = _finite(np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<")).astype(dtype), what)
    elif "data" in obj:
        array = _array(obj["data"], dtype, what)
    else:
        raise RequestError(400, f"{what}: needs 'data' or 'b64'")
    if shape is not None:
        array = _fill(array, shape, what)
    return array


def decode_pipeline_request(body: object, inputs: Sequence[TensorSpec]) -> dict[str, np.ndarray]:
    if not isinstance(body, dict):
        raise RequestError(400, "request must be a JSON object with 'key' and 'value' lists")
    keys, values = body.get("key"), body.get("value")
    if not isinstance(keys, list) or not isinstance(values, list):
        raise RequestError(400, "request needs 'key' and 'value' lists")
    if len(keys) != len(values) or not keys:
        raise RequestError(
            400, f"'key' and 'value' must be non-empty and equally long ({len(keys)} vs {len(values)})"
        )
    specs = {s.name: s for s in inputs}
    feeds: dict[str, np.ndarray] = {}
    for key, value in zip(keys, values, strict=True):
        if not isinstance(key, str):
            raise RequestError(400, "every 'key' must be a string")
        spec = specs.get(key)
        if spec is None and len(inputs) == 1 and len(keys) == 1:
            spec = inputs[0]  # pipeline clients often name the single input freely ("image", "x")
        if spec is None:
            raise RequestError(400, f"unknown key {key!r}; the model takes {sorted(specs)}")
        if spec.name in feeds:
            raise RequestError(400, f"input {spec.name!r} is given twice")
        feeds[spec.name] = decode_pipeline_value(value, spec)
    return feeds


def encode_pipeline_response(outputs: Mapping[str, np.ndarray]) -> dict[str, Any]:
    return {
        "err_no": PIPELINE_OK,
        "err_msg": "",
        "key": list(outputs),
        "value": [json.dumps(a.tolist()) for a in outputs.values()],
        "tensors": [],
    }


def decode_v2_request(
    body: object, inputs: Sequence[TensorSpec]
) -> tuple[dict[str, np.ndarray], list[str] | None]:
    """(feeds, requested output names or None for all)."""
    if not isinstance(body, dict) or not isinstance(body.get("inputs"), list) or not body["inputs"]:
        raise RequestError(400, "request must be a JSON object with a non-empty 'inputs' list")
    specs = {s.name: s for s in inputs}
    feeds: dict[str, np.ndarray] = {}
    for item in body["inputs"]:
        if not isinstance(item, dict):
            raise RequestError(400, "every input must be an object with name, shape, datatype, data")
        name, shape, datatype = item.get("name"), item.get("shape"), item.get("datatype")
        if not isinstance(name, str) or name not in specs:
            raise RequestError(400, f"unknown input {name!r}; the model takes {sorted(specs)}")
        if name in feeds:
            raise RequestError(400, f"input {name!r} is given twice")
        shape = check_shape(shape, f"input {name!r}")
        if datatype not in V2_TO_NUMPY:
            raise RequestError(400, f"input {name!r}: unsupported datatype {datatype!r}")
        if "data" not in item:
            raise RequestError(400, f"input {name!r}: no 'data'")
        array = _array(item["data"], V2_TO_NUMPY[datatype], f"input {name!r}")
        feeds[name] = _fill(array, shape, f"input {name!r}")
    wanted: list[str] | None = None
    if "outputs" in body:
        outs = body["outputs"]
        if not isinstance(outs, list) or not all(
            isinstance(o, dict) and isinstance(o.get("name"), str) for o in outs
        ):
            raise RequestError(400, "'outputs' must be a list of objects with a 'name'")
        wanted = [o["name"] for o in outs]
    return feeds, wanted


def encode_v2_response(
    model_name: str, outputs: Mapping[str, np.ndarray], request_id: str | None = None
) -> dict[str, Any]:
    response: dict[str, Any] = {
        "model_name": model_name,
        "model_version": "1",
        "outputs": [
            {
                "name": n,
                "datatype": NUMPY_TO_V2.get(str(a.dtype), str(a.dtype).upper()),
                "shape": list(a.shape),
                "data": a.reshape(-1).tolist(),
            }
            for n, a in outputs.items()
        ],
    }
    if request_id is not None:
        response["id"] = request_id
    return response
