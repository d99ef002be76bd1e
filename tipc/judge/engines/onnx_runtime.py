"""ONNX Runtime on CPU, on a model converted by paddle2onnx into the worker's scratch folder."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import numpy as np

from tipc.judge.engines.base import InputSpec, ModelFiles

OPSET = 13
_ORT_DTYPES = {
    "tensor(float)": "float32",
    "tensor(double)": "float64",
    "tensor(int64)": "int64",
    "tensor(int32)": "int32",
    "tensor(float16)": "float16",
    "tensor(uint8)": "uint8",
    "tensor(int8)": "int8",
    "tensor(bool)": "bool",
}


class OnnxRuntimeEngine:
    name = "onnxruntime"

    def __init__(self) -> None:
        self._session: Any = None

    def load(self, model: ModelFiles, work_dir: Path) -> dict[str, Any]:
        import onnx
        import onnxruntime as ort
        import paddle2onnx

        work_dir.mkdir(parents=True, exist_ok=True)
        onnx_path = work_dir / "model.onnx"
        # paddle2onnx aborts the whole process (SIGABRT) on an op it cannot convert, before printing which:
        # name those ops ourselves first, so the finding says what to change instead of killing the worker.
        missing = unconvertible_ops(model)
        if missing:
            raise RuntimeError(
                f"paddle2onnx {getattr(paddle2onnx, '__version__', '?')} has no converter for op(s) "
                f"{', '.join(missing)} used in {Path(model.model_file).name}: the model cannot be converted "
                "to ONNX (replace the op, or list the engines the model supports in test_tipc/tipc.yaml "
                "agreement.engines)"
            )
        chatter = io.StringIO()
        # paddle2onnx prints progress on stdout; keep the worker's stdout for our own use
        with contextlib.redirect_stdout(chatter):
            paddle2onnx.export(
                str(model.model_file),
                str(model.params_file),
                save_file=str(onnx_path),
                opset_version=OPSET,
                enable_onnx_checker=True,
                optimize_tool="None",
            )
        if not onnx_path.is_file():
            raise RuntimeError(f"paddle2onnx wrote no model: {chatter.getvalue()[-500:]}")
        proto = onnx.load(str(onnx_path))
        onnx.checker.check_model(proto, full_check=True)
        options = ort.SessionOptions()
        options.log_severity_level = 3
        self._session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        return {
            "onnx_file": str(onnx_path),
            "opset": OPSET,
            "checker": "onnx.checker.check_model(full_check=True) passed",
            "paddle2onnx_version": getattr(paddle2onnx, "__version__", "?"),
            "onnxruntime_version": ort.__version__,
        }

    def input_specs(self) -> list[InputSpec]:
        specs = []
        for i in self._session.get_inputs():
            shape = tuple(d if isinstance(d, int) and d > 0 else None for d in i.shape)
            specs.append(InputSpec(i.name, shape, _ORT_DTYPES.get(i.type, "float32")))
        return specs

    def run(self, feeds: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
        names = [i.name for i in self._session.get_inputs()]
        values = list(feeds.values())
        # feed by name when names match, else by position (paddle and onnx may name inputs differently)
        feed = (
            {n: feeds[n] for n in names}
            if all(n in feeds for n in names)
            else dict(zip(names, values, strict=False))
        )
        outs = self._session.run(None, feed)
        return [(o.name, np.asarray(v)) for o, v in zip(self._session.get_outputs(), outs, strict=True)]


# Ops of the program that are plumbing, not computation: paddle2onnx maps them without a converter.
_PLUMBING_OPS = frozenset({"feed", "fetch"})


def unconvertible_ops(model: ModelFiles) -> list[str]:
    """Ops of an old-format program (.pdmodel) that this paddle2onnx lists no converter for.

    Empty when every op converts, or when the program cannot be read this way (PIR .json: paddle2onnx then
    decides on its own).
    """
    if model.format != "pdmodel":
        return []
    try:
        from paddle.base.proto import framework_pb2
        from paddle2onnx.paddle2onnx_cpp2py_export import get_all_supported_operators
    except ImportError:
        return []
    program = framework_pb2.ProgramDesc()  # type: ignore[attr-defined]  # generated protobuf class
    program.ParseFromString(Path(model.model_file).read_bytes())
    used = {op.type for block in program.blocks for op in block.ops}
    supported = set(get_all_supported_operators())
    return sorted(used - supported - _PLUMBING_OPS)
