"""Memory and process limits for a sandboxed run, through cgroups (v1 memory + pids controllers, or v2).

tipc moves its own process into a fresh child group of the one it runs in, so every command of the run
inherits the limits; after each step the group's counters say whether a limit was hit, and the step's
result says so plainly. Where no controller can be written (no permission, no cgroup file system) the run
goes on without limits and says so.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from tipc.core.units import human_bytes

CGROUP_ROOT = Path("/sys/fs/cgroup")
DEFAULT_MEMORY_FRACTION = 0.85  # of the machine's memory: a runaway step is stopped before the machine swaps
DEFAULT_MAX_TASKS = 16384  # processes and threads (cgroup pids counts both)
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """`8G`, `512M`, `1.5g`, `1048576` -> bytes; ValueError otherwise."""
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"{text!r}: expected a size such as 8G, 512M or a number of bytes")
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[match.group(2).lower()]
    value = int(float(match.group(1)) * scale)
    if value <= 0:
        raise ValueError(f"{text!r}: must be positive")
    return value


def machine_memory() -> int | None:
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return None


# Set by a parent that starts tipc runs and must find their groups afterwards (tipc review): the run's group
# names carry it, so processes a run left in them can be found once the run has exited.
TAG_ENV = "TIPC_CGROUP_TAG"
_TAG = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


def own_group(controller: str) -> Path | None:
    """This process's group of `controller` under /sys/fs/cgroup (v1), or the unified one ('' = v2)."""
    return _own_group(controller)


def tagged_groups(tag: str, controllers: tuple[str, ...] = ("memory", "pids")) -> list[Path]:
    """The groups that runs started with TAG_ENV=`tag` created under this process's own groups (they stay
    while a process is left in them)."""
    if not _TAG.match(tag):
        return []
    found: list[Path] = []
    for controller in controllers:
        parent = _own_group(controller)
        if parent is not None:
            with contextlib.suppress(OSError):
                found.extend(sorted(parent.glob(f"tipc-{tag}-*")))
    return found


def group_members(group: Path) -> list[int]:
    """The pids in `group` (as this process's PID namespace numbers them); [] when it cannot be read."""
    with contextlib.suppress(OSError, ValueError):
        return [int(line) for line in (group / "cgroup.procs").read_text().split()]
    return []


