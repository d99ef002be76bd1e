"""tipc.execute.handback: a child hands its result back on an inherited unnamed file, not on stdout."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tipc.execute import handback

CHILD = """
import os, sys
from tipc.execute import handback
write = handback.writer()
print("stdout is not the channel")
print("left in env:", handback.ENV in os.environ, file=sys.stderr)
if write is not None:
    write({"record": {"results": [1, 2]}, "text": "\\u00e9"})
    write({"record": "the last document wins"})
"""


def _child(channel: handback.Channel, *, inherit: bool) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD],
        env={**os.environ, **channel.env},
        pass_fds=channel.fds if inherit else (),
        capture_output=True,
        text=True,
        check=True,
    )


def test_the_child_writes_its_document_on_the_channel() -> None:
    with handback.Channel() as channel:
        done = _child(channel, inherit=True)
        assert channel.received() == {"record": "the last document wins"}
    assert done.stdout == "stdout is not the channel\n"
    assert "left in env: False" in done.stderr  # nothing the child starts sees the variable


def test_a_process_without_the_file_writes_nothing() -> None:
    # It inherited the variable but not the descriptor: the number is another file, or none.
    with handback.Channel() as channel:
        _child(channel, inherit=False)
        assert channel.received() is None


def test_no_channel_no_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(handback.ENV, raising=False)
    assert handback.writer() is None
    monkeypatch.setenv(handback.ENV, "not:a:channel")
    assert handback.writer() is None


def test_what_is_not_one_json_object_is_no_result() -> None:
    with handback.Channel() as channel:
        fd = channel.fds[0]
        os.write(fd, b"[1, 2]")
        assert channel.received() is None
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, b"{not json")
        assert channel.received() is None
