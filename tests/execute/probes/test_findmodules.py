"""tipc/execute/probes/findmodules.py, run as tipc runs it: a standalone script under an interpreter."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import tipc

PROBE = Path(tipc.__file__).resolve().parent / "execute" / "probes" / "findmodules.py"


def _run(*names: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(PROBE), *names], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_all_found_prints_nothing_and_exits_0(tmp_path: Path) -> None:
    res = _run("json", "os.path", cwd=tmp_path)
    assert (res.returncode, res.stdout.strip(), res.stderr) == (0, "", "")


def test_missing_names_printed_and_exit_1(tmp_path: Path) -> None:
    # a dotted name under a missing parent raises inside find_spec: still just "missing", no traceback
    res = _run("json", "no_such_mod_xq", "no_such_pkg_xq.sub", cwd=tmp_path)
    assert res.returncode == 1 and res.stderr == ""
    assert res.stdout.split() == ["no_such_mod_xq", "no_such_pkg_xq.sub"]


def test_working_folder_searched_not_the_probe_folder(tmp_path: Path) -> None:
    (tmp_path / "repo_local_mod.py").write_text("")
    res = _run("repo_local_mod", "paddleversion", cwd=tmp_path)  # a sibling probe must not count as found
    assert res.returncode == 1 and res.stdout.split() == ["paddleversion"]


def test_syntax_runs_under_python_3_7() -> None:
    ast.parse(PROBE.read_text(), feature_version=(3, 7))
