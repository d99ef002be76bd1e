"""ParsedFile + Dialect -> TipcConfig (the typed, located view one script has of a config)."""

from __future__ import annotations

import fnmatch
import functools
import os
from dataclasses import dataclass, replace
from pathlib import Path

from tipc.config import bash
from tipc.config.dialects import Dialect
from tipc.config.model import EMPTY, SLOT_NAMES, Section, Slot, TipcConfig
from tipc.config.parse import ArrayLine, ParsedFile, split_key_value, value_col
from tipc.core.findings import Finding, Level

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
        return EMPTY
    return _slot_of(line.text, line.number, line.index, splitter)


@functools.lru_cache(maxsize=8192)
def _slot_of(text: str, number: int, index: int, splitter: str) -> Slot:
    # Cached on all it is made of (a Slot is a frozen value): the configs of a repo share most lines at the
    # same places.
    key, value = split_key_value(text, splitter)
    return Slot(key, value, number, value_col(text), text, index)


def _is_header(text: str) -> bool:
    return text.lstrip().startswith("=")


# Pathname expansion at read time is bounded: patterns are matched only inside the repo (an absolute or
# `..` pattern is left literal: a script run elsewhere would see another file system) and the walk stops
# after GLOB_SCAN_LIMIT directory entries or GLOB_MATCH_LIMIT matches (TIPC104 says so).
GLOB_SCAN_LIMIT = 20_000
GLOB_MATCH_LIMIT = 1_000


class GlobTooLarge(Exception):
    pass


def _glob_in(root: Path, pattern: str) -> list[str]:
    """Matches of `pattern` (relative, `/`-separated) under `root`, bash-style (a leading `.` is matched
    only literally), within the scan and match limits; sorted like bash sorts them."""
    parts = [p for p in pattern.split("/") if p]
    trailing_slash = pattern.endswith("/")
    walk = _GlobWalk(root)
    current: list[str] = [""]
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        found = walk.step(current, part, want_dir=not last or trailing_slash)
        current = [f"{f}/" for f in found] if not last else found
        if not current:
            return []
    if trailing_slash:
        return sorted(f"{c.rstrip('/')}/" for c in current)
    return sorted(current)


@dataclass
class _GlobWalk:
    """One pattern's walk: the directory entries it has scanned so far count against GLOB_SCAN_LIMIT."""

    root: Path
    scanned: int = 0

    def step(self, current: list[str], part: str, *, want_dir: bool) -> list[str]:
        """The matches of one pattern component under each of the `current` prefixes."""
        found: list[str] = []
        magic = any(ch in part for ch in _GLOB_CHARS)
        for prefix in current:
            base = self.root / prefix if prefix else self.root
            if not magic:
                target = base / part
                if target.is_dir() if want_dir else os.path.lexists(target):
                    found.append(f"{prefix}{part}")
                continue
            found.extend(f"{prefix}{name}" for name in self._scan(base, part, want_dir))
            if len(found) > GLOB_MATCH_LIMIT:
                raise GlobTooLarge(f"more than {GLOB_MATCH_LIMIT} matches")
        return found

    def _scan(self, base: Path, part: str, want_dir: bool) -> list[str]:
        try:
            entries = os.scandir(base)
        except OSError:
            return []
        names: list[str] = []
        with entries:
            for entry in entries:
                self.scanned += 1
                if self.scanned > GLOB_SCAN_LIMIT:
                    raise GlobTooLarge(f"more than {GLOB_SCAN_LIMIT} directory entries")
                if _entry_matches(entry, part, want_dir):
                    names.append(entry.name)
        return names


def _entry_matches(entry: os.DirEntry[str], part: str, want_dir: bool) -> bool:
    # bash matches a leading `.` only literally
    if entry.name.startswith(".") and not part.startswith("."):
        return False
    if not fnmatch.fnmatchcase(entry.name, part):
        return False
    if not want_dir:
        return True
    try:
        return entry.is_dir()
    except OSError:
        return False


def expand_glob(value: str, root: Path, splitter: str) -> str | None:
    """What bash's pathname expansion makes of an unquoted value in `root` (None: no match, kept literally).

    common_func.sh keeps the first match (the value is field 1 of an array); PaddleDetection's utils_func.sh
    echoes the value unquoted, so every match, space-joined. Raises GlobTooLarge past the limits.
    """
    if not any(ch in value for ch in _GLOB_CHARS) or " " in value or "\t" in value:
        return None
    if value.startswith("/") or ".." in value.split("/"):
        return None
    matches = _glob_in(root, value)
    if not matches:
        return None
    return " ".join(matches) if splitter == "first_colon" else matches[0]


def expand_globs(cfg: TipcConfig, root: Path, splitter: str) -> TipcConfig:
    """`cfg` with every slot value that bash would expand when the script reads the config expanded in
    `root`; each expansion (or a walk stopped at a limit) is a TIPC104 warning on `cfg.findings`."""
    changes: dict[str, Slot] = {}
    findings: list[Finding] = []
    for name, slot in cfg.slots().items():
        value = slot.value  # the glob characters first: most values have none (cheaper than `present`)
        if ("*" not in value and "?" not in value and "[" not in value) or not slot.present:
            continue
        try:
            expanded = expand_glob(slot.value, root, splitter)
        except GlobTooLarge as exc:
            message = (
                f"glob {slot.value!r} matches too much in {root} ({exc}): tipc keeps it literally; "
                "the script would expand it when reading the config"
            )
        else:
            if expanded is None or expanded == slot.value:
                continue
            changes[name] = replace(slot, value=expanded)
            message = (
                f"glob {slot.value!r} expands to {expanded!r} in {root} when the script reads the config"
            )
        findings.append(Finding(cfg.path, slot.line, slot.col, Level.WARNING, "TIPC104", message))
    if not findings:
        return cfg
    return replace(cfg, findings=cfg.findings + tuple(findings), **changes)  # type: ignore[arg-type]


def build(
    parsed: ParsedFile, dialect: Dialect, chain: str = "train_infer_python", root: Path | None = None
) -> TipcConfig:
    array = parsed.array(dialect.read_limit)
    size, splitter = len(array), dialect.splitter
    slots: dict[str, Slot] = {}
    for name, index in dialect.slots.items():
        if name not in SLOT_NAMES:
            continue
        if 0 <= index < size:
            line = array[index]
            slots[name] = _slot_of(line.text, line.number, line.index, splitter)
        else:
            slots[name] = EMPTY
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
    cfg = TipcConfig(
        path=parsed.path,
        dialect=dialect.name,
        chain=chain,
        line_count=len(parsed.physical),
        crlf=parsed.crlf,
        sections=tuple(sections),
        extra_args=extra,
        **slots,  # type: ignore[arg-type]
    )
    return expand_globs(cfg, root, dialect.splitter) if root is not None else cfg


def mode_slot_value(slot: Slot, mode: str, dialect: Dialect) -> str:
    if dialect.splitter == "first_colon" or dialect.mode_arg_passed:
        return bash.mode_value(slot.value, mode)
    return bash.mode_value(slot.value, "")
