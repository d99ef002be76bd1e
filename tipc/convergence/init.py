"""`tipc converge init REPO`: propose a seed-003 config from a TIPC repo, statically.

The train command comes from the repo's train_infer_python config (tipc.config); the flags its script accepts
from tipc.config.script_flags (the `tipc init` reader: argparse calls read with `ast`, nothing runs). Each
harness role is matched by normalised flag names. Log regexes are derived from the script's own f-strings
when it logs a step counter, else generic ones are proposed and marked for checking.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.config.script_flags import Flag, ScriptFlags, read_flags
from tipc.core.errors import UserError
from tipc.core.steps import DEFAULT_MODE

if TYPE_CHECKING:
    from tipc.config import TipcConfig

# Harness role -> normalised flag names, in preference order.
ROLES: dict[str, tuple[str, ...]] = {
    "checkpoint_input": (
        "resume",
        "resume_from",
        "resume_path",
        "resume_checkpoint",
        "resume_ckpt",
        "checkpoint",
        "checkpoints",
        "ckpt",
        "load_checkpoint",
        "init_checkpoint",
        "restore",
        "restore_from",
        "continue_from",
    ),
    "start_step": (
        "start_step",
        "start_iter",
        "start_iteration",
        "start_epoch",
        "begin_epoch",
        "initial_epoch",
        "resume_epoch",
        "last_epoch",
        "continue_training_from_epoch",
    ),
    "run_for": (
        "max_steps",
        "max_step",
        "max_iters",
        "max_iter",
        "total_steps",
        "total_iters",
        "num_iters",
        "iters",
        "epochs",
        "epoch",
        "num_epochs",
        "total_epochs",
        "max_epoch",
        "max_epochs",
        "epoch_num",
        "n_epochs",
    ),
    "save_interval": (
        "save_interval",
        "save_steps",
        "save_step",
        "save_freq",
        "save_every",
        "checkpoint_interval",
        "ckpt_interval",
        "save_epoch",
        "save_epochs",
        "epochs_per_save",
        "save_interval_epochs",
        "save_epoch_step",
    ),
    "checkpoint_output": (
        "checkpoint_dir",
        "ckpt_dir",
        "save_dir",
        "save_path",
        "save_folder",
        "output_dir",
        "output",
        "model_dir",
        "outdir",
        "log_dir",
    ),
}
REQUIRED = {
    "checkpoint_input": "load a checkpoint to start from (e.g. --resume PATH)",
    "start_step": "start at a given step or epoch (e.g. --start_step N / --start_epoch N)",
    "run_for": "stop after a given step or epoch (e.g. --max_steps N / --epochs N)",
    "checkpoint_output": "choose where checkpoints are written (e.g. --checkpoint_dir DIR)",
}
_HIGHER_IS_BETTER = ("acc", "top1", "top5", "psnr", "ssim", "miou", "map", "f1", "auc", "recall", "precision")
_NUMBER = r"([-+]?[\d.]+(?:[eE][-+]?\d+)?)"


@dataclass
class Proposal:
    yaml_text: str
    messages: list[str] = field(default_factory=list)
    flags: dict[str, Flag | None] = field(default_factory=dict)

    @property
    def can_resume(self) -> bool:
        return all(self.flags.get(role) is not None for role in REQUIRED)


MAIN_CONFIG = "train_infer_python.txt"


def _config_path(repo: Path, config: str | None) -> Path:
    """--config (as given, else relative to the repo), else the repo's main train_infer_python config: the
    only one, or the one named train_infer_python.txt (not a variant such as train_amp_infer_python.txt);
    several of those is a usage error listing them."""
    from tipc.config.discover import find_configs

    if config:
        given = Path(config)
        if not given.is_absolute() and not given.is_file() and (repo / given).is_file():
            given = repo / given
        if not given.is_file():
            raise UserError(f"{config}: config file not found")
        return given
    found = find_configs(repo)
    if not found:
        raise UserError(
            f"{repo}: no test_tipc/configs/**/train_infer_python*.txt to read the train command from"
        )
    main = [c for c in found if c.name == MAIN_CONFIG]
    if len(found) == 1 or len(main) == 1:
        return found[0] if len(found) == 1 else main[0]
    listing = "\n  ".join(c.relative_to(repo).as_posix() for c in (main or found)[:20])
    raise UserError(f"{repo}: several train_infer_python configs; pick one with --config:\n  {listing}")


def _slot_words(cfg: TipcConfig) -> list[str]:
    """`key=value` words for the slots the TIPC script appends to the train command (device, epochs, batch
    size, output folder) and the data the config names (`--data-path:./lite_data`, the template's train
    parameter), with their lite-mode values."""
    from tipc.config.bash import is_mode_keyed

    words = []
    for slot in (
        cfg.train_use_gpu,
        cfg.epoch,
        cfg.train_batch,
        cfg.save_model,
        cfg.data_path,
        cfg.train_param1,
    ):
        value = slot.value if slot.present else ""
        if is_mode_keyed(value):
            value = slot.mode_value(DEFAULT_MODE)
        if slot is cfg.save_model and value and value != "null":
            value = "${WORK}/output"  # tipc expands it per run: the repo stays clean, segments stay apart
        if slot.key.startswith("-") and value and value != "null" and "|" not in value:
            words.append(f"{slot.key}={value}")
    return words


def _train_command(repo: Path, config: str | None) -> tuple[Path, str, list[str], str]:
    """(config path, python, train argv words with the lite-mode slot flags, the config's epoch flag)."""
    from tipc.config import load

    path = _config_path(repo, config)
    cfg = load(path, repo=repo)
    words = shlex.split(cfg.norm_train.value) if cfg.norm_train.present else []
    if not words or not any(w.endswith(".py") for w in words):
        raise UserError(f"{path}:{cfg.norm_train.line or 1}: no python train script in the norm_train slot")
    epoch_key = cfg.epoch.key if cfg.epoch.present and cfg.epoch.key.startswith("-") else ""
    return path, cfg.python.value or "python", words + _slot_words(cfg), epoch_key


def _script_of(words: list[str]) -> str:
    return next(w for w in words if w.endswith(".py"))


def _pairs(words: list[str]) -> list[tuple[str, str | None]]:
    """`--k v` / `--k=v` words after the script as (key, value) pairs, in order."""
    out: list[tuple[str, str | None]] = []
    rest = words[words.index(_script_of(words)) + 1 :]
    i = 0
    while i < len(rest):
        w = rest[i]
        if w.startswith("-") and "=" in w:
            k, v = w.split("=", 1)
            out.append((k, v))
        elif w.startswith("-") and i + 1 < len(rest) and not rest[i + 1].startswith("-"):
            out.append((w, rest[i + 1]))
            i += 1
        else:
            out.append((w, None))
        i += 1
    return out


# --- log regexes from the script's f-strings ------------------------------------------------------------


def _fstrings(script: Path) -> list[ast.JoinedStr]:
    try:
        tree = ast.parse(script.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return []
    return [n for n in ast.walk(tree) if isinstance(n, ast.JoinedStr)]


def _parts(node: ast.JoinedStr) -> list[str | ast.FormattedValue]:
    out: list[str | ast.FormattedValue] = []
    for p in node.values:
        if isinstance(p, ast.FormattedValue):
            out.append(p)
        elif isinstance(p, ast.Constant) and isinstance(p.value, str):
            out.append(p.value)
    return out


def _expr_name(fv: ast.FormattedValue) -> str:
    return ast.unparse(fv.value).lower()


def _step_line(nodes: list[ast.JoinedStr]) -> tuple[str, list[str | ast.FormattedValue], int] | None:
    """The f-string that logs a global step counter with a loss: (unit, parts, index of the step value)."""
    best: tuple[int, str, list[str | ast.FormattedValue], int] | None = None
    for node in nodes:
        parts = _parts(node)
        text = "".join(p for p in parts if isinstance(p, str)).lower()
        if "loss" not in text:
            continue
        for i, p in enumerate(parts):
            if not isinstance(p, ast.FormattedValue) or i == 0 or not isinstance(parts[i - 1], str):
                continue
            before = str(parts[i - 1]).lower()
            name = _expr_name(p)
            if not re.search(r"(step|iter\w*|epoch)\W*$", before):
                continue
            rank = 3 if "step" in name or "global" in name else 2 if "iter" in name else 1
            unit = "epoch" if "epoch" in before[-8:] and rank == 1 else "step"
            if best is None or rank > best[0]:
                best = (rank, unit, parts, i)
    return None if best is None else (best[1], best[2], best[3])


def _literal_before(parts: list[str | ast.FormattedValue], i: int) -> str:
    return str(parts[i - 1]) if i > 0 and isinstance(parts[i - 1], str) else ""


def _derive(nodes: list[ast.JoinedStr]) -> tuple[str, dict[str, str], str | None, str] | None:
    found = _step_line(nodes)
    if found is None:
        return None
    unit, parts, si = found
    anchor = re.escape(_literal_before(parts, si).lstrip())
    step_re = anchor + r"(\d+)"
    metrics: dict[str, str] = {}
    for i in range(si + 1, len(parts)):
        lit = _literal_before(parts, i)
        m = (
            re.search(r"([A-Za-z][A-Za-z0-9_@]*)\W*$", lit)
            if isinstance(parts[i], ast.FormattedValue)
            else None
        )
        if m is None:
            continue
        name = m.group(1).lower()
        if name in metrics or not (name == "loss" or name.startswith(_HIGHER_IS_BETTER)):
            continue
        metrics[name] = anchor + r"\d+.*?" + re.escape(lit.strip()) + r"\s*" + _NUMBER
    save_re = None
    best_rank = -1
    for node in nodes:
        p = _parts(node)
        text = "".join(x for x in p if isinstance(x, str))
        if not re.search(r"(?i)\bsav(e|ed|ing)\b", text) or not isinstance(p[-1], ast.FormattedValue):
            continue
        # a line about checkpoints beats one about best weights or exports
        rank = (
            2 if re.search(r"(?i)checkpoint|ckpt", text) else 0 if re.search(r"(?i)best|infer", text) else 1
        )
        if rank > best_rank:
            first = str(p[0]) if isinstance(p[0], str) else ""
            save_re = re.escape(first) + ".*?" + re.escape(_literal_before(p, len(p) - 1)) + r"(\S+)"
            best_rank = rank
    return unit, metrics, save_re, step_re


# --- the YAML -------------------------------------------------------------------------------------------


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _flag_yaml(name: str, key: str, value: str | None, indent: int, script: bool = False) -> list[str]:
    pad = " " * indent
    lines = [f"{pad}{name}:", f"{pad}    key: {_q(key)}"]
    if script:
        lines.append(f"{pad}    set_in_script: true")
    else:
        lines.append(f"{pad}    value: {_q(value) if value is not None else 'null'}")
    return lines


def _script_flags(sf: ScriptFlags, epoch_key: str) -> dict[str, Flag | None]:
    """The script's flag for each role; the config's epoch flag stands in for run_for when that is missing."""
    flags = {role: sf.find(names) for role, names in ROLES.items()}
    if flags["run_for"] is None and epoch_key and sf.find((epoch_key.lstrip("-").replace("-", "_"),)):
        flags["run_for"] = sf.find((epoch_key.lstrip("-").replace("-", "_"),))
    return flags


def _capability_messages(flags: dict[str, Flag | None], rel_script: str, unit: str) -> list[str]:
    """What seed 003 needs of the script and did not find."""
    out = []
    for role, why in REQUIRED.items():
        if flags[role] is None:
            looked = ", ".join("--" + n for n in ROLES[role][:6])
            out.append(
                f"missing capability: {rel_script} has no flag to {why}; looked for {looked}, ... "
                f"(seed 003 needs it to {'gather' if role == 'checkpoint_output' else 'restart segments'})"
            )
    if flags["save_interval"] is None:
        out.append(
            f"no save-interval flag in {rel_script}: gather relies on the script saving on its own "
            f"(e.g. every {unit}); set flags.gather.misc if it has another way"
        )
    return out


@dataclass(frozen=True)
class _LogParsing:
    unit: str
    metrics: dict[str, str]
    save_re: str
    step_re: str


def _log_parsing(script: Path, rel_script: str, unit: str, messages: list[str]) -> _LogParsing:
    """The log regexes derived from the script's f-strings, with guesses (each noted) where none was found."""
    derived = _derive(_fstrings(script))
    if derived is not None:
        d_unit, metrics, save_re, step_re = derived
        messages.append(f"log_parsing derived from the f-strings of {rel_script}; check them against a log")
    else:
        d_unit, metrics, save_re, step_re = unit, {}, None, ""
    if not step_re:
        step_re = r"(?i)(?:step|iter)\s*[:\[]?\s*(\d+)" if unit == "step" else r"(?i)epoch\s*[:\[]?\s*(\d+)"
        messages.append("no step log line found in the script: log_parsing.step_num is a guess")
    if not metrics:
        metrics = {"loss": r"(?i)loss\s*[:=]\s*" + _NUMBER}
    if save_re is None:
        save_re = r"(?i)sav(?:e|ed|ing)\b.*?(\S+\.pd\w+)"
        messages.append("no checkpoint-save log line found: log_parsing.model_save is a guess")
    return _LogParsing(d_unit, metrics, save_re, step_re)


def _log_yaml(parsing: _LogParsing) -> list[str]:
    """The log_parsing regexes and the metrics with their margins."""
    out = [
        "    log_parsing:",
        "        step_num:",
        f"            regex: {_q(parsing.step_re)}",
        "        model_save:",
        f"            regex: {_q(parsing.save_re)}",
    ]
    for metric, regex in parsing.metrics.items():
        out += [f"        {metric}:", f"            regex: {_q(regex)}"]
    out.append("    metrics:")
    for metric in parsing.metrics:
        better_high = metric.startswith(_HIGHER_IS_BETTER)
        out += [
            f"        {metric}:",
            "            margin: 0.05",
            f"            comparison: {_q('>=' if better_high else '<=')}",
        ]
    return out


def _flags_yaml(flags: dict[str, Flag | None], common: list[tuple[str, str | None]]) -> list[str]:
    """The flags section: the train command's other flags (common), then the gather and run phases'."""

    def key(role: str) -> str:
        f = flags[role]
        return f.flag if f is not None else f"--TODO-{role.replace('_', '-')}"

    out = ["    flags:", "        common:"]
    for i, (k, v) in enumerate(common):
        out += _flag_yaml(f"arg_{i}_{re.sub(r'[^a-z0-9]+', '_', k.lstrip('-').lower())}", k, v, 12)
    if not common:
        out[-1] = "        common: {}"
    out += [
        "        gather:",
        *_flag_yaml("checkpoint_output", key("checkpoint_output"), None, 12, script=True),
        "            misc:",
    ]
    out += _flag_yaml("save_interval", key("save_interval"), "5", 16) if flags["save_interval"] else []
    out += _flag_yaml("run_for", key("run_for"), "20", 16)
    out += [
        "        run:",
        *_flag_yaml("checkpoint_input", key("checkpoint_input"), None, 12, script=True),
        *_flag_yaml("start_step", key("start_step"), None, 12, script=True),
        *_flag_yaml("run_for", key("run_for"), None, 12, script=True),
    ]
    return out


def _relative(repo: Path, base: Path | None) -> str:
    """`repo` as a path relative to `base` (posix separators); `.` for the folder itself."""
    start = (base or Path.cwd()).resolve()
    return Path(os.path.relpath(repo, start)).as_posix()


def propose(repo: Path, config: str | None = None, base: Path | None = None) -> Proposal:
    """The proposal for `repo`; its `directory:` is relative to `base`, the folder the file will live in
    (default: the current one), so that the file can be committed and used on another machine."""
    repo = repo.resolve()
    if not repo.is_dir():
        raise UserError(f"{repo}: not a folder")
    cfg_path, python, words, epoch_key = _train_command(repo, config)
    script = repo / _script_of(words)
    sf: ScriptFlags = read_flags(script, repo)
    prop = Proposal("")
    rel_script = _script_of(words)
    if sf.error:
        prop.messages.append(f"{rel_script}: {sf.error}")
    prop.flags = _script_flags(sf, epoch_key)
    start = prop.flags["start_step"]
    unit = "epoch" if start is not None and "epoch" in start.dest.lower() else "step"
    prop.messages += _capability_messages(prop.flags, rel_script, unit)
    used = {f.flag for f in prop.flags.values() if f is not None}
    common = [(k, v) for k, v in _pairs(words) if k not in used]
    parsing = _log_parsing(script, rel_script, unit, prop.messages)
    name = re.sub(r"\W+", "_", repo.name).strip("_") or "model"
    out = [
        f"# Proposed by `tipc converge init` from {cfg_path.relative_to(repo).as_posix()} and {rel_script}.",
        f"# The step counter is the {parsing.unit}. Check log_parsing against a training log and tune the "
        "margins.",
    ]
    for msg in prop.messages:
        out.append(f"# NOTE: {msg}")
    out += [
        f"{name}:",
        f"    directory: {_q(_relative(repo, base))}",
        "    executable:",
        f"        - {_q(python)}",
        f"        - {_q(rel_script)}",
        '    log_output: "stdout"',
        *_log_yaml(parsing),
        "    recording:",
        "        steps_to_record_after_save: 3",
        *_flags_yaml(prop.flags, common),
    ]
    prop.yaml_text = "\n".join(out) + "\n"
    return prop
