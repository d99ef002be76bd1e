"""tipc.execute.sandbox: the copy-on-write view, the per-command jail, and what a run wrote."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.processes import alive_with
from tests.helpers.trees import tree_hashes
from tipc.execute import sandbox
from tipc.execute.sandbox import Change, Session

DEMO = Path(__file__).resolve().parents[3] / "examples" / "lenet_digits"
OUTPUT = Path("test_tipc") / "output"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the overlay backend is exercised as root here")


def _hashes(root: Path) -> dict[str, str]:
    return tree_hashes(root, skip=OUTPUT / "tipc", links=True)


def test_run_folder_is_keyed_by_model_config_and_mode(tmp_path: Path) -> None:
    folder = sandbox.run_folder(tmp_path, ("ch/PP-OCR v3", "train_infer_python", "lite_train_lite_infer"))
    assert folder == tmp_path / "test_tipc/output/tipc/ch_PP-OCR_v3/train_infer_python/lite_train_lite_infer"


@needs_root
def test_changes_reads_created_changed_and_deleted_files_from_the_upper_layer(tmp_path: Path) -> None:
    lower, upper = tmp_path / "repo", tmp_path / "upper"
    (lower / "sub").mkdir(parents=True)
    (lower / "kept.txt").write_text("a")
    (lower / "sub" / "gone.txt").write_text("b")
    (upper / "sub").mkdir(parents=True)
    (upper / "kept.txt").write_text("changed")
    (upper / "new.bin").write_bytes(b"123")
    os.mknod(upper / "sub" / "gone.txt", stat.S_IFCHR | 0o600, 0)  # an overlay whiteout
    session = Session(
        "overlay", lower, lower, tmp_path, network=False, _state=str(tmp_path), _lower=str(lower)
    )
    assert session.changes() == [
        Change("kept.txt", "changed", 7),
        Change("new.bin", "created", 3),
        Change("sub/gone.txt", "deleted"),
    ]
    listed = session.to_json()
    assert listed["changes_total"] == 3 and listed["backend"] == "overlay"


def test_a_repo_in_a_folder_others_may_not_enter_is_named_with_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root the commands run as a uid of their own: a repo under a mode-700 folder outside /tmp and the
    homes fell back to the weak sandbox, then failed with an internal PermissionError (exit 3)."""
    from tipc.execute import sandbox

    private = tmp_path / "private"
    repo = private / "work" / "repo"
    repo.mkdir(parents=True)
    private.chmod(0o700)
    assert sandbox.unreachable(repo) == ""  # under /tmp: the sandbox rebuilds the folders it covers
    monkeypatch.setattr(sandbox, "REBUILT", ())
    why = sandbox.unreachable(repo)
    assert f"it lies under {private} (mode 700)" in why and f"chmod o+x {private}" in why
    private.chmod(0o701)  # enterable now (what blocks next is pytest's own 0700 folder above it)
    assert f"under {private} " not in sandbox.unreachable(repo)


def test_unknown_backend_is_a_usage_error(tmp_path: Path) -> None:
    from tipc.core.errors import UserError

    with pytest.raises(UserError, match="--sandbox 'chroot'"):
        sandbox.enter(tmp_path, ("m", "c", "lite"), {}, sandbox.SandboxOptions(backend="chroot"), fresh=True)


# ------------------------------------------------------------------------------------ integration

HOSTILE = """
import os, socket, sys
from pathlib import Path
here = Path(__file__).resolve().parent
report = []
for target in (Path(os.environ["TIPC_TEST_OUTSIDE"]) / "escaped.txt", Path.home() / "tipc_escaped.txt"):
    try:
        target.write_text("escaped")
        report.append(f"WROTE {target}")
    except OSError as exc:
        report.append(f"REFUSED-WRITE {target}: {exc}")
try:
    socket.create_connection(("127.0.0.1", int(os.environ["TIPC_TEST_PORT"])), timeout=2).close()
    report.append("CONNECTED to the host's loopback server")
except OSError as exc:
    report.append(f"REFUSED-SOCKET {exc}")
try:
    secret = (Path.home() / ".ssh" / "id_rsa").read_text()
    report.append(f"READ-SECRET {secret.strip()}")
except OSError as exc:
    report.append(f"REFUSED-SECRET {exc}")
(here / "stray_from_train.txt").write_text("written in the repo's tree")
print("\\n".join(report), flush=True)
"""


def _env(home: Path, outside: Path, port: int) -> dict[str, str]:
    env = dict(os.environ, HOME=str(home), TIPC_TEST_OUTSIDE=str(outside), TIPC_TEST_PORT=str(port))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("FLAGS_enable_pir_api", None)
    return env


@pytest.fixture
def hostile_demo(tmp_path: Path) -> Path:
    import shutil

    repo = tmp_path / "lenet_digits"
    shutil.copytree(DEMO, repo, ignore=shutil.ignore_patterns("output", "__pycache__"))
    train = repo / "train.py"
    text = train.read_text()
    marker = "import paddle\n"
    train.write_text(text.replace(marker, HOSTILE + marker, 1))
    return repo


