"""Submissions: what a reviewer names on the command line, and how each becomes a private work area.

A submission is a folder, a `.tar.gz`/`.tgz`/`.tar`/`.zip` archive, or a local git repository with a ref
(`path/to/repo@v1.2`; a git folder without `@` is reviewed as its working tree). Its content hash (files of a
folder, bytes of an archive, the tree of a git commit) keys the review state, so an unchanged submission is
not checked twice.

A git submission is read from its object store (`ls-tree -r -z` and `cat-file --batch`, under
`tipc.execute.safegit`'s guards), never checked out or archived: its `.gitattributes` filters, hooks,
fsmonitor and every other command its config names never run, and a `.git` file, commondir or alternates
leading to another repository are refused (`safegit.open_repository`). Symlinks and the executable bit are
kept; a tree path with a `.git` component, `..` or an absolute path is rejected as in an archive.

Unpacking trusts nothing in the archive: a member that would land outside the work area (an absolute path,
`..`), a link pointing out of it, a device or fifo, a member or a total over the size limits, or too many
members rejects the submission with the member named; sizes are counted while copying, never taken from
the archive's own headers.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Literal, Protocol

from tipc.core.errors import UserError
from tipc.execute import proc, safegit

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")
MAX_MEMBER_BYTES = 1 << 30  # one file of a submission
MAX_TOTAL_BYTES = 4 << 30  # a whole unpacked submission
MAX_MEMBERS = 200_000
# What a folder submission's copy and hash leave out: tipc's and the repo's own outputs, caches, VCS data.
SKIPPED_PARTS = frozenset({".git", "__pycache__", ".mypy_cache", ".pytest_cache"})
SKIPPED_PREFIX = ("test_tipc", "output")
_CHUNK = 1 << 20


class Rejected(Exception):
    """The submission cannot be unpacked safely; the message names the member and why."""


SourceKind = Literal["folder", "archive", "git"]


@dataclass(frozen=True)
class Source:
    text: str  # as given on the command line
    kind: SourceKind
    path: Path  # resolved
    ref: str | None = None  # git only
    commit: str | None = None  # git only: the commit the ref names

    @property
    def label(self) -> str:
        if self.kind == "git":
            return f"{self.path.name}@{self.ref}"
        if self.kind == "archive":
            return _strip_archive_suffix(self.path.name)
        return self.path.name


def _strip_archive_suffix(name: str) -> str:
    for suffix in ARCHIVE_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def _is_archive(path: Path) -> bool:
    return path.name.lower().endswith(ARCHIVE_SUFFIXES)


GIT_READ_TIMEOUT_S = 600.0  # reading a whole tree out of the object store
_MAX_TREE_PATH = 4096  # bytes of one path in a git tree (git's own PATH_MAX)
_MAX_LINK = 4096  # bytes of a symlink's target


def _repository(source_path: Path, text: str) -> safegit.Repository:
    try:
        return safegit.open_repository(source_path)
    except safegit.Refused as exc:
        raise UserError(f"{text}: {exc}") from None


def _git(args: list[str], repo: safegit.Repository) -> tuple[int | None, str]:
    return safegit.capture(args, cwd=repo.folder, git_dir=repo.git_dir, timeout_s=120.0)


def parse_source(text: str) -> Source:
    """The submission `text` names; UserError (exit 2) when it names nothing reviewable."""
    if "://" in text or text.startswith("git@"):
        raise UserError(
            f"{text}: only local submissions are reviewed (a folder, an archive, or a local git repo@ref)"
        )
    path = Path(text).expanduser()
    if path.exists():
        resolved = path.resolve()
        if resolved.is_dir():
            return Source(text, "folder", resolved)
        if resolved.is_file() and _is_archive(resolved):
            return Source(text, "archive", resolved)
        raise UserError(f"{text}: not a folder or a supported archive ({', '.join(ARCHIVE_SUFFIXES)})")
    if "@" in text:
        where, ref = text.rsplit("@", 1)
        repo = Path(where).expanduser()
        if repo.is_dir() and ref:
            if ref.startswith("-"):
                raise UserError(f"{text}: {ref!r} is not a commit, branch or tag name")
            if not safegit.available():
                raise UserError(f"{text}: reviewing a git ref needs git on PATH")
            repository = _repository(repo, text)
            code, out = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], repository)
            if code != 0:
                raise UserError(
                    f"{text}: {ref!r} is not a commit, branch or tag of the git repository {where}"
                )
            return Source(text, "git", repo.resolve(), ref=ref, commit=out.strip().splitlines()[-1])
        if not repo.exists():
            raise UserError(f"{text}: no such folder {where}")
    raise UserError(f"{text}: no such file or folder")


def _skipped(rel: PurePosixPath) -> bool:
    return bool(SKIPPED_PARTS.intersection(rel.parts)) or rel.parts[:2] == SKIPPED_PREFIX


def _walk(root: Path) -> Iterator[tuple[PurePosixPath, Path]]:
    """Every file and link under `root` (sorted, skipped parts left out), as (relative path, full path)."""
    for folder, dirs, files in os.walk(root):
        base = PurePosixPath(Path(folder).relative_to(root).as_posix())
        kept = []
        for name in sorted(dirs):
            rel = base / name
            if _skipped(rel):
                continue
            if Path(folder, name).is_symlink():
                yield rel, Path(folder, name)  # a link to a folder: hashed and copied as a link
            else:
                kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            rel = base / name
            if not _skipped(rel):
                yield rel, Path(folder, name)


def content_hash(source: Source) -> str:
    """sha256 of the submission's content: what makes a re-review of it necessary."""
    digest = hashlib.sha256()
    if source.kind == "git":
        code, out = _git(["rev-parse", f"{source.commit}^{{tree}}"], _repository(source.path, source.text))
        digest.update(f"git-tree:{out.strip() if code == 0 else source.commit}".encode())
    elif source.kind == "archive":
        with open(source.path, "rb") as fh:
            for chunk in iter(lambda: fh.read(_CHUNK), b""):
                digest.update(chunk)
    else:
        for rel, full in _walk(source.path):
            st = full.lstat()
            digest.update(
                f"\0{rel}\0{'L' if stat.S_ISLNK(st.st_mode) else oct(st.st_mode & 0o111)}\0".encode()
            )
            if stat.S_ISLNK(st.st_mode):
                digest.update(os.readlink(full).encode())
            elif stat.S_ISREG(st.st_mode):
                with open(full, "rb") as fh:
                    for chunk in iter(lambda: fh.read(_CHUNK), b""):
                        digest.update(chunk)
    return digest.hexdigest()


