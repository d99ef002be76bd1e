"""Give a scratch copy of the demo its own serving port.

The demo's serving config and client use a fixed port (18093), as real tutorial configs do. Tests that start
servers one after another would otherwise depend on the previous server having released that port; each copy
gets a free loopback port instead, written into the copy only (never into examples/).
"""

from __future__ import annotations

import socket
from pathlib import Path

DEMO_PORT = 18093
_FILES = (
    "deploy/serving_python/pipeline_http_client.py",
    "test_tipc/configs/lenet_digits/serving_infer_python.txt",
    "deploy/serving_python/README.md",  # the documented serving commands run too (competition.serving.*)
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def use_free_port(repo: Path, old: int = DEMO_PORT) -> int:
    """Rewrite the port `old` (the demo's) in `repo` (a copy) to a free one; returns the port."""
    port = free_port()
    for rel in _FILES:
        path = repo / rel
        if path.is_file():
            path.write_text(path.read_text().replace(str(old), str(port)))
    _note(repo).write_text(str(port))
    return port


def _note(repo: Path) -> Path:
    # Beside the copy, not in it (the repo's own tree stays as the demo's): the port the copy was given.
    return repo.parent / f".{repo.name}.port"


def port_of(repo: Path) -> int:
    """The port a copy was given by use_free_port (the demo's own port for anything else)."""
    note = _note(repo)
    return int(note.read_text()) if note.is_file() else DEMO_PORT
