"""An exported inference model's files, found from a folder, a prefix or a file path (standard library only).

The model-side worker (`tipc.judge.engines.worker`) imports this under the repo's interpreter, which may be
as old as Python 3.7: keep it free of tipc.judge.checks and of syntax or run-time typing newer than 3.7.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MODEL_STEMS = ("inference", "model")
MODEL_SUFFIXES = (".json", ".pdmodel")
PARAMS_SUFFIX = ".pdiparams"


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

    @property
    def files(self) -> tuple[Path, ...]:
        return (self.model_file, self.params_file)

    def to_json(self) -> dict[str, str]:
        return {
            "dir": str(self.model_dir),
            "model_file": str(self.model_file),
            "params_file": str(self.params_file),
            "format": self.format,
        }


def _stem_of(name: str) -> str:
    """`model.pdmodel` / `model.json` / `model.pdiparams` -> `model`; a bare prefix stays as it is."""
    for suffix in (*MODEL_SUFFIXES, PARAMS_SUFFIX):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def find_model(path: Path) -> ModelFiles | None:
    """`inference.json|.pdmodel` + `.pdiparams` in a folder (else any stem with both); a prefix
    (`output/model`) or one of the files themselves (`--model_file=output/model.pdmodel`) works too."""
    path = Path(path)
    if path.is_dir():
        suffixes: tuple[str, ...] = MODEL_SUFFIXES
        folder, stems = path, list(MODEL_STEMS)
        stems += sorted(p.stem for p in folder.glob("*" + PARAMS_SUFFIX) if p.stem not in stems)
    elif path.parent.is_dir():
        folder, stems = path.parent, [_stem_of(path.name)]
        # the file named is the one an inference script opens: look for that format first
        named = path.name[len(stems[0]) :]
        suffixes = (
            (named, *(s for s in MODEL_SUFFIXES if s != named)) if named in MODEL_SUFFIXES else MODEL_SUFFIXES
        )
    else:
        return None
    for stem in stems:
        params = folder / (stem + PARAMS_SUFFIX)
        if not params.is_file():
            continue
        for suffix in suffixes:
            model = folder / (stem + suffix)
            if model.is_file():
                return ModelFiles(folder, model, params)
    return None