# --- unpacking into a work area --------------------------------------------------------------------------


@dataclass
class _Budget:
    max_member: int
    max_total: int
    max_members: int
    total: int = 0
    members: int = 0

    def count_member(self, name: str) -> None:
        self.members += 1
        if self.members > self.max_members:
            raise Rejected(f"more than {self.max_members} members (at {name})")


def _norm(name: str) -> str:
    return "/".join(p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", "."))


def _member_path(area: Path, name: str) -> Path:
    """Where member `name` lands in `area`; Rejected when it would land outside."""
    clean = name.replace("\\", "/")
    if clean.startswith("/") or (len(clean) > 1 and clean[1] == ":"):
        raise Rejected(f"member {name!r} has an absolute path")
    parts = [p for p in PurePosixPath(clean).parts if p not in ("", ".")]
    if ".." in parts:
        raise Rejected(f"member {name!r} escapes the work area (..)")
    if not parts:
        return area
    target = area.joinpath(*parts)
    # A member under a link extracted earlier would be written through it: the real parent must stay inside.
    parent = Path(os.path.realpath(target.parent))
    if not parent.is_relative_to(area):
        raise Rejected(f"member {name!r} would be written through a link out of the work area")
    return target


def _check_link(area: Path, target: Path, link: str, name: str) -> None:
    if link.startswith("/"):
        raise Rejected(f"link {name!r} -> {link!r} points out of the work area (absolute)")
    resolved = Path(os.path.normpath(target.parent / link))
    if not resolved.is_relative_to(area):
        raise Rejected(f"link {name!r} -> {link!r} points out of the work area")


class _Readable(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...


def _copy_limited(src: _Readable, dest: Path, name: str, budget: _Budget, mode: int) -> None:
    written = 0
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.is_symlink() or dest.exists():
        raise Rejected(f"member {name!r} appears twice or replaces a link")
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755 if mode & 0o111 else 0o644)
    with os.fdopen(fd, "wb") as out:
        for chunk in iter(lambda: src.read(_CHUNK), b""):
            written += len(chunk)
            budget.total += len(chunk)
            if written > budget.max_member:
                raise Rejected(f"member {name!r} is larger than {budget.max_member} bytes")
            if budget.total > budget.max_total:
                raise Rejected(
                    f"the unpacked submission is larger than {budget.max_total} bytes (at {name!r})"
                )
            out.write(chunk)


def _unpack_tar(archive: Path, area: Path, budget: _Budget) -> None:
    try:
        tar = tarfile.open(archive, "r:*")  # noqa: SIM115 - closed below
    except (tarfile.TarError, OSError) as exc:
        raise Rejected(f"not a readable tar archive: {exc}") from None
    with tar:
        extracted: dict[str, Path] = {}
        for member in tar:
            budget.count_member(member.name)
            target = _member_path(area, member.name)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
            elif member.isreg():
                stream = tar.extractfile(member)
                if stream is None:
                    raise Rejected(f"member {member.name!r} cannot be read")
                with stream:
                    _copy_limited(stream, target, member.name, budget, member.mode)
                extracted[_norm(member.name)] = target
            elif member.issym():
                _check_link(area, target, member.linkname, member.name)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(member.linkname, target)
            elif member.islnk():
                source = extracted.get(_norm(member.linkname))
                if source is None:
                    raise Rejected(
                        f"hard link {member.name!r} -> {member.linkname!r} names no earlier member"
                    )
                with open(source, "rb") as fh:
                    _copy_limited(fh, target, member.name, budget, member.mode)
            else:
                raise Rejected(f"member {member.name!r} is a device, fifo or other special file")


def _unpack_zip(archive: Path, area: Path, budget: _Budget) -> None:
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise Rejected(f"not a readable zip archive: {exc}") from None
    with zf:
        for info in zf.infolist():
            budget.count_member(info.filename)
            target = _member_path(area, info.filename)
            mode = info.external_attr >> 16
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
            elif stat.S_ISLNK(mode):
                with zf.open(info) as fh:
                    link = fh.read(4096).decode("utf-8", errors="replace")
                _check_link(area, target, link, info.filename)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(link, target)
            elif stat.S_IFMT(mode) and not stat.S_ISREG(mode):
                raise Rejected(f"member {info.filename!r} is a device, fifo or other special file")
            else:
                with zf.open(info) as fh:
                    _copy_limited(fh, target, info.filename, budget, mode)


def _copy_folder(src: Path, dest: Path, budget: _Budget) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for rel, full in _walk(src):
        budget.count_member(str(rel))
        target = _member_path(dest, str(rel))
        if full.is_symlink():
            link = os.readlink(full)
            _check_link(dest, target, link, str(rel))
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(link, target)
        elif full.is_file():
            with open(full, "rb") as fh:
                _copy_limited(fh, target, str(rel), budget, full.stat().st_mode)


class _Blob:
    """The next `size` bytes of a `cat-file --batch` stream, read as a file."""

    def __init__(self, stream: IO[bytes], size: int, name: str) -> None:
        self.stream, self.left, self.name = stream, size, name

    def read(self, n: int = -1) -> bytes:
        want = self.left if n < 0 else min(n, self.left)
        if want <= 0:
            return b""
        data = self.stream.read(want)
        if not data:
            raise Rejected(f"git stopped in the middle of {self.name!r}")
        self.left -= len(data)
        return data

    def rest(self) -> None:
        """Consume what was not read, and the newline after the object."""
        while self.read(_CHUNK):
            pass
        self.stream.read(1)


def _tree_entries(stream: IO[bytes]) -> Iterator[tuple[str, str, str, str]]:
    """(mode, type, object id, path) of each `ls-tree -r -z` entry, read in bounded chunks."""
    pending = b""
    while True:
        chunk = stream.read(_CHUNK)
        pending += chunk
        *records, pending = pending.split(b"\0")
        for record in records:
            meta, tab, path = record.partition(b"\t")
            fields = meta.split(b" ")
            if not tab or len(fields) != 3:
                raise Rejected(f"unexpected git ls-tree output {record[:200]!r}")
            mode, kind, oid = (f.decode("ascii", errors="replace") for f in fields)
            yield mode, kind, oid, os.fsdecode(path)
        if len(pending) > _MAX_TREE_PATH + 128:
            raise Rejected(f"a path in the git tree is longer than {_MAX_TREE_PATH} bytes")
        if not chunk:
            if pending:
                raise Rejected("git ls-tree output ended in the middle of an entry")
            return


def _blob(objects: proc.Pipe, oid: str, name: str, budget: _Budget) -> _Blob:
    """Ask `cat-file --batch` for blob `oid`: its content as a stream (sizes over the member limit refused
    from git's header, before any byte is read)."""
    objects.stdin.write(oid.encode("ascii") + b"\n")
    objects.stdin.flush()
    header = objects.stdout.readline(256).decode("ascii", errors="replace").split()
    if len(header) != 3 or header[1] != "blob" or not header[2].isdigit():
        raise Rejected(f"{name!r}: git cannot read object {oid} ({' '.join(header) or 'no answer'})")
    size = int(header[2])
    if size > budget.max_member:
        raise Rejected(f"member {name!r} is larger than {budget.max_member} bytes")
    return _Blob(objects.stdout, size, name)


def _git_path_rejected(name: str) -> str | None:
    parts = name.split("/")
    if any(p.lower() in (".git", "git~1") for p in parts):
        return f"member {name!r} lies in a .git folder (git itself refuses to check it out)"
    return None


def _read_git_tree(repo: safegit.Repository, commit: str, area: Path, budget: _Budget) -> None:
    """Write the tree of `commit` into `area` from the object store: no checkout, no filter, no attribute."""
    with (
        safegit.pipe(
            ["ls-tree", "-r", "-z", "--full-tree", commit], repo, timeout_s=GIT_READ_TIMEOUT_S
        ) as listing,
        safegit.pipe(["cat-file", "--batch"], repo, timeout_s=GIT_READ_TIMEOUT_S) as objects,
    ):
        try:
            for mode, kind, oid, name in _tree_entries(listing.stdout):
                budget.count_member(name)
                why = _git_path_rejected(name)
                if why is not None:
                    raise Rejected(why)
                target = _member_path(area, name)
                if mode == "160000":  # a submodule: its commit is another repository's; an empty folder
                    target.mkdir(parents=True, exist_ok=True)
                elif mode == "120000":
                    blob = _blob(objects, oid, name, budget)
                    if blob.left > _MAX_LINK:
                        raise Rejected(f"link {name!r} has a target longer than {_MAX_LINK} bytes")
                    link = os.fsdecode(blob.read(_MAX_LINK))
                    blob.rest()
                    _check_link(area, target, link, name)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.symlink(link, target)
                elif kind == "blob" and mode in ("100644", "100755", "100664"):
                    blob = _blob(objects, oid, name, budget)
                    _copy_limited(blob, target, name, budget, 0o755 if mode == "100755" else 0o644)
                    blob.rest()
                else:
                    raise Rejected(
                        f"member {name!r} has git mode {mode} ({kind}), not a file, link or submodule"
                    )
        except (BrokenPipeError, ValueError) as exc:
            raise Rejected(
                f"git stopped while the tree was read: {objects.errors or listing.errors or exc}"
            ) from None
    if listing.timed_out or objects.timed_out:
        raise Rejected(f"reading the git tree took longer than {GIT_READ_TIMEOUT_S:g} s")
    code = listing.child.returncode
    if code not in (0, None):
        raise Rejected(f"git ls-tree {commit} failed: {listing.errors[-300:]}")


def _single_top(area: Path) -> Path:
    """The repo root in an unpacked archive: its one top folder when it has exactly one (a `tar czf x.tgz
    repo/` archive), else the area itself."""
    entries = [p for p in area.iterdir() if p.name not in ("__MACOSX",)]
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        return entries[0]
    return area


def materialise(
    source: Source,
    area: Path,
    *,
    max_member: int = MAX_MEMBER_BYTES,
    max_total: int = MAX_TOTAL_BYTES,
    max_members: int = MAX_MEMBERS,
) -> Path:
    """Unpack or copy `source` into a fresh `area/src`; returns the repo root inside it. Rejected when the
    submission cannot be unpacked safely (the partial area is removed)."""
    root = area / "src"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    root = root.resolve()
    budget = _Budget(max_member, max_total, max_members)
    try:
        if source.kind == "folder":
            _copy_folder(source.path, root, budget)
            return root
        if source.kind == "git":
            try:
                repo = safegit.open_repository(source.path)
            except safegit.Refused as exc:
                raise Rejected(str(exc)) from None
            _read_git_tree(repo, str(source.commit), root, budget)
            return root
        if source.path.name.lower().endswith(".zip"):
            _unpack_zip(source.path, root, budget)
        else:
            _unpack_tar(source.path, root, budget)
        return _single_top(root)
    except Rejected:
        shutil.rmtree(root, ignore_errors=True)
        raise
    except OSError as exc:
        shutil.rmtree(root, ignore_errors=True)
        raise Rejected(f"cannot unpack: {exc}") from None
