"""Reading TIPC train_infer_python configs the way each dialect's script reads them.

load(config, *, repo=None, dialect=None) -> TipcConfig
"""

from __future__ import annotations

from pathlib import Path

from tipc.config.model import Section, Slot, TipcConfig

__all__ = ["Section", "Slot", "TipcConfig", "load"]


def load(config: Path, *, repo: Path | None = None, dialect: str | None = None) -> TipcConfig:
    """Parse `config` into the typed config of its dialect (detected unless given).

    Raises tipc.core.errors.ConfigError only when the file cannot be read at all (missing, binary, not UTF-8);
    content problems come back as located findings on the config.
    """
    from dataclasses import replace

    from tipc.config import detect, dialects
    from tipc.config import reader as load_mod
    from tipc.config.discover import classify_chain, find_repo_root
    from tipc.config.parse import parse_file

    path = Path(config)
    parsed = parse_file(path)
    root = repo if repo is not None else find_repo_root(path)
    name = dialect if dialect is not None else detect.detect(parsed, path, root).dialect
    cfg = load_mod.build(parsed, dialects.get(name), chain=classify_chain(path, parsed), root=root)
    return replace(cfg, findings=cfg.findings + parsed.issues)
