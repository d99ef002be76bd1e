"""Issue 22, item 4: tipc's run folder is resolved and must lie inside the repo; a `test_tipc/output` link
that leads out is refused (exit 2) or replaced in the sandbox view, never written through."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.security.conftest import OUTPUT, HostileRepo, Reviewer, contained, ended

pytestmark = pytest.mark.integration
RUN_TRAIN = ("--device", "cpu", "--only", "train", "--no-color")


def _link_output(repo: HostileRepo, target: Path) -> None:
    out = repo.repo / OUTPUT
    if out.is_dir() and not out.is_symlink():
        shutil.rmtree(out)
    out.symlink_to(target, target_is_directory=True)


@pytest.mark.parametrize("reviewer", ["root", "user"], indirect=True)
def test_an_output_link_to_another_folder_is_never_written_through(
    hostile_demo: HostileRepo, reviewer: Reviewer
) -> None:
    elsewhere = reviewer.host / "elsewhere"
    elsewhere.mkdir()
    reviewer.give(elsewhere)
    hostile_demo.train("write", targets={}).seal()
    _link_output(hostile_demo, elsewhere)
    done = reviewer.tipc("run", str(hostile_demo.repo), *RUN_TRAIN)
    ended(done, 0, 1, 2, 3)
    contained(
        not any(elsewhere.iterdir()),
        f"tipc wrote through the link: {sorted(p.name for p in elsewhere.iterdir())}",
    )
    contained(done.returncode in (0, 1, 2), f"exit {done.returncode}: an internal error, not a refusal")


@pytest.mark.parametrize("reviewer", ["root"], indirect=True)
def test_an_output_link_to_etc_leaves_etc_unchanged(hostile_demo: HostileRepo, reviewer: Reviewer) -> None:
    before = set(os.listdir("/etc"))
    hostile_demo.train("write", targets={}).seal()
    _link_output(hostile_demo, Path("/etc"))
    try:
        done = reviewer.tipc("run", str(hostile_demo.repo), *RUN_TRAIN)
        ended(done, 0, 1, 2, 3)
        added = sorted(set(os.listdir("/etc")) - before)
        contained(not added, f"tipc created {added} in /etc")
        contained(done.returncode == 2, f"exit {done.returncode}, not a refusal (2)")
    finally:
        for name in set(os.listdir("/etc")) - before:  # what a run that did not hold left in /etc
            path = Path("/etc", name)
            if name.startswith("tipc"):
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
