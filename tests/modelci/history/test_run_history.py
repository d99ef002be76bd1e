"""`tipc run --history` stores every run, as `tipc check --history` does (issue 9: every run and check)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.config.fixtures import COMPACT, make_repo
from tests.serve.fake_serving import stdlib_python
from tipc.modelci.history import open_history

ROOT = Path(__file__).resolve().parents[3]
TRAIN = "print('epoch 1 loss: 0.5, avg_reader_cost: 0.01 s, avg_batch_cost: 0.1 s, avg_ips: 40.0')\n"

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("sandboxed", [True, False])
def test_run_with_history_stores_the_run(tmp_path: Path, sandboxed: bool) -> None:
    repo = make_repo(
        tmp_path / "repo", {"test_tipc/configs/m/train_infer_python.txt": COMPACT, "train.py": TRAIN}
    )
    db = tmp_path / "history.sqlite3"
    argv = [sys.executable, "-m", "tipc", "run", str(repo), "--only", "train", "--no-prepare"]
    argv += ["--python", stdlib_python(tmp_path / "bin"), "--history", str(db)]
    argv += [] if sandboxed else ["--no-sandbox"]
    done = subprocess.run(
        argv, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert f"stored in the history {db}" in done.stderr
    with open_history(db) as history:
        runs = history.runs(str(repo))
    assert [r.kind for r in runs] == ["run"]
