"""Text -> located entries, the way the TIPC scripts see a config (never raises on bad content).

The scripts read a config positionally: `dataline=$(awk 'NR==1, NR==51{print}' F)` (or `cat F`), then
`IFS=$'\\n'; lines=(${dataline})`. That array drops empty lines (so later slots shift up), keeps `\\r` of CRLF
files and keeps spaces. `ArrayLine.number` remembers the physical line each array element came from, so every
value the planner uses can be reported as `path:line:col`.
"""

from __future__ import annotations

import bisect
import errno
import functools
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from tipc.config import bash
from tipc.core.errors import ConfigError
from tipc.core.findings import Finding, Level


@dataclass(frozen=True)
class ArrayLine:
    """One element of the scripts' line array."""

    index: int  # 0-based idx in the array
    number: int  # 1-based physical line in the file
    text: str  # the line as bash holds it (\r kept)


EntryKind = Literal["header", "separator", "kv", "bare", "blank"]


@dataclass(frozen=True)
class Entry:
    """One physical line, classified (what a reader sees before any positional meaning is applied)."""

    line: int  # 1-based physical line
    kind: EntryKind  # "bare": no colon
    key: str
    value: str
    col: int  # 1-based column of the value (0 without a colon)
    text: str


@dataclass(frozen=True)
class ParsedFile:
    path: str
    text: str
    physical: tuple[str, ...]  # every physical line, \r kept, without \n
    crlf: bool
    issues: tuple[Finding, ...] = field(default=())

    def array(self, limit: int | None) -> tuple[ArrayLine, ...]:
        """The line array a script builds when it reads the first `limit` lines (None: the whole file)."""
        whole = self._whole_array
        if limit is None or not whole or whole[-1].number <= limit:
            return whole
        # The array of the first `limit` lines is a prefix of the whole file's array.
        return whole[: bisect.bisect_right(whole, limit, key=lambda line: line.number)]

    @functools.cached_property
    def _whole_array(self) -> tuple[ArrayLine, ...]:
        return array_lines(self.physical, None)

    def entries(self, splitter: str = "every_colon") -> tuple[Entry, ...]:
        """Every physical line classified, with key/value as the given splitter produces them."""
        out: list[Entry] = []
        for number, text in enumerate(self.physical, 1):
            bare = text.rstrip("\r").strip()
            if bare == "":
                out.append(Entry(number, "blank", "", "", 0, text))
            elif bare.startswith("="):
                out.append(Entry(number, "header", bare.strip("= "), "", 0, text))
            elif bare.startswith("#") and ":" not in bare:
                out.append(Entry(number, "separator", bare, "", 0, text))
            else:
                key, value = split_key_value(text, splitter)
                kind: EntryKind = "kv" if ":" in text else "bare"
                out.append(Entry(number, kind, key, value, value_col(text), text))
        return tuple(out)

    def find_header(self, name: str) -> int | None:
        """1-based physical line of the first line containing the header word `name` (like `grep -n -w`)."""
        pos = self.text.find(name)
        if pos < 0:
            return None
        # `physical` is `text` split at "\n" (parse_text): no line above the first occurrence holds the word.
        physical = self.physical
        for number in range(self.text.count("\n", 0, pos) + 1, len(physical) + 1):
            if _has_word(physical[number - 1], name):
                return number
        return None


def _has_word(line: str, word: str) -> bool:
    start = 0
    while True:
        pos = line.find(word, start)
        if pos < 0:
            return False
        before = line[pos - 1] if pos > 0 else " "
        end = pos + len(word)
        after = line[end] if end < len(line) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = pos + 1


def array_lines(physical: tuple[str, ...], limit: int | None) -> tuple[ArrayLine, ...]:
    taken = physical if limit is None else physical[:limit]
    # `$(...)` strips trailing newlines; word splitting on "\n" then drops every empty line.
    out: list[ArrayLine] = []
    for number, text in enumerate(taken, 1):
        if text == "":
            continue
        out.append(ArrayLine(len(out), number, text))
    return tuple(out)


# Bounds on what tipc reads as a config. Real configs are under 3 KB with lines under 500 characters; the
# limits keep every later step (tokenising, planning) small whatever the file holds.
MAX_CONFIG_BYTES = 256 * 1024
MAX_LINE_CHARS = 8192

_FILE_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def describe_file_kind(mode: int) -> str:
    """'a FIFO (named pipe)', 'a character device', ... for a stat mode that is not a regular file."""
    for test, kind in _FILE_KINDS:
        if test(mode):
            return kind
    return "not a regular file"


class OutsideRepo(ConfigError):
    """A file of the repo is a link (or lies under a linked folder) leading out of the repo: never read."""


def repo_root_of(path: Path) -> Path:
    """The repo a config belongs to, from where it is named (not where links lead): the folder above the
    nearest `test_tipc` on its path, else the folder it lies in."""
    absolute = Path(os.path.abspath(path))
    for parent in absolute.parents:
        if parent.name == "test_tipc":
            return parent.parent
    return absolute.parent


def contained(path: Path, root: Path, what: str = "a config file") -> Path:
    """Where `path` really lies; OutsideRepo (exit 2, located at `path`) when it, or a folder on its way, is
    a link leading out of `root`: a hostile repo's `config.txt -> /root/.ssh/id_rsa` is never read, so
    no finding or plan can print a line of it."""
    real = os.path.realpath(path)
    if (
        real == os.path.abspath(path)
        and ".." not in str(root).split("/")
        and _within(real, os.path.abspath(root))
    ):
        # No link on the way to `path`: every folder above its real path is real too, `root` among them
        # (written without `..`, its absolute form is its realpath), so the second realpath would agree.
        return Path(real)
    if not _within(real, os.path.realpath(root)):
        raise OutsideRepo(
            str(path),
            None,
            f"is a link leading outside the repo {root}: not read (tipc reads {what} of a "
            "repo only inside it)",
        )
    return Path(real)


