"""The real-repo tier: the public repos of shared/real-repos, unpacked fresh for each test, run through tipc
as a reviewer would (only tipc's own switches, never an edit to the repo).

Several tests read the same run of a repo (the run test its steps, the check test its rules, the review test
its verdicts): `shared_chain(name, *run_args)` makes that run once per pytest run, across xdist workers, on a
pristine copy that tests only read, and `check(*args)` checks it with `--reuse-run`.

The repos' own code runs under the interpreter of `.venv-repos` (scripts/repos_env.sh; older numpy and
scikit-learn than tipc's own .venv), or TIPC_REPOS_PYTHON. The tarballs come from TIPC_REAL_REPOS, by default
`<checkout>/../shared/real-repos`. Without either the tests skip, saying which is missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import trees
from tests.helpers.once import locked, once, shared_dir
from tests.helpers.processes import leftovers

ROOT = Path(__file__).resolve().parents[2]
REAL_REPOS = Path(os.environ.get("TIPC_REAL_REPOS", ROOT.parent / "shared" / "real-repos"))
REPOS_PYTHON = Path(os.environ.get("TIPC_REPOS_PYTHON", ROOT / ".venv-repos" / "bin" / "python"))
TIPC_DIR = Path("test_tipc") / "output" / "tipc"
# tipc's own switches for the repos that run on a CPU machine with Paddle 3: the device slots rewritten, and
# the old inference.pdmodel export their inference scripts load
CPU_EXPORT = ("--device", "cpu", "--paddle-compat", "export")
# `tipc check`'s default rulesets, named: `tipc review`'s defaults add others, and the review test compares a
# review with the check the check test reads
CHECK_RULESETS = ("--ruleset", "tipc-basic", "--ruleset", "competition")
# Every check here runs the documented chain (the competition ruleset reads it), whose full-recipe trainings
# run until stopped: DnCNN's writes a 3.2 GB training set. Bounded, the tier keeps its time and disk; no test
# here judges what a documented training reaches. The step budget leaves the short commands time to end
# under load (at 30 s, a command stopped in one check and failing in another made the review and the check
# of cutpaste_paddle differ); the disk limit stops DnCNN's preprocessing long before the step budget does,
# so both see the same. `tipc review` takes them through --check-arg.
DOCS_BOUND = ("--docs-step-timeout", "120", "--docs-timeout", "180", "--disk-limit", "1G")
REVIEW_DOCS_BOUND = tuple(f"--check-arg={word}" for word in DOCS_BOUND)


def tree_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file and link target of the repo, tipc's own folder left out."""
    return trees.tree_hashes(root, skip=TIPC_DIR, links=True, dirs=True)


@dataclass
class Outcome:
    """A finished `tipc run` or `tipc check` of an unpacked repo. A shared one also says what the command left
    behind, seen right after it ended: `changed` (paths whose hashes differ from the pristine tree's) and
    `left_running` (processes naming the repo)."""

    repo: Path
    returncode: int
    stdout: str
    stderr: str
    record: dict[str, Any]
    changed: list[str] | None = None
    left_running: list[str] | None = None

    def result(self, step_prefix: str) -> dict[str, Any]:
        """The result of the first step whose id starts with `step_prefix`."""
        for result in self.record["results"]:
            if result["step_id"].startswith(step_prefix):
                return dict(result)
        raise AssertionError(f"no step {step_prefix!r} in {[r['step_id'] for r in self.record['results']]}")

    def untouched(self) -> None:
        """A shared outcome left the repo byte-identical and no process behind."""
        assert self.changed == [], f"the repo must stay byte-identical: {(self.changed or [])[:10]}"
        assert self.left_running == [], f"no process of the run may outlive it: {self.left_running}"

    def statuses(self) -> dict[str, str]:
        return {r["step_id"]: r["status"] for r in self.record["results"]}

    def log(self, step_prefix: str) -> str:
        rel: str = self.result(step_prefix)["log"]
        logs = self.run_folder() / "logs"
        out_dir: str = self.record["plan"]["output_dir"].strip("/")
        inner = rel[len(out_dir) :].lstrip("/") if rel.startswith(out_dir) else rel
        return (logs / inner).read_text(errors="replace")

    def run_folder(self) -> Path:
        folder: str = self.record["sandbox"]["folder"]
        return self.repo / folder


