"""Artefact lineage: which files each step read and wrote, and the stage graph built from that.

The runner puts `inject/` first on a step's PYTHONPATH (see `step_env`); its `sitecustomize` records every
file the step's Python processes open (an audit hook, plus wrappers around Paddle's C++ loaders) as JSON
lines in `<lineage dir>/<step>.jsonl`. After the step, `finish_step` fingerprints the files it wrote (size,
sha256, mtime). `load` reads a lineage folder back; `tipc.judge.lineage_graph.build_graph` joins it to the run
record. Nothing here imports paddle; the recorder itself is standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tipc.core.fs import atomic_write_text

INJECT_DIR = Path(__file__).resolve().parent / "inject"
LINEAGE_DIRNAME = "tipc_lineage"
ENV_FILE = "TIPC_LINEAGE_FILE"
ENV_STEP = "TIPC_LINEAGE_STEP"
FULL_HASH_LIMIT = 1 << 30  # files up to 1 GiB are hashed in full; larger ones get size + mtime only
STEP_HASH_BUDGET = 4 << 30  # bytes hashed per step at most
_CHUNK = 1 << 20


def sanitise(step_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", step_id).strip("_") or "step"


def dir_for(plan: Any, repo: Path | str | None = None) -> Path:
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
    for suffix in (".jsonl", ".files.json"):
        (lineage_dir / f"{sanitise(step_id)}{suffix}").unlink(missing_ok=True)
    return step_env(lineage_dir, step_id, base_pythonpath)


@dataclass(frozen=True)
class Access:
    path: str  # absolute, symlinks resolved
    mode: str  # read | write | delete
    time: float
    pid: int
    via: str  # open, rename, copyfile, paddle.load, paddle.inference.Config, ...
    exists: bool | None = None  # reads: whether the file existed when it was opened

    def to_json(self) -> dict[str, Any]:
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

    def to_json(self) -> dict[str, Any]:
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
            mode = str(item["mode"])
            if mode not in ("read", "write", "delete"):
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


def load(lineage_dir: Path) -> dict[str, StepAccess]:
    """{step id: StepAccess} for every step recorded in `lineage_dir` (empty when there is none).

    The step id comes from the fingerprints file or a process header; else the sanitised file stem stands in
    (`tipc.judge.lineage_graph` matches both).
    """
    folder = Path(lineage_dir)
    if not folder.is_dir():
        return {}
    out: dict[str, StepAccess] = {}
    for path in sorted(folder.glob("*.jsonl")):
        stem = path.name[: -len(".jsonl")]
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
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
    recorded (not a Python step, or Python older than 3.8)."""
    folder = Path(lineage_dir)
    log = folder / f"{sanitise(step_id)}.jsonl"
    if not log.is_file():
        return None
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
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
    "LINEAGE_DIRNAME",
    "Access",
    "Fingerprint",
    "Process",
    "StepAccess",
    "dir_for",
    "fingerprint",
    "finish_step",
    "load",
    "parse_lines",
    "sanitise",
    "start_step",
    "step_env",
]
