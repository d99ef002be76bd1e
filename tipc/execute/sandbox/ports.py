"""Who holds a listening TCP port: read from /proc/net/tcp{,6} (the socket's inode) and /proc/<pid>/fd.

A server step is ready only when its own process tree holds the port it is polled on: anything else that
answers there (a server left from another run, another copy of the repo checked at the same time, an
unrelated service) would make the repo's server look ready when it never bound the port. /proc/net shows
the sockets of the reader's network namespace, which is the run's own in the sandbox.
"""

from __future__ import annotations

import contextlib
import os
import urllib.parse
from collections.abc import Iterable
from pathlib import Path

_LISTEN = "0A"
_TABLES = ("/proc/net/tcp", "/proc/net/tcp6")
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::", "")


def readable() -> bool:
    return Path(_TABLES[0]).is_file()


def local_port(url: str) -> int | None:
    """The port of a readiness URL on this machine (http, https or tcp on loopback), else None."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if port is None or not (host in _LOOPBACK or host.startswith("127.")):
        return None
    return port


def listening(port: int) -> set[int]:
    """Inodes of the sockets listening on `port` (any address, IPv4 or IPv6)."""
    found: set[int] = set()
    for table in _TABLES:
        with contextlib.suppress(OSError), open(table, encoding="ascii", errors="replace") as fh:
            next(fh, None)  # the header
            for line in fh:
                fields = line.split()
                if len(fields) < 10 or fields[3] != _LISTEN:
                    continue
                with contextlib.suppress(ValueError):
                    if int(fields[1].rsplit(":", 1)[1], 16) == port:
                        found.add(int(fields[9]))
    return found


def holders(inodes: Iterable[int]) -> dict[int, set[int]]:
    """inode -> pids holding that socket, among the processes this process can see and read."""
    wanted = {f"socket:[{inode}]": inode for inode in inodes}
    out: dict[int, set[int]] = {inode: set() for inode in wanted.values()}
    if not wanted:
        return out
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{name}/fd"):
                with contextlib.suppress(OSError):
                    target = os.readlink(f"/proc/{name}/fd/{fd}")
                    if target in wanted:
                        out[wanted[target]].add(int(name))
    return out


def describe(pids: Iterable[int]) -> str:
    """`pid 123 (python -m http.server 8000)`, or that the holder is not visible from this run."""
    shown = []
    for pid in sorted(pids)[:3]:
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            raw = b""
        command = " ".join(raw.decode("utf-8", "replace").replace("\0", " ").split())
        shown.append(f"pid {pid}" + (f" ({command[:120]})" if command else ""))
    return ", ".join(shown) if shown else "a process outside this run"


def taken_by(port: int) -> str | None:
    """None when nothing listens on `port`, else who does (in words)."""
    inodes = listening(port)
    if not inodes:
        return None
    pids = set().union(*holders(inodes).values())
    return describe(pids)


def held_by_others(port: int, tree: set[int]) -> str | None:
    """None when a socket listening on `port` is held by a process of `tree`, else who holds the port (in
    words); None also where /proc cannot tell (nothing is claimed that cannot be checked)."""
    if not readable():
        return None
    inodes = listening(port)
    if not inodes:
        return "nothing listens on it now"
    owners = holders(inodes)
    if any(pids & tree for pids in owners.values()):
        return None
    return describe(set().union(*owners.values()))
