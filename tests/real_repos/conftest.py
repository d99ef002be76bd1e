"""The real-repo tier: the public repos of shared/real-repos, unpacked fresh for each test, run through tipc
as a reviewer would (only tipc's own switches, never an edit to the repo).

The repos' own code runs under the interpreter of `.venv-repos` (scripts/repos_env.sh; older numpy and
scikit-learn than tipc's own .venv), or TIPC_REPOS_PYTHON. The tarballs come from TIPC_REAL_REPOS, by default
`<checkout>/../shared/real-repos`. Without either the tests skip, saying which is missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
REAL_REPOS = Path(os.environ.get("TIPC_REAL_REPOS", ROOT.parent / "shared" / "real-repos"))
REPOS_PYTHON = Path(os.environ.get("TIPC_REPOS_PYTHON", ROOT / ".venv-repos" / "bin" / "python"))
TIPC_DIR = Path("test_tipc") / "output" / "tipc"


def tree_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file and link target of the repo, tipc's own folder left out."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel == TIPC_DIR or rel.is_relative_to(TIPC_DIR):
            continue
        if path.is_symlink():
            out[rel.as_posix()] = "-> " + os.readlink(path)
        elif path.is_file():
            out[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_dir() and rel not in TIPC_DIR.parents:  # tipc's folder may need a new parent folder
            out[rel.as_posix() + "/"] = "dir"
    return out


@dataclass
class Outcome:
    """A finished `tipc run` or `tipc check` of an unpacked repo."""

    repo: Path
    returncode: int
    stdout: str
    stderr: str
    record: dict[str, Any]

    def result(self, step_prefix: str) -> dict[str, Any]:
        """The result of the first step whose id starts with `step_prefix`."""
        for result in self.record["results"]:
            if result["step_id"].startswith(step_prefix):
                return dict(result)
        raise AssertionError(f"no step {step_prefix!r} in {[r['step_id'] for r in self.record['results']]}")

    def statuses(self) -> dict[str, str]:
        return {r["step_id"]: r["status"] for r in self.record["results"]}

    def log(self, step_prefix: str) -> str:
        rel = self.result(step_prefix)["log"]
        logs = self.run_folder() / "logs"
        out_dir = self.record["plan"]["output_dir"].strip("/")
        inner = rel[len(out_dir) :].lstrip("/") if rel.startswith(out_dir) else rel
        return (logs / inner).read_text(errors="replace")

    def run_folder(self) -> Path:
        folder = self.record["sandbox"]["folder"]
        return self.repo / folder


@pytest.fixture(scope="session")
def repos_python() -> Path:
    if not REPOS_PYTHON.is_file():
        pytest.skip(f"no interpreter for the real repos at {REPOS_PYTHON} (run scripts/repos_env.sh)")
    return REPOS_PYTHON


@pytest.fixture
def unpack(tmp_path: Path) -> Callable[[str], Path]:
    def _unpack(name: str) -> Path:
        archive = REAL_REPOS / f"{name}.tar.gz"
        if not archive.is_file():
            pytest.skip(f"{archive} is absent (set TIPC_REAL_REPOS to the folder of the real-repo tarballs)")
        with tarfile.open(archive) as tar:
            tar.extractall(tmp_path, filter="tar")
        return tmp_path / name

    return _unpack


@pytest.fixture
def tipc(repos_python: Path) -> Callable[..., Outcome]:
    def _tipc(verb: str, repo: Path, *args: str, timeout: float = 1500) -> Outcome:
        env = dict(os.environ)
        env.pop("FLAGS_enable_pir_api", None)
        command = [sys.executable, "-m", "tipc", verb, str(repo), "--python", str(repos_python)]
        result = subprocess.run(
            [*command, "--no-color", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            check=False,
        )
        records = sorted((repo / TIPC_DIR).rglob("tipc_run.json"), key=lambda p: p.stat().st_mtime)
        record = json.loads(records[-1].read_text()) if records else {"results": [], "plan": {}}
        return Outcome(repo, result.returncode, result.stdout, result.stderr, record)

    return _tipc
