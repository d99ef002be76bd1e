"""The demo repo (examples/lenet_digits) for tests: scratch copies, and the values of the one shared run and
check of it that tests/conftest.py's `demo_run` and `demo_checked` fixtures hand out."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers.ports import port_of, use_free_port

DEMO = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits"
OUTPUT = Path("test_tipc") / "output"
MODE = "lite_train_lite_infer"


def copy_demo(
    dest: Path,
    *,
    source: Path = DEMO,
    keep_output: bool = False,
    skip: tuple[str, ...] = (),
) -> Path:
    """A scratch copy of the demo (or of a copy of it) at `dest`, without its run output (unless
    `keep_output`), __pycache__, the `skip` patterns and special files; with its own free serving port."""
    by_name = shutil.ignore_patterns("__pycache__", *(() if keep_output else ("output",)), *skip)

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
    before: dict[str, str]  # tree_hashes(repo, pycache=False) before the run

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
    before: dict[str, str]  # tree_hashes(repo, pycache=False) before the check

    @property
    def verdicts(self) -> dict[str, str]:
        return {r["id"]: r["verdict"] for r in self.report["rules"]}
