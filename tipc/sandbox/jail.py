"""Runs one command of a sandboxed tipc run, then execs it: `python -E -s jail.py SPEC_JSON -- ARGV...`.

tipc itself already sits in a private mount and network namespace whose repo path shows the copy-on-write view
(see tipc.sandbox). Here, in a further private mount namespace for this one command:
- /tmp and $HOME become copy-on-write too (reads see the real files, writes vanish with the command);
- the secrets under $HOME (ssh keys, cloud and registry credentials) are hidden behind empty mounts;
- every other mount is made read-only, so the view is the only place the command can write to;
- /dev/shm is a fresh tmpfs (DataLoader workers need it).
Standard library only, and no tipc import: it runs in a bare interpreter started by tipc.proc.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

import _syscalls as sc  # type: ignore[import-not-found]  # the sibling module (this file runs as a script)

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


def setup(spec: dict[str, object]) -> None:
    view = str(spec["view"])
    writable = [str(p) for p in spec.get("writable", ())]  # type: ignore[attr-defined]
    sc.unshare(sc.CLONE_NEWNS)
    sc.mount(None, "/", None, sc.MS_REC | sc.MS_PRIVATE)
    # A fresh tmpfs at /dev/shm (DataLoader workers need one) also holds the upper layers of /tmp and $HOME:
    # layers from tipc's own namespace cannot be mounted from this one, and these writes need not outlive
    # the command.
    sc.mount("tmpfs", "/dev/shm", "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, "mode=1777")
    scratch = "/dev/shm/.tipc-sandbox"
    home = os.environ.get("HOME", "")
    cows = ["/tmp"]
    if home and home != "/" and os.path.isdir(home) and not _under(home, "/tmp"):
        cows.append(home)
    # A view inside /tmp or $HOME would be covered by their new layers: hold it aside and put it back on top.
    held = None
    if any(_under(view, c) for c in cows):
        held = scratch + "/view"
        os.makedirs(held, exist_ok=True)
        sc.mount(view, held, None, sc.MS_BIND | sc.MS_REC)
    for n, target in enumerate(cows):
        _cow(target, f"{scratch}/{n}.upper", f"{scratch}/{n}.work")
    if held is not None:
        sc.mount(held, view, None, sc.MS_BIND | sc.MS_REC)
    if home and home != "/" and os.path.isdir(home) and not _under(view, home):
        _hide_secrets(home)
    keep = (view, "/dev/shm", *cows, *writable, *_KEEP_WRITABLE)
    for point, flags in _mounts():
        if any(_under(point, k) for k in keep):
            continue
        # A mount we cannot remount (already read-only, or hidden under another) stays as it is.
        with contextlib.suppress(OSError):
            sc.mount(None, point, None, sc.MS_REMOUNT | sc.MS_BIND | sc.MS_RDONLY | flags)
    os.chdir(os.getcwd())  # see the mounts made above from the working directory too


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: jail.py SPEC_JSON -- ARGV...\n")
        return 2
    try:
        setup(json.loads(argv[1]))
    except OSError as exc:
        sys.stderr.write(f"tipc sandbox: cannot set up the step's jail: {exc}\n")
        return 126
    command = argv[3:]
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"tipc: cannot start {command[0]!r}: {exc.strerror or exc}\n")
        return 127
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv))
