"""Artefact lineage: which files each step read and wrote, and the stage graph built from that.

The runner puts `inject/` first on a step's PYTHONPATH (see `step_env`); its `sitecustomize` records every
file the step's Python processes open (an audit hook, plus wrappers around Paddle's C++ loaders) as JSON
lines in `<lineage dir>/<step>.jsonl`. In a sandbox whose writes land in copy-on-write layers, the runner also
snapshots those layers around each step (`LayerWatch`): every file that appeared or changed there while the
step ran is a write of that step (`<step>.layer.jsonl`, via "layer"), whatever wrote it (C++ code, os.write,
a non-Python program). After the step, `finish_step` fingerprints the files it wrote (size, sha256, mtime).
`load` reads a lineage folder back; `tipc.judge.lineage_graph.build_graph` joins it to the run record.
Nothing here imports paddle; the recorder itself is standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tipc.core.fs import atomic_write_text

if TYPE_CHECKING:
    from tipc.core.steps import Plan

INJECT_DIR = Path(__file__).resolve().parent / "inject"
LINEAGE_DIRNAME = "tipc_lineage"
ENV_FILE = "TIPC_LINEAGE_FILE"
ENV_STEP = "TIPC_LINEAGE_STEP"
FULL_HASH_LIMIT = 1 << 30  # files up to 1 GiB are hashed in full; larger ones get size + mtime only
STEP_HASH_BUDGET = 4 << 30  # bytes hashed per step at most
_CHUNK = 1 << 20
LAYER_SUFFIX = ".layer.jsonl"  # a step's writes seen in the sandbox's copy-on-write layers
MAX_LAYER_FILES = 200_000  # files looked at per snapshot; past it a snapshot stops (and says nothing more)


def sanitise(step_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", step_id).strip("_") or "step"


def dir_for(plan: Plan, repo: Path | str | None = None) -> Path:
    """The lineage folder of a plan's run: beside its run record, so configs and modes never share one.
    `repo` (default plan.repo) is where the repo is now: a checked copy keeps the record of its original."""
    from tipc.execute.record import record_location

    return Path(repo if repo is not None else plan.repo) / record_location(plan).parent / LINEAGE_DIRNAME


def step_env(lineage_dir: Path, step_id: str, base_pythonpath: str | None) -> dict[str, str]:
    """Variables to add to a step's environment so its Python processes record their file access."""
    parts = [str(INJECT_DIR)]
    if base_pythonpath:
        parts.append(base_pythonpath)
    return {
        "PYTHONPATH": os.pathsep.join(parts),
        ENV_FILE: str(Path(lineage_dir) / f"{sanitise(step_id)}.jsonl"),
        ENV_STEP: step_id,
    }


def start_step(lineage_dir: Path, step_id: str, base_pythonpath: str | None) -> dict[str, str]:
    """`step_env`, after removing what an earlier run of the same step left in the folder."""
    from tipc.execute.sandbox import for_commands

    lineage_dir = for_commands(Path(lineage_dir))  # the step's own processes write there
    for suffix in (".jsonl", ".files.json", LAYER_SUFFIX):
        (lineage_dir / f"{sanitise(step_id)}{suffix}").unlink(missing_ok=True)
    return step_env(lineage_dir, step_id, base_pythonpath)


AccessMode = Literal["read", "write", "delete"]
_ACCESS_MODES: dict[str, AccessMode] = {"read": "read", "write": "write", "delete": "delete"}


@dataclass(frozen=True)
class Access:
    path: str  # absolute, symlinks resolved
    mode: AccessMode
    time: float
    pid: int
    via: str  # open, rename, copyfile, paddle.load, paddle.inference.Config, ...
    exists: bool | None = None  # reads: whether the file existed when it was opened

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "mode": self.mode,
            "time": self.time,
            "pid": self.pid,
            "via": self.via,
            "exists": self.exists,
        }


@dataclass(frozen=True)
class Fingerprint:
    path: str
    exists: bool
    size: int | None = None
    mtime: float | None = None
    sha256: str | None = None  # None when the file is too large to hash (size + mtime identify it)

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "exists": self.exists,
            "size": self.size,
            "mtime": self.mtime,
            "sha256": self.sha256,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Fingerprint:
        return cls(
            path=str(data["path"]),
            exists=bool(data.get("exists", True)),
            size=data.get("size"),
            mtime=data.get("mtime"),
            sha256=data.get("sha256"),
        )


@dataclass(frozen=True)
class Process:
    pid: int
    ppid: int | None
    argv: tuple[str, ...]
    cwd: str
    time: float


