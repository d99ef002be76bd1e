"""`results_python.log` status lines: the writer for every dialect's format, and a parser for existing logs.

The repo scripts write one line per stage with `echo -e ... | tee -a`, so the file holds ANSI yellow codes and
the command with its backslash escapes interpreted. The formats (notes tipc-format.md §6.9), ESC = 0x1B:

    template  ESC[33m Run successfully with command - <command>!  ESC[0m
    compact   ESC[33m Run successfully with command - <model_name> - <command>!  ESC[0m
    ocr       ESC[33m Run successfully with command - <model_name> - <command> - <log_path> ESC[0m
    seg_det   ESC[33m Run successfully with command - <model_name> - <command> - <log_path>  ESC[0m
    clas      ESC[33m Run successfully with command - <model_name> - <command> - <log_path> ! ESC[0m
    rec       ESC[33m Run successfully with command - <model_name> - <command> - <log_path>!  ESC[0m

A failure line is the same with `Run failed` in place of `Run successfully`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

YELLOW = "\x1b[33m"
RESET = "\x1b[0m"
OK_TEXT = "Run successfully"
FAIL_TEXT = "Run failed"


@dataclass(frozen=True)
class StatusFormat:
    name: str
    has_model: bool
    has_log: bool
    suffix: str  # text between the last field and ESC[0m
    # How the script's LOG_PATH spells a log: "./test_tipc/output/..." everywhere except PaddleClas, whose
    # LOG_PATH is "$(pwd)/test_tipc/output/..." (absolute, because inference runs after `cd deploy`).
    absolute_log: bool = False


# The status-line formats by name (a dialect names one); STATUS_FORMATS holds exactly these.
StatusFormatName = Literal["template", "compact", "ocr", "seg_det", "clas", "rec"]

STATUS_FORMATS: dict[str, StatusFormat] = {
    "template": StatusFormat("template", has_model=False, has_log=False, suffix="!  "),
    "compact": StatusFormat("compact", has_model=True, has_log=False, suffix="!  "),
    "ocr": StatusFormat("ocr", has_model=True, has_log=True, suffix=" "),
    "seg_det": StatusFormat("seg_det", has_model=True, has_log=True, suffix="  "),
    "clas": StatusFormat("clas", has_model=True, has_log=True, suffix=" ! ", absolute_log=True),
    "rec": StatusFormat("rec", has_model=True, has_log=True, suffix="!  "),
}


def log_field(fmt: str, log: str | None, repo: str) -> str:
    """A repo-relative log path spelled as the dialect's script prints it in the status line."""
    if not log:
        return ""
    if log.startswith("/"):
        return log
    spec = STATUS_FORMATS.get(fmt)
    if spec is not None and spec.absolute_log:
        return f"{repo.rstrip('/')}/{log}"
    return log if log.startswith("./") else f"./{log}"


_SIMPLE_ESCAPES = {
    "\\": "\\",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def echo_e(text: str) -> str:
    """What bash's `echo -e` prints for `text` (without the trailing newline).

    `\\c` stops the output, as in bash; unknown escapes are kept verbatim.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[nxt])
            i += 2
        elif nxt == "c":
            break
        elif nxt == "0":  # \0nnn: up to three octal digits
            m = re.match(r"[0-7]{0,3}", text[i + 2 : i + 5])
            digits = m.group(0) if m else ""
            out.append(chr(int(digits, 8)) if digits else "\0")
            i += 2 + len(digits)
        elif nxt == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", text[i + 2 : i + 4])
            if m:
                out.append(chr(int(m.group(0), 16)))
                i += 2 + len(m.group(0))
            else:
                out.append("\\x")
                i += 2
        elif nxt in "uU":
            width = 4 if nxt == "u" else 8
            m = re.match(rf"[0-9a-fA-F]{{1,{width}}}", text[i + 2 : i + 2 + width])
            if m:
                out.append(chr(int(m.group(0), 16)))
                i += 2 + len(m.group(0))
            else:
                out.append("\\" + nxt)
                i += 2
        else:
            out.append("\\" + nxt)
            i += 2
    return "".join(out)


def status_line(
    fmt: str,
    *,
    ok: bool,
    command: str,
    model_name: str = "",
    log_path: str = "",
    color: bool = True,
) -> str:
    """One status line (without the newline) exactly as the dialect's script writes it to the file."""
    try:
        spec = STATUS_FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown status format {fmt!r}; known: {', '.join(STATUS_FORMATS)}") from None
    fields = []
    if spec.has_model:
        fields.append(model_name)
    fields.append(command)
    if spec.has_log:
        fields.append(log_path)
    verdict = OK_TEXT if ok else FAIL_TEXT
    body = f" {verdict} with command - " + " - ".join(fields) + spec.suffix
    text = echo_e(body)
    return f"{YELLOW}{text}{RESET}" if color else text


def append_status_line(path: Path, line: str) -> None:
    """Append one line, as `tee -a` does (the file is created if missing, never truncated)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8", newline="\n") as fh:
        fh.write(line + "\n")


@dataclass(frozen=True)
class ParsedStatus:
    ok: bool
    command: str
    model_name: str | None
    log_path: str | None
    format: str  # the format the line was read as


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _guess_format(body: str) -> str:
    if body.endswith(" ! "):
        return "clas"
    if body.endswith("!  "):
        fields = body[: -len("!  ")].count(" - ")
        return "rec" if fields >= 2 else "compact" if fields == 1 else "template"
    if body.endswith("  "):
        return "seg_det"
    return "ocr"


def parse_status_line(line: str, fmt: str | None = None) -> ParsedStatus | None:
    """Read one status line back; None if it is not one. With `fmt=None` the format is guessed from the line.

    The command field may itself contain ` - `: the model name is taken from the front and the log path from
    the back, so the command keeps whatever lies between.
    """
    text = strip_ansi(line.rstrip("\r\n"))
    for verdict, passed in ((OK_TEXT, True), (FAIL_TEXT, False)):
        head = f" {verdict} with command - "
        start = text.find(head)
        if start != -1 and text[:start].strip() == "":
            body = text[start + len(head) :]
            ok = passed
            break
    else:
        return None
    name = fmt or _guess_format(body)
    spec = STATUS_FORMATS.get(name)
    if spec is None:
        raise ValueError(f"unknown status format {name!r}")
    if body.endswith(spec.suffix):
        body = body[: len(body) - len(spec.suffix)]
    model: str | None = None
    log: str | None = None
    if spec.has_model:
        model, sep, body = body.partition(" - ")
        if not sep:
            return None
    if spec.has_log:
        body, sep, log = body.rpartition(" - ")
        if not sep:
            return None
    return ParsedStatus(ok=ok, command=body, model_name=model, log_path=log, format=name)


def parse_results_log(lines: Iterable[str], fmt: str | None = None) -> list[ParsedStatus]:
    """Every status line among `lines` (other text, such as echoed logs, is ignored)."""
    out = []
    for line in lines:
        parsed = parse_status_line(line, fmt)
        if parsed is not None:
            out.append(parsed)
    return out
