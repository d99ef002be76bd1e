"""Runs in the jail right before a sandboxed command: `python -I -S _shim.py SOCK NR PROG FSIZE CAPS -- ARGV`.

Standard library only, no tipc import (it runs with -I -S: fast, nothing from the repo or the user's site).
1. CAPS=1: drop every capability (effective, permitted, inheritable, bounding set) where bwrap did not;
2. no_new_privs, RLIMIT_FSIZE = FSIZE bytes (0: unchanged), so no single file outgrows the disk limit;
3. install the seccomp filter PROG (hex) with a listener, send the listener to tipc over fd SOCK (SCM_RIGHTS),
   close it; where the kernel has no listener, the same filter answering EPERM, and tell tipc so (b"E");
4. exec ARGV. Any failure before the exec ends the shim with 126 and one line on stderr: the command never
   runs unfiltered.
"""

import ctypes
import os
import sys

PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
SECCOMP_SET_MODE_FILTER = 1
FLAG_NEW_LISTENER = 1 << 3
RET_USER_NOTIF = 0x7FC00000
RET_ERRNO_EPERM = 0x00050001
SYS_CAPSET = {"x86_64": 126, "aarch64": 91}


def fail(what: str) -> None:
    os.write(2, f"tipc sandbox: {what}; the command was not run\n".encode())
    os._exit(126)


def drop_caps(libc: ctypes.CDLL, machine: str) -> None:
    for cap in range(64):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the last one: nothing to drop
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable x 2: all zero
    if libc.syscall(SYS_CAPSET[machine], header, data) != 0:
        fail(f"capset: {os.strerror(ctypes.get_errno())}")


def install(libc: ctypes.CDLL, nr: int, prog: bytes, listener: bool) -> int:
    buf = ctypes.create_string_buffer(prog, len(prog))

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Prog(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p))
    flags = FLAG_NEW_LISTENER if listener else 0
    result: int = libc.syscall(nr, SECCOMP_SET_MODE_FILTER, flags, ctypes.byref(fprog))
    return result


def without_listener(prog: bytes) -> bytes:
    """The program with every RET_USER_NOTIF turned into RET_ERRNO(EPERM)."""
    out = bytearray(prog)
    for at in range(0, len(out), 8):
        code = int.from_bytes(out[at : at + 2], sys.byteorder)
        k = int.from_bytes(out[at + 4 : at + 8], sys.byteorder)
        if code == 0x06 and k == RET_USER_NOTIF:
            out[at + 4 : at + 8] = RET_ERRNO_EPERM.to_bytes(4, sys.byteorder)
    return bytes(out)


def send(sock_fd: int, message: bytes, fds: list[int]) -> None:
    import _socket

    sock = _socket.socket(fileno=sock_fd)
    try:
        data = b"".join(f.to_bytes(4, sys.byteorder) for f in fds)
        rights = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, data)]
        sock.sendmsg([message], rights if fds else [])
    finally:
        sock.close()


def main() -> None:
    sock_fd, nr, fsize = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[4])
    prog, caps = sys.argv[3], sys.argv[5]
    argv = sys.argv[7:]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    if caps == "1":
        drop_caps(libc, os.uname().machine)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        fail(f"no_new_privs: {os.strerror(ctypes.get_errno())}")
    if fsize > 0:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    program = bytes.fromhex(prog) if sock_fd >= 0 else without_listener(bytes.fromhex(prog))
    listener = install(libc, nr, program, sock_fd >= 0) if nr > 0 else -1
    if nr > 0 and listener < 0:
        if install(libc, nr, without_listener(program), False) != 0:
            fail(f"seccomp: {os.strerror(ctypes.get_errno())}")
        if sock_fd >= 0:
            send(sock_fd, b"E", [])
    elif sock_fd >= 0:
        send(sock_fd, b"L", [listener])
        os.close(listener)
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(2, f"tipc sandbox: cannot run {argv[0]!r}: {exc.strerror}\n".encode())
        os._exit(127 if exc.errno == 2 else 126)


if __name__ == "__main__":
    main()
