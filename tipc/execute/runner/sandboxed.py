"""What the sandbox this process runs in says about a step: the limits it ran into, the system calls it was
denied, the disk limit watched while it runs (`_DiskWatch`), the copy-on-write layers (what each step
wrote) and the sandbox's description for the record. Outside a sandbox: nothing.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence

from tipc.core.causes import Cause
from tipc.execute import lineage, proc


def _limits_hit() -> tuple[Cause, ...]:
    """A cause per sandbox limit (memory, processes) the step just ran into."""
    from tipc.execute import sandbox

    session = sandbox.current()
    limits = getattr(session, "limits", None)
    if limits is None:
        return ()
    return tuple(
        Cause("resource-limit", text, "raise the limit, or make the step use less", None, "")
        for text in limits.hit_since_last()
    )


def _sandbox_causes(denied: Sequence[str], disk: str | None) -> tuple[Cause, ...]:
    """The step attempted calls the sandbox denies (it keeps its status: the attempt is the finding), or
    it went over the run's disk limit."""
    out: list[Cause] = []
    if denied:
        out.append(
            Cause(
                "sandbox-violation",
                f"attempted system calls the sandbox denies: {', '.join(denied)} (each answered EPERM)",
                "a chain never needs them: read what the step runs (rule sandbox.violations)",
                None,
                ", ".join(denied),
            )
        )
    if disk is not None:
        out.append(Cause("disk-limit", disk, "write less, or raise --disk-limit", "--disk-limit", ""))
    return tuple(out)


class _DiskWatch:
    """While a step runs: measure what the run wrote every `interval_s` and stop the step's process group
    when it is over --disk-limit; after it: measure once more. `hit()` is the cause (None: within)."""

    def __init__(self) -> None:
        from tipc.execute import sandbox

        session = sandbox.current()
        self.disk = getattr(session, "disk", None)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._hit: str | None = None

    def start(self, pid: int) -> None:
        if self.disk is not None:
            self._thread = threading.Thread(target=self._loop, args=(pid,), name="tipc-disk", daemon=True)
            self._thread.start()

    def _loop(self, pid: int) -> None:
        assert self.disk is not None
        while not self._stop.wait(self.disk.interval_s()):
            if self._measure():
                proc.kill_group(pid, grace_s=1.0)
                return

    def _measure(self) -> bool:
        assert self.disk is not None
        with contextlib.suppress(OSError):
            used = self.disk.over()
            if used is not None:
                self._hit = self.disk.cause(used)
        return self._hit is not None

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self.disk is not None and self._hit is None:
            self._measure()

    def hit(self) -> str | None:
        return self._hit


def _sandbox_layers() -> list[lineage.Layer]:
    """The copy-on-write layers of the sandbox this process runs in (none outside an overlay)."""
    from tipc.execute import sandbox

    session = sandbox.current()
    return [lineage.Layer(real, view) for real, view in session.layers()] if session is not None else []


def _sandbox_json() -> dict[str, object] | None:
    from tipc.execute import sandbox

    session = sandbox.current()
    if session is None:
        return None
    with contextlib.suppress(OSError):
        return session.to_json()
    return session.to_json(changes=())
