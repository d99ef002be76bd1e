"""Reading a failed step's output: the tail of its log (`read_tail`), its lines (ANSI escapes stripped,
over-long lines cut), the exception its last traceback ends with, signal names and version numbers as
conditions compare them. Text in, text out; the only I/O is reading a log's tail.
"""

from __future__ import annotations

import re
import signal as _signal
from collections.abc import Sequence
from pathlib import Path

from tipc.judge.causes.model import _ANSI, LOG_TAIL_BYTES, MAX_EVIDENCE_CHARS, MAX_LINE_CHARS

_EXCEPTION = re.compile(
    r"^(?P<exception>(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning)|error|Error))"
    r"(?::\s*(?P<message>.*))?$"
)


def _last_exception(lines: Sequence[str]) -> tuple[str, str] | None:
    """The exception type and message of the last traceback in `lines` (the first unindented line after its
    frames), else of the last unindented exception-looking line."""
    start = None
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith("Traceback (most recent call last)"):
            start = i + 1
            break
    candidates = lines[start:] if start is not None else list(reversed(lines))
    for line in candidates:
        if line[:1].isspace():
            continue
        m = _EXCEPTION.match(line.strip())
        if m:
            return m.group("exception"), (m.group("message") or "").strip()[:MAX_EVIDENCE_CHARS]
    return None


def _lines(output: str) -> tuple[str, ...]:
    out = []
    for raw in output.splitlines():
        line = _ANSI.sub("", raw).rstrip()  # splitlines also splits at \r: a progress bar's frames part
        if line:
            out.append(line[:MAX_LINE_CHARS])
    return tuple(out)


def _signal_of(number: int) -> str | None:
    try:
        return _signal.Signals(number).name
    except ValueError:
        return None


def _norm_signal(name: str | None) -> str | None:
    if not name:
        return None
    name = name.strip().upper()
    return name if name.startswith("SIG") else "SIG" + name


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in re.split(r"[.+-]", text):
        if not piece.isdigit():
            break
        parts.append(int(piece))
    return tuple(parts)


def read_tail(path: Path, limit: int = LOG_TAIL_BYTES) -> str:
    """The last `limit` bytes of a log, decoded leniently, starting at a line boundary. '' if unreadable."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - limit))
            data = fh.read(limit)
    except OSError:
        return ""
    if size > limit:
        newline = data.find(b"\n")
        data = data[newline + 1 :] if newline >= 0 else data
    return data.decode("utf-8", errors="replace")
