"""Copy-on-write runs: the chain sees the repo, but whatever it writes lands in tipc's run folder.

`enter()` puts the tipc process itself (before it starts any thread) into a private mount namespace, and by
default a private network namespace with only loopback, then mounts an overlay on the repo's own path: the
committed tree is the read-only lower layer, a fresh upper layer lives in the run folder
`<repo>/test_tipc/output/tipc/<model>/<config>/<mode>/`. Absolute paths in commands keep working, every run
starts from the committed tree (no stale artefacts from an earlier run), and the user's files stay
byte-identical. The folders whose contents the user reads afterwards (the chain's output folders, the report
folder) are bind-mounted from real folders of the run folder. Then `_restrict` makes the rest of the file
system read-only, gives /tmp and $HOME copy-on-write layers and hides credentials; every command of the run
inherits all of it, at no cost per command.

The namespaces die with the tipc process, whatever ends it: nothing is left mounted anywhere.
Backends: `overlay` (as root, or in a user namespace where the kernel allows it), `copy` (the portable
fallback: a plain copy of the working tree, announced with its cost), `none` (`--no-sandbox`: in place).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tipc.core.errors import UserError

BACKENDS = ("auto", "overlay", "copy", "none")
RUNS_DIR = "test_tipc/output/tipc"  # tipc's own folder in the repo's output folder
# What a new run leaves in the run folder: earlier checks' reports (tipc.commands._reports)
KEPT_ON_FRESH = frozenset({"reports"})
MAX_CHANGES_LISTED = 5000
_UNSAFE_OPTION_CHARS = re.compile(r"[,:\\\s]")


@dataclass(frozen=True)
class SandboxOptions:
    backend: str = "auto"  # one of BACKENDS
    network: bool = False  # True: the chain may reach the network (no private network namespace)
    memory_bytes: int | None = None  # the run's memory limit (None: a share of the machine's memory)
    max_tasks: int | None = None  # processes and threads (None: limits.DEFAULT_MAX_TASKS)


@dataclass(frozen=True)
class Change:
    """A file the run created, changed or deleted in the repo's tree (it lives only in the upper layer)."""

    path: str  # repo-relative
    kind: str  # created | changed | deleted
    size: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "size": self.size}


@dataclass
class Session:
    backend: str  # overlay | copy | none
    repo: Path  # the user's repo, as the user named it (resolved)
    view: Path  # where the chain sees the repo: the repo path itself (overlay, none) or the copy
    folder: Path | None  # the run folder (real path), None for `none`
    network: bool
    setup_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    binds: dict[str, str] = field(default_factory=dict)  # role -> repo-relative folder, bound from the run
    limits: Any = None  # tipc.execute.sandbox.limits.Limits of the run, when cgroups could be written
    _state: str | None = None  # the run folder as reachable from inside the namespaces
    _lower: str | None = None  # the real repo as reachable from inside the namespaces (overlay)

    @property
    def active(self) -> bool:
        return self.backend == "overlay"

    def real(self, role: str) -> Path | None:
        """Where the folder bound for `role` really is (what the user opens after the run)."""
        if self.backend != "overlay" or self.folder is None or role not in self.binds:
            return None
        return self.folder / role

    def real_path(self, path: Path) -> Path:
        """Where a file the run saw at `path` (in the view) really is once tipc has ended."""
        if self.backend != "overlay" or self.folder is None:
            return path
        try:
            rel = path.resolve().relative_to(self.repo).as_posix()
        except ValueError:
            return path
        for role, bound in sorted(self.binds.items(), key=lambda item: -item[1].count("/")):
            if rel == bound or rel.startswith(bound + "/"):
                return self.folder / role / rel[len(bound) :].lstrip("/")
        return self.folder / "upper" / rel

    def layers(self) -> list[tuple[Path, Path]]:
        """(the folder this process reads it at now, the folder of the view its files appear in) for each
        copy-on-write layer of the run: the upper layer over the repo and each bound output folder."""
        if self.backend != "overlay" or self._state is None:
            return []
        state = Path(self._state)
        return [
            (state / "upper", self.repo),
            *((state / role, self.repo / rel) for role, rel in self.binds.items()),
        ]

    def changes(self) -> list[Change]:
        """Every file of the repo's tree the run created, changed or deleted (outside the bound folders)."""
        if self.backend != "overlay" or self._state is None or self._lower is None:
            return []
        upper = Path(self._state) / "upper"
        lower = Path(self._lower)
        found: list[Change] = []
        for path in _walk_files(upper):
            rel = path.relative_to(upper).as_posix()
            try:
                st = path.lstat()
            except OSError:
                continue
            if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
                found.append(Change(rel, "deleted"))
            elif os.path.lexists(lower / rel):
                found.append(Change(rel, "changed", st.st_size))
            else:
                found.append(Change(rel, "created", st.st_size))
        return sorted(found, key=lambda c: c.path)

    def to_json(self, changes: Sequence[Change] | None = None) -> dict[str, Any]:
        listed = list(changes if changes is not None else self.changes())
        folder = None
        if self.folder is not None:
            try:
                folder = self.folder.relative_to(self.repo).as_posix()
            except ValueError:
                folder = str(self.folder)
        return {
            "backend": self.backend,
            "network": self.network,
            "folder": folder,
            "view": str(self.view),
            "binds": dict(self.binds),
            "setup_s": round(self.setup_s, 4),
            "notes": list(self.notes),
            "changes": [c.to_json() for c in listed[:MAX_CHANGES_LISTED]],
            "changes_total": len(listed),
        }


