"""The lineage graph: steps and files as nodes, `wrote` / `read` as edges, each file classified.

A file is `run` (written by a step of this run), `committed` (in the repo's git HEAD), `preexisting` (in the
repo, not in git, there before the run started), `external` (outside the repo) or `missing` (opened but never
there). Whether a particular read saw this run's version is a property of the edge: `fresh` when a step at
or before the reader in plan order wrote the file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tipc.execute.lineage import StepAccess, sanitise

if TYPE_CHECKING:
    from tipc.execute.record import RunRecord, StepResult

WEIGHT_SUFFIXES = (".pdparams", ".pdopt", ".pdckpt", ".pdema", ".pth", ".pt", ".ckpt")
MODEL_SUFFIXES = (".pdmodel", ".pdiparams", ".pdiparams.info", ".nb", ".onnx")
MODEL_NAMES = ("__model__", "__params__")
_WEIGHT_VIA = ("paddle.load", "paddle.save")
_MODEL_VIA = ("paddle.jit", "paddle.inference", "paddle.static")
STALE_SLACK_S = 2.0


def file_kind(path: str, vias: set[str], siblings: set[str]) -> str:
    """weights | model | other, from the name and how it was opened."""
    name = os.path.basename(path)
    if name.endswith(WEIGHT_SUFFIXES) or any(v in _WEIGHT_VIA for v in vias):
        return "weights"
    if name.endswith(MODEL_SUFFIXES) or name in MODEL_NAMES:
        return "model"
    if name.endswith(".json") and (
        any(v.startswith(_MODEL_VIA) for v in vias) or path[: -len(".json")] + ".pdiparams" in siblings
    ):
        return "model"
    return "other"


@dataclass(frozen=True)
class StepNode:
    id: str
    stage: str
    status: str  # the step's status in the record ("not run" without a result)
    recorded: bool  # file access was recorded for it
    index: int  # position in the plan

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "stage": self.stage, "status": self.status, "recorded": self.recorded}


@dataclass(frozen=True)
class FileNode:
    path: str  # repo-relative inside the repo, else absolute
    abspath: str
    kind: str  # weights | model | other
    origin: str  # run | committed | preexisting | external | missing
    written_by: tuple[str, ...] = ()
    read_by: tuple[str, ...] = ()
    exists: bool = True  # now, at check time
    mtime: float | None = None  # now
    size: int | None = None
    sha256: str | None = None  # as its last writer left it
    commit_date: str | None = None  # committed weights/model files that a step read

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "kind": self.kind,
            "origin": self.origin,
            "written_by": list(self.written_by),
            "read_by": list(self.read_by),
            "exists": self.exists,
            "mtime": self.mtime,
            "size": self.size,
            "sha256": self.sha256,
            "commit_date": self.commit_date,
        }


@dataclass(frozen=True)
class Edge:
    step: str
    file: str  # FileNode.path
    kind: str  # read | wrote
    fresh: bool = True  # reads: a step at or before the reader wrote the file in this run
    via: str = "open"

    def to_json(self) -> dict[str, object]:
        return {"step": self.step, "file": self.file, "kind": self.kind, "fresh": self.fresh, "via": self.via}


@dataclass(frozen=True)
class LineageGraph:
    steps: tuple[StepNode, ...]
    files: tuple[FileNode, ...]
    edges: tuple[Edge, ...]
    git: bool = False  # whether git said which files are committed (else mtime against the run's start)

    def file(self, path: str) -> FileNode | None:
        return next((f for f in self.files if f.path == path), None)

    def step(self, step_id: str) -> StepNode | None:
        return next((s for s in self.steps if s.id == step_id), None)

    def reads(self, step_id: str) -> tuple[Edge, ...]:
        return tuple(e for e in self.edges if e.step == step_id and e.kind == "read")

    def writes(self, step_id: str) -> tuple[Edge, ...]:
        return tuple(e for e in self.edges if e.step == step_id and e.kind == "wrote")

    @property
    def recorded(self) -> bool:
        return any(s.recorded for s in self.steps)

    def to_json(self, max_other: int = 100) -> dict[str, Any]:
        """Every weights/model file and every written file; other read-only files up to `max_other`."""
        keep: list[FileNode] = []
        others = 0
        for f in self.files:
            if f.kind != "other" or f.written_by:
                keep.append(f)
            elif others < max_other:
                keep.append(f)
                others += 1
        kept = {f.path for f in keep}
        return {
            "steps": [s.to_json() for s in self.steps],
            "files": [f.to_json() for f in keep],
            "edges": [e.to_json() for e in self.edges if e.file in kept],
            "omitted_files": len(self.files) - len(keep),
            "git": self.git,
        }


def _git(repo: Path, *args: str) -> tuple[int | None, str]:
    from tipc.execute import safegit  # the repo's own git config names commands: none of them may run

    if not safegit.available():
        return None, ""
    return safegit.capture(args, cwd=repo, timeout_s=60)


def git_files(repo: Path) -> set[str] | None:
    """Absolute paths of the files in git HEAD of the repo holding `repo`; None when it is not in git."""
    code, top = _git(repo, "rev-parse", "--show-toplevel")
    if code != 0 or not top.strip():
        return None
    root = os.path.realpath(top.strip().splitlines()[-1])
    code, listing = _git(repo, "ls-tree", "-r", "-z", "--name-only", "--full-tree", "HEAD")
    if code != 0:
        return None
    return {os.path.join(root, name) for name in listing.split("\0") if name.strip()}


def commit_date(repo: Path, path: str) -> str | None:
    """ISO date of the last commit that touched `path` (`git log -1 --format=%cI`)."""
    code, out = _git(repo, "log", "-1", "--format=%cI", "--", path)
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    return lines[-1] if code == 0 and lines else None


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _lookup(accesses: Mapping[str, StepAccess], step_id: str) -> StepAccess | None:
    return accesses.get(step_id) or accesses.get(sanitise(step_id))


def _relocated(access: StepAccess, old: str, new: str) -> StepAccess:
    from dataclasses import replace

    def move(path: str) -> str:
        return new + path[len(old) :] if _within(path, old) else path

    return replace(
        access,
        accesses=tuple(replace(a, path=move(a.path)) for a in access.accesses),
        fingerprints=tuple(replace(f, path=move(f.path)) for f in access.fingerprints),
    )


def usable(result: StepResult | None, access: StepAccess | None) -> bool:
    """Whether a step's recorded access belongs to this record: the step ran (or was skipped, its outputs
    being an earlier run's), and the log is not older than the step's start."""
    if access is None or result is None:
        return False
    status = getattr(result.status, "value", result.status)
    if result.started is None:
        return bool(status == "skipped")
    first = access.started
    return first is None or bool(first >= float(result.started) - 60.0)


@dataclass
class _Seen:
    """The recorded access of usable steps, by path: who wrote and read each file, and when first."""

    writers: dict[str, list[StepNode]] = field(default_factory=dict)
    readers: dict[str, list[StepNode]] = field(default_factory=dict)
    vias: dict[str, set[str]] = field(default_factory=dict)
    first_write: dict[str, float] = field(default_factory=dict)
    read_existing_before: dict[str, float] = field(default_factory=dict)
    missing_reads: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, per_step: list[tuple[StepNode, StepAccess]]) -> _Seen:
        seen = cls()
        for node, access in per_step:
            for a in access.accesses:
                seen.vias.setdefault(a.path, set()).add(a.via)
                if a.mode == "write":
                    seen.writers.setdefault(a.path, []).append(node)
                    seen.first_write[a.path] = min(seen.first_write.get(a.path, a.time), a.time)
                elif a.mode == "read":
                    seen.readers.setdefault(a.path, []).append(node)
                    if a.exists is False:
                        seen.missing_reads.add(a.path)
                    else:
                        before = seen.read_existing_before.get(a.path, a.time)
                        seen.read_existing_before[a.path] = min(before, a.time)
        return seen

    def origin(
        self, path: str, exists: bool, mtime: float | None, changed: set[str] | None, started: float
    ) -> str:
        """Where a file inside the repo and not committed comes from: this run, before it, or nowhere."""
        if (
            path in self.writers
            and self.read_existing_before.get(path, float("inf")) < self.first_write[path]
        ):
            return "preexisting"  # read (and there) before a step of this run rewrote it
        if path in self.writers:
            return "run"
        if changed is not None:
            return "run" if path in changed else ("preexisting" if exists else "missing")
        if exists and mtime is not None and mtime < started - STALE_SLACK_S:
            return "preexisting"
        if exists:
            return "run"  # changed during the run by a writer the recorder cannot see (C++ code)
        return "missing" if path in self.missing_reads or path not in self.writers else "run"


def _step_nodes(
    record: RunRecord, accesses: Mapping[str, StepAccess]
) -> tuple[list[StepNode], list[tuple[StepNode, StepAccess]]]:
    """Every planned step as a node, and the usable ones with their recorded access."""
    steps: list[StepNode] = []
    per_step: list[tuple[StepNode, StepAccess]] = []
    for index, step in enumerate(record.plan.steps):
        result = record.result(step.id)
        access = _lookup(accesses, step.id)
        ok = usable(result, access)
        status = getattr(result.status, "value", str(result.status)) if result is not None else "not run"
        node = StepNode(step.id, getattr(step.stage, "value", str(step.stage)), status, ok, index)
        steps.append(node)
        if ok and access is not None:
            per_step.append((node, access))
    return steps, per_step


def _stat(path: str) -> tuple[bool, float | None, int | None]:
    """Whether the file exists now, its mtime and size."""
    try:
        st = os.stat(path)
    except OSError:
        return False, None, None
    return True, st.st_mtime, st.st_size


@dataclass(frozen=True)
class _Files:
    """What a file's node needs besides its path: the repo, what git and the sandbox know, the access."""

    repo_abs: str
    committed: set[str] | None
    changed: set[str] | None
    started: float
    seen: _Seen
    per_step: list[tuple[StepNode, StepAccess]]
    siblings: set[str]

    def origin(self, path: str, exists: bool, mtime: float | None) -> str:
        if not _within(path, self.repo_abs):
            return "external"
        if self.committed is not None and path in self.committed:
            return "committed"
        return self.seen.origin(path, exists, mtime, self.changed, self.started)

    def sha256(self, path: str) -> str | None:
        """The last usable step's recorded fingerprint of the file."""
        sha = None
        for _, access in self.per_step:
            fp = access.fingerprint(path)
            if fp is not None and fp.sha256:
                sha = fp.sha256
        return sha

    def node(self, path: str) -> FileNode:
        writers, readers = self.seen.writers, self.seen.readers
        rel = os.path.relpath(path, self.repo_abs) if _within(path, self.repo_abs) else path
        exists, mtime, size = _stat(path)
        kind = file_kind(path, self.seen.vias.get(path, set()), self.siblings)
        origin = self.origin(path, exists, mtime)
        sha = self.sha256(path)
        date = None
        if origin == "committed" and kind in ("weights", "model") and path in readers:
            date = commit_date(Path(self.repo_abs), path)
        return FileNode(
            path=rel,
            abspath=path,
            kind=kind,
            origin=origin,
            written_by=tuple(dict.fromkeys(n.id for n in writers.get(path, []))),
            read_by=tuple(dict.fromkeys(n.id for n in readers.get(path, []))),
            exists=exists,
            mtime=mtime,
            size=size,
            sha256=sha,
            commit_date=date,
        )


