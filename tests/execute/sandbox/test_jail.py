"""tipc.execute.sandbox.jail and the pieces of layer A that need no namespace: the environment allowlist,
the argv a command is started with, the run folder's links, the disk count; children started as modules."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tipc.core.errors import UserError
from tipc.execute import proc, sandbox
from tipc.execute.sandbox import jail
from tipc.execute.sandbox.limits import DiskUsage
from tipc.execute.sandbox.native import shim_program


def test_the_environment_keeps_what_a_chain_needs_and_no_secret() -> None:
    tipc_env = {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "CUDA_VISIBLE_DEVICES": "0",
        "FLAGS_enable_pir_api": "0",
        "OMP_NUM_THREADS": "2",
        "GITHUB_TOKEN": "t",
        "AWS_ACCESS_KEY_ID": "a",
        "CUDA_API_KEY": "k",  # allowlisted prefix, secret-looking name: never inherited
        "SSH_AUTH_SOCK": "/run/s",
        "MY_APP_SETTING": "x",
        "WANDB_API_KEY": "w",
        "WANDB_MODE": "offline",
    }
    kept = jail.scrub_env(tipc_env, inherited=tipc_env)
    assert sorted(kept) == [
        "CUDA_VISIBLE_DEVICES",
        "FLAGS_enable_pir_api",
        "LANG",
        "LC_ALL",
        "OMP_NUM_THREADS",
        "PATH",
    ]
    passed = jail.scrub_env(tipc_env, ("WANDB_*", "MY_APP_SETTING"), inherited=tipc_env)
    assert {"WANDB_API_KEY", "WANDB_MODE", "MY_APP_SETTING"} <= set(passed)


def test_what_tipc_or_the_plan_sets_for_a_command_is_kept() -> None:
    inherited = {"PATH": "/usr/bin", "GITHUB_TOKEN": "t"}
    env = {**inherited, "PYTHONPATH": "/lineage", "MY_STEP_VAR": "1", "GITHUB_TOKEN": "t"}
    kept = jail.scrub_env(env, inherited=inherited)
    assert kept == {"PATH": "/usr/bin", "PYTHONPATH": "/lineage", "MY_STEP_VAR": "1"}


@pytest.fixture(params=["native", "python"])
def shim(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each shim in turn (the compiled shim.c where a compiler is, else skipped; the Python one): its argv."""
    if request.param == "python":
        monkeypatch.setenv("TIPC_SHIM", "python")
        return [sys.executable, "-I", "-S", str(jail.SHIM)]
    monkeypatch.delenv("TIPC_SHIM", raising=False)
    native = shim_program()
    if native is None:
        pytest.skip("no C compiler here: the Python shim runs")
    return [native]


def test_a_command_starts_through_bwrap_and_the_shim_with_the_clean_environment(
    monkeypatch: pytest.MonkeyPatch, shim: list[str]
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "x")  # tipc's own: what a command would inherit
    spec = jail.JailSpec(
        bwrap="/b/bwrap", writable=("/repo", "/tmp"), home="/home/tipc", uid=1990000007, fsize=5
    )
    launch = jail.Jail(spec).launch(
        ["python", "train.py"], {"PATH": "/usr/bin", "GITHUB_TOKEN": "x"}, "/repo", "s"
    )
    argv = launch.argv
    assert argv[0] == "/b/bwrap" and argv[argv.index("--chdir") + 1] == "/repo"
    assert argv[argv.index("/repo") - 1 : argv.index("/repo") + 2] == ["--bind", "/repo", "/repo"]
    for flag in ("--unshare-user", "--unshare-pid", "--disable-userns", "--die-with-parent", "--cap-drop"):
        assert flag in argv
    start = argv.index("--", argv.index("--chdir")) + 1
    assert argv[start : start + len(shim)] == shim
    assert argv[-3:] == ["--", "python", "train.py"] and argv[start + len(shim) + 3] == "5"  # RLIMIT_FSIZE
    assert launch.env == {
        "PATH": "/usr/bin",
        "HOME": "/home/tipc",
        "USER": "tipc",
        "LOGNAME": "tipc",
        "TMPDIR": "/tmp",
    }
    assert launch.popen["user"] == 1990000007 and launch.popen["extra_groups"] == []
    launch.failed()


def test_without_bwrap_the_shim_alone_drops_the_capabilities(shim: list[str]) -> None:
    launch = jail.Jail(jail.JailSpec(bwrap=None, writable=(), home="/h")).launch(["true"], {}, "/", "t")
    assert launch.argv[: len(shim)] == shim and launch.argv[launch.argv.index("--") - 1] == "1"
    launch.failed()


