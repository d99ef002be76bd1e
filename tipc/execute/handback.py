"""The private channel a child tipc hands its result back on (the run record, the check report), never its
stdout: a verb that must re-run itself in a fresh process (the sandbox is entered before any thread starts)
opens a `Channel`, an unnamed temporary file whose descriptor the child inherits; the child writes one JSON
document there (`writer()`), the parent reads it after the child exits (`Channel.received`).

The descriptor is named in the child's environment with the file's identity (device and inode): a process
that inherited the variable but not the file (a grandchild) finds the check fails and writes nothing, so a
result never lands in an unrelated file that happens to have the same number.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from typing import Any

ENV = "TIPC_RESULT_FD"
MAX_RESULT_BYTES = 256 << 20  # a run record or a report; more is not a result of ours

Document = dict[str, Any]


class Channel:
    """The parent's end: `env` and `fds` go to the child; `received()` is its document (None: none came)."""

    def __init__(self) -> None:
        # unnamed: nobody else can open it; closed by close() / the with block
        self._file = tempfile.TemporaryFile(prefix="tipc-result-")  # noqa: SIM115
        st = os.fstat(self._file.fileno())
        self.fds: tuple[int, ...] = (self._file.fileno(),)
        self.env: dict[str, str] = {ENV: f"{self._file.fileno()}:{st.st_dev}:{st.st_ino}"}

    def received(self) -> Document | None:
        self._file.seek(0)
        data = self._file.read(MAX_RESULT_BYTES + 1)
        if not data or len(data) > MAX_RESULT_BYTES:
            return None
        try:
            value = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError):
            return None
        return value if isinstance(value, dict) else None

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> Channel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _inherited() -> int | None:
    """The channel's descriptor when this process was given one (and it is still that file), else None."""
    named = os.environ.get(ENV, "")
    try:
        fd, dev, ino = (int(word) for word in named.split(":"))
        st = os.fstat(fd)
    except (ValueError, OSError):
        return None
    return fd if (st.st_dev, st.st_ino) == (dev, ino) else None


def writer() -> Callable[[Document], None] | None:
    """What a child verb hands its result to, or None where no parent asked for one. The descriptor is
    taken now (and the variable dropped, so nothing this process starts sees it) and closed on exec."""
    fd = _inherited()
    os.environ.pop(ENV, None)
    if fd is None:
        return None
    os.set_inheritable(fd, False)

    def hand_back(document: Document) -> None:
        data = json.dumps(document, ensure_ascii=False, allow_nan=False, default=str).encode()
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]

    return hand_back