@pytest.mark.integration
@needs_root
def test_hostile_train_is_refused_writes_outside_loopback_and_secrets(
    hostile_demo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE-KEY-MATERIAL")
    outside = tmp_path / "outside"
    outside.mkdir()
    connections: list[str] = []
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(0.2)
        port = server.getsockname()[1]
        stop = threading.Event()

        def accept() -> None:
            while not stop.is_set():
                try:
                    conn, _ = server.accept()
                except OSError:
                    continue
                connections.append("accepted")
                conn.close()

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        before = _hashes(hostile_demo)
        result = subprocess.run(
            [sys.executable, "-m", "tipc", "run", str(hostile_demo), "--only", "train", "--no-color"],
            env=_env(home, outside, port),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        stop.set()
        thread.join()
    log = next((hostile_demo / OUTPUT / "tipc").rglob("tipc_logs/train_*.log")).read_text()
    # Outside the view a write is refused (read-only) or lands in the command's private /tmp or $HOME layer,
    # which vanishes with it: either way nothing reaches the real file system.
    assert log.count("REFUSED-WRITE") + log.count("WROTE") == 2, log
    assert "REFUSED-SOCKET" in log and connections == [], log
    assert "REFUSED-SECRET" in log and "PRIVATE-KEY-MATERIAL" not in log + result.stdout + result.stderr
    assert not (outside / "escaped.txt").exists() and not (home / "tipc_escaped.txt").exists()
    assert _hashes(hostile_demo) == before, "the repo must stay byte-identical"
    record = json.loads(next((hostile_demo / OUTPUT / "tipc").rglob("tipc_run.json")).read_text())
    assert record["sandbox"]["backend"] == "overlay"
    changed = {c["path"]: c["kind"] for c in record["sandbox"]["changes"]}
    assert changed.get("stray_from_train.txt") == "created", changed


@pytest.mark.integration
def test_copy_backend_runs_the_chain_on_a_copy(hostile_demo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    before = _hashes(hostile_demo)
    result = subprocess.run(
        [sys.executable, "-m", "tipc", "run", str(hostile_demo), "--sandbox", "copy", "--no-color"],
        env=_env(home, outside, 9),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "copy of the working tree" in result.stderr
    assert _hashes(hostile_demo) == before
    view = next((hostile_demo / OUTPUT / "tipc").rglob("view"))
    assert (view / "stray_from_train.txt").is_file()


@pytest.mark.integration
@needs_root
def test_sigterm_stops_the_run_with_143_and_leaves_no_process(hostile_demo: Path, tmp_path: Path) -> None:
    token = f"tipc-test-{os.getpid()}-{time.monotonic_ns()}"
    train = hostile_demo / "train.py"
    train.write_text("import time, os\nprint('started', os.getpid(), flush=True)\ntime.sleep(300)\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tipc", "run", str(hostile_demo), "--no-color", "--no-prepare"],
        env={**_env(tmp_path, tmp_path, 9), "TIPC_TEST_TOKEN": token},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    logs: list[Path] = []
    while time.monotonic() < deadline and not logs:
        found = (hostile_demo / OUTPUT / "tipc").rglob("train_*.log")
        logs = [p for p in found if "started" in p.read_text()]
        time.sleep(0.2)
    assert logs, "the training step never started"
    assert alive_with(token), "the step's process must be found by its token"
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 143, out
    time.sleep(0.5)
    # (the pid the step printed is its pid in the run's own PID namespace, so it is found by a token)
    assert alive_with(token) == [], "the step's process must be stopped"
    record = json.loads(next((hostile_demo / OUTPUT / "tipc").rglob("tipc_run.json")).read_text())
    assert any(r["status"] == "interrupted" for r in record["results"])


def _cgroups_writable() -> bool:
    from tipc.execute.sandbox import limits

    group = limits.own_group("memory")
    return group is not None and os.access(group, os.W_OK)


def test_sizes_parse() -> None:
    from tipc.execute.sandbox.limits import parse_size

    assert parse_size("8G") == 8 << 30 and parse_size("512m") == 512 << 20 and parse_size("1024") == 1024
    for bad in ("", "-1G", "lots", "0"):
        with pytest.raises(ValueError):
            parse_size(bad)


@pytest.mark.integration
@pytest.mark.skipif(not _cgroups_writable(), reason="no writable memory cgroup controller here")
def test_a_step_over_the_memory_limit_is_stopped_and_says_so(hostile_demo: Path, tmp_path: Path) -> None:
    train = hostile_demo / "train.py"
    train.write_text("buf = bytearray(600 << 20)\nprint(len(buf))\n")  # 600 MiB under a 200 MiB limit
    limited = ["--memory-limit", "200M", "--only", "train"]
    result = subprocess.run(
        [sys.executable, "-m", "tipc", "run", str(hostile_demo), "--no-color", "--no-prepare", *limited],
        env=_env(tmp_path, tmp_path, 9),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 1, result.stderr[-2000:]
    record = json.loads(next((hostile_demo / OUTPUT / "tipc").rglob("tipc_run.json")).read_text())
    train_result = next(r for r in record["results"] if r["step_id"].startswith("train/"))
    assert train_result["status"] == "failed"
    assert train_result["causes"][0]["id"] == "resource-limit"
    assert "memory limit (200.0 MiB)" in result.stdout + result.stderr


@pytest.mark.integration
@needs_root
def test_a_second_run_of_the_same_config_and_mode_is_refused_while_the_first_runs(
    hostile_demo: Path, tmp_path: Path
) -> None:
    (hostile_demo / "train.py").write_text("import time\nprint('started', flush=True)\ntime.sleep(60)\n")
    argv = [sys.executable, "-m", "tipc", "run", str(hostile_demo), "--no-color", "--no-prepare"]
    first = subprocess.Popen(
        argv, env=_env(tmp_path, tmp_path, 9), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            logs = list((hostile_demo / OUTPUT / "tipc").rglob("train_*.log"))
            if logs and "started" in logs[0].read_text():
                break
            time.sleep(0.2)
        second = subprocess.run(
            argv, env=_env(tmp_path, tmp_path, 9), capture_output=True, text=True, timeout=120, check=False
        )
        assert second.returncode == 2, second.stderr[-2000:]
        assert "another tipc run of this config and mode" in second.stderr
        assert first.poll() is None, "the first run goes on undisturbed"
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=60)
