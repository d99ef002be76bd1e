"""tipc.execute.sandbox.limits: the groups of a run started with a cgroup tag can be found (and their members
read)
by the parent that set the tag, after the run itself is gone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tipc.execute.sandbox import limits

ROOT = Path(__file__).resolve().parents[3]


def test_a_tagged_runs_groups_are_found_with_their_members() -> None:
    own = limits.own_group("pids")
    if own is None or not os.access(own, os.W_OK):
        pytest.skip("no writable pids cgroup here: a run's limits cannot be applied")
    tag = f"test-{os.urandom(4).hex()}"
    code = (
        "import sys, time\n"
        "from tipc.execute.sandbox.limits import Limits\n"
        "Limits(None, 1000).apply()\n"
        "print('in', flush=True)\n"
        "time.sleep(60)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env[limits.TAG_ENV] = tag
    child = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "in"
        groups = limits.tagged_groups(tag)
        assert [g.name.startswith(f"tipc-{tag}-") for g in groups] == [True]
        assert limits.group_members(groups[0]) == [child.pid]
        assert limits.tagged_groups("no/such tag") == []  # never a path of its own making
    finally:
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    for group in limits.tagged_groups(tag):
        group.rmdir()
    assert limits.tagged_groups(tag) == []
