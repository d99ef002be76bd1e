"""The one readiness probe of tipc (stdlib only, cheap to import): is a server at this URL ready?

- `tcp://host:port`: ready once a connection is accepted (Paddle Serving pipeline servers have no health URL).
- `http(s)://...`: ready only on a 2xx or 3xx answer. A 404 or a 5xx is an answer but not readiness: a
  server still loading says 503 on its health URL, and a 404 means the URL is not this server's health URL
  (another program on the port). TLS is not verified: loopback servers use self-signed certificates.

`probe` is what the runner polls for a background step; `wait_ready` polls it until a deadline.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass

from tipc.core.errors import UserError
from tipc.core.poll import poll


@dataclass(frozen=True)
class Probe:
    ready: bool
    detail: str  # what answered or why not ("HTTP 200", "HTTP 404", "ConnectionRefusedError: ...")

    def __bool__(self) -> bool:
        return self.ready


def probe(url: str, timeout_s: float) -> Probe:
    """One attempt; never raises for a server that is down or answers oddly. UserError for a bad URL."""
    # Imported here: only background steps need them, and http.client/ssl cost ~10 ms at start-up.
    import http.client
    import socket
    import ssl

    parts = urllib.parse.urlsplit(url)
    timeout_s = max(0.05, timeout_s)
    host = parts.hostname or "127.0.0.1"
    if parts.scheme not in ("http", "https", "tcp"):
        raise UserError(f"ready_url {url!r}: expected http://, https:// or tcp://host:port")
    try:
        port = parts.port
    except ValueError:
        raise UserError(f"ready_url {url!r}: bad port") from None
    if parts.scheme == "tcp":
        try:
            with socket.create_connection((host, port or 0), timeout=timeout_s):
                return Probe(True, "connection accepted")
        except OSError as exc:
            return Probe(False, f"{type(exc).__name__}: {exc}")
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        conn = http.client.HTTPSConnection(host, port or 443, timeout=timeout_s, context=context)
    else:
        conn = http.client.HTTPConnection(host, port or 80, timeout=timeout_s)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        conn.request("GET", target)
        response = conn.getresponse()
        response.read(65536)
        status = response.status
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return Probe(False, f"{type(exc).__name__}: {exc}")
    finally:
        conn.close()
    return Probe(200 <= status < 400, f"HTTP {status}")


def wait_ready(
    url: str,
    *,
    deadline_s: float,
    alive: Callable[[], bool] = lambda: True,
    interval_s: float = 0.1,
) -> tuple[bool, str]:
    """Poll `probe(url)` until ready or the deadline; (ready, why not). Stops early when `alive()` turns
    false (the server process exited)."""
    last = ["no answer yet"]

    def answered(left: float) -> bool | None:
        result = probe(url, min(2.0, max(0.05, left)))
        last[0] = result.detail
        return True if result.ready else None

    polled = poll(
        answered, deadline_s, stop=lambda: not alive(), interval_s=interval_s, max_interval_s=interval_s
    )
    if polled.value:
        return True, ""
    if polled.stopped:
        return False, f"server exited before it was ready ({last[0]})"
    return False, f"not ready after {deadline_s:.0f}s ({last[0]})"
