"""An exported Paddle inference model behind a pool of predictors (server side; paddle imported lazily).

Paddle predictors are not thread-safe, so the server holds `size` predictors (the first one loaded, the rest
`clone()`d so they share weights) and each request checks one out for the duration of its `run()`.
Input metadata comes from the model file itself (PIR `inference.json` or protobuf `inference.pdmodel`),
because the Python predictor API does not expose declared shapes or dtypes.
"""

from __future__ import annotations

import json
import queue
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tipc.serve.spec import NUMPY_TO_V2, V2_TO_NUMPY, RequestError, TensorSpec, find_model_files

__all__ = [
    "NUMPY_TO_V2",
    "V2_TO_NUMPY",
    "PredictorPool",
    "RequestError",
    "TensorSpec",
    "find_model_files",
    "read_input_specs",
]

# PIR dtype attribute strings and protobuf VarType enum values -> numpy dtype names.
_PIR_DTYPES = {
    "float32": "float32",
    "float64": "float64",
    "float16": "float16",
    "int32": "int32",
    "int64": "int64",
    "int8": "int8",
    "uint8": "uint8",
    "bool": "bool",
    "int16": "int16",
}
_PROTO_DTYPES = {
    0: "bool",
    1: "int16",
    2: "int32",
    3: "int64",
    4: "float16",
    5: "float32",
    6: "float64",
    20: "uint8",
    21: "int8",
}


def _pir_inputs(model_file: Path) -> list[TensorSpec]:
    program = json.loads(model_file.read_text(encoding="utf-8"))
    specs: list[TensorSpec] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("#") == "1.data":
                attrs = {
                    a.get("N"): a.get("AT", {}).get("D") for a in node.get("A", []) if isinstance(a, dict)
                }
                name, shape, dtype = attrs.get("name"), attrs.get("shape"), attrs.get("dtype")
                if isinstance(name, str) and isinstance(shape, list):
                    specs.append(TensorSpec(name, _PIR_DTYPES.get(str(dtype), str(dtype)), tuple(shape)))
                return
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(program)
    return specs


def _proto_inputs(model_file: Path) -> list[TensorSpec]:
    from paddle.base.proto import framework_pb2

    desc = framework_pb2.ProgramDesc()  # type: ignore[attr-defined]
    desc.ParseFromString(model_file.read_bytes())
    block = desc.blocks[0]
    variables = {v.name: v for v in block.vars}
    fed: list[tuple[int, str]] = []
    for op in block.ops:
        if op.type == "feed":
            col = next((a.i for a in op.attrs if a.name == "col"), len(fed))
            out = next((o.arguments[0] for o in op.outputs if o.parameter == "Out"), None)
            if out is not None:
                fed.append((col, out))
    specs = []
    for _, name in sorted(fed):
        var_type = variables[name].type
        # Paddle >= 3 names the field dense_tensor; older exports say lod_tensor.
        fields = {f.name for f in var_type.DESCRIPTOR.fields}
        holder = var_type.dense_tensor if "dense_tensor" in fields else var_type.lod_tensor
        tensor = holder.tensor
        specs.append(TensorSpec(name, _PROTO_DTYPES.get(tensor.data_type, "float32"), tuple(tensor.dims)))
    return specs


def read_input_specs(model_file: Path) -> list[TensorSpec]:
    if model_file.suffix == ".json":
        return _pir_inputs(model_file)
    return _proto_inputs(model_file)


class PredictorPool:
    """`size` Paddle predictors of one model; `run()` is safe to call from many threads at once."""

    def __init__(self, model_dir: Path, *, size: int = 2, cpu_threads: int = 1, mkldnn: bool = False) -> None:
        import paddle.inference as paddle_infer

        self.model_dir = model_dir
        model_file, params_file = find_model_files(model_dir)
        config = paddle_infer.Config(str(model_file), str(params_file))
        config.disable_gpu()
        config.disable_glog_info()
        config.set_cpu_math_library_num_threads(cpu_threads)
        if mkldnn:
            config.enable_mkldnn()
        else:
            # Paddle 3 turns oneDNN on by default on CPU; off matches a TIPC config's `--enable_mkldnn:False`.
            config.disable_mkldnn()
        first = paddle_infer.create_predictor(config)
        self._free: queue.Queue[Any] = queue.Queue()
        self._free.put(first)
        for _ in range(max(1, size) - 1):
            self._free.put(first.clone())
        self.size = max(1, size)
        names = list(first.get_input_names())
        declared = {s.name: s for s in read_input_specs(model_file)}
        # The predictor's names are authoritative; declared metadata fills in dtype and shape when it matches.
        self.inputs = [declared.get(n, TensorSpec(n, "float32", (-1,))) for n in names]
        self.output_names = list(first.get_output_names())
        self.outputs = self._probe_outputs()

    @contextmanager
    def _predictor(self) -> Iterator[Any]:
        predictor = self._free.get()
        try:
            yield predictor
        finally:
            self._free.put(predictor)

    def _probe_outputs(self) -> list[TensorSpec]:
        """Output dtypes and shapes from one batch-1 run of zeros (also warms the predictor up)."""
        if any(d < 0 for s in self.inputs for d in s.shape[1:]):
            return [TensorSpec(n, "float32", (-1,)) for n in self.output_names]
        feeds = {s.name: np.zeros((1, *s.shape[1:]), dtype=s.dtype) for s in self.inputs}
        results = self.run(feeds)
        return [TensorSpec(n, str(a.dtype), (-1, *a.shape[1:])) for n, a in results.items()]

    def validate(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Check names, ranks, static dims and dtypes against the model; RequestError(400/...) otherwise."""
        known = {s.name: s for s in self.inputs}
        unknown = sorted(set(feeds) - set(known))
        if unknown:
            raise RequestError(400, f"unknown input(s) {unknown}; the model takes {sorted(known)}")
        missing = sorted(set(known) - set(feeds))
        if missing:
            raise RequestError(400, f"missing input(s) {missing}")
        checked: dict[str, np.ndarray] = {}
        for name, array in feeds.items():
            spec = known[name]
            if array.dtype != np.dtype(spec.dtype):
                raise RequestError(
                    400, f"input {name!r}: dtype {array.dtype} but the model takes {spec.dtype}"
                )
            if len(spec.shape) != array.ndim or any(
                want >= 0 and want != got for want, got in zip(spec.shape, array.shape, strict=False)
            ):
                raise RequestError(
                    400,
                    f"input {name!r}: shape {list(array.shape)} does not fit the model's {list(spec.shape)}",
                )
            if array.size == 0:
                raise RequestError(400, f"input {name!r}: empty tensor")
            checked[name] = np.ascontiguousarray(array)
        return checked

    def run(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        with self._predictor() as predictor:
            for name, array in feeds.items():
                handle = predictor.get_input_handle(name)
                handle.reshape(list(array.shape))
                handle.copy_from_cpu(array)
            predictor.run()
            return {n: predictor.get_output_handle(n).copy_to_cpu() for n in self.output_names}