@dataclass(frozen=True)
class StepAccess:
    """Everything the processes of one step did to files, each (path, mode) once (the earliest)."""

    step_id: str
    accesses: tuple[Access, ...]
    processes: tuple[Process, ...] = ()
    fingerprints: tuple[Fingerprint, ...] = ()

    def of_mode(self, mode: str) -> tuple[Access, ...]:
        return tuple(a for a in self.accesses if a.mode == mode)

    @property
    def reads(self) -> tuple[Access, ...]:
        return self.of_mode("read")

    @property
    def writes(self) -> tuple[Access, ...]:
        return self.of_mode("write")

    @property
    def started(self) -> float | None:
        times = [p.time for p in self.processes] + [a.time for a in self.accesses]
        return min(times) if times else None

    def fingerprint(self, path: str) -> Fingerprint | None:
        return next((f for f in self.fingerprints if f.path == path), None)


def _canonical(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.path.normpath(path)


def parse_lines(lines: Iterable[str], step_id: str) -> StepAccess:
    """A step's JSON lines as a StepAccess (bad lines, e.g. cut by a crash mid-write, are skipped)."""
    earliest: dict[tuple[str, str], Access] = {}
    processes: list[Process] = []
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if not isinstance(item, dict):
            continue
        try:
            if item.get("kind") == "process":
                processes.append(
                    Process(
                        pid=int(item["pid"]),
                        ppid=int(item["ppid"]) if item.get("ppid") is not None else None,
                        argv=tuple(str(a) for a in item.get("argv", ())),
                        cwd=str(item.get("cwd", "")),
                        time=float(item.get("time", 0.0)),
                    )
                )
                continue
            mode = _ACCESS_MODES.get(str(item["mode"]))
            if mode is None:
                continue
            exists = item.get("exists")
            access = Access(
                path=_canonical(str(item["path"])),
                mode=mode,
                time=float(item["time"]),
                pid=int(item.get("pid", 0)),
                via=str(item.get("via", "open")),
                exists=bool(exists) if exists is not None else None,
            )
        except (KeyError, TypeError, ValueError):
            continue
        key = (access.path, access.mode)
        if key not in earliest or access.time < earliest[key].time:
            earliest[key] = access
    ordered = tuple(sorted(earliest.values(), key=lambda a: (a.time, a.path, a.mode)))
    return StepAccess(step_id, ordered, tuple(processes))


# ------------------------------------------------------------------------------------ copy-on-write layers


@dataclass(frozen=True)
class Layer:
    """A folder holding what the run wrote (`real`, as this process reaches it) and the folder of the view
    the chain sees its files in (`view`): the overlay's upper layer over the repo, a bound output folder."""

    real: Path
    view: Path


Snapshot = dict[str, tuple[int, int, int]]  # view path -> (inode, size, mtime_ns); (0, -1, 0): deleted


def snapshot(layers: Iterable[Layer]) -> Snapshot:
    """Every file of the layers, by the path the chain sees it at. An overlay whiteout (a character device
    0/0) is a deleted file."""
    import stat

    out: Snapshot = {}
    for layer in layers:
        for root, _dirs, files in os.walk(layer.real):
            for name in files:
                if len(out) >= MAX_LAYER_FILES:
                    return out
                full = os.path.join(root, name)
                try:
                    st = os.lstat(full)
                except OSError:
                    continue
                view = os.path.join(str(layer.view), os.path.relpath(full, layer.real))
                if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
                    out[view] = (0, -1, 0)
                elif stat.S_ISREG(st.st_mode):
                    out[view] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return out


class LayerWatch:
    """Snapshots of the sandbox's layers around each step: what appeared or changed while it ran.

    `start()` before a step (cheap: the layers hold only what the run wrote), `finish(lineage_dir, step_id)`
    after it, which writes the step's layer writes beside its recorded access. Background steps (servers)
    run beside others: what changes while a foreground step runs is that step's."""

    def __init__(self, layers: Iterable[Layer], ignore: Iterable[Path] = ()) -> None:
        self.layers = tuple(layers)
        # tipc's own files in the view (this lineage folder, the run record): written by tipc, not a step
        self.ignore = tuple(os.path.realpath(p) for p in ignore)
        self.before: Snapshot | None = None
        self.started = 0.0

    def start(self) -> None:
        import time

        self.before = snapshot(self.layers) if self.layers else None
        self.started = time.time()

    def finish(self, lineage_dir: Path, step_id: str) -> list[Access]:
        if self.before is None:
            return []
        after = snapshot(self.layers)
        found: list[Access] = []
        for path, state in sorted(after.items()):
            if self.before.get(path) == state or any(
                path == i or path.startswith(i + os.sep) for i in self.ignore
            ):
                continue
            mode: AccessMode = "delete" if state[1] < 0 else "write"
            # Timed at the step's start: the write happened while it ran, so no read of this step came
            # before it (what its own reads of the file saw is this run's, not an earlier version).
            found.append(Access(_canonical(path), mode, self.started, 0, "layer"))
        self.before = after
        if found:
            target = Path(lineage_dir) / f"{sanitise(step_id)}{LAYER_SUFFIX}"
            atomic_write_text(target, "".join(json.dumps(a.to_json()) + "\n" for a in found))
        return found


def load(lineage_dir: Path) -> dict[str, StepAccess]:
    """{step id: StepAccess} for every step recorded in `lineage_dir` (empty when there is none).

    The step id comes from the fingerprints file or a process header; else the sanitised file stem stands in
    (`tipc.judge.lineage_graph` matches both).
    """
    folder = Path(lineage_dir)
    if not folder.is_dir():
        return {}
    out: dict[str, StepAccess] = {}
    stems = {p.name[: -len(".jsonl")] for p in folder.glob("*.jsonl") if not p.name.endswith(LAYER_SUFFIX)}
    stems |= {p.name[: -len(LAYER_SUFFIX)] for p in folder.glob(f"*{LAYER_SUFFIX}")}
    for stem in sorted(stems):
        path = folder / f"{stem}.jsonl"
        try:
            text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
            layer = folder / f"{stem}{LAYER_SUFFIX}"
            text += layer.read_text(encoding="utf-8", errors="replace") if layer.is_file() else ""
        except OSError:
            continue
        step_id = stem
        fingerprints: tuple[Fingerprint, ...] = ()
        done = folder / f"{stem}.files.json"
        if done.is_file():
            try:
                meta = json.loads(done.read_text(encoding="utf-8"))
                step_id = str(meta.get("step_id") or stem)
                fingerprints = tuple(Fingerprint.from_json(f) for f in meta.get("fingerprints", ()))
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                pass
        lines = text.splitlines()
        if step_id == stem:
            for line in lines[:50]:
                if '"kind": "process"' in line:
                    try:
                        step_id = str(json.loads(line).get("step") or stem)
                    except ValueError:
                        continue
                    break
        access = parse_lines(lines, step_id)
        out[step_id] = StepAccess(step_id, access.accesses, access.processes, fingerprints)
    return out


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def fingerprint(paths: Iterable[str | Path], *, budget: int = STEP_HASH_BUDGET) -> tuple[Fingerprint, ...]:
    """Size, mtime and sha256 of each file (sha256 only up to FULL_HASH_LIMIT each and `budget` in all)."""
    out: list[Fingerprint] = []
    left = budget
    for raw in dict.fromkeys(str(p) for p in paths):
        path = Path(raw)
        try:
            st = path.stat()
        except OSError:
            out.append(Fingerprint(raw, exists=False))
            continue
        if not path.is_file():
            continue
        sha: str | None = None
        if st.st_size <= min(FULL_HASH_LIMIT, left):
            try:
                sha = _sha256(path)
                left -= st.st_size
            except OSError:
                sha = None
        out.append(Fingerprint(raw, exists=True, size=st.st_size, mtime=st.st_mtime, sha256=sha))
    return tuple(out)


def finish_step(lineage_dir: Path, step_id: str) -> StepAccess | None:
    """After a step: fingerprint the files it wrote, saved beside its access log. None when nothing was
    recorded (not a Python step or Python older than 3.8, and no layer of a sandbox saw a write)."""
    folder = Path(lineage_dir)
    logs = [folder / f"{sanitise(step_id)}{suffix}" for suffix in (".jsonl", LAYER_SUFFIX)]
    if not any(log.is_file() for log in logs):
        return None
    try:
        lines = [ln for log in logs if log.is_file() for ln in log.read_text("utf-8", "replace").splitlines()]
    except OSError:
        return None
    access = parse_lines(lines, step_id)
    prints = fingerprint(a.path for a in access.writes)
    meta = {"step_id": step_id, "fingerprints": [f.to_json() for f in prints]}
    target = folder / f"{sanitise(step_id)}.files.json"
    try:
        atomic_write_text(target, json.dumps(meta, indent=1))
    except OSError:
        return None
    return StepAccess(step_id, access.accesses, access.processes, prints)


__all__ = [
    "ENV_FILE",
    "ENV_STEP",
    "INJECT_DIR",
    "LAYER_SUFFIX",
    "LINEAGE_DIRNAME",
    "Access",
    "Fingerprint",
    "Layer",
    "LayerWatch",
    "Process",
    "StepAccess",
    "dir_for",
    "fingerprint",
    "finish_step",
    "load",
    "parse_lines",
    "sanitise",
    "snapshot",
    "start_step",
    "step_env",
]
