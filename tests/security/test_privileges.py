"""Issue 22, item 2: a step must not be able to undo the sandbox (remount, unmount, mount the disk, new
namespaces, kernel knobs), from train.py or from prepare.sh; `tipc check` and `tipc review` included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.security.conftest import (
    HostileRepo,
    Reviewer,
    contained,
    ended,
    expect_recorded,
    expect_violation_rule,
    hole,
    json_out,
)

pytestmark = pytest.mark.integration
RUN_TRAIN = ("--device", "cpu", "--only", "train", "--no-color")


def _run(repo: HostileRepo, *extra: str) -> None:
    done = repo.reviewer.tipc("run", str(repo.repo), *RUN_TRAIN, *extra)
    ended(done, 0, 1)


def _own_cgroup_procs() -> str:
    """The pids cgroup.procs file of the group above this process's own (v1 pids or v2)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers in ("pids", ""):
            base = Path("/sys/fs/cgroup") / ("pids" if controllers == "pids" else "") / path.lstrip("/")
            if not base.is_dir():
                base = Path("/sys/fs/cgroup") / path.lstrip("/")
            return str(base.parent / "cgroup.procs")
    return ""


@pytest.mark.parametrize(
    "reviewer",
    [
        pytest.param("root", marks=hole("steps keep CAP_SYS_ADMIN: remount of / makes the host writable")),
        pytest.param(
            "user", marks=hole("root of the run's user namespace: remount clears the read-only flag")
        ),
    ],
    indirect=True,
)
def test_a_step_cannot_remount_the_host_read_write(hostile_demo: HostileRepo, reviewer: Reviewer) -> None:
    marker = reviewer.host / "remount.txt"
    hostile_demo.train("remount", targets={"host": str(marker)}).seal()
    _run(hostile_demo)
    lines = hostile_demo.lines()
    assert "remount" in lines, "the hostile train.py did not run"
    contained(not marker.exists(), f"the step remounted / read-write and wrote {marker} on the host")
    contained(lines["remount"] != ["ok"], "mount(MS_REMOUNT|MS_BIND) succeeded in the step")
    expect_recorded(hostile_demo, "train", {"mount"})


@pytest.mark.parametrize(
    "reviewer",
    [
        pytest.param("root", marks=hole("umount2 of the repo's overlay exposes the real repo")),
        pytest.param("user", marks=hole("umount2 of the repo's overlay exposes the real repo")),
    ],
    indirect=True,
)
def test_a_step_cannot_unmount_the_overlay_and_write_the_real_repo(
    hostile_demo: HostileRepo, reviewer: Reviewer
) -> None:
    target = hostile_demo.repo / "tipc_attack_umount.txt"
    hostile_demo.train("umount", targets={"repo": str(target)}).seal()
    _run(hostile_demo)
    lines = hostile_demo.lines()
    assert "umount" in lines, "the hostile train.py did not run"
    contained(
        not target.exists() and hostile_demo.unchanged(),
        f"the real repo changed: {hostile_demo.changed_files()}",
    )
    contained(lines["umount"] != ["ok"], "umount2 of the repo's overlay succeeded in the step")
    expect_recorded(hostile_demo, "train", {"umount2"})


@pytest.mark.parametrize(
    "reviewer",
    [
        pytest.param("root", marks=hole("the host's block device can be mounted and written")),
        pytest.param("user", marks=hole("the refused mount is not recorded (no sandbox.violations)")),
    ],
    indirect=True,
)
def test_a_step_cannot_mount_the_root_block_device(hostile_demo: HostileRepo, reviewer: Reviewer) -> None:
    marker = reviewer.host / "blockdev.txt"
    hostile_demo.train("blockdev", targets={"host": str(marker)}).seal()
    _run(hostile_demo)
    lines = hostile_demo.lines()
    assert "blockdev" in lines, "the hostile train.py did not run"
    contained(not marker.exists(), f"the step wrote {marker} through the mounted block device")
    contained(lines["blockdev"] != ["ok"], "mounting the root block device succeeded in the step")
    if lines["blockdev"] != ["no-device"]:
        expect_recorded(hostile_demo, "train", {"mount"})


@pytest.mark.parametrize(
    "reviewer",
    [
        pytest.param("root", marks=hole("steps may create user, mount and network namespaces")),
        pytest.param("user", marks=hole("steps may create user, mount and network namespaces")),
    ],
    indirect=True,
)
def test_a_step_cannot_create_namespaces(hostile_demo: HostileRepo, reviewer: Reviewer) -> None:
    hostile_demo.train("unshare").seal()
    _run(hostile_demo)
    lines = hostile_demo.lines()
    assert "unshare:user" in lines, "the hostile train.py did not run"
    opened = [k for k in ("unshare:user", "unshare:mount", "unshare:net") if "ok" in lines[k]]
    contained(not opened, f"the step created namespaces: {opened}")
    expect_recorded(hostile_demo, "train", {"unshare"})


