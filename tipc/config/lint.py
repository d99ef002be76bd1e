"""Static checks of TIPC configs with stable codes (table in docs/lint-codes.md).

`static_lint(path, dialect=None)` reads a file the way its dialect's script does and reports every trap
the script would silently fall into (positions shifted by blank lines, values cut at a second colon, a mode
missing from a mode-keyed value, ...). The findings of planning it in every mode need the planner, a layer
up: tipc.planning.lint adds them (`lint_paths` there is the whole lint `tipc lint` runs).
"""

from __future__ import annotations

import functools
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tipc.config import bash, detect, dialects
from tipc.config import reader as load_mod
from tipc.config.discover import classify_chain, repo_root_of_real
from tipc.config.model import Slot, TipcConfig
from tipc.config.parse import ParsedFile, parse_text, read_text_real
from tipc.core.errors import ConfigError
from tipc.core.findings import Finding, Level
from tipc.core.steps import MODES

KNOWN_MODES = (*MODES, "benchmark_train")  # benchmark_train: read by the benchmark script, not run by tipc

# Slot name -> a pattern its key is expected to match (case-insensitive); None: any key.
_KEY_EXPECT: dict[str, str] = {
    "model_name": r"^model_name$",
    "python": r"^python$",
    "gpu_list": r"^gpu_list$",
    "trainer_list": r"^trainer$",
    "eval": r"^eval$",
    "inference": r"^inference$",
    "infer_use_gpu": r"gpu|device",
    "infer_mkldnn": r"mkldnn|null",
    "infer_threads": r"thread|cpu_num|null",
    "infer_trt": r"trt|tensorrt|null",
    "infer_benchmark": r"benchmark|null",
    "infer_quant": r"^infer_quant$",
}
_BOOL_SLOTS = ("infer_quant", "infer_mkldnn", "infer_trt")
_TRAINER_SLOTS = ("norm_train", "pact_train", "fpgm_train", "distill_train", "trainer1", "trainer2")
_EXPORT_SLOTS = ("norm_export", "pact_export", "fpgm_export", "distill_export")
# trainer slot -> its export slot (the 51-line dispatch table)
_TRAINER_EXPORT = {
    "norm_train": "norm_export",
    "pact_train": "pact_export",
    "fpgm_train": "fpgm_export",
    "distill_train": "distill_export",
    "trainer1": "export1",
    "trainer2": "export2",
}
_BOOLS = {"True", "False", "null"}


@functools.cache
def _key_pattern(expect: str) -> re.Pattern[str]:
    return re.compile(expect, re.I)


@functools.lru_cache(maxsize=4096)
def _key_fits(expect: str, key: str) -> bool:
    """Whether `key` matches the expected-key pattern (cached: the configs of a repo share their keys)."""
    return _key_pattern(expect).search(key) is not None


_URL_KEYS = re.compile(r"_url$")
_SlotCheck = Callable[[TipcConfig, str, Slot], list[Finding]]


def _f(
    cfg: TipcConfig, slot: Slot | None, level: Level, code: str, message: str, col: int | None = None
) -> Finding:
    line = slot.line if slot is not None else 0
    c = col if col is not None else (slot.col if slot is not None else 0)
    return Finding(cfg.path, line, c, level, code, message)


def shift_findings(parsed: ParsedFile, cfg: TipcConfig, read_limit: int | None) -> list[Finding]:
    """The blank-line findings (TIPC102) that change what the script reads: slots shifted up from a blank
    line on, or a line cut off by the read limit. `tipc plan` / `run --dry-run` report them beside the
    commands they plan from the shifted slots, so plan and lint say the same thing."""
    used = max((s.line for s in cfg.slots().values() if s.present), default=0)
    return [
        f
        for f in _physical_checks(parsed, read_limit, used)
        if f.code == "TIPC102" and f.level is not Level.INFO
    ]


