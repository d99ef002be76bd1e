"""Finding configs in a repo and telling which TIPC chain a config file belongs to."""

from __future__ import annotations

import os
from pathlib import Path

from tipc.config.parse import ParsedFile

CONFIG_DIR = Path("test_tipc") / "configs"

# Header word -> chain, for configs of chains other than train_infer_python.
_HEADER_CHAINS: tuple[tuple[str, str], ...] = (
    ("serving_infer_python_params", "serving_python"),
    ("serving_params", "serving"),
    ("cpp_infer_params", "cpp_infer"),
    ("paddle2onnx_params", "paddle2onnx"),
    ("lite_params", "lite"),
    ("kl_quant_params", "ptq"),
    ("ptq_params", "ptq"),
    ("base_train", "dy2static"),
    ("amp_train", "dy2static"),
)
_NAME_CHAINS: tuple[tuple[str, str], ...] = (
    ("serving", "serving"),
    ("paddle2onnx", "paddle2onnx"),
    ("infer_cpp", "cpp_infer"),
    ("inference_cpp", "cpp_infer"),
    ("_cpp", "cpp_infer"),
    ("lite", "lite"),
    ("ptq", "ptq"),
    ("dy2static", "dy2static"),
    ("benchmark", "benchmark"),
)


def find_repo_root(config: Path) -> Path:
    """The folder the script runs from: the parent of the nearest `test_tipc` above the config."""
    return repo_root_of_real(os.path.realpath(config))


def repo_root_of_real(real: str) -> Path:
    """`find_repo_root` of a config whose realpath is `real` (string work: Path.parents builds a Path per
    folder)."""
    folders = real.split("/")[:-1]
    for i in range(len(folders) - 1, 0, -1):
        if folders[i] == "test_tipc":
            return Path("/".join(folders[:i]) or "/")
    return Path(real).parent


def classify_chain(path: Path, parsed: ParsedFile) -> str:
    """Which chain a config is for: "train_infer_python", another chain's name, or "other" (not .txt)."""
    if path.suffix.lower() != ".txt":
        return "other"
    first = next((line.strip("\r").strip() for line in parsed.physical if line.strip()), "")
    if first.startswith("="):
        word = first.strip("= \t\r")
        if word == "train_params":
            name = path.name.lower()
            if "ptq" in name:
                return "ptq"
            return "train_infer_python"
        for header, chain in _HEADER_CHAINS:
            if word == header:
                return chain
    name = path.name.lower()
    for cue, chain in _NAME_CHAINS:
        if cue in name:
            return chain
    if name.startswith("model_") and "infer_python" in name:
        return "infer_python"
    if "train" in name and "infer_python" in name:
        return "train_infer_python"
    return "unknown"


def iter_config_files(repo: Path) -> list[Path]:
    """Every file under REPO/test_tipc/configs/** (any chain)."""
    base = Path(repo) / CONFIG_DIR
    if not base.is_dir():
        return []
    return sorted(p for p in base.rglob("*") if p.is_file())


def find_configs(repo: Path) -> list[Path]:
    """train_infer_python-family configs under REPO/test_tipc/configs (sorted)."""
    from tipc.config.parse import OutsideRepo, parse_text, read_text
    from tipc.core.errors import ConfigError

    out: list[Path] = []
    for path in iter_config_files(repo):
        if path.suffix != ".txt":
            continue
        try:
            parsed = parse_text(read_text(path), str(path))
        except OutsideRepo:
            raise  # said, not skipped: the user must know why the repo's config is not read
        except ConfigError:
            continue
        if classify_chain(path, parsed) == "train_infer_python":
            out.append(path)
    return out
