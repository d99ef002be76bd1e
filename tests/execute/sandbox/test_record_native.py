"""The compiled recording stand-in (tipc/execute/sandbox/record.c) writes, byte for byte, the line the Python
recorder writes for the same call: argv, environment, working folder and output targets drawn at random,
invalid UTF-8, control and astral characters included."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tipc.execute.sandbox import native
from tipc.planning.observe.standins import _RECORDER

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler here")

_ALPHABET = [
    *b"azAZ09 -_=./\\\"'$`{}[]:,",
    0x00 + 1,
    0x07,
    0x08,
    0x09,
    0x0A,
    0x0C,
    0x0D,
    0x1B,
    0x1F,
    0x7F,
    0x80,
    0xA0,
    0xBF,
    0xC0,
    0xC2,
    0xDF,
    0xE0,
    0xED,
    0xEF,
    0xF0,
    0xF4,
    0xF5,
    0xFF,
]
_SAMPLES = ["é", "中文", "𝄞", "\U0010fffd", "\ud7ff", "\ufffe"]


def _word(rng: random.Random, *, allow_equals: bool = True) -> bytes:
    out = bytearray()
    for _ in range(rng.randrange(0, 12)):
        if rng.random() < 0.2:
            out += rng.choice(_SAMPLES).encode("utf-8", "surrogatepass")
        else:
            out.append(rng.choice(_ALPHABET))
    if not allow_equals:
        out = out.replace(b"=", b"~")
    return bytes(out)


def _call(argv: list[bytes], env: dict[bytes, bytes], cwd: Path, out: Path) -> bytes:
    record = cwd / "calls.jsonl"
    record.unlink(missing_ok=True)
    with out.open("wb") as stdout:
        subprocess.run(argv, env=env, cwd=cwd, stdout=stdout, stderr=subprocess.DEVNULL, check=True)
    return record.read_bytes()


def test_the_native_recorder_writes_what_the_python_recorder_writes(tmp_path: Path) -> None:
    program = native.record_program()
    assert program is not None
    python_recorder = tmp_path / "_tipc_record.py"
    python_recorder.write_text(_RECORDER, encoding="utf-8")
    cwd = tmp_path / "wo rk\x01é"
    cwd.mkdir()
    rng = random.Random(20261127)
    for case in range(150):
        args = [_word(rng) for _ in range(rng.randrange(0, 5))]
        env = {b"LC_ALL": b"C.UTF-8"}  # no locale coercion by the Python side (PEP 538)
        for _ in range(rng.randrange(0, 6)):
            env[b"K_" + _word(rng, allow_equals=False).replace(b"\0", b"")] = _word(rng)
        name = _word(rng) or b"python3"
        out = tmp_path / f"out {case % 3}.log"
        record = os.fsencode(cwd / "calls.jsonl")
        want = _call(
            [os.fsencode(sys.executable), b"-I", b"-S", os.fsencode(python_recorder), record, name, *args],
            env,
            cwd,
            out,
        )
        got = _call([os.fsencode(program), record, name, *args], env, cwd, out)
        assert got == want, (case, name, args, env)


def test_the_stand_ins_exec_the_native_recorder_when_asked() -> None:
    from tipc.planning.observe.standins import NATIVE_RECORDER, stand_ins

    files = stand_ins("/tmp/.t", "/tmp/.r", ["python3"], "/usr/bin/python3", native=True)
    assert files["python3"][0] == f'#!/bin/sh\nexec /tmp/.t/{NATIVE_RECORDER} /tmp/.r "$0" "$@"\n'
    plain = stand_ins("/tmp/.t", "/tmp/.r", ["python3"], "/usr/bin/python3")
    assert "-I -S /tmp/.t/_tipc_record.py" in plain["python3"][0]


def test_tipc_recorder_python_keeps_the_python_recorder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIPC_RECORDER", "python")
    assert native.record_program() is None