def _physical_checks(parsed: ParsedFile, limit: int | None, last_used_line: int) -> list[Finding]:
    out: list[Finding] = []
    path = parsed.path
    if parsed.crlf:
        out.append(
            Finding(
                path,
                1,
                0,
                Level.ERROR,
                "TIPC101",
                "CRLF line endings: every value keeps a trailing \\r (`True\\r` is not `True`, "
                "`\\r` reaches the "
                "commands); convert to LF",
            )
        )
    read = parsed.physical if limit is None else parsed.physical[:limit]
    lost = parsed.physical[limit:] if limit is not None else ()
    for number, line in enumerate(read, 1):
        if line != "":
            continue
        if number >= last_used_line:
            out.append(
                Finding(
                    path,
                    number,
                    1,
                    Level.INFO,
                    "TIPC102",
                    "blank line after the last slot the script reads (harmless here)",
                )
            )
            continue
        message = (
            f"blank line: the script drops it, so from line {number + 1} on every line fills the slot of the "
            "line above it (slots no longer match the documented line numbers)"
        )
        level = Level.WARNING
        if limit is not None and lost and lost[0].strip():
            level = Level.ERROR
            message += (
                f"; with the {limit}-line read limit line {limit + 1} ({lost[0].strip()[:40]!r}) is cut off"
            )
        out.append(Finding(path, number, 1, level, "TIPC102", message))
    return out


def _slot_checks(cfg: TipcConfig, splitter: str) -> list[Finding]:
    out: list[Finding] = []
    every_colon = splitter == "every_colon"
    for name, slot in cfg.slots().items():
        if slot.line <= 0:  # not present
            continue
        if every_colon and slot.raw.count(":") > 1:  # _second_colon's first test, without the call
            out.extend(_second_colon(cfg, slot))
        for check in _checks_for(name):
            found = check(cfg, name, slot)
            if found:
                out.extend(found)
    return out


@functools.cache
def _checks_for(name: str) -> tuple[_SlotCheck, ...]:
    """The per-slot checks that can find something in slot `name` (in `_PER_SLOT_CHECKS` order)."""
    return tuple(check for check, names in _PER_SLOT_CHECKS if names is None or name in names)


def _second_colon(cfg: TipcConfig, slot: Slot) -> list[Finding]:
    """TIPC103: a script splitting at every colon keeps only the second field."""
    raw = slot.raw.rstrip("\r")
    if not (raw.count(":") > 1 and len(bash.common_fields(raw)) > 2):
        return []
    whole = raw.split(":", 1)[1]
    level = Level.INFO if _URL_KEYS.search(slot.key) else Level.WARNING
    return [
        _f(
            cfg,
            slot,
            level,
            "TIPC103",
            f"value of {slot.key!r} contains a second ':': the script keeps only {slot.value!r} "
            f"(not {whole!r})",
        )
    ]


def _glob_value(cfg: TipcConfig, name: str, slot: Slot) -> list[Finding]:
    if not (("*" in slot.value or "?" in slot.value) and name != "inference"):
        return []
    return [
        _f(
            cfg,
            slot,
            Level.WARNING,
            "TIPC104",
            f"glob in value {slot.value!r}: bash expands it when reading the config "
            "(first match with common_func.sh, all matches with utils_func.sh)",
        )
    ]


def _misplaced_key(cfg: TipcConfig, name: str, slot: Slot) -> list[Finding]:
    """TIPC105: a key that does not match its slot's expected key (a line missing or extra above it)."""
    expect = _KEY_EXPECT.get(name)
    misplaced = expect and slot.key.strip() and not _key_fits(expect, slot.key.strip())
    if not misplaced or (name == "infer_use_gpu" and slot.key.strip() == "null"):
        return []
    return [
        _f(
            cfg,
            slot,
            Level.ERROR,
            "TIPC105",
            f"key {slot.key!r} sits in the {name} slot (line {slot.line}); the script uses this "
            f"position as {name}",
            col=1,
        )
    ]


