"""paddle.jit.load: the exported program run by Paddle's dynamic-graph engine (the training framework)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tipc.judge.engines.base import InputSpec, ModelFiles


class PaddleJitEngine:
    name = "paddle_jit"

    def __init__(self) -> None:
        self._layer: Any = None
        self._names: list[str] = []

    def load(self, model: ModelFiles, work_dir: Path) -> dict[str, Any]:
        import paddle

        paddle.set_device("cpu")  # type: ignore[attr-defined]
        self._layer = paddle.jit.load(str(model.prefix))
        self._layer.eval()
        return {"paddle_version": getattr(paddle, "__version__", "?")}

    def input_specs(self) -> list[InputSpec]:
        return []  # the translated layer does not expose feed names reliably; the worker feeds positionally

    def run(self, feeds: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
        import paddle

        with paddle.no_grad():
            out = self._layer(*[paddle.to_tensor(v) for v in feeds.values()])
        outs = out if isinstance(out, list | tuple) else [out]
        return [(f"output_{i}", np.array(o.numpy())) for i, o in enumerate(outs)]
