"""Paddle Inference (paddle.inference) on CPU: the deployment engine of infer.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tipc.judge.engines.base import InputSpec, ModelFiles

_DTYPES = {
    "FLOAT32": "float32",
    "FLOAT64": "float64",
    "INT64": "int64",
    "INT32": "int32",
    "FLOAT16": "float16",
    "UINT8": "uint8",
    "INT8": "int8",
    "BOOL": "bool",
}


class PaddleInferenceEngine:
    name = "paddle_inference"

    def __init__(self) -> None:
        self._predictor: Any = None

    def load(self, model: ModelFiles, work_dir: Path) -> dict[str, Any]:
        import paddle
        import paddle.inference as pi

        config = pi.Config(str(model.model_file), str(model.params_file))
        config.disable_gpu()
        config.disable_glog_info()
        # ir optimisations and MKLDNN change numerics slightly; keep the plain CPU path for a clean comparison
        config.switch_ir_optim(True)
        self._predictor = pi.create_predictor(config)
        return {"paddle_version": getattr(paddle, "__version__", "?"), "ir_optim": True}

    def input_specs(self) -> list[InputSpec]:
        specs = []
        try:
            shapes = dict(self._predictor.get_input_tensor_shape())  # -1 for a dynamic dimension
        except Exception:  # older Paddle: no shapes, the other engines (ONNX Runtime) may know them
            shapes = {}
        for name in self._predictor.get_input_names():
            handle = self._predictor.get_input_handle(name)
            dtype = _DTYPES.get(str(handle.type()).rsplit(".", 1)[-1], "float32")
            known = shapes.get(name)
            shape = tuple(None if int(d) < 0 else int(d) for d in known) if known else None
            specs.append(InputSpec(name, shape, dtype))
        return specs

    def run(self, feeds: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
        for name in self._predictor.get_input_names():
            arr = np.ascontiguousarray(feeds[name])
            handle = self._predictor.get_input_handle(name)
            handle.reshape(list(arr.shape))
            handle.copy_from_cpu(arr)
        self._predictor.run()
        return [
            (name, np.array(self._predictor.get_output_handle(name).copy_to_cpu()))
            for name in self._predictor.get_output_names()
        ]
