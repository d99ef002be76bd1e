"""The name `tipc serve` gives a model when `--name` does not: it is in every URL (`/{name}/prediction`), so
it should be the model's, not the folder an export happened to write into (`norm_train_gpus_-1_autocast_null`,
`inference`, `output`).

In order: the model of the repo's TIPC configs that the folder lies under (`test_tipc/output/<model>/...`), or
the repo's one model; else the nearest folder whose name is not one of an export's generic names.
"""

from __future__ import annotations

import re
from pathlib import Path

# Folders exports and TIPC runs write into, named after how they were made rather than after the model.
_GENERIC = re.compile(
    r"^(?:inference|infer|inference_model|output|outputs|out|model|models|export|exported|save|saved|"
    r"checkpoints?|weights|serving_server|serving_client|static|tipc|test_tipc|logs?|upper|"
    r"(?:lite|whole)_train_(?:lite|whole)_infer|whole_infer|klquant_whole_infer|serving_infer|"
    r"(?:norm|pact|fpgm|distill|amp|kl)_(?:train|export).*|.*_gpus?_-?\d.*|gpus?_.*|.*autocast.*)$",
    re.IGNORECASE,
)
_MAX_CONFIGS = 200  # a repo's configs read for their model_name (a huge tree is not walked)


def generic(name: str) -> bool:
    return bool(_GENERIC.match(name))


def _repo_of(folder: Path) -> Path | None:
    for parent in (folder, *folder.parents):
        if (parent / "test_tipc" / "configs").is_dir():
            return parent
    return None


def _model_names(repo: Path) -> list[str]:
    names: list[str] = []
    for n, config in enumerate(sorted((repo / "test_tipc" / "configs").rglob("*.txt"))):
        if n >= _MAX_CONFIGS:
            break
        try:
            with config.open(encoding="utf-8", errors="replace") as fh:
                head = [next(fh, "") for _ in range(4)]
        except OSError:
            continue
        for line in head:
            key, sep, value = line.partition(":")
            if sep and key.strip() == "model_name" and value.strip() and value.strip() not in names:
                names.append(value.strip())
    return names


def default_name(model_dir: Path) -> str:
    """The service name for `model_dir` (see the module's docstring)."""
    folder = model_dir.resolve()
    repo = _repo_of(folder)
    if repo is not None:
        names = _model_names(repo)
        inside = folder.relative_to(repo).parts
        for part in inside:
            if part in names:
                return part
        if len(names) == 1:
            return names[0]
    for candidate in (folder, *folder.parents):
        if candidate.name and not generic(candidate.name):
            return candidate.name
    return folder.name or "model"
