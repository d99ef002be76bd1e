"""A stand-in for the few parts of paddle's Python API the silent-failure preludes patch (load, save,
Tensor.backward, nn.Layer.__call__, io.DataLoader, inference.Config), for the injector unit tests: the
patched scripts of a small fixture repo run under it in a child interpreter. Real Paddle runs in the
`silent` tier's integration tests."""

import pickle
from typing import Any

from paddle import inference, io, nn  # noqa: F401  (submodules, as `import paddle` gives them)

BACKWARD: list[float] = []  # what each backward() differentiated, for the fixture to print


class Tensor:
    def __init__(self, value: float, dtype: str = "float32") -> None:
        self.value = value
        self.dtype = dtype

    def __mul__(self, k: float) -> "Tensor":
        return Tensor(self.value * k, self.dtype)

    __rmul__ = __mul__

    def __add__(self, k: float) -> "Tensor":
        return Tensor(self.value + k, self.dtype)

    def backward(self) -> None:
        BACKWARD.append(self.value)


def to_tensor(value: float) -> Tensor:
    return Tensor(value)


def load(path: str) -> Any:
    with open(path, "rb") as f:
        return pickle.load(f)


def save(obj: object, path: str) -> None:
    with open(path, "wb") as f:
        pickle.dump(obj, f)


def set_device(device: str) -> str:
    return device
