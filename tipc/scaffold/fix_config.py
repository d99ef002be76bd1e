"""Mechanical clean-up of a hand-edited positional config (`tipc init --from-config`).

Every fix keeps the meaning the bash scripts give the file, or repairs an unambiguous typo:
- CRLF / CR line ends -> LF, a UTF-8 BOM dropped, a final newline added;
- blank lines removed: bash drops them anyway, so removing them keeps every slot where the script reads it;
- spaces around the key and around the first ':' removed (`  --epochs : 3` -> `--epochs:3`);
- trailing spaces on headers and separators removed;
- boolean typos (`Fasle`, `Ture`, ...) and lower-case `true`/`false` in slots the scripts compare with the
  literal words `True`/`False` -> `True`/`False`;
- a blank or empty stage script (`fpgm_export: `) -> `null`, the only value that really skips the stage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tipc.scaffold.slots import BOOL_SLOTS, STAGE_SLOTS, slots_of

_TRUE_TYPOS = {"ture", "treu", "tru", "true", "rtue"}
_FALSE_TYPOS = {"fasle", "flase", "fales", "fals", "false", "falsr", "flse"}
_MISSPELLED = {"ture", "treu", "tru", "rtue", "fasle", "flase", "fales", "fals", "falsr", "flse"}


@dataclass
class FixReport:
    text: str
    dialect: str
    fixes: list[str] = field(default_factory=list)  # "line N: what changed" (N = line in the input file)


def guess_dialect(lines: list[str]) -> str:
    """compact when the config is about 32 lines long and has no `trainer`-block pact slot."""
    content = [ln for ln in lines if ln.strip()]
    keys = {ln.split(":", 1)[0].strip() for ln in content}
    if len(content) <= 40 and "pact_train" not in keys and "quant_export" not in keys:
        return "compact"
    return "template"


def _bool_word(token: str, *, lenient: bool) -> str | None:
    low = token.strip().lower()
    if low in _TRUE_TYPOS and (lenient or low in _MISSPELLED):
        return "True"
    if low in _FALSE_TYPOS and (lenient or low in _MISSPELLED):
        return "False"
    return None


def _lines(raw: str, fixes: list[str]) -> list[str]:
    """The input's lines without a BOM, with LF ends, and noting a missing final newline."""
    text = raw
    if text.startswith("\ufeff"):
        text = text[1:]
        fixes.append("line 1: removed the UTF-8 byte-order mark")
    if "\r" in text:
        count = text.count("\r\n") + text.replace("\r\n", "").count("\r")
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        fixes.append(f"all lines: {count} CRLF/CR line ends -> LF (bash kept '\\r' in every value)")
    in_lines = text.split("\n")
    if in_lines and in_lines[-1] == "":
        in_lines.pop()
    else:
        fixes.append(f"line {len(in_lines)}: added the missing final newline")
    return in_lines


def _non_blank(in_lines: list[str], fixes: list[str]) -> list[tuple[int, str]]:
    """The non-blank lines with their numbers in the input."""
    kept: list[tuple[int, str]] = []
    for number, line in enumerate(in_lines, 1):
        if not line.strip():
            fixes.append(f"line {number}: removed a blank line (bash drops it, shifting every later slot)")
            continue
        kept.append((number, line))
    return kept


def _fixed_value(number: int, key: str, value: str, slot: str | None, fixes: list[str]) -> str:
    """A slot's value with a blank stage script made null and boolean typos corrected."""
    if slot in STAGE_SLOTS and value == "":
        value = "null"
        fixes.append(f"line {number}: blank stage script for {key} -> null (only null skips a stage)")
    # Misspellings anywhere; lower-case true/false only where the scripts test the exact words.
    lenient = slot in BOOL_SLOTS
    tokens = value.split("|")
    fixed = [(_bool_word(t, lenient=lenient) or t) if re.fullmatch(r"[A-Za-z]+", t) else t for t in tokens]
    if fixed != tokens:
        fixes.append(
            f"line {number}: {value!r} -> {'|'.join(fixed)!r} "
            "(the scripts compare with the exact words True/False)"
        )
        value = "|".join(fixed)
    return value


def _fixed_line(number: int, line: str, slot: str | None, fixes: list[str]) -> str:
    if line.lstrip().startswith(("==", "#")) or ":" not in line:
        new = line.strip()
    else:
        key, _, value = line.partition(":")
        new_key = key.strip()
        new = f"{new_key}:{_fixed_value(number, new_key, value.strip(), slot, fixes)}"
    if new != line and not any(f.startswith(f"line {number}:") for f in fixes):
        fixes.append(f"line {number}: {line!r} -> {new!r} (stray spaces)")
    return new


def fix_text(raw: str, dialect: str | None = None) -> FixReport:
    fixes: list[str] = []
    kept = _non_blank(_lines(raw, fixes), fixes)
    dialect = dialect or guess_dialect([ln for _, ln in kept])
    by_line = {line: name for name, line in slots_of(dialect).items()}
    out = [
        _fixed_line(number, line, by_line.get(position), fixes)
        for position, (number, line) in enumerate(kept, 1)
    ]
    fixes.sort(key=_line_of)
    return FixReport("".join(line + "\n" for line in out), dialect, fixes)


def _line_of(fix: str) -> int:
    match = re.match(r"line (\d+):", fix)
    return int(match.group(1)) if match else 0
