"""The suite's guards: no test touches the real $HOME or the network (tests/conftest.py applies them to every
test).

- HOME: the session, and every child a test starts (children inherit os.environ), runs with HOME set to a
  fresh folder under pytest's temp folder and the XDG folders unset. PYENV_ROOT keeps naming the real pyenv,
  whose interpreters some tests run (tipc looks there too).
- An audit hook (PEP 578) refuses, in the test process:
  - a write under the real home (open for writing, mkdir, rename, remove, chmod, ...) outside the checkout,
    the temp folders and the interpreter's own folders, and any open of a credential file there (`.ssh`,
    `.netrc`...);
  - a connection or datagram to an address that is not loopback or this machine's own, and a name lookup of a
    name that is not local (a DNS query).
  A refused operation raises `Guarded` (not an OSError: code that handles a failed open or connect does not
  swallow it) and is recorded, so the test fails even where the code under test catches the exception.

The hook sees only this process (a forked child turns it off): a child is held by its HOME alone (tipc's
sandbox keeps its steps off the network). A test that must use the real HOME says why:
`@pytest.mark.real_home("reason")`.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import site
import socket
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
REAL_HOME = Path(os.path.abspath(os.path.expanduser("~")))

# Under a home, what holds credentials: never opened by a test, even to read.
CREDENTIALS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".kube",
    ".docker",
    ".netrc",
    ".pypirc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".kaggle",
    ".huggingface",
    ".cache/huggingface/token",
)
XDG = ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_LOCAL_NAMES = {
    "",
    "localhost",
    "localhost.localdomain",
    "ip6-localhost",
    "ip6-loopback",
    socket.gethostname(),
}
HINT = "tests run with HOME in a temp folder and without network (tests/helpers/guards.py)"


class Guarded(Exception):
    """A test touched the real $HOME or the network."""


@dataclass
class _State:
    active: bool = False
    home: str = ""  # the real home; "" when there is none to keep (no home, or "/")
    allowed: tuple[str, ...] = ()  # folders under the real home a test may write to
    secrets: tuple[str, ...] = ()
    local: frozenset[str] = frozenset()  # this machine's own addresses
    refused: list[str] = field(default_factory=list)


_STATE = _State()


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _path(value: object) -> str | None:
    """An absolute path from an audit argument (None for a file descriptor or anything else)."""
    if isinstance(value, bytes):
        value = os.fsdecode(value)
    if not isinstance(value, (str, os.PathLike)):
        return None
    return os.path.abspath(os.fspath(value))


def _relative_to_fd(dir_fd: object) -> bool:
    # os.rmdir(name, dir_fd=...) inside shutil.rmtree: the folder was checked as a whole ("shutil.rmtree").
    return isinstance(dir_fd, int) and dir_fd >= 0


def _home_write(what: str, value: object) -> str | None:
    path = _path(value)
    if path is None or not _STATE.home or not _under(path, _STATE.home):
        return None
    if any(_under(path, root) for root in _STATE.allowed):
        return None
    return f"{what} {path!r} writes under the real $HOME ({_STATE.home})"


def _secret(path: str | None) -> str | None:
    if path is not None and any(_under(path, s) for s in _STATE.secrets):
        return f"open {path!r} reads a credential file of the real $HOME"
    return None


def _on_open(args: tuple[Any, ...]) -> str | None:
    path, _mode, flags = args
    found = _secret(_path(path))
    if found is None and isinstance(flags, int) and flags & _WRITE_FLAGS:
        found = _home_write("open", path)
    return found


def _paths_written(*positions: int, fd_at: int | None = None) -> Callable[[str, tuple[Any, ...]], str | None]:
    def check(event: str, args: tuple[Any, ...]) -> str | None:
        if fd_at is not None and len(args) > fd_at and _relative_to_fd(args[fd_at]):
            return None
        for n in positions:
            found = _home_write(event, args[n])
            if found:
                return found
        return None

    return check


def _local_host(host: object) -> bool:
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    if host is None:
        return True
    if not isinstance(host, str):
        return False
    name = host.lower().rstrip(".")
    if name in _LOCAL_NAMES or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name.split("%")[0])
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified or str(address) in _STATE.local


def _numeric(host: object) -> bool:
    try:
        ipaddress.ip_address(str(host).split("%")[0])
    except ValueError:
        return False
    return True


def _on_connect(event: str, args: tuple[Any, ...]) -> str | None:
    sock, address = args[0], args[1]
    if address is None or getattr(sock, "family", None) not in (socket.AF_INET, socket.AF_INET6):
        return None  # a Unix, netlink... socket, or a send on a connected one
    host = address[0] if isinstance(address, tuple) and address else address
    return None if _local_host(host) else f"{event} to {address!r} leaves this machine"


def _on_lookup(event: str, args: tuple[Any, ...]) -> str | None:
    host = args[0]
    if _local_host(host) or _numeric(host):
        return None  # a numeric address needs no DNS; a connection to it is checked on its own
    return f"{event}({host!r}) is a DNS lookup"


_WRITES: dict[str, Callable[[str, tuple[Any, ...]], str | None]] = {
    "os.mkdir": _paths_written(0, fd_at=2),
    "os.rename": _paths_written(0, 1, fd_at=2),
    "os.remove": _paths_written(0, fd_at=1),
    "os.rmdir": _paths_written(0, fd_at=1),
    "os.symlink": _paths_written(1, fd_at=2),
    "os.link": _paths_written(1, fd_at=3),
    "os.truncate": _paths_written(0),
    "os.chmod": _paths_written(0, fd_at=2),
    "os.chown": _paths_written(0, fd_at=3),
    "os.utime": _paths_written(0, fd_at=3),
    "shutil.rmtree": _paths_written(0),
    "socket.connect": _on_connect,
    "socket.sendto": _on_connect,
    "socket.sendmsg": _on_connect,
    "socket.getaddrinfo": _on_lookup,
    "socket.gethostbyname": _on_lookup,
    "socket.gethostbyaddr": _on_lookup,
}


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not _STATE.active:
        return
    if event == "open":
        problem = _on_open(args)
    else:
        check = _WRITES.get(event)
        if check is None:
            return
        problem = check(event, args)
    if problem:
        _STATE.refused.append(problem)
        raise Guarded(f"{problem}: {HINT}")


_installed = False


def _own_folders(extra: Iterable[Path]) -> tuple[str, ...]:
    """Where a test may write even when it lies under the real home: the checkout, the temp folders, the
    interpreter's folders (Python writes bytecode caches there) and `extra`."""
    folders = [ROOT, Path(tempfile.gettempdir()), Path(sys.prefix), Path(sys.base_prefix), *extra]
    folders += [Path(p) for p in sysconfig.get_paths().values()]
    folders += [Path(p) for p in (*site.getsitepackages(), site.getusersitepackages())]
    return tuple(os.path.abspath(p) for p in folders)