def _own_group(controller: str) -> Path | None:
    """This process's group of `controller` under /sys/fs/cgroup (v1), or the unified one ('' = v2)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            if controller and controller in names.split(","):
                return CGROUP_ROOT / controller / path.lstrip("/")
            if not controller and names == "":
                return CGROUP_ROOT / path.lstrip("/")
    return None


@dataclass
class Limits:
    memory_bytes: int | None
    max_tasks: int | None
    groups: dict[str, Path] = field(default_factory=dict)  # "memory" / "pids" / "unified" -> our group
    note: str = ""
    _counters: dict[str, int] = field(default_factory=dict)

    def apply(self) -> None:
        """Create the groups, set the limits, move this process in. Failures leave the run unlimited."""
        # Unique among concurrent runs: in its own PID namespace every tipc is pid 1.
        name = f"tipc-{os.getpid()}-{os.urandom(6).hex()}"
        tag = os.environ.get(TAG_ENV, "")
        if _TAG.match(tag):  # findable by the parent that set it (tagged_groups)
            name = f"tipc-{tag}-{os.getpid()}-{os.urandom(6).hex()}"
        applied = []
        for controller, limit, knob in (
            ("memory", self.memory_bytes, "memory.limit_in_bytes"),
            ("pids", self.max_tasks, "pids.max"),
        ):
            parent = _own_group(controller)
            if limit is None or parent is None or not parent.is_dir():
                continue
            group = parent / name
            try:
                group.mkdir(exist_ok=True)
                (group / knob).write_text(str(limit))
                if controller == "memory":
                    with contextlib.suppress(OSError):
                        (group / "memory.memsw.limit_in_bytes").write_text(str(limit))
                (group / "cgroup.procs").write_text(str(os.getpid()))
            except OSError:
                with contextlib.suppress(OSError):
                    group.rmdir()
                continue
            self.groups[controller] = group
            applied.append(controller)
        if not applied:
            self.note = "no memory or process limits: no cgroup controller could be written here"
        else:
            parts = []
            if "memory" in self.groups and self.memory_bytes:
                parts.append(f"memory {human_bytes(self.memory_bytes)}")
            if "pids" in self.groups and self.max_tasks:
                parts.append(f"{self.max_tasks} processes and threads")
            self.note = "limits for the run (cgroups): " + ", ".join(parts)
        self._counters = self._read()

    def _read(self) -> dict[str, int]:
        counters = {}
        with contextlib.suppress(OSError, ValueError):
            if "memory" in self.groups:
                counters["memory"] = int((self.groups["memory"] / "memory.failcnt").read_text())
                oom = (self.groups["memory"] / "memory.oom_control").read_text()
                kills = re.search(r"oom_kill (\d+)", oom)
                counters["oom_kill"] = int(kills.group(1)) if kills else 0
        with contextlib.suppress(OSError, ValueError):
            if "pids" in self.groups:
                events = (self.groups["pids"] / "pids.events").read_text()
                found = re.search(r"max (\d+)", events)
                counters["pids"] = int(found.group(1)) if found else 0
        return counters

    def hit_since_last(self) -> list[str]:
        """What limits were hit since the previous call (plain sentences)."""
        now = self._read()
        hit = []
        if now.get("oom_kill", 0) > self._counters.get("oom_kill", 0):
            hit.append(
                f"hit the run's memory limit ({human_bytes(self.memory_bytes or 0)}): the kernel "
                "stopped a process of the step (raise it with --memory-limit)"
            )
        if now.get("pids", 0) > self._counters.get("pids", 0):
            hit.append(
                f"hit the run's limit of {self.max_tasks} processes and threads: a fork failed "
                "(raise it with --max-processes)"
            )
        self._counters = now
        return hit

    def release(self) -> None:
        """Leave the groups and remove them (they must be empty: called as tipc ends)."""
        for group in self.groups.values():
            with contextlib.suppress(OSError):
                (group.parent / "cgroup.procs").write_text(str(os.getpid()))
            with contextlib.suppress(OSError):
                group.rmdir()
        self.groups = {}


class DiskUsage:
    """What a run wrote, against its --disk-limit: the blocks of every file under the run folder (upper
    layer, /tmp, HOME, logs, reports; the mount point of the lower layer excluded) beyond what was there when
    the run started. A single file cannot outgrow the limit (each command's RLIMIT_FSIZE); the total is
    measured after each step and, while a step runs, by `watch`."""

    SKIP = frozenset({"lower", "work"})

    def __init__(
        self, folder: Path, limit: int, *, root: str | None = None, mounts: tuple[str, ...] = ()
    ) -> None:
        self.folder = folder
        self.limit = limit
        self._root = root or str(folder)
        self._mounts = mounts  # file systems of the run's own (its /tmp tmpfs): their used blocks count
        self.walk_s = 0.0
        self.baseline = 0
        self.baseline = self.used()

    def used(self) -> int:
        """Bytes written since the start (blocks actually allocated: sparse files count what they hold)."""
        import time

        started = time.monotonic()
        total = 0
        for top, dirs, files in os.walk(self._root):
            if top == self._root:
                dirs[:] = [d for d in dirs if d not in self.SKIP and not d.endswith(".work")]
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(top, name)).st_blocks * 512
        for mount in self._mounts:
            with contextlib.suppress(OSError):
                info = os.statvfs(mount)
                total += (info.f_blocks - info.f_bfree) * info.f_frsize
        self.walk_s = time.monotonic() - started
        return max(0, total - self.baseline)

    def over(self) -> int | None:
        """The bytes written when over the limit, else None."""
        used = self.used()
        return used if used > self.limit else None

    def interval_s(self) -> float:
        """How often a running step is measured: ten times a walk's cost, at least half a second."""
        return max(0.2, 10 * self.walk_s)

    def cause(self, used: int) -> str:
        return (
            f"hit the run's disk limit ({human_bytes(self.limit)}): it had written {human_bytes(used)} in "
            "the repo's tree, /tmp, HOME and the logs (raise it with --disk-limit)"
        )