def build_graph(
    record: RunRecord,
    accesses: Mapping[str, StepAccess],
    repo: Path,
    *,
    committed: set[str] | None = None,
    changed: set[str] | None = None,
    use_git: bool = True,
) -> LineageGraph:
    """Join the recorded file access to the record's steps. `committed` (absolute paths) overrides git;
    `changed` (absolute paths the run created or changed, as a sandbox knows them) overrides the mtime
    guess for files no recorded step wrote."""
    repo_abs = os.path.realpath(str(repo))
    # A record checked from a copy of the repo (--reuse-run on a copied tree) names the original's paths.
    original = os.path.realpath(str(getattr(record.plan, "repo", repo_abs)))
    if original != repo_abs:
        accesses = {k: _relocated(v, original, repo_abs) for k, v in accesses.items()}
    if committed is None and use_git:
        committed = git_files(Path(repo_abs))
    in_git = committed is not None
    started = float(getattr(record, "started", 0.0) or 0.0)

    steps, per_step = _step_nodes(record, accesses)
    seen = _Seen.of(per_step)
    paths = sorted(set(seen.writers) | set(seen.readers))
    context = _Files(repo_abs, committed, changed, started, seen, per_step, set(paths))
    files = [context.node(path) for path in paths]
    by_path = {f.abspath: f for f in files}
    edges = _edges(per_step, seen.writers, by_path)
    return LineageGraph(tuple(steps), tuple(files), edges, git=in_git)


