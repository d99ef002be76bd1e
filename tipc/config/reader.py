"""ParsedFile + Dialect -> TipcConfig (the typed, located view one script has of a config)."""

from __future__ import annotations

from pathlib import Path

from tipc.config import bash
from tipc.config.dialects import Dialect
from tipc.config.model import SLOT_NAMES, Section, Slot, TipcConfig
from tipc.config.parse import ArrayLine, ParsedFile, split_key_value, value_col

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


def build(parsed: ParsedFile, dialect: Dialect, chain: str = "train_infer_python") -> TipcConfig:
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
        **slots,  # type: ignore[arg-type]
    )


def mode_slot_value(slot: Slot, mode: str, dialect: Dialect) -> str:
    if dialect.splitter == "first_colon" or dialect.mode_arg_passed:
        return bash.mode_value(slot.value, mode)
    return bash.mode_value(slot.value, "")


def display_path(path: Path) -> str:
    return str(path)
