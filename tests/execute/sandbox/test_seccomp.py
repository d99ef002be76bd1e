"""tipc.execute.sandbox.seccomp: the filter's verdicts (its BPF program run by a small interpreter here, for
every call and architecture), and the filter in a real process: denied, answered EPERM, recorded."""

from __future__ import annotations

import errno
import os
import struct
import sys
import textwrap
from pathlib import Path

import pytest

from tipc.execute import proc
from tipc.execute.sandbox import seccomp
from tipc.execute.sandbox.jail import Jail, JailSpec
from tipc.execute.sandbox.native import shim_program

ALLOW, NOTIFY, KILL = seccomp.RET_ALLOW, seccomp.RET_USER_NOTIF, seccomp.RET_KILL_PROCESS
ENOSYS = seccomp.RET_ERRNO | errno.ENOSYS
EPERM = seccomp.RET_ERRNO | errno.EPERM


def run_bpf(program: bytes, nr: int, arch: int, arg0: int = 0) -> int:
    """What the kernel returns for one call (struct seccomp_data: nr, arch, ip, args), by the classic BPF
    rules for the instructions the filter uses."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    code = [struct.unpack_from("HBBI", program, at) for at in range(0, len(program), 8)]
    pc, acc = 0, 0
    for _ in range(len(code) + 1):
        op, jt, jf, k = code[pc]
        if op == 0x20:  # ld w abs
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif op == 0x06:  # ret k
            return int(k)
        elif op == 0x05:  # ja
            pc += 1 + k
        else:
            test = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[op]
            pc += 1 + (jt if test else jf)
    raise AssertionError("the program does not end")


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHES))
def test_every_denied_call_goes_to_the_supervisor_and_nothing_else_does(machine: str) -> None:
    arch = seccomp.ARCHES[machine]
    program = seccomp.program(notify=True, machine=machine)
    nrs = arch.numbers
    for name in seccomp.DENIED:
        if name in nrs:
            assert run_bpf(program, nrs[name], arch.audit) == NOTIFY, name
    checked = set(seccomp.DENIED) | {"unshare", "clone", "socket", "clone3"}
    for nr in range(0, 470):
        if nr not in {v for k, v in nrs.items() if k in checked}:
            assert run_bpf(program, nr, arch.audit) == ALLOW, nr
    assert run_bpf(program, nrs["clone3"], arch.audit) == ENOSYS


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHES))
def test_namespace_flags_and_vsock_are_read_from_the_first_argument(machine: str) -> None:
    arch = seccomp.ARCHES[machine]
    program = seccomp.program(notify=False, machine=machine)
    nrs = arch.numbers
    sigchld, thread = 17, 0x00010000 | 0x00000100 | 0x00000800  # a fork, a thread
    for flag in (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000):
        assert run_bpf(program, nrs["unshare"], arch.audit, flag) == EPERM, hex(flag)
        assert run_bpf(program, nrs["clone"], arch.audit, flag | sigchld) == EPERM, hex(flag)
    assert run_bpf(program, nrs["clone"], arch.audit, sigchld) == ALLOW
    assert run_bpf(program, nrs["clone"], arch.audit, thread) == ALLOW
    assert run_bpf(program, nrs["unshare"], arch.audit, 0x00000400) == ALLOW  # CLONE_FILES: no namespace
    assert run_bpf(program, nrs["socket"], arch.audit, seccomp.AF_VSOCK) == EPERM
    assert run_bpf(program, nrs["socket"], arch.audit, 2) == ALLOW  # AF_INET (the run's own loopback)


def test_calls_of_another_architecture_kill_the_process() -> None:
    x86 = seccomp.ARCHES["x86_64"]
    program = seccomp.program(machine="x86_64")
    assert run_bpf(program, 11, 0x40000003) == KILL  # i386's execve
    assert run_bpf(program, 0x40000000 | 59, x86.audit) == KILL  # x32's execve
    assert run_bpf(program, 59, x86.audit) == ALLOW


HOSTILE = textwrap.dedent(
    """
    import ctypes, os, socket
    libc = ctypes.CDLL(None, use_errno=True)
    def show(name, result):
        print(name, "ok" if result == 0 else os.strerror(ctypes.get_errno()), flush=True)
    show("mount", libc.mount(None, b"/", None, 32 | 4096, None))
    show("unshare", libc.unshare(0x10000000))
    show("keyctl", libc.syscall(250 if os.uname().machine == "x86_64" else 219, 0, 0, 0, 0, 0))
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    print("fork ok", flush=True)
    socket.socket().close()
    print("socket ok", flush=True)
    """
)


@pytest.mark.integration
@pytest.mark.skipif(not seccomp.supported(), reason=f"no filter for {os.uname().machine}")
@pytest.mark.parametrize("which", ["native", "python"])
def test_the_shim_denies_and_records_the_calls_a_real_process_attempts(
    which: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each shim alone (no bwrap: whatever this machine allows), with tipc's notifier answering: the compiled
    shim.c and _shim.py install the same filter and hand tipc the same listener."""
    if which == "python":
        monkeypatch.setenv("TIPC_SHIM", "python")
    else:
        monkeypatch.delenv("TIPC_SHIM", raising=False)
        if shim_program() is None:
            pytest.skip("no C compiler here: the Python shim runs")
    jail = Jail(JailSpec(bwrap=None, writable=(), home="/tmp"))
    assert jail.to_json()["shim"] == which
    proc.set_launcher(jail)
    lines: list[str] = []
    try:
        res = proc.run([sys.executable, "-c", HOSTILE], cwd="/", on_line=lines.append, label="hostile")
    finally:
        proc.set_launcher(None)
    assert res.exit_code == 0, lines
    assert "mount Operation not permitted" in lines and "unshare Operation not permitted" in lines
    assert "keyctl Operation not permitted" in lines and "fork ok" in lines and "socket ok" in lines
    assert {"mount", "unshare", "keyctl"} <= set(res.denied)
    found = {v.label: v for v in jail.violations()}
    assert {"mount", "unshare", "keyctl"} <= set(found["hostile"].calls)
    own = Path("/proc/self/status").read_text()
    assert "Seccomp:\t0" in own, "the filter is the command's, never tipc's own"
