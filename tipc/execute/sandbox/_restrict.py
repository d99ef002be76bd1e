"""The rest of the file system, as a sandboxed run sees it (applied once, in tipc's own private mount
namespace, so every command of the run inherits it at no cost per command):
- the homes (/root, /home, tipc's own $HOME wherever it lies) and /run are masked by empty file systems:
  nobody's credentials, agent sockets or history are there; the folders the run needs under them (the
  interpreters, tipc itself) are bound back read-only at their own paths, the view and the folders asked to
  stay writable at theirs;
- /tmp and /var/tmp are one fresh tmpfs of at most --disk-limit (or a given folder, for the observation):
  no other user's files or sockets; HOME is `/home/tipc`, an empty folder of it;
- every other mount is made read-only except /proc (a step's own /proc is mounted from it), /dev and the
  cgroup file system tipc writes the run's limits to; /sys is read-only;
- /dev/shm is a fresh tmpfs (DataLoader workers need one).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass

from tipc.execute.sandbox import _syscalls as sc

# Files and folders under $HOME that hold credentials: hidden where $HOME itself cannot be masked.
SECRETS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".pypirc",
    ".git-credentials",
    ".config/gh",
    ".pgpass",
)
MASKED = ("/root", "/home", "/run")
STEP_HOME = "/home/tipc"
_KEEP_WRITABLE = ("/proc", "/dev", "/sys/fs/cgroup")
_FLAG_OPTIONS = {"nosuid": sc.MS_NOSUID, "nodev": sc.MS_NODEV, "noexec": sc.MS_NOEXEC}
_SCRATCH = "/dev/shm/.tipc-sandbox"


@dataclass(frozen=True)
class View:
    """What `restrict` made: the places a command may write (not the `writable` folders outside the view:
    tipc's own, a --report-dir) and the HOME it gets."""

    writable: tuple[str, ...]
    home: str
    masked: tuple[str, ...]


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _mounts() -> list[tuple[str, int]]:
    """(mount point, the per-mount flags a remount must keep) of every mount in /proc/self/mountinfo."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            fields = line.split()
            point = fields[4].encode().decode("unicode_escape")
            flags = 0
            for option in fields[5].split(","):
                flags |= _FLAG_OPTIONS.get(option, 0)
            found.append((point, flags))
    return found


def _hide_secrets(home: str) -> None:
    for name in SECRETS:
        path = os.path.join(home, name)
        if os.path.isdir(path) and not os.path.islink(path):
            sc.mount("tmpfs", path, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, "size=16k,mode=700")
        elif os.path.isfile(path):
            sc.mount("/dev/null", path, None, sc.MS_BIND)


def _masks(home: str) -> list[str]:
    """The folders covered by an empty file system, outermost only."""
    wanted = [os.path.realpath(m) for m in MASKED if os.path.isdir(m)]
    if home and home != "/" and os.path.isdir(home):
        wanted.append(os.path.realpath(home))
    out: list[str] = []
    for mask in sorted(set(wanted), key=len):
        if (
            not any(_under(mask, m) for m in out)
            and not _under(mask, "/tmp")
            and not _under(mask, "/var/tmp")
        ):
            out.append(mask)
    return out


def restrict(
    view: str,
    state: str,
    *,
    writable: Sequence[str] = (),
    keep: Sequence[str] = (),
    owner: tuple[int, int] | None = None,
    tmp_size: int | None = None,
) -> View:
    """Apply the rules above in this (already private) mount namespace. `view`: the repo as the run sees it;
    `state`: the run folder as reachable here (its `tmp/` and `home/` are bound); `writable`: folders
    outside the view that must stay writable (a --report-dir outside the repo); `keep`: folders the run
    reads under a mask (the interpreters' prefixes); `owner`: (uid, gid) of the steps; `tmp_size`: /tmp is
    a tmpfs of this size (None: the folder `state/tmp`)."""
    sc.mount("tmpfs", "/dev/shm", "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, "mode=1777")
    home = os.environ.get("HOME", "")
    masks = _masks(home)
    tmp, home_source = _run_tmp(state, owner, tmp_size)
    covers = _covers(masks, tmp)
    points = [point for point, _ in covers]
    held = _hold([(p, True) for p in [view, *writable]] + [(p, False) for p in keep], points)
    _cover(covers)
    _bring_back(held)
    _own_mounts([w for w in writable if os.path.realpath(w) not in {real for _, real, _ in held}])
    if (
        home
        and home != "/"
        and os.path.isdir(home)
        and not any(_under(os.path.realpath(home), m) for m in points)
    ):
        _hide_secrets(home)
    step_home = _step_home(home_source, owner, masked="/home" in masks)
    places = [os.path.realpath(view), *(p for p, s in covers if s), step_home]  # what commands may write
    _read_only_but([*places, *(os.path.realpath(w) for w in writable), "/dev/shm", *_KEEP_WRITABLE])
    try:
        os.chdir(os.getcwd())  # see the mounts made above from the working directory too
    except OSError:
        os.chdir("/")  # it was under a cover (a folder of the host's /tmp)
    return View(tuple(dict.fromkeys(places)), step_home, tuple(masks))


def _run_tmp(state: str, owner: tuple[int, int] | None, tmp_size: int | None) -> tuple[str, str]:
    """(the folder that becomes /tmp, the one that becomes HOME): a tmpfs of `tmp_size` and a folder of it,
    or the run folder's `tmp/` and `home/`."""
    if tmp_size is None:
        return os.path.join(state, "tmp"), os.path.join(state, "home")
    tmp = f"{_SCRATCH}/tmp"
    os.makedirs(tmp, exist_ok=True)
    size = max(tmp_size, 1 << 20)
    sc.mount("tmpfs", tmp, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, f"mode=1777,size={size}")
    home = os.path.join(tmp, ".tipc-home")
    os.makedirs(home, mode=0o700)
    if owner is not None:
        os.chown(home, *owner)
    return tmp, home


def _covers(masks: list[str], tmp: str) -> list[tuple[str, str | None]]:
    """Every mount point covered, outermost only: the masks (empty tmpfs) and /tmp, /var/tmp (`tmp`)."""
    covers: list[tuple[str, str | None]] = [(m, None) for m in masks]
    covers += [(os.path.realpath(t), tmp) for t in ("/tmp", "/var/tmp") if os.path.isdir(t)]
    return [c for c in covers if not any(_under(c[0], o[0]) and c[0] != o[0] for o in covers)]


def _hold(back: list[tuple[str, bool]], points: list[str]) -> list[tuple[str, str, bool]]:
    """Each folder to bring back on top of a cover, bound aside first: (where it is held, its path, rw)."""
    held: list[tuple[str, str, bool]] = []
    for n, (path, rw) in enumerate(back):
        real = os.path.realpath(path)
        if not os.path.isdir(real) or not any(_under(real, m) for m in points):
            continue
        hold = f"{_SCRATCH}/held{n}"
        os.makedirs(hold, exist_ok=True)
        sc.mount(real, hold, None, sc.MS_BIND | sc.MS_REC)
        held.append((hold, real, rw))
    return held


def _cover(covers: list[tuple[str, str | None]]) -> None:
    for point, source in sorted(dict.fromkeys(covers), key=lambda c: c[0].count("/")):
        if source is not None:
            sc.mount(source, point, None, sc.MS_BIND)
        else:  # homes: passable to what is kept there, never listable
            mode = "0755" if point == "/run" else "0711"
            sc.mount("tmpfs", point, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, f"mode={mode},size=1m")


def _bring_back(held: list[tuple[str, str, bool]]) -> None:
    for hold, real, rw in sorted(held, key=lambda h: h[1].count("/")):
        os.makedirs(real, exist_ok=True)
        sc.mount(hold, real, None, sc.MS_BIND | sc.MS_REC)
        if not rw:
            sc.mount(None, real, None, sc.MS_REMOUNT | sc.MS_BIND | sc.MS_RDONLY)


def _own_mounts(folders: Sequence[str]) -> None:
    """Each folder bound onto itself: a mount of its own stays writable when the one it lies on (/, /work)
    turns read-only (a --report-dir or a review's work area outside the repo and /tmp)."""
    for folder in folders:
        real = os.path.realpath(folder)
        if os.path.isdir(real):
            sc.mount(real, real, None, sc.MS_BIND | sc.MS_REC)


def _read_only_but(keep_rw: list[str]) -> None:
    """Every mount read-only but those under `keep_rw`."""
    for point, flags in _mounts():
        if any(_under(point, k) for k in keep_rw):
            continue
        # A mount we cannot remount (already read-only, or hidden under another) stays as it is.
        with contextlib.suppress(OSError):
            sc.mount(None, point, None, sc.MS_REMOUNT | sc.MS_BIND | sc.MS_RDONLY | flags)


def _step_home(source: str, owner: tuple[int, int] | None, *, masked: bool) -> str:
    """HOME of every command (the folder `source`): at /home/tipc where /home is masked, else a folder of
    the run's /tmp."""
    target = STEP_HOME if masked else "/tmp/.tipc-home"
    os.makedirs(target, exist_ok=True)
    if owner is not None:
        with contextlib.suppress(OSError):
            os.chown(target, *owner)
    if masked or source != target:
        sc.mount(source, target, None, sc.MS_BIND)
    return target