def _block_swaps(cfg: TipcConfig, name: str, slot: Slot) -> list[Finding]:
    """TIPC105: an export key in the trainer block or a trainer key in the export block."""
    out: list[Finding] = []
    key = slot.key.strip()
    if name in _TRAINER_SLOTS and "export" in key:
        out.append(
            _f(
                cfg,
                slot,
                Level.ERROR,
                "TIPC105",
                f"export key {key!r} sits in the {name} slot of the trainer block (line {slot.line}): "
                "a line is missing or extra above it",
                col=1,
            )
        )
    if name in _EXPORT_SLOTS and key.endswith("_train"):
        out.append(
            _f(
                cfg,
                slot,
                Level.ERROR,
                "TIPC105",
                f"trainer key {key!r} sits in the {name} slot of the export block (line {slot.line}): "
                "a line is missing or extra above it",
                col=1,
            )
        )
    return out


def _bool_items(cfg: TipcConfig, name: str, slot: Slot) -> list[Finding]:
    """TIPC106: items of a True/False slot that are neither."""
    if name not in _BOOL_SLOTS:
        return []
    out: list[Finding] = []
    for item in slot.items:
        if item not in _BOOLS and not (name == "infer_trt" and item == ""):
            fix = " (typo of False?)" if item.lower().startswith("f") else ""
            out.append(
                _f(
                    cfg,
                    slot,
                    Level.WARNING,
                    "TIPC106",
                    f"{slot.key!r} item {item!r} is not True/False{fix}: the script only tests for 'True'",
                )
            )
    return out


def _spaced_key(cfg: TipcConfig, name: str, slot: Slot) -> list[Finding]:
    del name
    if not (slot.key != slot.key.strip() and slot.key.strip()):
        return []
    return [
        _f(
            cfg,
            slot,
            Level.WARNING,
            "TIPC107",
            f"key {slot.key!r} has surrounding spaces (kept by bash)",
            1,
        )
    ]


def _blank_value(cfg: TipcConfig, name: str, slot: Slot) -> list[Finding]:
    if not (slot.value and slot.value.strip() == "" and name not in ("inference_dir",)):
        return []
    return [
        _f(
            cfg,
            slot,
            Level.WARNING,
            "TIPC108",
            f"value of {slot.key!r} is blank (spaces only): parameters are omitted but a stage test "
            "does not treat it as null, so that stage would run with an empty script",
        )
    ]


def _unknown_modes(cfg: TipcConfig, name: str, slot: Slot) -> list[Finding]:
    """TIPC109: modes of a mode-keyed epoch/batch value that no script knows."""
    if not (name in ("epoch", "train_batch") and bash.is_mode_keyed(slot.value)):
        return []
    modes = [bash.ifs_split(alt, "=")[0] if alt else "" for alt in slot.items]
    return [
        _f(
            cfg,
            slot,
            Level.WARNING,
            "TIPC109",
            f"unknown mode {mode!r} in the mode-keyed value of {slot.key!r}",
        )
        for mode in modes
        if mode not in KNOWN_MODES
    ]


# Run in this order on every present slot (the findings keep it), each on the slots it can concern (None:
# every slot).
_PER_SLOT_CHECKS: tuple[tuple[_SlotCheck, frozenset[str] | None], ...] = (
    (_glob_value, None),
    (_misplaced_key, frozenset(_KEY_EXPECT)),
    (_block_swaps, frozenset(_TRAINER_SLOTS + _EXPORT_SLOTS)),
    (_bool_items, frozenset(_BOOL_SLOTS)),
    (_spaced_key, None),
    (_blank_value, None),
    (_unknown_modes, frozenset(("epoch", "train_batch"))),
)


def _structure_checks(cfg: TipcConfig) -> list[Finding]:
    out: list[Finding] = []
    for check in _STRUCTURE_CHECKS:
        out.extend(check(cfg))
    return out


