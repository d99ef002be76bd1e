"""What `tipc run` / `tipc check` / `tipc plan` / `tipc init` share about their arguments: REPO (or a config
in it) and --config resolved to (repo root, config file), and `--set KEY=VALUE` parsed.

Imports stay light (this module is loaded with the CLI); config discovery is imported when it is needed.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tipc.core.errors import UserError

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


# --- which interpreter runs the chain ---------------------------------------------------------------

_BARE_PYTHON = re.compile(r"^python[0-9.]*$")


@dataclass(frozen=True)
class PythonChoice:
    """The interpreter `tipc run`/`check` hands the runner as --python (None: the config's own), and why."""

    python: str | None
    why: str  # one line for the terminal and the report's notes


def config_pythons(config: Path) -> list[str]:
    """The interpreter words a config's `python:` lines name (first alternative of `a|b`), in order, once."""
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out: list[str] = []
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == "python":
            word = value.split("|")[0].strip()
            word = word.split("=", 1)[1].strip() if "=" in word else word  # `mode=python3` form
            if word and word != "null" and word not in out:
                out.append(word)
    return out


def paddle_findable() -> bool:
    """Whether paddle is installed for tipc's own interpreter (located, not imported: the CLI stays light)."""
    return importlib.util.find_spec("paddle") is not None


def choose_python(
    given: str | None,
    written: list[str],
    *,
    own: str | None = None,
    own_has_paddle: Callable[[], bool] | None = None,
    which: Callable[[str], str | None] | None = None,
) -> PythonChoice:
    """--python when given; else tipc's own interpreter in place of a bare `python` word the config names
    (whatever `python` is first on PATH, often one without paddle when a venv's tipc runs unactivated);
    an interpreter the config names by path is kept, as is the config's when tipc's own has no paddle."""
    own = own or sys.executable
    own_has_paddle = own_has_paddle or paddle_findable
    which = which or shutil.which
    if given:
        return PythonChoice(given, f"python: {given} (--python)")
    bare = [w for w in written if _BARE_PYTHON.match(w)]
    if not bare:
        shown = ", ".join(written) or "none"
        return PythonChoice(None, f"python: the config's own ({shown}; choose another with --python)")
    found = which(bare[0])
    same = found is not None and os.path.realpath(found) == os.path.realpath(own)
    if not own_has_paddle():
        where = found or "not on PATH"
        return PythonChoice(
            None,
            f"python: the config's '{bare[0]}' ({where}); tipc's own interpreter {own} has no paddle "
            "(choose one with --python)",
        )
    if same:
        return PythonChoice(None, f"python: {own} (the config's '{bare[0]}'; tipc runs under it too)")
    return PythonChoice(
        own,
        f"python: {own}, the interpreter tipc runs under (it has paddle), in place of the config's "
        f"'{bare[0]}' ({found or 'not on PATH'}); choose another with --python",
    )
