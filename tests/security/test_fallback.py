"""Issue 22, item 7: `--sandbox copy` (what `auto` falls back to where namespaces are missing) still hides
credentials, scrubs the environment, keeps the host's files and, where it can, the network."""

from __future__ import annotations

import pytest

from tests.security.conftest import HostileRepo, Listener, Reviewer, contained, ended

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("reviewer", ["root", "user"], indirect=True)
def test_the_copy_backend_still_contains_a_hostile_step(
    hostile_demo: HostileRepo, reviewer: Reviewer, listener: Listener
) -> None:
    credential = reviewer.home / ".npmrc"
    credential.write_text(f"//registry/:_authToken={hostile_demo.sentinel}\n")
    reviewer.give(credential)
    marker = reviewer.host / "copy_backend.txt"
    home_marker = reviewer.home / "copy_backend.txt"
    hostile_demo.train(
        "write",
        "env",
        "files",
        "net",
        targets={"host": str(marker), "home": str(home_marker)},
        reads={"npmrc": "~/.npmrc"},
        port=listener.port,
    ).seal()
    done = reviewer.tipc(
        "run",
        str(hostile_demo.repo),
        "--sandbox",
        "copy",
        "--device",
        "cpu",
        "--only",
        "train",
        "--no-color",
        env={"GITHUB_TOKEN": hostile_demo.sentinel},
    )
    ended(done, 0, 1)
    lines = hostile_demo.lines()
    assert "env:own" in lines, "the hostile train.py did not run"
    contained(not marker.exists() and not home_marker.exists(), "the step wrote the host's files")
    contained(lines["env:own"] == ["none"], f"the step saw {lines['env:own']}")
    contained("secret" not in lines.get("read:npmrc", []), "the step read ~/.npmrc")
    contained(listener.received() == b"", "the step reached the host's loopback")
    contained(hostile_demo.unchanged(), f"the repo changed: {hostile_demo.changed_files()}")
