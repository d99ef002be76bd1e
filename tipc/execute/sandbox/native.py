"""The jail's shim as a native program: `shim.c` compiled once per source and machine, where a C compiler is.

Every sandboxed command starts through the shim (tipc.execute.sandbox.jail); as `python -I -S _shim.py` it
costs an interpreter's start (about 20 ms) per command, most of the sandbox's share of a short chain. The C
build does the same in about 1 ms. It is built beside the source (the package's folder, which the jailed
commands can already reach, as they reach `_shim.py`), into a name that carries the source's hash, through
a temporary file and a rename, so concurrent runs never see half a program. No compiler, a folder tipc
cannot write, or a failed build: `None`, and the Python shim runs (the same calls, the same messages).
`TIPC_SHIM=python` forces the Python shim (the tests run both).

`record.c`, the observation's recording stand-in (tipc.execute.observation), is built the same way
(`record_program`; `TIPC_RECORDER=python` keeps the Python recorder): a script calls its interpreter a few
times per observation, each call an interpreter's start in Python, a millisecond in C.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("shim.c")
RECORD_SOURCE = Path(__file__).with_name("record.c")
_built: dict[str, str | None] = {}


def shim_program() -> str | None:
    """The compiled shim's path (built now if needed), or None where the Python shim must run."""
    if os.environ.get("TIPC_SHIM") == "python":
        return None
    return _program(SOURCE, "_shim")


def record_program() -> str | None:
    """The compiled recording stand-in's path (built now if needed), or None where the Python one runs."""
    if os.environ.get("TIPC_RECORDER") == "python":
        return None
    return _program(RECORD_SOURCE, "_record")


def _program(path: Path, prefix: str) -> str | None:
    try:
        source = path.read_bytes()
    except OSError:
        return None
    digest = hashlib.sha256(source + os.uname().machine.encode()).hexdigest()[:16]
    if digest not in _built:
        _built[digest] = _build(source, path.with_name(f"{prefix}-{digest}"))
    return _built[digest]


def _build(source: bytes, target: Path) -> str | None:
    if _usable(target):
        return str(target)
    compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if compiler is None:
        return None
    try:
        fd, scratch = tempfile.mkstemp(prefix=".shim-", dir=target.parent)
    except OSError:  # a package folder tipc may not write (a system-wide install)
        return None
    os.close(fd)
    from tipc.execute import proc

    try:
        # tipc's own compiler on tipc's own source, before any command of the run: outside the jail
        done = proc.run(
            [compiler, "-O2", "-x", "c", "-", "-o", scratch],
            cwd=target.parent,
            stdin_data=source,
            timeout_s=60,
            trusted=True,
        )
        if done.exit_code != 0:
            return None
        os.chmod(scratch, 0o755)
        os.replace(scratch, target)
    except OSError:
        return None
    finally:
        if os.path.exists(scratch):
            os.unlink(scratch)
    return str(target) if _usable(target) else None


def _usable(path: Path) -> bool:
    """A program only tipc's owner may change: executable, not writable by group or others."""
    try:
        info = path.stat()
    except OSError:
        return False
    return bool(info.st_mode & 0o100) and not info.st_mode & 0o022 and info.st_uid == os.geteuid()
