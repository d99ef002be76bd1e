"""What held before issue 22 and must keep holding: --max-processes stops a fork storm. (No network,
writes in the copy-on-write layers, daemons dying with the run: test_run_attacks.py.)"""

from __future__ import annotations

import pytest

from tests.security.conftest import HostileRepo, Reviewer, ended

pytestmark = pytest.mark.integration
RUN_TRAIN = ("--device", "cpu", "--only", "train", "--no-color")


@pytest.mark.parametrize("reviewer", ["root"], indirect=True)
def test_max_processes_stops_a_fork_storm(hostile_demo: HostileRepo, reviewer: Reviewer) -> None:
    hostile_demo.train("fork", forks=200).seal()
    done = reviewer.tipc("run", str(hostile_demo.repo), *RUN_TRAIN, "--max-processes", "64")
    ended(done, 1)
    fork = hostile_demo.lines().get("fork", [""])[0]
    started = int(fork.split()[0]) if fork else -1
    assert 0 <= started < 64, f"the step started {started} processes under --max-processes 64"
    assert "process" in done.stderr.lower() and "limit" in done.stderr.lower(), done.stderr[-2000:]
