"""Locating the exported inference model a run produced (light: no numpy/paddle); the files themselves are
found by `tipc.judge.model_files`, which the model-side worker imports too."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.judge.checks._common import argv_options, norm_key, step_runs
from tipc.judge.model_files import MODEL_STEMS, ModelFiles, find_model

if TYPE_CHECKING:
    from tipc.execute.record import RunRecord

__all__ = ["MODEL_STEMS", "ModelFiles", "find_model", "locate_model", "model_dir_candidates"]

_EXPORT_KEYS = re.compile(
    r"save_inference_dir|inference_dir|save_dir|output_path|output_dir|^output$|save_path|"
    r"export_dir|model_save_dir",
    re.IGNORECASE,
)
_INFER_KEYS = re.compile(r"model_dir|model_path|inference_model|model_file|^model$", re.IGNORECASE)


def model_dir_candidates(record: RunRecord, repo: Path) -> list[tuple[Path, str]]:
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


def locate_model(record: RunRecord, repo: Path) -> tuple[ModelFiles | None, list[tuple[Path, str]]]:
    cands = model_dir_candidates(record, repo)
    for p, _ in cands:
        m = find_model(p)
        if m is not None:
            return m, cands
    return None, cands
