"""ParsedFile + Dialect -> TipcConfig (the typed, located view one script has of a config)."""

from __future__ import annotations

import glob as globmod
from dataclasses import replace
from pathlib import Path

from tipc.config import bash
from tipc.config.dialects import Dialect
from tipc.config.model import SLOT_NAMES, Section, Slot, TipcConfig
from tipc.config.parse import ArrayLine, ParsedFile, split_key_value, value_col
from tipc.findings import Finding, Level

_GLOB_CHARS = ("*", "?", "[")

SECTION_HEADERS: tuple[str, ...] = (
    "train_benchmark_params",
    "infer_benchmark_params",
    "to_static_train_benchmark_params",
    "disable_train_benchmark",
    "kl_quant_params",
    "ptq_params",
)


def _slot(line: ArrayLine | None, splitter: str) -> Slot:
    if line is None:
        return Slot()
    key, value = split_key_value(line.text, splitter)
    return Slot(key, value, line.number, value_col(line.text, splitter), line.text, line.index)


def _is_header(text: str) -> bool:
    return text.lstrip().startswith("=")


def expand_glob(value: str, root: Path, splitter: str) -> str | None:
    """What bash's pathname expansion makes of an unquoted value in `root` (None: no match, kept literally).

    common_func.sh keeps the first match (the value is field 1 of an array); PaddleDetection's utils_func.sh
    echoes the value unquoted, so every match, space-joined.
    """
    if not any(ch in value for ch in _GLOB_CHARS) or " " in value:
        return None
    try:
        matches = sorted(globmod.glob(value, root_dir=str(root)))
    except (OSError, ValueError):
        return None
    if not matches:
        return None
    return " ".join(matches) if splitter == "first_colon" else matches[0]


def build(
    parsed: ParsedFile, dialect: Dialect, chain: str = "train_infer_python", root: Path | None = None
) -> TipcConfig:
    array = parsed.array(dialect.read_limit)
    slots: dict[str, Slot] = {}
    for name, index in dialect.slots.items():
        if name not in SLOT_NAMES:
            continue
        slots[name] = _slot(array[index] if 0 <= index < len(array) else None, dialect.splitter)
    whole = parsed.array(None)
    sections: list[Section] = []
    for header in SECTION_HEADERS:
        number = parsed.find_header(header)
        if number is None:
            continue
        # Scripts index the blank-free array with the header's physical line number (one off per blank).
        body: list[Slot] = []
        for line in whole[number:]:
            if _is_header(line.text):
                break
            body.append(_slot(line, dialect.splitter))
        sections.append(Section(header, number, tuple(body)))
    findings: list[Finding] = []
    if root is not None:
        for name, slot in list(slots.items()):
            expanded = expand_glob(slot.value, root, dialect.splitter)
            if expanded is not None and expanded != slot.value:
                slots[name] = replace(slot, value=expanded)
                findings.append(
                    Finding(
                        parsed.path,
                        slot.line,
                        slot.col,
                        Level.WARNING,
                        "TIPC104",
                        f"glob {slot.value!r} expands to {expanded!r} in {root} when the script reads "
                        "the config",
                    )
                )
    extra = ""
    if dialect.name == "seg" and parsed.physical:
        last = parsed.physical[-1]
        if ";" in last and not _is_header(last):
            extra = last
    return TipcConfig(
        path=parsed.path,
        dialect=dialect.name,
        chain=chain,
        line_count=len(parsed.physical),
        crlf=parsed.crlf,
        sections=tuple(sections),
        extra_args=extra,
        findings=tuple(findings),
        **slots,  # type: ignore[arg-type]
    )


def mode_slot_value(slot: Slot, mode: str, dialect: Dialect) -> str:
    if dialect.splitter == "first_colon" or dialect.mode_arg_passed:
        return bash.mode_value(slot.value, mode)
    return bash.mode_value(slot.value, "")


def display_path(path: Path) -> str:
    return str(path)