@pytest.mark.parametrize(
    "reviewer",
    [
        pytest.param("root", marks=hole("found with issue 22: /proc/sys and the cgroup files are writable")),
        "user",
    ],
    indirect=True,
)
def test_a_step_cannot_open_kernel_knobs_for_writing(hostile_demo: HostileRepo, reviewer: Reviewer) -> None:
    """core_pattern (a pipe there runs a program as host root at the next crash) and the parent cgroup's
    cgroup.procs (moving there leaves the run's limits): opened for writing, never written."""
    hostile_demo.train("kernel", cgroup_procs=_own_cgroup_procs()).seal()
    _run(hostile_demo)
    lines = hostile_demo.lines()
    assert "open-w:core_pattern" in lines, "the hostile train.py did not run"
    writable = [k for k in ("open-w:core_pattern", "open-w:cgroup") if "ok" in lines[k]]
    contained(not writable, f"the step could open for writing: {writable}")


@pytest.mark.parametrize(
    "reviewer", [pytest.param("root", marks=hole("prepare.sh keeps every capability too"))], indirect=True
)
def test_prepare_sh_cannot_remount_the_host_either(hostile_demo: HostileRepo, reviewer: Reviewer) -> None:
    marker = reviewer.host / "prepare.txt"
    tool = hostile_demo.tool("hostile_prepare", "remount", targets={"host": str(marker)})
    hostile_demo.script_line(f"python {tool}", rel=Path("test_tipc/prepare.sh")).seal()
    done = reviewer.tipc("run", str(hostile_demo.repo), "--device", "cpu", "--only", "prepare", "--no-color")
    ended(done, 0, 1)
    assert "remount" in hostile_demo.lines(), "the hostile prepare.sh did not run"
    contained(not marker.exists(), f"prepare.sh remounted / and wrote {marker} on the host")
    expect_recorded(hostile_demo, "prepare", {"mount"})


@pytest.mark.parametrize(
    "reviewer",
    [pytest.param("root", marks=hole("after umount2 in train, the check writes into the real repo"))],
    indirect=True,
)
def test_check_after_an_unmounting_step_leaves_the_repo_unchanged_and_fails_the_violation_rule(
    hostile_demo: HostileRepo, reviewer: Reviewer
) -> None:
    """The whole check (lint, run, serving chain, rules) after a train.py that detached the overlay."""
    target = hostile_demo.repo / "tipc_attack_umount.txt"
    hostile_demo.train("umount", targets={"repo": str(target)}).seal()
    done = reviewer.tipc("check", str(hostile_demo.repo), "--device", "cpu", "--no-color", "--format", "json")
    ended(done, 1)
    report = json_out(done)
    assert "umount" in hostile_demo.lines(), "the hostile train.py did not run"
    contained(
        hostile_demo.unchanged(), f"the check changed the real repo: {hostile_demo.changed_files()[:30]}"
    )
    expect_violation_rule(report, "train", {"umount2"})


@pytest.mark.parametrize(
    "reviewer",
    [pytest.param("root", marks=hole("a reviewed submission can remount the host"))],
    indirect=True,
)
def test_review_of_a_remounting_submission_changes_nothing_on_the_host(
    hostile_demo: HostileRepo, reviewer: Reviewer
) -> None:
    marker = reviewer.host / "review.txt"
    hostile_demo.train("remount", targets={"host": str(marker)}).seal()
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
        "120",
    )
    ended(done, 0, 1)
    assert out.is_dir() and any(out.rglob("*.log")), done.stderr[-2000:]
    contained(not marker.exists(), f"the reviewed submission remounted / and wrote {marker} on the host")
    reports = [p for p in out.rglob("report.json")]
    contained(bool(reports), "the review wrote no check report")
    import json

    contained(
        any((r := json.loads(p.read_text())) and _fails_violations(r) for p in reports),
        "no report of the review FAILs sandbox.violations",
    )


def _fails_violations(report: dict[str, object]) -> bool:
    from tests.security.conftest import violation_rule

    rule = violation_rule(report)
    return rule is not None and rule.get("verdict") == "FAIL" and "mount" in str(rule)


def test_the_marker_folder_is_really_outside_every_copy_on_write_layer(root_reviewer: Reviewer) -> None:
    """The suite's own premise: `host/` is on a mount the sandbox makes read-only, not /tmp or HOME."""
    host = root_reviewer.host
    assert not str(host).startswith("/tmp/") and not str(host).startswith(os.path.expanduser("~") + "/")
