"""Lineage on real published repos (../shared/real-repos, or TIPC_REAL_REPOS): the silent failures their
README lists come out FAIL with the file named. Needs the repos' packages in the interpreter of the real-repo
tier (tests/real_repos/conftest.py: .venv-repos or TIPC_REPOS_PYTHON); skipped, with the reason, when the
tarballs or the packages are absent. cutpaste_paddle's weights path that is never created is asserted with
its check in tests/real_repos/test_check_real_repos.py, on the run the real-repo tier shares."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.real_repos.conftest import REPOS_PYTHON

pytestmark = pytest.mark.real_repos

ROOT = Path(__file__).resolve().parents[2]
REAL = Path(os.environ.get("TIPC_REAL_REPOS", str(ROOT.parent / "shared" / "real-repos")))
PYTHON = str(REPOS_PYTHON)
RULESET = ROOT / "specs" / "tipc-basic.yaml"


def unpack(name: str, modules: tuple[str, ...], dest: Path) -> Path:
    archive = REAL / f"{name}.tar.gz"
    if not archive.is_file():
        pytest.skip(f"{archive} is not here (set TIPC_REAL_REPOS)")
    if not Path(PYTHON).is_file():
        pytest.skip(f"no interpreter for the real repos at {PYTHON} (run scripts/repos_env.sh)")
    probe = subprocess.run(
        [
            PYTHON,
            "-c",
            "import importlib.util, sys; "
            "sys.exit(0 if all(importlib.util.find_spec(m) for m in sys.argv[1:]) else 1)",
            *modules,
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip(f"{PYTHON} cannot import all of {', '.join(modules)}, which {name} needs")
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    return dest / name


def tipc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tipc", *args], capture_output=True, text=True, timeout=900, check=False
    )


def lineage_rules(repo: Path, *run_args: str, only: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    selected = [a for stage in only for a in ("--only", stage)]
    ran = tipc("run", str(repo), "--python", PYTHON, *run_args, *selected)
    assert "run record" in ran.stdout + ran.stderr, (ran.stdout + ran.stderr)[-2000:]
    checked = tipc(
        "check",
        str(repo),
        "--reuse-run",
        "--python",
        PYTHON,
        *run_args,
        "--ruleset",
        str(RULESET),
        "--format",
        "json",
    )
    assert checked.stdout.strip(), checked.stderr[-2000:]
    report = json.loads(checked.stdout)
    return {r["id"]: r for r in report["rules"] if r["id"].startswith("basic.lineage.")}


def test_dncnn_export_and_inference_read_committed_files(tmp_path: Path) -> None:
    # Train segfaults in its 16 DataLoader workers here, so only export and inference run (train SKIPPED):
    # export loads the committed logs/net.pdparams, inference the committed 2022 model.pdmodel beside the
    # model.json that export has just written.
    repo = unpack("sldyns__DnCNN_paddle", ("paddle", "skimage", "cv2", "reprod_log"), tmp_path)
    rules = lineage_rules(repo, only=("export", "infer"))
    weights = rules["basic.lineage.weights"]
    assert (
        weights["verdict"] == "FAIL" and "read logs/net.pdparams (there before the run" in weights["summary"]
    )
    model = rules["basic.lineage.inference_model"]
    assert model["verdict"] == "FAIL"
    assert (
        "read test_tipc/output/DnCNN/norm_train_gpus_0/model.pdmodel (there before the run"
        in model["summary"]
    )
    assert "beside test_tipc/output/DnCNN/norm_train_gpus_0/model.json" in model["summary"]
