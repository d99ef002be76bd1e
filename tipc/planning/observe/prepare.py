"""What an observation runs and how its output is read back (`prepare` -> `Prepared`): the config read the
way the planner reads it, the overrides applied (and the config text rewritten line by line where they
change a slot), the interpreter names given stand-ins, where a script or config from outside the repo is
placed. Reads the config and the script; runs nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tipc.config.detect import SCRIPT
from tipc.config.model import Slot, TipcConfig
from tipc.config.parse import ParsedFile, parse_file
from tipc.core.findings import Finding
from tipc.core.steps import Mode, Overrides
from tipc.planning.observe.standins import _INTERPRETERS

# ---------------------------------------------------------------------------------------------------------
# reading the config the way the planner does


def _config_model(parsed: ParsedFile, config: Path, repo: Path, dialect: str | None) -> TipcConfig:
    from tipc.config import detect as detect_mod
    from tipc.config import dialects as dialects_mod
    from tipc.config import reader as load_mod

    name = dialect or detect_mod.detect(parsed, config, repo).dialect
    return load_mod.build(parsed, dialects_mod.get(name), root=repo)


def _rewrite_lines(parsed: ParsedFile, changed: Mapping[int, tuple[Slot, str]]) -> str:
    """The config text with each changed slot's value replaced on its own line (the key kept as written)."""
    out: list[str] = []
    for number, text in enumerate(parsed.physical, 1):
        if number in changed:
            slot, value = changed[number]
            cr = "\r" if text.endswith("\r") else ""
            head = text[: slot.col - 1] if slot.col > 0 else f"{slot.key}:"
            text = head + value + cr
        out.append(text)
    return "\n".join(out) + ("\n" if parsed.text.endswith("\n") else "")


@dataclass(frozen=True)
class Prepared:
    """What an observation runs and how its output is read back (`prepare`)."""

    config: Path
    mode: Mode
    repo: Path  # resolved
    parsed: ParsedFile
    cfg: TipcConfig
    new_cfg: TipcConfig  # with the overrides applied
    notes: tuple[Finding, ...]  # what the overrides changed
    overrides: Overrides
    python_word: str  # the config's interpreter as written
    abs_python: str | None  # the config's interpreter when it is an absolute path (replaced by a stand-in)
    names: tuple[str, ...]  # interpreter names given a recording stand-in
    script_arg: str  # bash's first argument (repo-relative, or where the script is placed when outside)
    script_outside: Path | None  # a script outside the repo: placed at script_arg for the run
    config_arg: str  # the script's first argument
    config_rel: str | None  # the config's place in the repo (None: outside it, placed at config_arg)
    config_text: str | None  # the config as the script must read it (None: the repo's own, unchanged)
    script_given: bool  # the script was named by the caller (not the repo's own)


def prepare(
    config: Path,
    mode: Mode,
    *,
    repo: Path,
    tools: str,
    outside: str,
    overrides: Overrides = Overrides(),  # noqa: B008 - frozen value
    script: Path | None = None,
    dialect: str | None = None,
) -> Prepared:
    """What to run to observe `config` in `mode`: stand-ins will live in `tools`, files from outside the repo
    (a config, a script) are placed in `outside` (both as the script sees them)."""
    from tipc.planning.planner import apply_overrides

    config = Path(config)
    repo_abs = Path(repo).resolve()
    parsed = parse_file(config)
    cfg = _config_model(parsed, config, repo_abs, dialect)
    new_cfg, notes = apply_overrides(cfg, overrides, mode)
    changed: dict[int, tuple[Slot, str]] = {}
    for _name, slot in new_cfg.slots().items():
        if slot.overridden and slot.present:
            changed[slot.line] = (slot, slot.value)
    python_value = cfg.python.value.strip() or "python"
    python_word = python_value.split()[0] if python_value.split() else "python"
    names = set(_INTERPRETERS)
    abs_python: str | None = None
    if "/" in python_word:
        # An absolute interpreter would bypass PATH: the config the script reads names a stand-in instead.
        abs_python = python_word
        names.add("_tipc_abs_python")
        slot, value = changed.get(cfg.python.line, (cfg.python, cfg.python.value))
        changed[cfg.python.line] = (slot, value.replace(python_word, f"{tools}/_tipc_abs_python", 1))
    else:
        names.add(python_word)
    config_rel: str | None
    try:
        config_rel = config.resolve().relative_to(repo_abs).as_posix()
        config_arg = config_rel
    except ValueError:
        config_rel, config_arg = None, f"{outside}/{config.name}"
    text = _rewrite_lines(parsed, changed) if changed or config_rel is None else None
    script_path = Path(script) if script is not None else repo_abs / SCRIPT
    script_outside: Path | None = None
    try:
        script_arg = script_path.resolve().relative_to(repo_abs).as_posix()
    except ValueError:
        script_outside = script_path.resolve()
        script_arg = f"{outside}/script_{script_path.name}"
    return Prepared(
        config=config,
        mode=mode,
        repo=repo_abs,
        parsed=parsed,
        cfg=cfg,
        new_cfg=new_cfg,
        notes=tuple(notes),
        overrides=overrides,
        python_word=python_word,
        abs_python=abs_python,
        names=tuple(sorted(names)),
        script_arg=script_arg,
        script_outside=script_outside,
        config_arg=config_arg,
        config_rel=config_rel,
        config_text=text,
        script_given=script is not None,
    )