# The session this process is in, if any.
_current: Session | None = None
CHILD_ENV = "TIPC_SANDBOX_CHILD"


def must_reexec(options: SandboxOptions) -> bool:
    """True when this process must not enter namespaces itself: it is not tipc's own process (a test, a
    library caller: `tipc.cli.main` called in-process) and the run is sandboxed. The command then runs as a
    child `python -m tipc ...` (`reexec_argv`), which enters them."""
    from tipc import cli

    if options.backend == "none" or (_current is not None and _current.backend != "none"):
        return False  # in place, or already inside this process's sandbox
    return not cli.IS_CONSOLE and os.environ.get(CHILD_ENV) != "1"


def reexec_argv() -> list[str]:
    from tipc import cli

    return [sys.executable, "-m", "tipc", *cli.INVOCATION]


def current() -> Session | None:
    return _current


def _walk_files(top: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(top):
        dirs.sort()
        for name in sorted(files):
            yield Path(root, name)
        for name in dirs:
            full = Path(root, name)
            if full.is_symlink():
                yield full


def _safe(rel: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", rel.strip("/")).strip("._") or "_"


def run_folder(repo: Path, key: Sequence[str]) -> Path:
    """`<repo>/test_tipc/output/tipc/<model>/<config stem>/<mode>`."""
    return repo / RUNS_DIR / Path(*(_safe(k) for k in key))


def run_key(model_name: str, config_path: str, mode: str) -> tuple[str, str, str]:
    """The key of a run's folder: (model, config file stem, mode)."""
    return (model_name or "model", Path(config_path).stem, mode)


def stored_path(repo: Path, key: Sequence[str], output_dir: str, rel: str) -> Path:
    """Where a file a sandboxed (overlay) run saw at repo-relative `rel` really is after the run: under
    `<run folder>/logs` when it is in the chain's output folder, else in the upper layer."""
    folder = run_folder(repo, key)
    out = output_dir.strip("/")
    rel = rel.strip("/")
    if out and (rel == out or rel.startswith(out + "/")):
        return folder / "logs" / rel[len(out) :].lstrip("/")
    return folder / "upper" / rel


def enter(
    repo: Path,
    key: Sequence[str],
    binds: Mapping[str, str],
    options: SandboxOptions,
    *,
    fresh: bool,
    writable: Sequence[Path] = (),
    wait: bool = False,
) -> Session:
    """Put this process into the sandbox of the run `key` (model, config stem, mode).

    `binds` maps a role (logs, serving, report) to a repo-relative folder that must outlive the process (the
    chain's output folders, the report folder): the real folder `<run folder>/<role>` is bound over that path
    in the view. With `fresh`,
    the run folder's layers are emptied first (a new run); without it they are reused (`--resume`,
    `check --reuse-run`). With `wait`, a run folder another tipc is using is waited for (`tipc check`:
    one check at a time per run folder, its reports included), else refused. Call it before any thread is
    started.
    """
    global _current
    if options.backend not in BACKENDS:
        raise UserError(f"--sandbox {options.backend!r}: expected one of {', '.join(BACKENDS)}")
    repo = repo.resolve()
    if options.backend == "none":
        if wait:  # in place too, one check at a time: the records it reuses are not rewritten under it
            _hold(run_folder(repo, key), wait=True, in_place=True)
        _current = Session("none", repo, repo, None, network=True)
        _current.notes.append("no sandbox (--no-sandbox): the chain runs in place and may write anywhere")
        from tipc import cli

        if cli.IS_CONSOLE or os.environ.get(CHILD_ENV) == "1":  # never a library caller's process
            _contain(_current, pid_namespace=False)
        return _current
    if must_reexec(options):
        # Namespaces are for tipc's own process only: entering them from a library caller (a test runner,
        # an application) would leave that caller inside them for good.
        from tipc.core.errors import InfraError

        raise InfraError(
            "tipc.execute.sandbox.enter called outside tipc's own process; run the command as a child"
        )
    folder = run_folder(repo, key)
    started = time.perf_counter()
    _hold(folder, wait=wait)
    problem = None
    if options.backend in ("auto", "overlay"):
        problem = _overlay_problem(repo)
        if problem is None:
            try:
                session = _enter_overlay(repo, folder, binds, options, fresh=fresh, writable=writable)
            except OSError as exc:
                problem = f"the overlay could not be set up ({exc})"
            else:
                _limit(session, options)
                session.setup_s = time.perf_counter() - started
                _current = session
                return session
        if options.backend == "overlay":
            raise UserError(f"--sandbox overlay: {problem}")
    session = _enter_copy(repo, folder, options, fresh=fresh)
    _contain(session, pid_namespace=True)
    _limit(session, options)
    session.setup_s = time.perf_counter() - started
    session.notes.insert(
        0,
        f"sandbox: copy of the working tree ({problem or '--sandbox copy'}); "
        f"copying took {session.setup_s:.1f} s",
    )
    _current = session
    return session


_held: list[int] = []  # lock files of the run folders this process uses, held until it ends


def _hold(folder: Path, *, wait: bool = False, in_place: bool = False) -> None:
    """One tipc at a time per run folder: a second run of the same config and mode would empty the layers
    the first one is running on, and a second check would read records the first is rewriting. The lock
    (`<folder>.lock`) dies with the process, however it ends; `release()` lets it go earlier. `in_place`
    (--no-sandbox, where nothing but the chain may write in the repo): the lock file is in the temp folder."""
    import fcntl

    if in_place:
        import hashlib
        import tempfile

        digest = hashlib.sha256(str(folder).encode()).hexdigest()[:24]
        lock = Path(tempfile.gettempdir()) / "tipc-locks" / f"{digest}.lock"
    else:
        lock = Path(f"{folder}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        if not wait:
            os.close(fd)
            raise UserError(
                f"{folder}: another tipc run of this config and mode is using this run folder; "
                "wait for it or stop it first"
            ) from None
        sys.stderr.write(f"tipc: waiting for the other tipc using {folder} (same config and mode) to end\n")
        sys.stderr.flush()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # Ctrl-C, SIGTERM and SIGHUP still stop the wait
        except BaseException:
            os.close(fd)
            raise
    _held.append(fd)


def release() -> None:
    """Let go of the run folders this process holds (a check run in a library caller's process)."""
    while _held:
        os.close(_held.pop())


_CONTAINED = "processes: the run's own PID namespace; nothing it starts outlives tipc, however tipc ends"


def _contain(session: Session, *, pid_namespace: bool) -> None:
    """Tie every later child to this process (see tipc.execute.proc): a PID namespace of its own where one can
    be
    had, else a subreaper that sweeps orphans after each step (but cannot outlive a SIGKILL of tipc)."""
    from tipc.execute import proc
    from tipc.execute.sandbox import _syscalls as sc

    if proc.containment() != "none":
        return
    if pid_namespace:
        try:
            sc.unshare(sc.CLONE_NEWNS)
            sc.mount(None, "/", None, sc.MS_REC | sc.MS_PRIVATE)
        except OSError:
            pass
        else:
            if _pid_namespace(probe_first=not _is_initial_user_namespace()):
                session.notes.append(_CONTAINED)
                return
    if proc.become_subreaper():
        session.notes.append(
            "processes: orphans of the run's steps are stopped after each step; a SIGKILL of tipc can leave "
            "the running step's processes behind (no PID namespace here)"
        )


def _is_initial_user_namespace() -> bool:
    try:
        return Path("/proc/self/uid_map").read_text().split()[:3] == ["0", "0", "4294967295"]
    except (OSError, IndexError):
        return False


def _pid_namespace(*, probe_first: bool = False) -> bool:
    """Carry on as init of a PID namespace of our own (tipc.execute.proc.become_namespace_init), with that
    namespace's /proc mounted over /proc (in our private mount namespace) so that pids read there are the
    pids the run's processes have. False, and nothing changed, where the kernel refuses."""
    from tipc.execute import proc
    from tipc.execute.sandbox import _syscalls as sc

    try:
        own = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:

        def mount_proc() -> None:
            sc.mount("proc", "/proc", "proc", sc.MS_NOSUID | sc.MS_NODEV | sc.MS_NOEXEC)

        def trial() -> None:  # in a throw-away child: a PID namespace of its own, /proc mounted in it
            sc.unshare(sc.CLONE_NEWPID | sc.CLONE_NEWNS)
            sc.mount(None, "/", None, sc.MS_REC | sc.MS_PRIVATE)
            if not proc.succeeds_in_child(mount_proc):
                raise OSError("cannot mount /proc in a new PID namespace")

        if probe_first and not proc.succeeds_in_child(trial):
            return False
        try:
            sc.unshare(sc.CLONE_NEWPID)
        except OSError:
            return False
        if proc.become_namespace_init(mount_proc):
            return True
        with contextlib.suppress(OSError):
            sc.setns(own, sc.CLONE_NEWPID)  # later children are born where we are, as before
        return False
    finally:
        os.close(own)


def _limit(session: Session, options: SandboxOptions) -> None:
    """Memory and process limits for the whole run (cgroups), released when tipc ends."""
    import atexit

    from tipc.execute.sandbox import limits as limits_mod

    memory = options.memory_bytes
    if memory is None:
        total = limits_mod.machine_memory()
        memory = int(total * limits_mod.DEFAULT_MEMORY_FRACTION) if total else None
    limits = limits_mod.Limits(memory, options.max_tasks or limits_mod.DEFAULT_MAX_TASKS)
    limits.apply()
    atexit.register(limits.release)
    session.limits = limits
    session.notes.append(limits.note)


def _overlay_problem(repo: Path) -> str | None:
    if not sys.platform.startswith("linux"):
        return "overlay needs Linux"
    if _UNSAFE_OPTION_CHARS.search(str(repo)):
        return "the repo path holds a character overlay options cannot carry (comma, colon, backslash, space)"
    if not Path("/proc/filesystems").is_file() or "overlay" not in Path("/proc/filesystems").read_text():
        return "the kernel has no overlay file system"
    return None


def _reset(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _enter_overlay(
    repo: Path,
    folder: Path,
    binds: Mapping[str, str],
    options: SandboxOptions,
    *,
    fresh: bool,
    writable: Sequence[Path] = (),
) -> Session:
    from tipc.execute.sandbox import _syscalls as sc

    # Make the run folder before the namespaces, then hold both it and the real repo by open folders:
    # once the overlay covers the repo path, /proc/self/fd/N still reaches them.
    roles = {role: rel.strip("/") for role, rel in binds.items() if rel.strip("/")}
    if fresh and folder.is_dir():
        for entry in folder.iterdir():
            if entry.name not in KEPT_ON_FRESH:
                _reset(entry)
    for part in ("upper", "work", *roles):
        (folder / part).mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        sc.enter_user_namespace()
    sc.unshare(sc.CLONE_NEWNS | (0 if options.network else sc.CLONE_NEWNET))
    if not options.network:
        sc.loopback_up()
    sc.mount(None, "/", None, sc.MS_REC | sc.MS_PRIVATE)
    # Before the paths below name this process's /proc entry. In a user namespace of our own a failed try
    # cannot be undone (setns back needs rights we gave up), so it is tried in a child first.
    pid_namespace = _pid_namespace(probe_first=os.geteuid() != 0 or not _is_initial_user_namespace())
    # Opened inside the new namespace (the overlay refuses layers reached through the old one's mounts).
    folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    repo_fd = os.open(repo, os.O_RDONLY | os.O_DIRECTORY)
    state = f"/proc/{os.getpid()}/fd/{folder_fd}"
    lower = f"/proc/{os.getpid()}/fd/{repo_fd}"
    sc.mount(
        "overlay",
        str(repo),
        "overlay",
        0,
        f"lowerdir={repo},upperdir={state}/upper,workdir={state}/work",
    )
    # tipc's own folders are not part of the view the chain sees.
    tipc_dir = repo / RUNS_DIR
    if tipc_dir.is_dir():
        sc.mount("tmpfs", str(tipc_dir), "tmpfs", sc.MS_NOSUID | sc.MS_NODEV | sc.MS_RDONLY, "size=4k")
    for role, rel in sorted(roles.items(), key=lambda item: item[1].count("/")):
        target = repo / rel
        committed = Path(lower) / rel
        target.mkdir(parents=True, exist_ok=True)
        if committed.is_dir() and not committed.is_symlink() and any(committed.iterdir()):
            # The repo ships files there: the chain sees them (the committed tree), its writes go to the
            # run folder's `<role>` layer.
            (Path(state) / f"{role}.work").mkdir(exist_ok=True)
            sc.mount(
                "overlay",
                str(target),
                "overlay",
                0,
                f"lowerdir={committed},upperdir={state}/{role},workdir={state}/{role}.work",
            )
        else:
            sc.mount(f"{state}/{role}", str(target), None, sc.MS_BIND)
    from tipc.execute.sandbox import _restrict

    _restrict.restrict(str(repo), [str(w) for w in writable])  # also re-enters the working directory
    session = Session(
        "overlay", repo, repo, folder, network=options.network, binds=roles, _state=state, _lower=lower
    )
    if pid_namespace:
        session.notes.append(_CONTAINED)
    else:
        _contain(session, pid_namespace=False)
    session.notes.append(
        "sandbox: overlay; the repo is the read-only lower layer, writes land in "
        f"{folder.relative_to(repo)}/upper; network: {'allowed (--network)' if options.network else 'none'}"
    )
    return session


def _enter_copy(repo: Path, folder: Path, options: SandboxOptions, *, fresh: bool) -> Session:
    view = folder / "view"
    if fresh or not view.is_dir():
        _reset(view)
        view.parent.mkdir(parents=True, exist_ok=True)
        skip = (repo / RUNS_DIR).resolve()

        def ignore(directory: str, names: list[str]) -> list[str]:
            return [n for n in names if Path(directory, n).resolve() == skip]

        shutil.copytree(repo, view, symlinks=True, ignore=ignore)
    session = Session("copy", repo, view, folder, network=True)
    if not options.network:
        session.notes.append("sandbox: copy backend: the network is NOT isolated (needs a network namespace)")
    return session
