"""The few Linux system calls the sandbox needs, through ctypes (Python 3.11 has no os.unshare/os.mount).

Standard library only.
"""

from __future__ import annotations

import ctypes
import errno
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000

_libc = ctypes.CDLL("libc.so.6", use_errno=True)
_libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p)
_libc.unshare.argtypes = (ctypes.c_int,)
_libc.setns.argtypes = (ctypes.c_int, ctypes.c_int)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _b(text: str | None) -> bytes | None:
    return None if text is None else os.fsencode(text)


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def setns(fd: int, nstype: int) -> None:
    _check(_libc.setns(fd, nstype), "setns")


def mount(
    source: str | None, target: str, fstype: str | None, flags: int = 0, data: str | None = None
) -> None:
    _check(_libc.mount(_b(source), _b(target), _b(fstype), flags, _b(data)), f"mount {target}")


def loopback_up() -> None:
    """Bring `lo` up in a fresh network namespace (it starts down): read its flags, set IFF_UP."""
    import fcntl
    import socket
    import struct

    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock.fileno(), siocgifflags, request))[1]
        fcntl.ioctl(sock.fileno(), siocsifflags, struct.pack("16sH14x", b"lo", flags | iff_up))


def write_file(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def enter_user_namespace() -> None:
    """Become root of a new user namespace (mapped to our uid): mount and network namespaces are allowed."""
    uid, gid = os.getuid(), os.getgid()
    unshare(CLONE_NEWUSER)
    try:
        write_file("/proc/self/setgroups", "deny")
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise
    write_file("/proc/self/uid_map", f"0 {uid} 1")
    write_file("/proc/self/gid_map", f"0 {gid} 1")


# ---- idmapped mounts (Linux >= 5.12): the repo seen as owned by the steps' uid

_NR = {"x86_64": (428, 429, 442), "aarch64": (428, 429, 442)}  # open_tree, move_mount, mount_setattr
OPEN_TREE_CLONE = 0x1
AT_FDCWD = -100
AT_EMPTY_PATH = 0x1000
MOVE_MOUNT_F_EMPTY_PATH = 0x4
MOUNT_ATTR_IDMAP = 0x00100000
_libc.syscall.restype = ctypes.c_long


def _nr(index: int) -> int:
    machine = os.uname().machine
    if machine not in _NR:
        raise OSError(errno.ENOSYS, f"no mount API numbers for {machine}")
    return _NR[machine][index]


def _sys(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def user_namespace_fd(uid_map: str, gid_map: str) -> int:
    """An fd of a fresh user namespace with these maps (made by a throw-away child). Before any thread."""
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(ready_r)
        os.close(go_w)
        try:
            unshare(CLONE_NEWUSER)
            os.write(ready_w, b"1")
            os.read(go_r, 1)
        finally:
            os._exit(0)
    os.close(ready_w)
    os.close(go_r)
    try:
        if os.read(ready_r, 1) != b"1":
            raise OSError(errno.EPERM, "cannot create a user namespace for the idmapped mount")
        write_file(f"/proc/{pid}/uid_map", uid_map)
        write_file(f"/proc/{pid}/gid_map", gid_map)
        return os.open(f"/proc/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(ready_r)
        os.close(go_w)
        os.waitpid(pid, 0)


def idmapped_clone(source: str, dest: str, userns_fd: int) -> None:
    """Mount at `dest` a clone of `source` (not its submounts) seen through the maps of `userns_fd`."""
    import struct

    fd = _sys(_libc.syscall(_nr(0), AT_FDCWD, _b(source), OPEN_TREE_CLONE | os.O_CLOEXEC), "open_tree")
    try:
        attr = ctypes.create_string_buffer(struct.pack("QQQQ", MOUNT_ATTR_IDMAP, 0, 0, userns_fd))
        _sys(_libc.syscall(_nr(2), fd, b"", AT_EMPTY_PATH, attr, 32), "mount_setattr")
        _sys(_libc.syscall(_nr(1), fd, b"", AT_FDCWD, _b(dest), MOVE_MOUNT_F_EMPTY_PATH), "move_mount")
    finally:
        os.close(fd)


# ---- the file-system identity of this thread (and of the threads it starts afterwards)

_libc.setfsuid.argtypes = (ctypes.c_uint,)
_libc.setfsgid.argtypes = (ctypes.c_uint,)


def set_fs_ids(uid: int, gid: int) -> tuple[int, int]:
    """Make file accesses of this thread use `uid`/`gid` (a non-zero uid also drops the file capabilities:
    DAC override, chown...); returns the previous pair. Other threads keep theirs; threads started afterwards
    inherit it."""
    old_gid = _libc.setfsgid(gid)
    old_uid = _libc.setfsuid(uid)
    return int(old_uid), int(old_gid)
