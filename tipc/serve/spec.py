"""Types both sides of `tipc serve` share, with no numpy or paddle: the HTTP parent imports only these.

TensorSpec and RequestError describe a model's tensors and a client mistake; `find_model_files` checks an
exported model folder before any worker starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tipc.core.errors import UserError

# Open Inference Protocol v2 datatype names <-> numpy dtypes.
V2_TO_NUMPY: dict[str, str] = {
    "BOOL": "bool",
    "UINT8": "uint8",
    "INT8": "int8",
    "INT16": "int16",
    "INT32": "int32",
    "INT64": "int64",
    "FP16": "float16",
    "FP32": "float32",
    "FP64": "float64",
}
NUMPY_TO_V2: dict[str, str] = {v: k for k, v in V2_TO_NUMPY.items()}


class RequestError(Exception):
    """A client mistake: rendered as a 4xx with a JSON message; the server keeps serving."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class TensorSpec:
    name: str
    dtype: str  # numpy dtype name
    shape: tuple[int, ...]  # -1 for a dynamic dimension

    @property
    def datatype(self) -> str:
        return NUMPY_TO_V2.get(self.dtype, self.dtype.upper())

    def to_v2(self) -> dict[str, Any]:
        return {"name": self.name, "datatype": self.datatype, "shape": list(self.shape)}


def find_model_files(model_dir: Path) -> tuple[Path, Path]:
    """(model file, params file) of an exported model; .json (PIR) wins over .pdmodel, as in Paddle 3."""
    if not model_dir.is_dir():
        raise UserError(f"{model_dir}: not a directory (expected an exported inference model folder)")
    params = model_dir / "inference.pdiparams"
    for name in ("inference.json", "inference.pdmodel"):
        model = model_dir / name
        if model.is_file():
            if not params.is_file():
                raise UserError(f"{model_dir}: has {name} but no inference.pdiparams")
            return model, params
    raise UserError(f"{model_dir}: no inference.json or inference.pdmodel (+ inference.pdiparams) in it")


# Paddle Serving's own error numbers.
PIPELINE_OK = 0
PIPELINE_NO_SERVICE = 3002
PIPELINE_INPUT_ERROR = 5000
PIPELINE_INFER_ERROR = 9000


def pipeline_error(err_no: int, message: str) -> dict[str, Any]:
    return {"err_no": err_no, "err_msg": message, "key": [], "value": [], "tensors": []}
