"""The suite's guards (tests/helpers/guards.py, applied by tests/conftest.py): HOME is a temp folder for a
test and its children, and writing under a real home, opening its credentials or reaching the network is
refused.

The refusals are exercised against a stand-in "real home" under tmp_path (`guards.guarding(home=...)`), so
these tests never touch the machine's own."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import guards


@pytest.fixture
def fake_real_home(tmp_path: Path) -> Iterator[Path]:
    """The guards, watching tmp_path/realhome as if it were the real home; what they refuse here is taken
    off the record again (it is this test's subject, not a leak)."""
    home = tmp_path / "realhome"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("secret\n")
    (home / "notes.txt").write_text("mine\n")
    allowed = home / "checkout"
    allowed.mkdir()
    mark = len(guards.refusals())
    with guards.guarding(home=home, allowed=[allowed]):
        yield home
    del guards.refusals()[mark:]


def test_home_is_a_temp_folder_for_the_test_and_its_children() -> None:
    home = Path(os.environ["HOME"])
    assert home != guards.REAL_HOME and Path.home() == home and home.is_dir()
    assert not any(name in os.environ for name in guards.XDG)
    child = subprocess.run(
        [sys.executable, "-c", "import pathlib; print(pathlib.Path.home())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert child.stdout.strip() == str(home)


@pytest.mark.real_home("checks that the marker gives the real HOME back")
def test_the_marker_gives_the_real_home_back() -> None:
    assert Path.home() == guards.REAL_HOME


def test_writes_under_the_real_home_are_refused(fake_real_home: Path) -> None:
    for write in (
        lambda: (fake_real_home / "new.txt").write_text("x"),
        lambda: (fake_real_home / "notes.txt").open("a"),
        lambda: (fake_real_home / ".cache" / "tool").mkdir(parents=True),
        lambda: (fake_real_home / "notes.txt").unlink(),
        lambda: os.rename(fake_real_home / "notes.txt", fake_real_home / "moved.txt"),
        lambda: os.symlink("/etc/hostname", fake_real_home / "link"),
    ):
        with pytest.raises(guards.Guarded, match="writes under the real \\$HOME"):
            write()
    assert (fake_real_home / "notes.txt").read_text() == "mine\n"  # reading it is fine
    assert sorted(p.name for p in fake_real_home.iterdir()) == [".ssh", "checkout", "notes.txt"]
    (fake_real_home / "checkout" / "ok.txt").write_text("allowed folder")


def test_a_forked_child_is_not_guarded_and_the_parent_still_is(fake_real_home: Path) -> None:
    # tipc forks its observation helper, which mounts a masked home of its own: a child, held by its HOME
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            (fake_real_home / "from-the-child.txt").write_text("x")
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with pytest.raises(guards.Guarded):
        (fake_real_home / "from-the-parent.txt").write_text("x")


def test_credential_files_cannot_even_be_read(fake_real_home: Path) -> None:
    with pytest.raises(guards.Guarded, match="credential file"):
        (fake_real_home / ".ssh" / "id_rsa").read_text()


def test_a_refusal_the_code_swallows_is_still_recorded(fake_real_home: Path) -> None:
    mark = len(guards.refusals())
    with contextlib.suppress(Exception):  # the code under test may catch everything; the record still has it
        (fake_real_home / "swallowed.txt").write_text("x")
    assert guards.refused_since(mark) == [
        f"open {str(fake_real_home / 'swallowed.txt')!r} writes under the real $HOME ({fake_real_home})"
    ]


def test_loopback_is_allowed_and_the_network_is_not() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        accepted = threading.Thread(target=lambda: server.accept()[0].close())
        accepted.start()
        with socket.create_connection(server.getsockname(), timeout=5):
            pass
        accepted.join(5)
    assert socket.getaddrinfo("localhost", 80)
    mark = len(guards.refusals())
    # TEST-NET-1 (RFC 5737): never routed; the guard refuses before any packet is sent
    with socket.socket() as sock, pytest.raises(guards.Guarded, match="leaves this machine"):
        sock.connect(("192.0.2.1", 80))
    with pytest.raises(guards.Guarded, match="DNS lookup"):
        socket.getaddrinfo("example.com", 443)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock, pytest.raises(guards.Guarded):
        sock.sendto(b"x", ("192.0.2.1", 53))
    assert len(guards.refused_since(mark)) == 3
    del guards.refusals()[mark:]  # refused on purpose: not this test's leak