def _null_trainers(cfg: TipcConfig) -> list[Finding]:
    """TIPC111: listed trainers whose script is null."""
    out: list[Finding] = []
    for trainer in cfg.trainer_list.items:
        for name in _TRAINER_SLOTS:
            slot = cfg.slot(name)
            if slot.key == trainer and slot.value == "null":
                out.append(
                    _f(
                        cfg,
                        cfg.trainer_list,
                        Level.WARNING,
                        "TIPC111",
                        f"trainer {trainer!r} is listed but its script (line {slot.line}) is null: "
                        f"it is skipped "
                        "with its eval, export and inference",
                    )
                )
    return out


def _empty_exports(cfg: TipcConfig) -> list[Finding]:
    """TIPC120: in the 51-line engine, a running trainer whose export is empty."""
    if not cfg.engine_51:
        return []
    out: list[Finding] = []
    for trainer in cfg.trainer_list.items:
        for train_name, export_name in _TRAINER_EXPORT.items():
            train_slot, export_slot = cfg.slot(train_name), cfg.slot(export_name)
            if train_slot.key != trainer or train_slot.value == "null" or not export_slot.present:
                continue
            if export_slot.value == "":
                out.append(
                    _f(
                        cfg,
                        export_slot,
                        Level.WARNING,
                        "TIPC120",
                        f"export of trainer {trainer!r} ({export_slot.key!r}) is empty: the script's "
                        "stage test errors out, so export and inference are silently skipped "
                        "(write null or a script)",
                    )
                )
    return out


def _null_norm_export(cfg: TipcConfig) -> list[Finding]:
    if not (
        cfg.norm_export.present
        and cfg.norm_export.value == "null"
        and cfg.inference.value not in ("", "null")
        and "norm_train" in cfg.trainer_list.items
    ):
        return []
    return [
        _f(
            cfg,
            cfg.norm_export,
            Level.WARNING,
            "TIPC112",
            "norm_export is null while an inference script is set: in train modes inference "
            "runs only after "
            "export, so no inference runs",
        )
    ]


def _use_gpu_count(cfg: TipcConfig) -> list[Finding]:
    gpus = cfg.gpu_list.items
    use = cfg.train_use_gpu.items
    if not (
        cfg.dialect not in ("clas", "det", "compact")
        and use
        and len(use) != len(gpus)
        and cfg.train_use_gpu.key
    ):
        return []
    return [
        _f(
            cfg,
            cfg.train_use_gpu,
            Level.WARNING,
            "TIPC113",
            f"{len(gpus)} gpu_list item(s) but {len(use)} train use_gpu value(s): they are paired by "
            "position, missing ones are empty",
        )
    ]


def _infer_list_lengths(cfg: TipcConfig) -> list[Finding]:
    lists = [cfg.infer_model.items, cfg.infer_export.items, cfg.infer_quant.items]
    if not (cfg.dialect != "det" and cfg.infer_export.present and len({len(x) for x in lists if x}) > 1):
        return []
    return [
        _f(
            cfg,
            cfg.infer_model,
            Level.WARNING,
            "TIPC114",
            "infer_model / infer_export / infer_quant lists have different lengths: they are "
            "paired by position",
        )
    ]


def _long_gpu_items(cfg: TipcConfig) -> list[Finding]:
    return [
        _f(
            cfg,
            cfg.gpu_list,
            Level.WARNING,
            "TIPC115",
            f"gpu_list item {item!r} is longer than 15 characters: the script classifies it as "
            "multi-node by length",
        )
        for item in cfg.gpu_list.items
        if len(item) > 15 and ";" not in item
    ]


def _null_infer_use_gpu(cfg: TipcConfig) -> list[Finding]:
    if cfg.infer_use_gpu.key != "null":
        return []
    return [
        _f(
            cfg,
            cfg.infer_use_gpu,
            Level.WARNING,
            "TIPC116",
            "the inference use_gpu key is null: the script passes it raw as `null=<value>`",
        )
    ]


# Run in this order (the findings keep it).
_STRUCTURE_CHECKS: tuple[Callable[[TipcConfig], list[Finding]], ...] = (
    _null_trainers,
    _empty_exports,
    _null_norm_export,
    _use_gpu_count,
    _infer_list_lengths,
    _long_gpu_items,
    _null_infer_use_gpu,
)


