"""The Engine protocol and the exported-model files every engine loads."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np

MODEL_STEMS = ("inference",)


@dataclass(frozen=True)
class ModelFiles:
    """An exported inference model: `<dir>/<stem>.json` (PIR) or `.pdmodel` (old program), + `.pdiparams`."""

    model_dir: Path
    model_file: Path
    params_file: Path

    @property
    def format(self) -> str:
        return "pir-json" if self.model_file.suffix == ".json" else "pdmodel"

    @property
    def prefix(self) -> Path:
        return self.model_file.with_suffix("")

    def to_json(self) -> dict[str, str]:
        return {
            "dir": str(self.model_dir),
            "model_file": str(self.model_file),
            "params_file": str(self.params_file),
            "format": self.format,
        }


def find_model(model_dir: Path) -> ModelFiles | None:
    """Find `inference.json|.pdmodel` + `inference.pdiparams` (else any single *.pdiparams pair) in a dir."""
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        return None
    stems = list(MODEL_STEMS) + sorted(p.stem for p in model_dir.glob("*.pdiparams") if p.stem not in MODEL_STEMS)
    for stem in stems:
        params = model_dir / f"{stem}.pdiparams"
        if not params.is_file():
            continue
        for suffix in (".json", ".pdmodel"):
            model = model_dir / f"{stem}{suffix}"
            if model.is_file():
                return ModelFiles(model_dir, model, params)
    return None


@dataclass(frozen=True)
class InputSpec:
    name: str
    shape: tuple[int | None, ...] | None  # None: unknown rank; None dim: dynamic
    dtype: str  # numpy dtype name, e.g. "float32"


class Engine(Protocol):
    """One way of running an exported model. Instances live in a worker process only."""

    name: str

    def load(self, model: ModelFiles, work_dir: Path) -> dict[str, Any]:
        """Prepare the model; `work_dir` is a scratch folder inside the run's output dir. Returns details."""
        ...

    def input_specs(self) -> list[InputSpec]:
        """Inputs in feed order (shapes may be unknown)."""
        ...

    def run(self, feeds: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
        """Outputs in the model's output order, as (name, array)."""
        ...
