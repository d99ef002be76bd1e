"""The rest of the file system, as a sandboxed run sees it (applied once, in tipc's own private namespace, so
every command of the run inherits it at no cost per command):
- /tmp and $HOME become copy-on-write (reads see the real files, writes vanish with the run);
- the secrets under $HOME (ssh keys, cloud and registry credentials) are hidden behind empty mounts;
- every other mount is made read-only, so the view (and the folders asked for) are the only places to write;
- /dev/shm is a fresh tmpfs (DataLoader workers need one).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence

from tipc.execute.sandbox import _syscalls as sc

# Files and folders under $HOME that hold credentials; hidden from every sandboxed command.
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
_KEEP_WRITABLE = ("/proc", "/sys", "/dev")
_FLAG_OPTIONS = {"nosuid": sc.MS_NOSUID, "nodev": sc.MS_NODEV, "noexec": sc.MS_NOEXEC}


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


def _cow(target: str, upper: str, work: str) -> None:
    os.makedirs(upper, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    sc.mount("overlay", target, "overlay", 0, f"lowerdir={target},upperdir={upper},workdir={work}")


def _hide_secrets(home: str) -> None:
    for name in SECRETS:
        path = os.path.join(home, name)
        if os.path.isdir(path) and not os.path.islink(path):
            sc.mount("tmpfs", path, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, "size=16k,mode=700")
        elif os.path.isfile(path):
            sc.mount("/dev/null", path, None, sc.MS_BIND)


def restrict(view: str, writable: Sequence[str] = ()) -> None:
    """Apply the rules above in this (already private) mount namespace. `writable`: folders outside the view
    that must stay writable (a --report-dir outside the repo)."""
    sc.mount("tmpfs", "/dev/shm", "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, "mode=1777")
    scratch = "/dev/shm/.tipc-sandbox"
    home = os.environ.get("HOME", "")
    cows = ["/tmp"]
    if home and home != "/" and os.path.isdir(home) and not _under(home, "/tmp"):
        cows.append(home)
    keep = [view, "/dev/shm", *cows, *_KEEP_WRITABLE]
    # Folders that must stay writable, and a view inside /tmp or $HOME, which their new layers would
    # cover: hold them aside and put them back on top.
    held: list[tuple[str, str]] = []
    for n, path in enumerate([*writable, view]):
        if path != view or any(_under(view, c) for c in cows):
            os.makedirs(path, exist_ok=True)
            hold = f"{scratch}/held{n}"
            os.makedirs(hold, exist_ok=True)
            sc.mount(path, hold, None, sc.MS_BIND | sc.MS_REC)
            held.append((hold, path))
            keep.append(path)
    for n, target in enumerate(cows):
        _cow(target, f"{scratch}/{n}.upper", f"{scratch}/{n}.work")
    for hold, path in held:
        os.makedirs(path, exist_ok=True)
        sc.mount(hold, path, None, sc.MS_BIND | sc.MS_REC)
    if home and home != "/" and os.path.isdir(home) and not _under(view, home):
        _hide_secrets(home)
    for point, flags in _mounts():
        if any(_under(point, k) for k in keep):
            continue
        # A mount we cannot remount (already read-only, or hidden under another) stays as it is.
        with contextlib.suppress(OSError):
            sc.mount(None, point, None, sc.MS_REMOUNT | sc.MS_BIND | sc.MS_RDONLY | flags)
    os.chdir(os.getcwd())  # see the mounts made above from the working directory too