_BENCH_ORDER_CLAS = (
    "batch_size",
    "fp_items",
    "epoch",
    "model_type",
    "num_workers",
    "--profiler_options",
    "flags",
)


def _section_checks(parsed: ParsedFile, cfg: TipcConfig, expected_lines: int) -> list[Finding]:
    out: list[Finding] = []
    path = parsed.path
    for section in cfg.sections:
        blanks = [n for n, line in enumerate(parsed.physical[: section.header_line - 1], 1) if line == ""]
        if blanks:
            out.append(
                Finding(
                    path,
                    section.header_line,
                    1,
                    Level.WARNING,
                    "TIPC118",
                    f"{len(blanks)} blank line(s) before the {section.name} header (first at line "
                    f"{blanks[0]}): "
                    "scripts index the blank-free array with the header's line number, so its "
                    "fields are read "
                    f"{len(blanks)} line(s) off",
                )
            )
        if section.name == "train_benchmark_params" and cfg.dialect == "clas":
            keys = [s.key for s in section.slots]
            for index, (want, slot) in enumerate(zip(_BENCH_ORDER_CLAS, section.slots, strict=False)):
                if slot.key != want:
                    out.append(
                        _f(
                            cfg,
                            slot,
                            Level.WARNING,
                            "TIPC117",
                            f"benchmark field {index + 1} is {slot.key!r} but PaddleClas "
                            f"benchmark_train.sh reads "
                            f"{want!r} there (fields are positional: {', '.join(_BENCH_ORDER_CLAS)}; "
                            f"this section has {', '.join(keys)})",
                            col=1,
                        )
                    )
                    break
    if 0 < len(parsed.physical) < expected_lines:
        out.append(
            Finding(
                path,
                len(parsed.physical),
                0,
                Level.INFO,
                "TIPC119",
                f"the config has {len(parsed.physical)} lines but the {cfg.dialect} layout reads up to line "
                f"{expected_lines}: later slots are empty",
            )
        )
    return out


@dataclass(frozen=True)
class ConfigRead:
    """A train_infer_python config as lint read it: what planning it in every mode starts from."""

    path: Path
    parsed: ParsedFile
    root: Path
    dialect: str
    cfg: TipcConfig


@dataclass(frozen=True)
class StaticLint:
    findings: tuple[Finding, ...]
    read: ConfigRead | None  # None: nothing to plan (not a .txt, empty, or a config of another chain)


def _other_chain(chain: str) -> str:
    """TIPC030's words: the serving chain is planned and run, just not checked slot by slot."""
    if chain == "serving":
        return (
            "config of the serving chain: tipc plan, run and check take it (its serving_infer chain); "
            "the slot-by-slot lint covers train_infer_python configs"
        )
    return f"config of the {chain} chain: tipc lints and plans the train_infer_python and serving chains only"


def static_lint(path: Path, *, dialect: str | None = None) -> StaticLint:
    if path.suffix.lower() != ".txt":
        return StaticLint(
            (Finding(str(path), 0, 0, Level.INFO, "TIPC032", "not a .txt TIPC config: skipped"),), None
        )
    text, real = read_text_real(path)
    parsed = parse_text(text, str(path))
    findings: list[Finding] = list(parsed.issues)
    if not parsed.physical:
        return StaticLint(tuple(findings), None)
    chain = classify_chain(path, parsed)
    if chain != "train_infer_python":
        level = Level.WARNING if chain == "unknown" else Level.INFO
        findings.append(
            Finding(
                str(path),
                0,
                0,
                level,
                "TIPC030" if chain != "unknown" else "TIPC031",
                _other_chain(chain)
                if chain != "unknown"
                else "not recognised as a TIPC config of any chain (first line is not a known header)",
            )
        )
        return StaticLint(tuple(findings), None)
    root = repo_root_of_real(str(real))  # find_repo_root's answer, from the realpath read_text took
    name = dialect or detect.detect(parsed, path, root).dialect
    profile = dialects.get(name)
    cfg = load_mod.build(parsed, profile)
    used = max((s.line for s in cfg.slots().values() if s.present), default=0)
    expected_index = max(profile.slots.values())
    findings.extend(_physical_checks(parsed, profile.read_limit, used if used else expected_index))
    findings.extend(_slot_checks(cfg, profile.splitter))
    findings.extend(_section_checks(parsed, cfg, max(i for i in profile.slots.values() if i < 999) + 1))
    findings.extend(_structure_checks(cfg))
    return StaticLint(tuple(findings), ConfigRead(path, parsed, root, name, cfg))


