"""A child tipc (baseline record's and matrix's runs) is the parent's tipc, wherever that is imported from."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tipc.commands._children import run_child
from tipc.core.progress import no_progress
from tipc.execute.own_parts import tipc_root


def test_a_child_tipc_imports_the_parents_tipc_from_any_folder(tmp_path: Path) -> None:
    """Started from a folder where `import tipc` finds nothing by itself (the parent ran from a checkout's
    root, with no install), the child still finds this tipc: its root is first on PYTHONPATH."""
    # an interpreter that has no tipc of its own: isolated from site-packages, nothing on PYTHONPATH
    bare = subprocess.run(
        [sys.executable, "-S", "-c", "import tipc"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert bare.returncode != 0
    lines: list[str] = []
    probe = "import os, tipc; print(os.path.dirname(os.path.dirname(tipc.__file__)))"
    res = run_child([sys.executable, "-S", "-c", probe], tmp_path, "probe", no_progress, lines)
    assert res.exit_code == 0, lines
    assert lines[-1] == tipc_root()
    tipc_init = __import__("tipc").__file__
    assert tipc_init is not None
    assert tipc_root() == os.path.dirname(os.path.dirname(tipc_init))
