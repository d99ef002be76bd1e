"""Command lines a repo shows being run: README and docs code blocks, text notes, shell scripts.

Only reads files. A command is `python[3[.x]] [-m paddle.distributed.launch ...] SCRIPT.py ARGS...`; a line
ending in `\\` continues on the next one. Each command keeps the file and line it came from, so every slot
filled from it can say where it came from.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_PYTHON = re.compile(r"^(?:python(?:\d(?:\.\d+)?)?|\S*/python(?:\d(?:\.\d+)?)?)$")
_DOC_SUFFIXES = (".md", ".txt", ".rst", ".sh")
_SKIP_DIRS = {".git", "node_modules", "output", "__pycache__", ".venv", "venv"}
_MAX_FILE_BYTES = 512 * 1024
_MAX_FILES = 200


@dataclass(frozen=True)
class Command:
    """One `python SCRIPT ARGS` line seen in the repo."""

    path: str  # repo-relative file
    line: int
    script: str  # normalised repo-relative script path, e.g. "tools/train.py"
    args: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def options(self) -> list[tuple[str, str | None]]:
        """(option, value) pairs in order; value None for a bare switch. `--a=b` and `--a b` both read."""
        out: list[tuple[str, str | None]] = []
        args = list(self.args)
        i = 0
        while i < len(args):
            arg = args[i]
            if not arg.startswith("-") or _is_number(arg):
                i += 1
                continue
            if "=" in arg:
                key, _, value = arg.partition("=")
                out.append((key, value))
                i += 1
                continue
            nxt = args[i + 1] if i + 1 < len(args) else None
            if nxt is not None and (not nxt.startswith("-") or _is_number(nxt)):
                out.append((arg, nxt))
                i += 2
            else:
                out.append((arg, None))
                i += 1
        return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _evidence_files(root: Path) -> Iterator[Path]:
    """README/docs/notes/shell files, shallow first; test_tipc/ is left out (it is what we generate)."""
    count = 0
    for depth in range(3):
        pattern = "/".join(["*"] * (depth + 1))
        for path in sorted(root.glob(pattern)):
            rel = path.relative_to(root)
            if rel.parts[0] == "test_tipc" or set(rel.parts) & _SKIP_DIRS:
                continue
            if path.suffix.lower() not in _DOC_SUFFIXES or not path.is_file():
                continue
            if path.suffix.lower() == ".txt" and depth > 0 and "doc" not in rel.parts[0].lower():
                continue  # data lists, not notes
            try:
                if path.stat().st_size > _MAX_FILE_BYTES:
                    continue
            except OSError:
                continue
            yield path
            count += 1
            if count >= _MAX_FILES:
                return


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, joined text) with `\\` continuations folded."""
    buffer: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not buffer:
            start = number
        if line.endswith("\\"):
            buffer.append(line[:-1])
            continue
        buffer.append(line)
        yield start, " ".join(part.strip() for part in buffer)
        buffer = []
    if buffer:
        yield start, " ".join(part.strip() for part in buffer)


def _split(line: str) -> list[str]:
    line = line.strip().lstrip("$>#").strip().strip("`")
    try:
        return shlex.split(line, comments=True)
    except ValueError:
        return line.split()


def parse_command(line: str) -> tuple[str, tuple[str, ...]] | None:
    """(script, args) of a `python ... SCRIPT.py ARGS` line, or None."""
    words = _split(line)
    for i, word in enumerate(words):
        if not _PYTHON.match(word):
            continue
        rest = words[i + 1 :]
        for j, item in enumerate(rest):
            if item.endswith(".py") and not item.startswith("-"):
                args = []
                for arg in rest[j + 1 :]:
                    if arg in ("|", "&&", ";", ">", "2>&1", "&", "||") or arg.startswith((">", "2>")):
                        break
                    args.append(arg)
                return posixpath.normpath(item.removeprefix("./")), tuple(args)
        return None
    return None


def read_commands(root: Path) -> tuple[Command, ...]:
    """Every python command line the repo's docs, notes and shell scripts show, in file order."""
    found: list[Command] = []
    for path in _evidence_files(root):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        rel = path.relative_to(root).as_posix()
        for number, line in _logical_lines(text):
            if "python" not in line or ".py" not in line:
                continue
            # Inline code spans first (`python train.py ...` in prose), else the whole line.
            spans = [span for span in re.findall(r"`([^`]+)`", line) if "python" in span]
            parsed = next((p for p in map(parse_command, spans) if p is not None), None)
            parsed = parsed or parse_command(line)
            if parsed is not None:
                found.append(Command(rel, number, parsed[0], parsed[1]))
    return tuple(found)


def commands_for(commands: tuple[Command, ...], script: str) -> list[Command]:
    """Commands that run `script` (repo-relative), matched on the path or, failing that, the file name."""
    exact = [c for c in commands if c.script == script]
    if exact:
        return exact
    return [c for c in commands if posixpath.basename(c.script) == posixpath.basename(script)]


def mentions(command: Command, text: str) -> bool:
    """True when an argument of `command` names `text` (a folder such as the lite data)."""
    wanted = posixpath.normpath(text.removeprefix("./"))
    for arg in command.args:
        value = arg.partition("=")[2] if arg.startswith("-") and "=" in arg else arg
        value = posixpath.normpath(value.removeprefix("./")) if value else ""
        if value == wanted or value.startswith(wanted + "/"):
            return True
    return False
