"""The compiled shim: built once per source, never a program someone else could have changed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tipc.execute.sandbox import native

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler here")


def test_a_writable_stale_program_is_replaced_by_a_fresh_build(tmp_path: Path) -> None:
    target = tmp_path / "_shim-x"
    target.write_text("#!/bin/sh\necho planted\n")
    target.chmod(0o777)  # anyone could have written it: never run as found
    built = native._build(native.SOURCE.read_bytes(), target)
    assert built == str(target)
    assert target.read_bytes()[:4] == b"\x7fELF"
    assert target.stat().st_mode & 0o777 == 0o755
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".shim-")]  # no scratch left


def test_a_build_that_fails_leaves_the_python_shim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "false")
    assert native._build(b"int main(void) { return 0; }", tmp_path / "_shim-y") is None
    assert list(tmp_path.iterdir()) == []


def test_tipc_shim_python_forces_the_python_shim(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIPC_SHIM", "python")
    assert native.shim_program() is None
    monkeypatch.delenv("TIPC_SHIM")
    program = native.shim_program()
    assert program is not None and os.access(program, os.X_OK)
