"""Length-prefixed frames between the `tipc serve` HTTP parent and its model worker (stdlib only).

A frame is a JSON header and a byte body: `!IQ` (header length, body length), the header, the body.
"""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

_HEAD = struct.Struct("!IQ")
MAX_HEADER = 1 << 20


def send(sock: socket.socket, header: dict[str, Any], body: bytes | bytearray = b"") -> None:
    head = json.dumps(header).encode()
    sock.sendall(_HEAD.pack(len(head), len(body)) + head)
    if body:
        sock.sendall(body)


def _exactly(sock: socket.socket, size: int) -> bytearray | None:
    buffer = bytearray(size)
    view = memoryview(buffer)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:])
        if n == 0:
            return None
        got += n
    return buffer  # no copy: json.loads reads a bytearray as it is


def recv(sock: socket.socket) -> tuple[dict[str, Any], bytearray] | None:
    """The next frame, or None when the other side closed the connection."""
    head = _exactly(sock, _HEAD.size)
    if head is None:
        return None
    head_len, body_len = _HEAD.unpack(head)
    if head_len > MAX_HEADER:
        raise OSError(f"frame header of {head_len} bytes: the other side is not a tipc serve peer")
    raw = _exactly(sock, head_len)
    body = _exactly(sock, body_len)
    if raw is None or body is None:
        return None
    header = json.loads(raw)
    if not isinstance(header, dict):
        raise OSError("frame header is not a JSON object")
    return header, body
