"""The Engine protocol every model-side engine follows (worker side)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The worker runs under the repo's interpreter, Python 3.7 included: there the protocol is documentation.
if sys.version_info >= (3, 8):  # noqa: UP036
    from typing import Protocol
else:
    Protocol = object

from tipc.judge.model_files import ModelFiles, find_model

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Engine", "InputSpec", "ModelFiles", "find_model"]


@dataclass(frozen=True)
class InputSpec:
    name: str
    shape: tuple[int | None, ...] | None  # None: unknown rank; a None dim: dynamic
    dtype: str  # numpy dtype name, e.g. "float32"


class Engine(Protocol):
    """One way of running an exported model. Instances live in a worker process only."""

    name: str

    def load(self, model: ModelFiles, work_dir: Path) -> dict[str, Any]:
        """Prepare the model; `work_dir` is a scratch folder inside the run's output dir. Returns details."""
        ...

    def input_specs(self) -> list[InputSpec]:
        """Inputs in feed order (shapes may be unknown: the worker then uses another engine's specs)."""
        ...

    def run(self, feeds: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
        """Outputs in the model's output order, as (name, array)."""
        ...
