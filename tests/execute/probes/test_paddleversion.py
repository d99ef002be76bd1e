"""tipc/execute/probes/paddleversion.py, run as tipc runs it: a standalone script under an interpreter."""

from __future__ import annotations

import ast
import importlib.metadata
import subprocess
import sys
from pathlib import Path

import tipc

PROBE = Path(tipc.__file__).resolve().parent / "execute" / "probes" / "paddleversion.py"


def _installed() -> str | None:
    for dist in ("paddlepaddle-gpu", "paddlepaddle"):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return None


def test_prints_the_installed_version_from_metadata(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, str(PROBE)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    expected = _installed()
    if expected is None:
        assert res.returncode != 0
    else:
        assert res.returncode == 0 and res.stdout.strip().splitlines()[-1] == expected


def test_without_metadata_imports_paddle_from_the_working_folder(tmp_path: Path) -> None:
    # a build without metadata (here: a stand-in package in the working folder, searched first as under -c)
    (tmp_path / "paddle").mkdir()
    (tmp_path / "paddle" / "__init__.py").write_text("__version__ = '0.0.7-local'\n")
    code = (
        "import runpy, sys, importlib.metadata as m\n"
        "def nope(name): raise m.PackageNotFoundError(name)\n"
        "m.version = nope\n"
        f"sys.argv = [{str(PROBE)!r}]\n"
        f"runpy.run_path({str(PROBE)!r}, run_name='__main__')\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "0.0.7-local"


def test_syntax_runs_under_python_3_7() -> None:
    ast.parse(PROBE.read_text(), feature_version=(3, 7))
