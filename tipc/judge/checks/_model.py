"""Locating the exported inference model a run produced (light: no numpy/paddle)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tipc.judge.checks._common import argv_options, norm_key, step_runs

MODEL_STEMS = ("inference", "model")
_EXPORT_KEYS = re.compile(
    r"save_inference_dir|inference_dir|save_dir|output_path|output_dir|^output$|save_path|"
    r"export_dir|model_save_dir",
    re.IGNORECASE,
)
_INFER_KEYS = re.compile(r"model_dir|model_path|inference_model|model_file|^model$", re.IGNORECASE)


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


def find_model(path: Path) -> ModelFiles | None:
    """`inference.json|.pdmodel` + `.pdiparams` in a dir (else any stem with both); a prefix works too."""
    path = Path(path)
    if path.is_dir():
        folder, stems = path, list(MODEL_STEMS)
        stems += sorted(p.stem for p in folder.glob("*.pdiparams") if p.stem not in stems)
    elif path.parent.is_dir():
        folder, stems = path.parent, [path.name]
    else:
        return None
    for stem in stems:
        params = folder / f"{stem}.pdiparams"
        if not params.is_file():
            continue
        for suffix in (".json", ".pdmodel"):
            model = folder / f"{stem}{suffix}"
            if model.is_file():
                return ModelFiles(folder, model, params)
    return None


def model_dir_candidates(record: Any, repo: Path) -> list[tuple[Path, str]]:
    """Where the run's exported model should be: export steps' output flags, then infer steps' model flags."""
    out: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    for stage, rx in (("export", _EXPORT_KEYS), ("infer", _INFER_KEYS)):
        for run in step_runs(record, stage):
            base = Path(repo) / run.step.cwd
            for key, value in argv_options(run.argv):
                if not value or not rx.search(norm_key(key)):
                    continue
                p = Path(value)
                p = (p if p.is_absolute() else base / p).resolve()
                if p not in seen:
                    seen.add(p)
                    out.append((p, f"{run.step.id}: {key}={value}"))
    return out


def locate_model(record: Any, repo: Path) -> tuple[ModelFiles | None, list[tuple[Path, str]]]:
    cands = model_dir_candidates(record, repo)
    for p, _ in cands:
        m = find_model(p)
        if m is not None:
            return m, cands
    return None, cands
