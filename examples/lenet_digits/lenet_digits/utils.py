"""Small helpers shared by the entry scripts: seeding, device choice, running averages."""

from __future__ import annotations

import os
import random
import sys

import numpy as np
import paddle


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    paddle.seed(seed)


def str2bool(value: str) -> bool:
    lowered = str(value).strip().lower()
    if lowered in ("true", "1", "yes", "y", "t"):
        return True
    if lowered in ("false", "0", "no", "n", "f", "none", "null"):
        return False
    raise ValueError(f"expected True or False, got {value!r}")


def resolve_device(device: str) -> str:
    """'gpu' on a CPU-only Paddle build falls back to 'cpu' with a warning instead of crashing."""
    device = device.lower()
    if device.startswith("gpu") and not paddle.device.is_compiled_with_cuda():
        print(
            "W: Please use PaddlePaddle with GPU version. This PaddlePaddle is not compiled with CUDA, "
            "but --device=gpu was given; running on CPU.",
            file=sys.stderr,
            flush=True,
        )
        return "cpu"
    return device


def load_weights(model: paddle.nn.Layer, path: str) -> None:
    if not os.path.isfile(path):
        raise FileNotFoundError(f"weight file {path} does not exist")
    model.set_state_dict(paddle.load(path))


class AverageMeter:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.total = 0.0
        self.count = 0

    def update(self, value: float, n: int = 1) -> None:
        self.total += value * n
        self.count += n

    @property
    def avg(self) -> float:
        return self.total / self.count if self.count else 0.0
