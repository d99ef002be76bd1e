"""What `tipc run` / `tipc check` / `tipc plan` / `tipc init` share about their arguments: REPO (or a config
in it) and --config resolved to (repo root, config file), and `--set KEY=VALUE` parsed.

Imports stay light (this module is loaded with the CLI); config discovery is imported when it is needed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tipc.errors import UserError

MAX_CONFIGS_LISTED = 20


def parse_sets(items: list[str], *, form: str = "KEY=VALUE") -> tuple[tuple[str, str], ...]:
    """`--set KEY=VALUE` items as (key, value) pairs; the key is stripped, the value kept as written."""
    out = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--set {item!r}: expected {form}")
        out.append((key.strip(), value))
    return tuple(out)


def pick_config(repo: Path, config_arg: str | None, find_configs: Callable[[Path], list[Path]]) -> Path:
    """--config (as given, or relative to REPO), else the repo's one train_infer_python config: a lone one,
    or the one named train_infer_python.txt among several; anything else is a usage error listing them."""
    if config_arg is not None:
        config = Path(config_arg)
        if not config.is_absolute() and not config.exists() and (repo / config).exists():
            config = repo / config
        if not config.is_file():
            raise UserError(f"{config_arg}: config file not found")
        return config
    configs = [Path(c) for c in find_configs(repo)]
    if len(configs) == 1:
        return configs[0]
    if not configs:
        raise UserError(f"{repo}: no train_infer_python config found under test_tipc/configs; pass --config")
    named = [c for c in configs if c.name == "train_infer_python.txt"]
    if len(named) == 1:
        return named[0]
    listing = "\n  ".join(str(c) for c in configs[:MAX_CONFIGS_LISTED])
    more = "\n  ..." if len(configs) > MAX_CONFIGS_LISTED else ""
    raise UserError(f"{repo}: several train_infer_python configs; pick one with --config:\n  {listing}{more}")


def resolve_target(
    repo_arg: str, config_arg: str | None, find_configs: Callable[[Path], list[Path]] | None = None
) -> tuple[Path, Path]:
    """(repo root, config path) from the REPO argument (a repo folder or a config file in one) and --config.
    Paths stay as the user gave them (the runner matches records by config name, not path)."""
    target = Path(repo_arg)
    if target.is_file():
        from tipc.config.discover import find_repo_root

        if config_arg is not None:
            raise UserError("give either a config path as REPO or --config, not both")
        return find_repo_root(target), target
    if not target.is_dir():
        raise UserError(f"{repo_arg}: no such file or folder (REPO is a model repo or a config in one)")
    if find_configs is None:
        from tipc.config.discover import find_configs as find_configs_in_repo

        find_configs = find_configs_in_repo
    return target, pick_config(target, config_arg, find_configs)
