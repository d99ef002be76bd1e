"""SIGTERM and SIGHUP stop tipc as Ctrl-C does, in every verb: each raises KeyboardInterrupt in the main
thread, so the running work stops through the same path (process groups stopped, records written), and the
exit code says which signal it was (SIGINT 130, SIGTERM 143, SIGHUP 129)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

_received: list[int] = []


def _as_interrupt(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """Within: SIGTERM (what `timeout` and CI send) and SIGHUP raise KeyboardInterrupt. Outside the main
    thread (a library caller's worker thread) handlers cannot be set, and this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    previous = {sig: signal.signal(sig, _as_interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def interrupted_exit() -> int:
    """128 + the signal that stopped the work (SIGINT 130, SIGTERM 143, SIGHUP 129)."""
    return 128 + (_received[-1] if _received else int(signal.SIGINT))
