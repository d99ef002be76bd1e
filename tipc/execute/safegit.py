"""git on a repository tipc does not trust: nothing the repository configures runs.

A repository's own `.git/config` (and what it includes) can name commands git runs: filters
(`filter.X.smudge`), `core.fsmonitor`, hooks, `core.sshCommand`, `core.pager`, `diff.external`, textconv,
`gpg.program` (for `log.showSignature`), ... Reading a submission, or asking the user's repo for its commit,
must run none of them. Every git started here therefore:

- gets an environment built from nothing: no system or global config (`GIT_CONFIG_NOSYSTEM`,
  `GIT_CONFIG_GLOBAL=/dev/null`), no system attributes, no `GIT_*` variable of tipc's own environment (an
  inherited `GIT_DIR`, `GIT_EXTERNAL_DIFF` or `GIT_ALTERNATE_OBJECT_DIRECTORIES` would steer it), no
  terminal prompt, no pager;
- gets `-c` over every command-valued key (`GUARDS`): command-line config outranks the repository's;
- is used only for plumbing that applies no filter, attribute or textconv (`rev-parse`, `ls-tree`,
  `cat-file --batch`, `log --format`): keys with free names (`filter.<name>.*`, `diff.<name>.textconv`)
  cannot be overridden one by one, so the commands that would read them are never run.

`open_repository` is the strict form for a submission: its git folder must lie inside the folder named, a
`.git` file (`gitdir: ...`), a `commondir` or an `objects/info/alternates` leading anywhere else is refused,
so another repository's objects (or config) are never read through it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tipc.execute import proc

# Every configurable command of git, and what could make plumbing start one, set to something inert.
GUARDS: tuple[str, ...] = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.pager=cat",
    "core.editor=true",
    "sequence.editor=true",
    "core.askPass=true",
    "core.sshCommand=false",
    "core.gitProxy=false",
    "core.alternateRefsCommand=false",
    "credential.helper=",
    "diff.external=",
    "gpg.program=false",
    "gpg.openpgp.program=false",
    "gpg.x509.program=false",
    "gpg.ssh.program=false",
    "gpg.ssh.defaultKeyCommand=false",
    "log.showSignature=false",
    "protocol.allow=never",
    "submodule.recurse=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "safe.directory=*",  # read-only plumbing under these guards: the owner of the files does not matter
)


class Refused(Exception):
    """The folder is not a repository tipc reads: the message says why (a link leading out of it, ...)."""


@dataclass(frozen=True)
class Repository:
    folder: Path  # the folder named (resolved)
    git_dir: Path  # its git folder, inside `folder` (resolved)


def available() -> bool:
    return shutil.which("git") is not None


def guarded_env(git_dir: Path | None = None) -> dict[str, str]:
    """The environment of a guarded git: nothing of tipc's own but PATH; GIT_DIR when given (no discovery)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/nonexistent",
        "XDG_CONFIG_HOME": "/nonexistent",
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_SYSTEM": "/dev/null",
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_PAGER": "cat",
        "PAGER": "cat",
        "GIT_PROTOCOL_FROM_USER": "0",
    }
    if git_dir is not None:
        env["GIT_DIR"] = str(git_dir)
    return env


def argv(args: Sequence[str]) -> list[str]:
    """`git` with every guard, then `args`."""
    guards = [item for key in GUARDS for item in ("-c", key)]
    return ["git", "--no-pager", *guards, *args]


def capture(
    args: Sequence[str],
    *,
    cwd: Path,
    git_dir: Path | None = None,
    timeout_s: float = 120.0,
    on_start: proc.StartHook | None = None,
) -> tuple[int | None, str]:
    """A short guarded git query (`proc.capture`). Without `git_dir`, git finds the repository above `cwd`
    itself (a worktree's `.git` file is followed: under the guards its config runs nothing)."""
    return proc.capture(argv(args), cwd=cwd, env=guarded_env(git_dir), timeout_s=timeout_s, on_start=on_start)


def pipe(args: Sequence[str], repo: Repository, *, timeout_s: float) -> proc.Pipe:
    """A guarded git whose stdin and stdout this process talks to (`cat-file --batch`, `ls-tree -z`)."""
    return proc.Pipe(argv(args), cwd=repo.folder, env=guarded_env(repo.git_dir), timeout_s=timeout_s)


# --- a submission's repository -----------------------------------------------------------------------------


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _gitdir_file(dotgit: Path) -> Path:
    """Where a `.git` file (`gitdir: PATH`) leads."""
    try:
        with open(dotgit, "rb") as fh:
            text = fh.read(4096).decode("utf-8", errors="replace")
    except OSError as exc:
        raise Refused(f"{dotgit}: cannot read: {exc.strerror or exc}") from None
    first = text.splitlines()[0] if text.splitlines() else ""
    if not first.startswith("gitdir:"):
        raise Refused(f"{dotgit}: a .git file that is not `gitdir: PATH`")
    return Path(os.path.realpath(dotgit.parent / first.removeprefix("gitdir:").strip()))


def open_repository(folder: Path) -> Repository:
    """The repository of `folder` (a work tree with `.git`, or a bare repository), read only from inside it.

    Refused when there is none, or when its `.git` (a `gitdir:` file or a link), its `commondir`, its
    objects, refs or alternates lead outside `folder`: git would then read another repository (its objects,
    and without the guards its config) in the submission's name.
    """
    root = Path(os.path.realpath(folder))
    dotgit = root / ".git"
    if os.path.lexists(dotgit):
        if dotgit.is_symlink():
            git_dir = Path(os.path.realpath(dotgit))
        elif dotgit.is_file():
            git_dir = _gitdir_file(dotgit)
        else:
            git_dir = dotgit
        if not _inside(git_dir, root):
            raise Refused(
                f"{dotgit} leads to {git_dir}, outside the submission: tipc reads a submission's own "
                "repository only (give that repository itself)"
            )
    elif (root / "HEAD").is_file() and (root / "objects").is_dir():
        git_dir = root  # a bare repository
    else:
        raise Refused(f"{folder}: not a git repository (no .git in it)")
    if not git_dir.is_dir():
        raise Refused(f"{dotgit}: leads to {git_dir}, which is not a folder")
    _check_inside(git_dir, root)
    return Repository(root, git_dir)


def _check_inside(git_dir: Path, root: Path) -> None:
    """Refused when what git reads through `git_dir` (objects, refs, a commondir, alternates) is elsewhere."""
    commondir = git_dir / "commondir"
    if os.path.lexists(commondir):
        raise Refused(
            f"{commondir}: the repository is a linked worktree of another one: give that repository itself"
        )
    for name in ("objects", "refs", "packed-refs", "HEAD", "config"):
        part = git_dir / name
        if os.path.lexists(part) and not _inside(Path(os.path.realpath(part)), root):
            raise Refused(f"{part} leads to {os.path.realpath(part)}, outside the submission")
    alternates = git_dir / "objects" / "info" / "alternates"
    if os.path.lexists(alternates):
        try:
            with open(alternates, "rb") as fh:
                listed = fh.read(65536).decode("utf-8", errors="replace").splitlines()
        except OSError as exc:
            raise Refused(f"{alternates}: cannot read: {exc.strerror or exc}") from None
        for line in listed:
            entry = line.strip()
            if not entry or entry.startswith("#"):
                continue
            where = Path(os.path.realpath(git_dir / "objects" / entry))
            if not _inside(where, root):
                raise Refused(f"{alternates} borrows objects from {where}, outside the submission")