# Slots the script only hands to the inference command as `key=value` (func_set_params): another key there is
# a different but well-formed parameter, not a broken one (Lieberk/Paddle-Cutpaste line 32:
# `--data_type:bottle`
# in the benchmark slot gives `--data_type=bottle`, which infer.py reads).
_PASS_THROUGH_SLOTS = ("infer_benchmark",)


def passed_as_parameter(
    findings: list[Finding], cfg: TipcConfig, infer_commands: Sequence[str]
) -> list[Finding]:
    """TIPC105 on a pass-through slot becomes a WARNING when every planned inference command (of every
    mode) carries the slot as one well-formed `key=value` token in its argv (what the script actually
    passes, not what the slot is for). The commands are split only when such a finding asks."""
    if not infer_commands:
        return findings
    out: list[Finding] = []
    for f in findings:
        slot = next(
            (
                getattr(cfg, n)
                for n in _PASS_THROUGH_SLOTS
                if f.code == "TIPC105" and getattr(cfg, n).present and getattr(cfg, n).line == f.line
            ),
            None,
        )
        key, value = (slot.key.strip(), slot.value.strip()) if slot is not None else ("", "")
        token = f"{key}={value}"
        well_formed = key.startswith("-") and value and "|" not in value
        passed = slot is not None and f.level is Level.ERROR and well_formed
        if passed and all(token in bash.command_argv(c)[0] for c in infer_commands):
            f = Finding(
                f.path,
                f.line,
                f.col,
                Level.WARNING,
                f.code,
                f"{f.message}; the planned inference command passes it as {token!r}, a well-formed "
                "parameter, "
                "so the chain runs, but the slot no longer sets the benchmark switch",
            )
        out.append(f)
    return out


def dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[int, str, str]] = set()
    out: list[Finding] = []
    for f in findings:
        key = (f.line, f.code, f.message)
        if key in seen:
            continue
        seen.add(key)
        out.append(f)
    return sorted(out, key=lambda f: (f.path, f.line, f.col, f.code))


def lint_inputs(path: Path, strict: bool) -> list[Path]:
    """The config files an argument of `tipc lint` names, or a ConfigError saying why it names none."""
    from tipc.config.discover import iter_config_files
    from tipc.config.parse import describe_file_kind

    try:
        info = path.stat()
    except FileNotFoundError:
        raise ConfigError(
            str(path), None, "no such file or folder (give a config file or a repo folder)"
        ) from None
    except OSError as exc:
        raise ConfigError(str(path), None, f"cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        files = iter_config_files(path)
        if not files and "test_tipc" in path.resolve().parts:
            # A folder inside test_tipc given directly (test_tipc/, test_tipc/configs/<model>): its configs.
            base = path / "configs" if (path / "configs").is_dir() else path
            files = sorted(p for p in base.rglob("*") if p.is_file())
        if not files:
            raise ConfigError(
                str(path),
                None,
                "no files under test_tipc/configs/ in this folder (give a repo folder or a config file)",
            )
        return files
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(str(path), None, f"is {describe_file_kind(info.st_mode)}, expected a config file")
    if path.suffix.lower() != ".txt" and strict:
        raise ConfigError(
            str(path),
            None,
            "not a TIPC config: tipc lint reads the .txt configs under test_tipc/configs/ (or a repo folder)",
        )
    return [path]
