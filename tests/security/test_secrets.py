"""Issue 22, item 3: secrets. Steps get an allowlisted environment (`--pass-env NAME` adds one), an empty
HOME, no root-only host file; a config that is a symlink out of the repo is refused, never printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.security.conftest import CONFIG, HostileRepo, Reviewer, contained, ended, hole

pytestmark = pytest.mark.integration
RUN_TRAIN = ("--device", "cpu", "--only", "train", "--no-color")
# Files under HOME that hold credentials: the ones tipc hides by name today, and ones it does not.
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


@pytest.mark.parametrize(
    "reviewer",
    [
        pytest.param("root", marks=hole("every environment variable reaches the steps")),
        pytest.param("user", marks=hole("every environment variable reaches the steps")),
    ],
    indirect=True,
)
def test_a_secret_variable_does_not_reach_the_step(hostile_demo: HostileRepo, reviewer: Reviewer) -> None:
    hostile_demo.train("env").seal()
    secrets = {"GITHUB_TOKEN": hostile_demo.sentinel, "AWS_SECRET_ACCESS_KEY": hostile_demo.sentinel + "aws"}
    done = reviewer.tipc("run", str(hostile_demo.repo), *RUN_TRAIN, env=secrets)
    ended(done, 0, 1)
    lines = hostile_demo.lines()
    assert "env:own" in lines, "the hostile train.py did not run"
    contained(lines["env:own"] == ["none"], f"the step saw the secret variables {lines['env:own']}")
    contained(
        all(v in ("none", "EACCES", "ENOENT", "EPERM") for v in lines["env:pid1"]),
        f"PID 1's environment holds {lines['env:pid1']}",
    )


@pytest.mark.parametrize(
    "reviewer", [pytest.param("root", marks=hole("there is no --pass-env"))], indirect=True
)
def test_pass_env_lets_one_variable_through(hostile_demo: HostileRepo, reviewer: Reviewer) -> None:
    hostile_demo.train("env").seal()
    env = {"TIPC_ATTACK_PASSED": hostile_demo.sentinel, "GITHUB_TOKEN": hostile_demo.sentinel}
    done = reviewer.tipc(
        "run", str(hostile_demo.repo), *RUN_TRAIN, "--pass-env", "TIPC_ATTACK_PASSED", env=env
    )
    contained(done.returncode != 2, f"tipc run refused --pass-env: {done.stderr.strip()[-300:]}")
    ended(done, 0, 1)
    contained(
        hostile_demo.lines().get("env:own") == ["TIPC_ATTACK_PASSED"],
        f"the step saw {hostile_demo.lines().get('env:own')}",
    )


@pytest.mark.parametrize(
    "reviewer",
    [
        pytest.param("root", marks=hole("only a fixed list of credential files is hidden")),
        pytest.param("user", marks=hole("only a fixed list of credential files is hidden")),
    ],
    indirect=True,
)
def test_credential_files_under_home_are_not_readable(hostile_demo: HostileRepo, reviewer: Reviewer) -> None:
    for rel in CREDENTIALS:
        path = reviewer.home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"token = {hostile_demo.sentinel}\n")
    reviewer.give(reviewer.home)
    reads = {f"~/{rel}": f"~/{rel}" for rel in CREDENTIALS}
    reads.update({f"abs/{rel}": str(reviewer.home / rel) for rel in CREDENTIALS})
    hostile_demo.train("files", reads=reads).seal()
    done = reviewer.tipc("run", str(hostile_demo.repo), *RUN_TRAIN)
    ended(done, 0, 1)
    lines = hostile_demo.lines()
    assert f"read:~/{CREDENTIALS[0]}" in lines, "the hostile train.py did not run"
    leaked = sorted(k for k, v in lines.items() if k.startswith("read:") and "secret" in v)
    contained(not leaked, f"the step read credentials: {leaked}")


@pytest.mark.parametrize(
    "reviewer",
    [pytest.param("root", marks=hole("steps run as uid 0: /etc/shadow and /root are readable"))],
    indirect=True,
)
def test_root_only_host_files_are_not_readable(hostile_demo: HostileRepo, reviewer: Reviewer) -> None:
    hostile_demo.train("hostfiles").seal()
    done = reviewer.tipc("run", str(hostile_demo.repo), *RUN_TRAIN)
    ended(done, 0, 1)
    lines = hostile_demo.lines()
    assert "read:/etc/shadow" in lines, "the hostile train.py did not run"
    contained(lines["read:/etc/shadow"] != ["ok"], "the step read /etc/shadow")
    contained(lines["list:/root"] != ["ok"], "the step listed the real /root")


@pytest.mark.parametrize(
    "reviewer",
    [
        pytest.param(
            "root", marks=hole("found with issue 22: /tmp is a copy-on-write view of the host's /tmp")
        ),
        pytest.param(
            "user", marks=hole("found with issue 22: /tmp is a copy-on-write view of the host's /tmp")
        ),
    ],
    indirect=True,
)
def test_the_hosts_tmp_is_not_visible(hostile_demo: HostileRepo, reviewer: Reviewer) -> None:
    """The host's /tmp holds other users' files and sockets (ssh-agent, X11, Ray): a step sees an empty
    one."""
    visible = Path("/tmp") / f"tipc-attack-{hostile_demo.sentinel}"
    visible.write_text("a host temp file\n")
    try:
        hostile_demo.train("hosttmp", host_tmp_file=str(visible)).seal()
        done = reviewer.tipc("run", str(hostile_demo.repo), *RUN_TRAIN)
        ended(done, 0, 1)
        lines = hostile_demo.lines()
        assert "hosttmp" in lines, "the hostile train.py did not run"
        contained(lines["hosttmp"] == ["hidden"], f"the step saw {visible}")
    finally:
        visible.unlink(missing_ok=True)


@pytest.mark.parametrize(
    "reviewer",
    [
        pytest.param("root", marks=hole("lint follows a config symlink out of the repo and prints the file")),
        pytest.param("user", marks=hole("lint follows a config symlink out of the repo and prints the file")),
    ],
    indirect=True,
)
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