def test_module_argv_never_imports_a_tipc_folder_from_the_working_directory(tmp_path: Path) -> None:
    hostile = tmp_path / "tipc"
    hostile.mkdir()
    (hostile / "__init__.py").write_text("open('PWNED', 'w').write('x')\n")
    (hostile / "__main__.py").write_text("open('PWNED', 'w').write('x')\n")
    argv = proc.module_argv(sys.executable, "tipc", "--version")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[3]))
    done = subprocess.run(
        argv, cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "PWNED").exists()
    plain = subprocess.run(
        [sys.executable, "-m", "tipc", "--version"], cwd=tmp_path, env=env, capture_output=True, check=False
    )
    assert plain.returncode == 0 and (tmp_path / "PWNED").exists(), "the premise: -m imports it"


def test_a_run_folder_a_link_leads_out_of_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "test_tipc").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / "test_tipc" / "output").symlink_to(elsewhere)
    with pytest.raises(UserError, match="a link leading out of the repo"):
        sandbox.inside_repo(repo, repo / sandbox.RUNS_DIR / "m")
    assert list(elsewhere.iterdir()) == []
    (repo / "test_tipc" / "output").unlink()
    (repo / "test_tipc" / "inside").mkdir()
    (repo / "test_tipc" / "output").symlink_to("inside")
    sandbox.inside_repo(repo, repo / sandbox.RUNS_DIR / "m")  # a link that stays inside is fine


def test_disk_usage_counts_blocks_written_since_the_start_but_the_lower_layer(tmp_path: Path) -> None:
    (tmp_path / "upper").mkdir()
    (tmp_path / "lower").mkdir()
    (tmp_path / "upper" / "before.bin").write_bytes(b"x" * 65536)
    disk = DiskUsage(tmp_path, 100_000)
    assert disk.used() == 0 and disk.over() is None
    (tmp_path / "lower" / "big.bin").write_bytes(b"x" * 400_000)  # the repo itself: not the run's writes
    (tmp_path / "upper" / "new.bin").write_bytes(b"x" * 200_000)
    used = disk.over()
    assert used is not None and 200_000 <= used < 300_000
    assert "disk limit" in disk.cause(used) and disk.interval_s() >= 0.2


def test_tipc_writes_with_its_own_rights_only_where_no_command_can_plant_a_link(tmp_path: Path) -> None:
    """A --report-dir outside the view is written with tipc's rights only while the commands' uid can
    neither own nor write any folder on the way to it (else a planted link would make tipc a deputy)."""
    commands = (1990000123, 1990000123)
    reports = tmp_path / "reports"
    reports.mkdir(mode=0o755)
    os.chmod(tmp_path, 0o755)
    session = sandbox.Session("overlay", tmp_path, tmp_path, None, network=False)
    session._outside = (str(reports),)
    closed = sandbox._closed_to_commands
    assert closed(str(reports / "sub" / "report.json"), session, commands)  # sub not made yet
    assert not closed(str(tmp_path / "elsewhere.json"), session, commands)  # not an outside folder
    os.chmod(reports, 0o777)
    assert not closed(str(reports / "report.json"), session, commands)
    os.chmod(reports, 0o755)
    if os.geteuid() == 0:
        os.chown(reports, *commands)
        assert not closed(str(reports / "report.json"), session, commands)


@pytest.mark.integration
def test_a_command_that_cannot_start_ends_127_with_the_shims_word(shim: list[str]) -> None:
    """Both shims say why, in the same words, and exit as a shell would (127: not found)."""
    launcher = jail.Jail(jail.JailSpec(bwrap=None, writable=(), home="/tmp"))
    proc.set_launcher(launcher)
    lines: list[str] = []
    try:
        res = proc.run(["/nonexistent/train"], cwd="/", on_line=lines.append, label="missing")
    finally:
        proc.set_launcher(None)
    assert res.exit_code == 127, lines
    assert any(line.startswith("tipc sandbox: cannot run '/nonexistent/train': ") for line in lines), lines


def test_the_environment_patterns_match_as_fnmatchcase_does() -> None:
    import fnmatch
    import random

    rng = random.Random(7)
    names = [
        "PATH",
        "AWS_SECRET_ACCESS_KEY",
        "http_proxy",
        "HTTPS_PROXY",
        "LC_ALL",
        "CUDA_VISIBLE_DEVICES",
        "",
    ]
    alphabet = "ABCXYZ_abcxyz019*?[]!-.\n"
    names += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12))) for _ in range(400)]
    for patterns in (jail.ALLOWED_ENV, jail.SECRET_ENV, ("FLAGS_*", "x[!a]?"), ()):
        for name in names:
            want = any(fnmatch.fnmatchcase(name, p) for p in patterns)
            assert jail._matches(name, patterns) is want, (name, patterns)