def _call_tipc(
    verb: str, repo: Path, python: Path, args: tuple[str, ...], timeout: float
) -> subprocess.CompletedProcess[str]:
    """`tipc VERB REPO --python PYTHON ARGS` in a child, the PIR switch left to tipc's own flags."""
    argv = [sys.executable, "-m", "tipc", verb, str(repo), "--python", str(python), "--no-color", *args]
    if verb == "check":
        argv += DOCS_BOUND
    env = dict(os.environ)
    env.pop("FLAGS_enable_pir_api", None)
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, check=False)


def _latest_record(repo: Path) -> dict[str, Any]:
    records = sorted((repo / TIPC_DIR).rglob("tipc_run.json"), key=lambda p: p.stat().st_mtime)
    return json.loads(records[-1].read_text()) if records else {"results": [], "plan": {}}


def _unpacked(name: str, dest: Path) -> Path:
    archive = REAL_REPOS / f"{name}.tar.gz"
    if not archive.is_file():
        pytest.skip(f"{archive} is absent (set TIPC_REAL_REPOS to the folder of the real-repo tarballs)")
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="tar")
    return dest / name


@dataclass(frozen=True)
class SharedChain:
    """One repo unpacked once per pytest run and `tipc run` with `run_args` on it, then checked with
    `--reuse-run` by whichever tests ask (each distinct check once). Read-only for tests."""

    name: str
    run_args: tuple[str, ...]
    folder: Path
    python: Path

    def run(self) -> Outcome:
        with locked(self.folder / "chain.lock"):
            return self._once("run", ())

    def check(self, *args: str) -> Outcome:
        """`tipc check --reuse-run` on the shared run, with the run's own switches and `args`."""
        with locked(self.folder / "chain.lock"):
            self._once("run", ())
            return self._once("check", ("--reuse-run", *args))

    def _once(self, verb: str, extra: tuple[str, ...]) -> Outcome:
        repo = self.folder / self.name
        key = hashlib.sha256(json.dumps([verb, *extra]).encode()).hexdigest()[:12]

        def make() -> dict[str, Any]:
            if verb == "run":
                if repo.exists():
                    shutil.rmtree(repo)
                _unpacked(self.name, self.folder)
                (self.folder / "pristine.json").write_text(json.dumps(tree_hashes(repo)))
            done = _call_tipc(verb, repo, self.python, (*self.run_args, *extra), timeout=1500)
            pristine = json.loads((self.folder / "pristine.json").read_text())
            after = tree_hashes(repo)
            changed = sorted(k for k in pristine.keys() | after.keys() if pristine.get(k) != after.get(k))
            return {
                "returncode": done.returncode,
                "stdout": done.stdout,
                "stderr": done.stderr,
                "record": _latest_record(repo),
                "changed": changed,
                "left_running": leftovers(str(repo)),
            }

        made = once(self.folder, f"{verb}-{key}", make)
        return Outcome(repo, **made)


@pytest.fixture(scope="session")
def shared_chain(tmp_path_factory: pytest.TempPathFactory, repos_python: Path) -> Callable[..., SharedChain]:
    root = shared_dir(tmp_path_factory) / "real-repo-chains"

    def _chain(name: str, *run_args: str) -> SharedChain:
        key = hashlib.sha256(json.dumps([name, *run_args]).encode()).hexdigest()[:12]
        return SharedChain(name, run_args, root / f"{name}-{key}", repos_python)

    return _chain


@pytest.fixture(scope="session")
def repos_python() -> Path:
    if not REPOS_PYTHON.is_file():
        pytest.skip(f"no interpreter for the real repos at {REPOS_PYTHON} (run scripts/repos_env.sh)")
    return REPOS_PYTHON


@pytest.fixture
def unpack(tmp_path: Path) -> Callable[[str], Path]:
    def _unpack(name: str) -> Path:
        return _unpacked(name, tmp_path)

    return _unpack


@pytest.fixture
def tipc(repos_python: Path) -> Callable[..., Outcome]:
    def _tipc(verb: str, repo: Path, *args: str, timeout: float = 1500) -> Outcome:
        result = _call_tipc(verb, repo, repos_python, args, timeout)
        return Outcome(repo, result.returncode, result.stdout, result.stderr, _latest_record(repo))

    return _tipc
