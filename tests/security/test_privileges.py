"""Issue 22, item 2, from prepare.sh: the repo's prepare script is a step like the others, run through the
jail: it cannot undo the sandbox either, and what it attempted is recorded under its own step id. (The
steps' own attempts, through `tipc run`, `check` and `review`: test_run_attacks.py, test_check.py and
test_review.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.security.conftest import HostileRepo, Reviewer, contained, ended, expect_recorded

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("reviewer", ["root", "user"], indirect=True)
def test_prepare_sh_cannot_remount_the_host_either(hostile_demo: HostileRepo, reviewer: Reviewer) -> None:
    marker = reviewer.host / "prepare.txt"
    tool = hostile_demo.tool("hostile_prepare", "remount", targets={"host": str(marker)})
    hostile_demo.script_line(f"python {tool}", rel=Path("test_tipc/prepare.sh")).seal()
    done = reviewer.tipc("run", str(hostile_demo.repo), "--device", "cpu", "--only", "prepare", "--no-color")
    ended(done, 0, 1)
    assert "remount" in hostile_demo.lines(), "the hostile prepare.sh did not run"
    contained(not marker.exists(), f"prepare.sh remounted / and wrote {marker} on the host")
    expect_recorded(hostile_demo, "prepare", {"mount"})