def _edges(
    per_step: list[tuple[StepNode, StepAccess]],
    writers: Mapping[str, list[StepNode]],
    by_path: Mapping[str, FileNode],
) -> tuple[Edge, ...]:
    """One edge per recorded access; a read is fresh when a step at or before the reader wrote the file."""
    edges: list[Edge] = []
    for node, access in per_step:
        for a in access.accesses:
            if a.mode == "write":
                edges.append(Edge(node.id, by_path[a.path].path, "wrote", True, a.via))
            elif a.mode == "read":
                fresh = any(w.index <= node.index for w in writers.get(a.path, []))
                edges.append(Edge(node.id, by_path[a.path].path, "read", fresh, a.via))
    return tuple(edges)


def describe_origin(node: FileNode) -> str:
    """`committed 2022-04-10T…` / `there before the run (modified 2022-04-10 10:00)` / ... for evidence."""
    import datetime as _dt

    when = (
        _dt.datetime.fromtimestamp(node.mtime, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        if node.mtime is not None
        else None
    )
    if node.origin == "committed":
        return f"committed {node.commit_date}" if node.commit_date else "committed in the repo"
    if node.origin == "preexisting":
        return f"there before the run, last modified {when}" if when else "there before the run"
    if node.origin == "external":
        return "outside the repo"
    if node.origin == "missing":
        return "does not exist"
    by = ", ".join(node.written_by)
    return f"written by {by}" if by else "written during the run"