def _local_addresses() -> frozenset[str]:
    found = set()
    for addresses in psutil.net_if_addrs().values():
        for address in addresses:
            if address.family in (socket.AF_INET, socket.AF_INET6):
                found.add(address.address.split("%")[0])
    return frozenset(found)


def _unguard() -> None:
    _STATE.active = False


@contextlib.contextmanager
def guarding(home: Path = REAL_HOME, allowed: Iterable[Path] = ()) -> Iterator[None]:
    """Refuse the operations above while inside (for the real home `home`), then restore what was."""
    global _installed
    if not _installed:
        sys.addaudithook(_hook)  # hooks cannot be removed: `active` switches this one
        # A forked child is another process (tipc forks its observation helper, which mounts its own
        # masked home): held by its HOME like every child, not by a hook it inherited.
        os.register_at_fork(after_in_child=_unguard)
        _installed = True
    before = (_STATE.active, _STATE.home, _STATE.allowed, _STATE.secrets, _STATE.local)
    root = os.path.abspath(home)
    _STATE.home = "" if root == "/" or not os.path.isdir(root) else root
    # Only folders inside the home count: one that holds the whole home (/tmp for a stand-in) would disarm it.
    _STATE.allowed = tuple(
        p for p in _own_folders(allowed) if _STATE.home and p != _STATE.home and _under(p, _STATE.home)
    )
    _STATE.secrets = tuple(os.path.join(root, name) for name in CREDENTIALS)
    _STATE.local = _local_addresses()
    _STATE.active = True
    try:
        yield
    finally:
        _STATE.active, _STATE.home, _STATE.allowed, _STATE.secrets, _STATE.local = before


@contextlib.contextmanager
def paused() -> Iterator[None]:
    active = _STATE.active
    _STATE.active = False
    try:
        yield
    finally:
        _STATE.active = active


def refused_since(mark: int) -> list[str]:
    """What the guards refused after `mark` (a `len(refusals())` taken before)."""
    return _STATE.refused[mark:]


def refusals() -> list[str]:
    return _STATE.refused


def isolate_home(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """HOME -> `home` for this process and its children, the XDG folders unset, the real pyenv still found."""
    pyenv = REAL_HOME / ".pyenv"
    if "PYENV_ROOT" not in os.environ and pyenv.is_dir():
        monkeypatch.setenv("PYENV_ROOT", str(pyenv))
    monkeypatch.setenv("HOME", str(home))
    for name in XDG:
        monkeypatch.delenv(name, raising=False)
