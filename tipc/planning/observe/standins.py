"""The recording stand-ins an observation puts first on the script's PATH (`stand_ins`): one per interpreter
name (`_INTERPRETERS`), each appending its call as one JSON line to the record file; the sitecustomize that
records and stops a real interpreter the stand-ins cannot shadow; an instant `sleep`; inert stand-ins for the
tools that must not run (`INERT_TOOLS`). Pure: returns the files' texts, writes nothing.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

# Tools a script may call that must not run for real (network, GPU, package or repo state); each is an inert
# stand-in that exits 0 without output.
INERT_TOOLS = (
    "nvidia-smi",
    "wget",
    "curl",
    "pip",
    "pip3",
    "git",
    "apt",
    "apt-get",
    "yum",
    "sudo",
    "conda",
    "docker",
    "ssh",
    "scp",
    "rsync",
    "hdfs",
    "pkill",
    "killall",
    "shutdown",
    "reboot",
    "tipc",  # tipc's own wrapper script delegates to `tipc run`: never start a real run while observing
)
_INTERPRETERS = ("python", "python2", "python3", *(f"python3.{n}" for n in range(5, 15)))

# The recorder every interpreter stand-in execs: one JSON line per call, written with a single append. It
# writes its JSON itself (ASCII, as json.dumps does by default): importing json (and re) would be most of
# each call's cost, paid once per interpreter call of the script.
_RECORDER = r"""
import os, sys
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
def text(value):
    out = ['"']
    for ch in value:
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code > 0xFFFF:
            code -= 0x10000
            out.append("\\u%04x\\u%04x" % (0xD800 | (code >> 10), 0xDC00 | (code & 0x3FF)))
        else:
            out.append("\\u%04x" % code)
    out.append('"')
    return "".join(out)
def dumps(value):
    if value is None:
        return "null"
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return "{" + ", ".join(text(k) + ": " + dumps(v) for k, v in value.items()) + "}"
    return "[" + ", ".join(dumps(v) for v in value) + "]"
def target(fd):
    try:
        return os.readlink("/proc/self/fd/%d" % fd)
    except OSError:
        return None
def record(path, name, argv, via):
    data = {"name": name, "argv": argv, "cwd": os.getcwd(), "env": dict(os.environ),
            "stdout": target(1), "stderr": target(2), "via": via}
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.write(fd, (dumps(data) + "\n").encode())
    os.close(fd)
if __name__ == "__main__":
    record(sys.argv[1], sys.argv[2], sys.argv[3:], "stand-in")
"""

# The compiled recorder's name in the stand-ins' folder (tipc/execute/sandbox/record.c: the same JSON line).
NATIVE_RECORDER = "_tipc_record"

# A real interpreter the stand-ins cannot shadow (an absolute path written into the script) still imports
# `sitecustomize` from PYTHONPATH at start-up: it records the call the same way and exits before user code.
_SITECUSTOMIZE = """
import os, sys
sys.path.insert(0, {tools!r})
import _tipc_record
argv = list(getattr(sys, "orig_argv", [sys.executable, *sys.argv]))
_tipc_record.record({record!r}, argv[0], argv[1:], "site")
os._exit(0)
"""


# ---------------------------------------------------------------------------------------------------------
# stand-ins


def stand_ins(
    tools: str, record: str, names: Iterable[str], python: str, *, native: bool = False
) -> dict[str, tuple[str, int]]:
    """The files of the stand-ins folder `tools` (path relative to it -> (text, mode)): one recording
    stand-in per interpreter name in `names` (they exec `python -I -S` on the recorder, appending to
    `record`; with `native`, the compiled recorder the caller puts at `tools`/NATIVE_RECORDER, which writes
    the same line), the sitecustomize that stops a real interpreter, an instant `sleep` and the inert
    tools."""
    if native:
        call = f"exec {shlex.quote(f'{tools}/{NATIVE_RECORDER}')} {shlex.quote(record)}"
    else:
        recorder = f"{tools}/_tipc_record.py"
        # -I -S: the stand-in starts fast and never imports anything from the repo or the user's site.
        call = f"exec {shlex.quote(python)} -I -S {shlex.quote(recorder)} {shlex.quote(record)}"
    files: dict[str, tuple[str, int]] = {"_tipc_record.py": (_RECORDER, 0o644)}
    for name in names:
        files[name] = (f'#!/bin/sh\n{call} "$0" "$@"\n', 0o755)
    files["site/sitecustomize.py"] = (_SITECUSTOMIZE.format(tools=tools, record=record), 0o644)
    files["sleep"] = ("#!/bin/sh\nexit 0\n", 0o755)
    for name in INERT_TOOLS:
        files[name] = ("#!/bin/sh\nexit 0\n", 0o755)
    return files
