"""Shared fixtures: ONE trained demo for every integration test that needs a run of examples/lenet_digits.

Training the demo and running its chain is the slowest thing the suite does; each test that needs it used to
do it again. Use these instead:

- `demo_run` (session): a scratch copy of the demo on which `tipc run --mode lite_train_lite_infer` ran once.
  `demo_run.repo` holds the copy, its run record and logs under test_tipc/output. READ-ONLY: a test that
  writes into the repo (a mutation, another run) takes its own copy with `demo_run.copy(tmp_path)`.
- `demo_checked` (session): `tipc check --reuse-run --format json` on a copy of that run, once: `.repo` (the
  checked copy, read-only too), `.code`, `.report` (the tipc.report/1 JSON), `.stderr`, `.verdicts`.
- `copy_demo(dest, keep_output=False)`: a fresh copy of examples/lenet_digits with its own serving port.

Under pytest-xdist each worker process has its own session; the run is still made once: the first worker to
need it makes it under a file lock in the run's shared temp folder, the others wait and read it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.demo_port import port_of, use_free_port
from tests.once import once, shared_dir

DEMO = Path(__file__).resolve().parents[1] / "examples" / "lenet_digits"
OUTPUT = Path("test_tipc") / "output"
MODE = "lite_train_lite_infer"


@pytest.fixture(scope="session", autouse=True)
def _private_model_ci_history(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Every model CI verb writes the default history database: the tests' go to a session temp file,
    never to the user's ~/.local/share/tipc (children inherit the variable)."""
    saved = os.environ.get("TIPC_HISTORY")
    os.environ["TIPC_HISTORY"] = str(tmp_path_factory.mktemp("history") / "history.sqlite3")
    yield
    if saved is None:
        os.environ.pop("TIPC_HISTORY", None)
    else:
        os.environ["TIPC_HISTORY"] = saved


def tipc_env() -> dict[str, str]:
    """The environment the demo's `python:` resolves in: this interpreter's folder first on PATH."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("FLAGS_enable_pir_api", None)
    return env


def tipc(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`python -m tipc ARGS` in a child, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "tipc", *args],
        capture_output=True,
        text=True,
        env=tipc_env(),
        timeout=timeout,
        check=False,
    )


def tree_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file outside test_tipc/output (what a run must leave untouched)."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.relative_to(root).is_relative_to(OUTPUT) and "__pycache__" not in p.parts
    }


def copy_demo(dest: Path, *, source: Path = DEMO, keep_output: bool = False) -> Path:
    """A scratch copy of the demo (or of a copy of it) at `dest`, with its own free serving port."""
    skip = ("__pycache__",) if keep_output else ("output", "__pycache__")
    by_name = shutil.ignore_patterns(*skip)

    def ignore(folder: str, names: list[str]) -> set[str]:
        # A checked copy's run folders hold the overlay's whiteouts (character devices): not copyable, and
        # not needed to reuse the run.
        paths = {n: os.path.join(folder, n) for n in names}
        special = {
            n for n, p in paths.items() if not (os.path.isdir(p) or os.path.isfile(p) or os.path.islink(p))
        }
        return set(by_name(folder, names)) | special

    shutil.copytree(source, dest, ignore=ignore, symlinks=True)
    use_free_port(dest, port_of(source))
    return dest


@dataclass(frozen=True)
class DemoRun:
    repo: Path
    code: int
    stdout: str
    stderr: str
    before: dict[str, str]  # tree_hashes(repo) before the run

    def record(self) -> dict[str, Any]:
        """The run record of the main chain (a check adds the serving chain's record beside it)."""
        for path in sorted((self.repo / OUTPUT).rglob("tipc_run.json")):
            data: dict[str, Any] = json.loads(path.read_text())
            if data["plan"]["mode"] == MODE:
                return data
        raise AssertionError(f"no {MODE} run record under {self.repo / OUTPUT}")

    def copy(self, dest: Path, *, keep_output: bool = True) -> Path:
        """A writable copy of the run repo (with its run record, so `--reuse-run` finds it)."""
        return copy_demo(dest, source=self.repo, keep_output=keep_output)


@dataclass(frozen=True)
class DemoCheck:
    repo: Path
    code: int
    report: dict[str, Any]
    stderr: str
    before: dict[str, str]  # tree_hashes(repo) before the check

    @property
    def verdicts(self) -> dict[str, str]:
        return {r["id"]: r["verdict"] for r in self.report["rules"]}


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    shared = shared_dir(tmp_path_factory) / "shared-demo"
    repo = shared / "lenet_digits"

    def make() -> dict[str, Any]:
        if repo.exists():
            shutil.rmtree(repo)
        copy_demo(repo)
        before = tree_hashes(repo)
        done = tipc("run", str(repo), "--mode", MODE, "--no-color")
        return {"code": done.returncode, "stdout": done.stdout, "stderr": done.stderr, "before": before}

    made = once(shared, "run", make)
    return DemoRun(repo, made["code"], made["stdout"], made["stderr"], made["before"])


@pytest.fixture(scope="session")
def demo_checked(demo_run: DemoRun, tmp_path_factory: pytest.TempPathFactory) -> DemoCheck:
    # On its own copy of the run: the check writes reports and a serving run, and demo_run.repo must stay
    # unchanged while other workers copy it.
    shared = demo_run.repo.parent / "checked"
    repo = shared / "lenet_digits"

    def make() -> dict[str, Any]:
        if repo.exists():
            shutil.rmtree(repo)
        demo_run.copy(repo)
        before = tree_hashes(repo)
        done = tipc("check", str(repo), "--reuse-run", "--no-color", "--format", "json")
        assert done.stdout.strip(), done.stderr[-3000:]
        report = json.loads(done.stdout)
        return {"code": done.returncode, "report": report, "stderr": done.stderr, "before": before}

    made = once(shared, "check", make)
    return DemoCheck(repo, made["code"], made["report"], made["stderr"], made["before"])
