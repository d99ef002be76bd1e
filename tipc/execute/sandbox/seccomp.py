"""The system calls a sandboxed process may not make, as a seccomp filter, and the recorder of its attempts.

`program()` is a classic BPF program (built here with `struct`, no dependency) that sends the calls which
could undo the sandbox (mount, umount2, pivot_root, setns, new namespaces, ptrace, keyctl, bpf, kernel
modules, kexec, ...) to a user-space supervisor (SECCOMP_RET_USER_NOTIF). The shim (`_shim.py`) installs it
in the step's process right before exec and hands the listener fd to tipc over a unix socket; `Notifier`
answers every such call with EPERM and records it: the step attempted it, and nothing the step does can hide
or forge that record (it is made outside the step's processes). Where the kernel has no listener (< 5.0),
the shim installs the same program with RET_ERRNO(EPERM): denied, not recorded, and said so.

`clone3` gets ENOSYS (its flags sit behind a pointer the filter cannot read; libc falls back to `clone`,
whose flags it can), a foreign architecture (i386 or x32 calls on x86_64) kills the process.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import select
import socket
import struct
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_USER_NOTIF = 0x7FC00000
RET_ALLOW = 0x7FFF0000

# Calls denied whatever their arguments.
DENIED = (
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "setns",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "open_tree_attr",
    "mount_setattr",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "open_by_handle_at",
    "name_to_handle_at",
    "swapon",
    "swapoff",
    "reboot",
    "syslog",
    "acct",
    "quotactl",
    "quotactl_fd",
    "iopl",
    "ioperm",
    "uselib",
    "vhangup",
    "settimeofday",
    "clock_settime",
    "sethostname",
    "setdomainname",
    "lookup_dcookie",
)
# Calls denied only with some arguments (read by the filter from the low 32 bits of the first one).
CLONE_NEW_FLAGS = 0x7E020000  # NS, CGROUP, UTS, IPC, USER, PID, NET: any new namespace
AF_VSOCK = 40  # vsock is not network-namespaced: it reaches the hypervisor's host

_COMMON = {  # the same number on every architecture (syscalls added after the tables were unified)
    "pidfd_getfd": 438,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "move_mount": 429,
    "open_tree": 428,
    "open_tree_attr": 467,
    "mount_setattr": 442,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "quotactl_fd": 443,
    "clone3": 435,
}
_X86_64 = {
    "mount": 165,
    "umount2": 166,
    "pivot_root": 155,
    "chroot": 161,
    "setns": 308,
    "ptrace": 101,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "keyctl": 250,
    "add_key": 248,
    "request_key": 249,
    "bpf": 321,
    "perf_event_open": 298,
    "userfaultfd": 323,
    "init_module": 175,
    "finit_module": 313,
    "delete_module": 176,
    "kexec_load": 246,
    "kexec_file_load": 320,
    "open_by_handle_at": 304,
    "name_to_handle_at": 303,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "syslog": 103,
    "acct": 163,
    "quotactl": 179,
    "iopl": 172,
    "ioperm": 173,
    "uselib": 134,
    "vhangup": 153,
    "settimeofday": 164,
    "clock_settime": 227,
    "sethostname": 170,
    "setdomainname": 171,
    "lookup_dcookie": 212,
    "unshare": 272,
    "clone": 56,
    "socket": 41,
    "seccomp": 317,
}
_AARCH64 = {  # the generic table (no iopl, ioperm, uselib there)
    "mount": 40,
    "umount2": 39,
    "pivot_root": 41,
    "chroot": 51,
    "setns": 268,
    "ptrace": 117,
    "process_vm_readv": 270,
    "process_vm_writev": 271,
    "keyctl": 219,
    "add_key": 217,
    "request_key": 218,
    "bpf": 280,
    "perf_event_open": 241,
    "userfaultfd": 282,
    "init_module": 105,
    "finit_module": 273,
    "delete_module": 106,
    "kexec_load": 104,
    "kexec_file_load": 294,
    "open_by_handle_at": 265,
    "name_to_handle_at": 264,
    "swapon": 224,
    "swapoff": 225,
    "reboot": 142,
    "syslog": 116,
    "acct": 89,
    "quotactl": 60,
    "vhangup": 58,
    "settimeofday": 170,
    "clock_settime": 112,
    "sethostname": 161,
    "setdomainname": 162,
    "lookup_dcookie": 18,
    "unshare": 97,
    "clone": 220,
    "socket": 198,
    "seccomp": 277,
}


@dataclass(frozen=True)
class Arch:
    audit: int  # AUDIT_ARCH_* of the native calls
    numbers: Mapping[str, int]
    x32_bit: int = 0  # a call number with this bit is the x32 ABI (x86_64 only)


ARCHES: dict[str, Arch] = {
    "x86_64": Arch(0xC000003E, {**_X86_64, **_COMMON}, x32_bit=0x40000000),
    "aarch64": Arch(0xC00000B7, {**_AARCH64, **_COMMON}),
}

# classic BPF
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_JA = 0x05
_RET_K = 0x06
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (arg0: its low 32 bits, little-endian)


def _ins(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k & 0xFFFFFFFF)


def supported(machine: str | None = None) -> bool:
    return (machine or os.uname().machine) in ARCHES


def program(*, notify: bool = True, machine: str | None = None) -> bytes:
    """The filter: denied calls go to the listener (`notify`) or fail with EPERM."""
    arch = ARCHES[machine or os.uname().machine]
    deny = RET_USER_NOTIF if notify else RET_ERRNO | errno.EPERM
    nrs = arch.numbers
    plain = [nrs[name] for name in DENIED if name in nrs]
    out = [_ins(_LD_W_ABS, 0, 0, _ARCH), _ins(_JEQ_K, 1, 0, arch.audit), _ins(_RET_K, 0, 0, RET_KILL_PROCESS)]
    out.append(_ins(_LD_W_ABS, 0, 0, _NR))
    if arch.x32_bit:
        out += [_ins(_JGE_K, 0, 1, arch.x32_bit), _ins(_RET_K, 0, 0, RET_KILL_PROCESS)]
    # [jeq nr_0 .. jeq nr_n-1] [ja +1] [ret deny]: a match jumps to the deny return.
    n = len(plain)
    out += [_ins(_JEQ_K, n - i, 0, nr) for i, nr in enumerate(plain)]
    out += [_ins(_JA, 0, 0, 1), _ins(_RET_K, 0, 0, deny)]
    out += [_ins(_JEQ_K, 0, 1, nrs["clone3"]), _ins(_RET_K, 0, 0, RET_ERRNO | errno.ENOSYS)]
    for name, test in (("unshare", _JSET_K), ("clone", _JSET_K), ("socket", _JEQ_K)):
        value = AF_VSOCK if name == "socket" else CLONE_NEW_FLAGS
        # nr == name ? (arg0 matches ? deny : allow) : next; the accumulator holds nr until it matches.
        out += [
            _ins(_JEQ_K, 0, 4, nrs[name]),
            _ins(_LD_W_ABS, 0, 0, _ARG0),
            _ins(test, 0, 1, value),
            _ins(_RET_K, 0, 0, deny),
            _ins(_RET_K, 0, 0, RET_ALLOW),
        ]
    out.append(_ins(_RET_K, 0, 0, RET_ALLOW))
    return b"".join(out)


def call_names(machine: str | None = None) -> dict[int, str]:
    return {nr: name for name, nr in ARCHES[machine or os.uname().machine].numbers.items()}


# ---------------------------------------------------------------------------------------------------------
# the supervisor

# ioctls on a listener (linux/seccomp.h): _IOWR('!', 0, struct seccomp_notif), _IOWR('!', 1, ..._resp)
_NOTIF_RECV = 0xC0502100
_NOTIF_SEND = 0xC0182101
_NOTIF = struct.Struct("QIIiIQ6Q")  # id, pid, flags, data.nr, data.arch, data.ip, data.args[6]
_RESP = struct.Struct("QqiI")  # id, val, error, flags
MAX_KEPT = 200  # attempts kept per process with their arguments (all are counted)


@dataclass(frozen=True)
class Attempt:
    call: str
    pid: int  # the caller's pid as tipc sees it
    arg0: int


@dataclass
class Tracker:
    """What one process (and everything it started) attempted; filled by the notifier's thread."""

    label: str
    attempts: list[Attempt] = field(default_factory=list)
    count: int = 0
    recorded: bool | None = None  # None: no word from the shim yet; False: denied but not recordable

    def calls(self) -> tuple[str, ...]:
        """The denied calls attempted, each once, in the order first attempted."""
        return tuple(dict.fromkeys(a.call for a in self.attempts))


