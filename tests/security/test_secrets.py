"""Issue 22, item 3: a config that is a symlink out of the repo is refused with a located error, never
printed. (Secret variables, --pass-env, credential files, root-only files and the host's /tmp, as a step
sees them: test_run_attacks.py.)"""

from __future__ import annotations

import pytest

from tests.security.conftest import CONFIG, HostileRepo, Reviewer, contained, ended

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("reviewer", ["root", "user"], indirect=True)
def test_a_config_symlinked_out_of_the_repo_is_refused_with_a_located_error(
    hostile_demo: HostileRepo, reviewer: Reviewer
) -> None:
    secret = reviewer.host / "secret.txt"
    secret.write_text(f"model_name:{hostile_demo.sentinel}\npython:{hostile_demo.sentinel}\n")
    reviewer.give(secret)
    config = hostile_demo.repo / CONFIG
    config.unlink()
    config.symlink_to(secret)
    hostile_demo.seal()
    done = reviewer.tipc("lint", str(hostile_demo.repo))
    ended(done, 0, 1, 2)
    contained(
        hostile_demo.sentinel not in done.stdout + done.stderr, "lint printed the file the symlink leads to"
    )
    contained(
        done.returncode == 2 and str(CONFIG) in done.stderr, f"no located refusal (exit {done.returncode})"
    )
