"""What holds today and must keep holding (issue 22): no network, writes land in the copy-on-write layers,
daemons die with the run, --max-processes stops a fork storm."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from tests.processes import alive_with
from tests.security.conftest import HostileRepo, Listener, Reviewer, ended

pytestmark = pytest.mark.integration
RUN_TRAIN = ("--device", "cpu", "--only", "train", "--no-color")


@pytest.mark.parametrize("reviewer", ["root", "user"], indirect=True)
def test_a_step_cannot_reach_the_hosts_network(
    hostile_demo: HostileRepo, reviewer: Reviewer, listener: Listener
) -> None:
    hostile_demo.train("net", port=listener.port).seal()
    ended(reviewer.tipc("run", str(hostile_demo.repo), *RUN_TRAIN), 0, 1)
    lines = hostile_demo.lines()
    assert "net" in lines, "the hostile train.py did not run"
    assert lines["net"] != ["ok"] and listener.received() == b""


@pytest.mark.parametrize("reviewer", ["root", "user"], indirect=True)
def test_writes_to_the_repo_home_and_tmp_land_in_the_copy_on_write_layers(
    hostile_demo: HostileRepo, reviewer: Reviewer
) -> None:
    name = f"tipc-attack-{uuid.uuid4().hex}.txt"
    targets = {
        "repo": str(hostile_demo.repo / name),
        "home": str(reviewer.home / name),
        "tmp": str(Path("/tmp") / name),
    }
    hostile_demo.train("write", targets=targets).seal()
    try:
        ended(reviewer.tipc("run", str(hostile_demo.repo), *RUN_TRAIN), 0, 1)
        lines = hostile_demo.lines()
        assert lines.get("write:repo") == ["ok"], f"the step could not write its own tree: {lines}"
        assert [k for k, p in targets.items() if Path(p).exists()] == []
        assert hostile_demo.unchanged(), hostile_demo.changed_files()
        assert list((hostile_demo.repo / "test_tipc" / "output").rglob(name)), (
            "the repo write is not in the run folder"
        )
    finally:
        Path("/tmp", name).unlink(missing_ok=True)


@pytest.mark.parametrize("reviewer", ["root", "user"], indirect=True)
def test_a_daemon_the_step_leaves_dies_with_the_run(hostile_demo: HostileRepo, reviewer: Reviewer) -> None:
    hostile_demo.train("daemon", daemon_seconds="600").seal()
    ended(reviewer.tipc("run", str(hostile_demo.repo), *RUN_TRAIN), 0, 1)
    assert hostile_demo.lines().get("daemon") == ["started"], "the hostile train.py did not run"
    deadline = time.monotonic() + 10
    while alive_with(hostile_demo.sentinel) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert alive_with(hostile_demo.sentinel) == []


@pytest.mark.parametrize("reviewer", ["root"], indirect=True)
def test_max_processes_stops_a_fork_storm(hostile_demo: HostileRepo, reviewer: Reviewer) -> None:
    hostile_demo.train("fork", forks=200).seal()
    done = reviewer.tipc("run", str(hostile_demo.repo), *RUN_TRAIN, "--max-processes", "64")
    ended(done, 1)
    fork = hostile_demo.lines().get("fork", [""])[0]
    started = int(fork.split()[0]) if fork else -1
    assert 0 <= started < 64, f"the step started {started} processes under --max-processes 64"
    assert "process" in done.stderr.lower() and "limit" in done.stderr.lower(), done.stderr[-2000:]