def _within(real: str, real_root: str) -> bool:
    """`is_relative_to` on normalised absolute paths, as strings (no Path parsing)."""
    return real == real_root or real.startswith(real_root.rstrip("/") + "/")


def read_bytes_bounded(
    path: Path, limit: int = MAX_CONFIG_BYTES, what: str = "a config file", *, within: Path | None = None
) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (see `read_bytes_real`)."""
    return read_bytes_real(path, limit, what, within=within)[0]


def read_bytes_real(
    path: Path, limit: int = MAX_CONFIG_BYTES, what: str = "a config file", *, within: Path | None = None
) -> tuple[bytes, Path]:
    """The bytes of a regular file of at most `limit` bytes, or a ConfigError (exit 2) naming the path.

    Special files are refused before reading: the file is opened non-blocking (a FIFO without a writer
    would block forever otherwise) and checked with fstat; `/dev/zero` and friends are character devices.
    With `within`, a file whose real place is outside that folder is refused (`contained`) and the real
    path is opened without following a link, so a link swapped in meanwhile is not followed either.
    Returns the bytes and the path opened (the real one with `within`).
    """
    where = str(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if within is not None:
        path = contained(path, within, what)
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise ConfigError(where, None, "no such file") from None
    except IsADirectoryError:
        raise ConfigError(where, None, f"is a directory, expected {what}") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP and within is not None:
            raise OutsideRepo(where, None, "became a link while tipc read it: not read") from None
        raise ConfigError(where, None, f"cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ConfigError(where, None, f"is a directory, expected {what}")
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(
                where, None, f"is {describe_file_kind(info.st_mode)}, expected {what}: not read"
            )
        if info.st_size > limit:
            raise ConfigError(
                where, None, f"{info.st_size} bytes: larger than the {limit} bytes tipc reads as {what}"
            )
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise ConfigError(where, None, f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > limit:  # grew while we read it
        raise ConfigError(where, None, f"larger than the {limit} bytes tipc reads as {what}")
    return data, path


def read_text(path: Path) -> str:
    """Read a config as UTF-8, raising ConfigError for what no script could read either, and for a file or
    a line past tipc's size limits (MAX_CONFIG_BYTES, MAX_LINE_CHARS), and for a config that is a link leading
    out of its repo (`contained`, the repo being `repo_root_of(path)`)."""
    return read_text_real(path)[0]


def read_text_real(path: Path) -> tuple[str, Path]:
    """`read_text`, and where the file really lies (its realpath: what `find_repo_root` resolves)."""
    data, real = read_bytes_real(path, within=repo_root_of(path))
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise ConfigError(str(path), line, "binary file (NUL byte), expected a text config")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(str(path), line, f"not UTF-8 text (byte 0x{data[exc.start]:02x})") from None
    check_line_lengths(text, str(path))
    return text, real


def check_line_lengths(text: str, path: str, limit: int = MAX_LINE_CHARS) -> None:
    """ConfigError at the first line longer than `limit` characters."""
    if len(text) <= limit:
        return
    for number, line in enumerate(text.split("\n"), 1):
        if len(line) > limit:
            raise ConfigError(
                path,
                number,
                f"line is {len(line)} characters long; tipc reads config lines of at most {limit} "
                "characters (a value this long is not a TIPC setting)",
                1,
            )


def parse_text(text: str, path: str = "<config>") -> ParsedFile:
    """Split text into physical lines and collect file-level issues. Pure; never raises."""
    if text.startswith("\ufeff"):
        text = text[1:]
    physical = tuple(text.split("\n"))
    # A final newline does not start a new line.
    if physical and physical[-1] == "":
        physical = physical[:-1]
    crlf = any(line.endswith("\r") for line in physical)
    issues: list[Finding] = []
    if not physical:
        issues.append(Finding(path, 0, 0, Level.ERROR, "TIPC001", "empty config: no lines to read"))
    return ParsedFile(path, text, physical, crlf, tuple(issues))


def parse_file(path: Path) -> ParsedFile:
    return parse_text(read_text(path), str(path))


@functools.lru_cache(maxsize=8192)
def split_key_value(line: str, splitter: str) -> tuple[str, str]:
    """(key, value) of one array line with the dialect's splitter ("every_colon" or "first_colon").

    Cached on the line's text: the configs of a repo share most of their lines."""
    if splitter == "first_colon":
        return bash.first_colon_key(line), bash.first_colon_value(line)
    return bash.common_key(line), bash.common_value(line)


def value_col(line: str) -> int:
    """1-based column where the value starts (0 when the line has no colon)."""
    pos = line.find(":")
    return pos + 2 if pos >= 0 else 0


MAX_SOURCE_BYTES = 4 << 20  # a repo's script read for what it declares (argparse flags, a dialect's cues)


def read_repo_text(path: Path, repo: Path, what: str = "a script") -> str:
    """A file of `repo` as text (undecodable bytes replaced), bounded like a config and only inside the repo;
    ConfigError (OutsideRepo for a link leading out) otherwise."""
    data = read_bytes_bounded(path, MAX_SOURCE_BYTES, what, within=repo)
    return data.decode("utf-8", errors="replace")
