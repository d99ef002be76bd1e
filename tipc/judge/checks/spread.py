"""How much a model's outputs vary across its inputs: a constant model "agrees" with every engine.

Reads the `.npz` an engine worker saved (`outputs_<engine>.npz`) with the standard library only (the CLI never
imports numpy): an `.npz` is a zip of `.npy` files, each a small header and the raw array. For each output,
the
spread across the inputs (axis 0, one row per input) is the largest max-min of any element over the rows and
the mean per-element standard deviation. An output whose spread is zero, or below `rel_constant` of its
largest magnitude, is constant: agreement on it proves nothing about the model.
"""

from __future__ import annotations

import ast
import math
import struct
import zipfile
from array import array
from dataclasses import dataclass
from pathlib import Path

_TYPECODES = {"f4": "f", "f8": "d", "i4": "i", "i8": "q", "u1": "B", "i1": "b", "i2": "h", "u2": "H"}
MAX_COLUMNS = 200_000  # elements per row judged (a 4x19x512x512 output is sampled, not read whole)
REL_CONSTANT = 1e-6
REL_NEAR_CONSTANT = 1e-3


@dataclass(frozen=True)
class Spread:
    name: str
    inputs: int  # rows (axis 0)
    max_range: float  # largest max-min of one element across the inputs
    mean_std: float  # mean over elements of the std across the inputs
    scale: float  # largest |value|

    @property
    def relative(self) -> float:
        return self.max_range / self.scale if self.scale > 0 else 0.0

    @property
    def constant(self) -> bool:
        return self.inputs >= 2 and (self.max_range == 0 or self.relative < REL_CONSTANT)

    @property
    def near_constant(self) -> bool:
        return self.inputs >= 2 and not self.constant and self.relative < REL_NEAR_CONSTANT

    def text(self) -> str:
        if self.inputs < 2:
            return f"output {self.name}: 1 input, spread not measurable"
        return (
            f"output {self.name} spread across {self.inputs} inputs: max-min {self.max_range:.3g}, "
            f"std {self.mean_std:.3g} (largest |value| {self.scale:.3g})"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "inputs": self.inputs,
            "max_range": self.max_range,
            "mean_std": self.mean_std,
            "scale": self.scale,
            "constant": self.constant,
            "near_constant": self.near_constant,
        }


def _read_npy(raw: bytes) -> tuple[tuple[int, ...], list[float]] | None:
    """(shape, values in C order) of an .npy payload; None for a format this reader does not handle."""
    if raw[:6] != b"\x93NUMPY":
        return None
    major = raw[6]
    if major == 1:
        (hlen,) = struct.unpack("<H", raw[8:10])
        start = 10
    else:
        (hlen,) = struct.unpack("<I", raw[8:12])
        start = 12
    try:
        header = ast.literal_eval(raw[start : start + hlen].decode("latin1"))
    except (ValueError, SyntaxError):
        return None
    descr, fortran, shape = header.get("descr"), header.get("fortran_order"), tuple(header.get("shape", ()))
    if not isinstance(descr, str) or fortran or descr[1:] not in _TYPECODES or descr[0] not in "<|=":
        return None
    values = array(_TYPECODES[descr[1:]])
    body = raw[start + hlen :]
    usable = len(body) - len(body) % values.itemsize
    values.frombytes(body[:usable])
    return shape, [float(v) for v in values]


def spread_of(name: str, shape: tuple[int, ...], values: list[float]) -> Spread:
    rows = shape[0] if shape else 1
    cols = len(values) // rows if rows else 0
    finite = [abs(v) for v in values if math.isfinite(v)]
    scale = max(finite, default=0.0)
    if rows < 2 or cols == 0:
        return Spread(name, rows, 0.0, 0.0, scale)
    step = max(1, cols // MAX_COLUMNS)
    max_range = 0.0
    std_sum = 0.0
    judged = 0
    for k in range(0, cols, step):
        column = [values[i * cols + k] for i in range(rows)]
        if not all(math.isfinite(v) for v in column):
            continue
        lo, hi = min(column), max(column)
        max_range = max(max_range, hi - lo)
        m = sum(column) / rows
        std_sum += math.sqrt(sum((v - m) ** 2 for v in column) / rows)
        judged += 1
    return Spread(name, rows, max_range, std_sum / judged if judged else 0.0, scale)


def output_spreads(npz: Path, names: list[str] | None = None) -> list[Spread]:
    """The spread of every array in a worker's outputs file (names from the worker's response, if given)."""
    out: list[Spread] = []
    try:
        with zipfile.ZipFile(npz) as zf:
            members = sorted(zf.namelist(), key=lambda n: (len(n), n))
            for i, member in enumerate(members):
                got = _read_npy(zf.read(member))
                if got is None:
                    continue
                label = names[i] if names and i < len(names) else member.removesuffix(".npy")
                out.append(spread_of(label, got[0], got[1]))
    except (OSError, zipfile.BadZipFile, KeyError):
        return []
    return out


def spread_from_values(name: str, rows: list[list[float]]) -> Spread:
    """The spread of per-input result rows (e.g. predict.py's class id and probability per image)."""
    width = min((len(r) for r in rows), default=0)
    flat = [v for r in rows for v in r[:width]]
    return spread_of(name, (len(rows), width), flat)