class Notifier:
    """One thread answering the listeners of every jailed process: each call is denied (EPERM) and kept in
    its process's Tracker. `channel(label)` gives the socket end a shim sends its listener over."""

    def __init__(self) -> None:
        self._names = call_names() if supported() else {}
        self._lock = threading.Lock()
        self._waiting: dict[int, tuple[socket.socket, Tracker]] = {}  # socket fd -> (socket, tracker)
        self._listeners: dict[int, Tracker] = {}  # listener fd -> tracker
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._thread: threading.Thread | None = None
        self._closed = False

    def channel(self, label: str) -> tuple[socket.socket, Tracker]:
        """(the shim's end of a fresh socket pair, the tracker its process's attempts go to). The caller
        passes the returned socket's fd to the child and closes it once the child started."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        ours.setblocking(False)
        tracker = Tracker(label)
        with self._lock:
            self._waiting[ours.fileno()] = (ours, tracker)
            self._start()
        self._wake()
        return theirs, tracker

    def drop(self, tracker: Tracker) -> None:
        """Forget the channel of a process that never started."""
        with self._lock:
            for fd, (sock, waiting) in list(self._waiting.items()):
                if waiting is tracker:
                    del self._waiting[fd]
                    sock.close()
        self._wake()

    def settle(self, tracker: Tracker, timeout_s: float = 1.0) -> None:
        """Wait (briefly) until the shim's word for `tracker` arrived: a process that ended at once may not
        have been heard yet."""
        import time

        deadline = time.monotonic() + timeout_s
        while tracker.recorded is None and time.monotonic() < deadline:
            with self._lock:
                waiting = any(t is tracker for _, t in self._waiting.values())
            if not waiting:
                return
            time.sleep(0.005)

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="tipc-seccomp", daemon=True)
            self._thread.start()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def close(self) -> None:
        self._closed = True
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout=2)
        with self._lock:
            for sock, _ in self._waiting.values():
                sock.close()
            for fd in self._listeners:
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._waiting.clear()
            self._listeners.clear()

    def _loop(self) -> None:
        while not self._closed:
            with self._lock:
                fds = [*self._waiting, *self._listeners]
            poller = select.poll()
            poller.register(self._wake_r, select.POLLIN)
            for fd in fds:
                poller.register(fd, select.POLLIN)
            try:
                events = poller.poll(1000)
            except InterruptedError:
                continue
            for fd, event in events:
                if fd == self._wake_r:
                    with contextlib.suppress(OSError):
                        os.read(self._wake_r, 4096)
                elif fd in self._waiting:
                    self._receive(fd)
                elif fd in self._listeners:
                    self._answer(fd, event)

    def _receive(self, fd: int) -> None:
        """The shim's word: a listener fd (b"L"), or that only EPERM could be installed (b"E")."""
        with self._lock:
            sock, tracker = self._waiting.pop(fd)
        try:
            message, fds, _, _ = socket.recv_fds(sock, 16, 1)
        except OSError:
            message, fds = b"", []
        finally:
            sock.close()
        if fds:
            tracker.recorded = True
            with self._lock:
                self._listeners[fds[0]] = tracker
        else:
            tracker.recorded = False if message.startswith(b"E") else None

    def _answer(self, fd: int, event: int) -> None:
        if event & select.POLLIN:
            buf = bytearray(_NOTIF.size)
            try:
                fcntl.ioctl(fd, _NOTIF_RECV, buf)
            except OSError:
                return  # the caller died before we read it (ENOENT)
            fields = _NOTIF.unpack(buf)
            notif_id, pid, nr, arg0 = fields[0], fields[1], fields[3], fields[6]
            tracker = self._listeners.get(fd)
            if tracker is not None:
                tracker.count += 1
                if len(tracker.attempts) < MAX_KEPT:
                    tracker.attempts.append(Attempt(self._names.get(nr, f"syscall {nr}"), pid, arg0))
            with contextlib.suppress(OSError):  # the caller may have died meanwhile
                fcntl.ioctl(fd, _NOTIF_SEND, bytearray(_RESP.pack(notif_id, 0, -errno.EPERM, 0)))
        elif event & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
            with self._lock:  # no process uses the filter any more
                self._listeners.pop(fd, None)
            with contextlib.suppress(OSError):
                os.close(fd)


_notifier: Notifier | None = None
_notifier_lock = threading.Lock()


def notifier() -> Notifier:
    """This process's one notifier (its thread starts with the first channel)."""
    global _notifier
    with _notifier_lock:
        if _notifier is None:
            _notifier = Notifier()
        return _notifier
