"""A stand-in for the few parts of paddle's Python API the silent-failure preludes patch (load, save,
Tensor.backward, nn.Layer.__call__, io.DataLoader, inference.Config), for the injector unit tests: the
patched scripts of a small fixture repo run under it in a child interpreter. Real Paddle runs in the
`silent` tier's integration tests."""

import pickle

from paddle import inference, io, nn  # noqa: F401  (submodules, as `import paddle` gives them)

BACKWARD: list[float] = []  # what each backward() differentiated, for the fixture to print


class Tensor:
    def __init__(self, value, dtype="float32"):
        self.value = value
        self.dtype = dtype

    def __mul__(self, k):
        return Tensor(self.value * k, self.dtype)

    __rmul__ = __mul__

    def __add__(self, k):
        return Tensor(self.value + k, self.dtype)

    def backward(self):
        BACKWARD.append(self.value)


def to_tensor(value):
    return Tensor(value)


def load(path):
    with open(path, "rb") as f:
        return pickle.load(f)


def save(obj, path):
    with open(path, "wb") as f:
        pickle.dump(obj, f)


def set_device(device):
    return device
