import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tipc.execute import proc


def test_run_records_real_exit_code_and_tees_log(tmp_path: Path) -> None:
    lines: list[str] = []
    log = tmp_path / "out" / "x.log"
    res = proc.run(
        [sys.executable, "-c", "import sys; print('hello'); sys.exit(3)"],
        cwd=tmp_path,
        log_path=log,
        on_line=lines.append,
    )
    assert res.exit_code == 3
    assert not res.timed_out
    assert lines == ["hello"]
    assert log.read_text() == "hello\n"


def test_timeout_kills_the_group(tmp_path: Path) -> None:
    res = proc.run([sys.executable, "-c", "import time; time.sleep(30)"], cwd=tmp_path, timeout_s=0.5)
    assert res.timed_out
    assert res.exit_code is None
    assert res.duration_s < 10


def _gone(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_grandchild_dies_with_the_group_on_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "g.pid"
    code = (
        "import subprocess, sys, time\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(g.pid))\n"
        "time.sleep(60)\n"
    )
    res = proc.run([sys.executable, "-c", code], cwd=tmp_path, timeout_s=1.5)
    assert res.timed_out and _gone(res.pid)
    assert _gone(int(pid_file.read_text()))


def test_leftover_grandchild_is_stopped_when_the_leader_exits(tmp_path: Path) -> None:
    pid_file = tmp_path / "g.pid"
    code = (
        "import subprocess, sys\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(g.pid))\n"
    )
    res = proc.run([sys.executable, "-c", code], cwd=tmp_path)
    assert res.exit_code == 0
    assert _gone(int(pid_file.read_text()))


def test_sigterm_ignoring_child_is_killed(tmp_path: Path) -> None:
    code = (
        "import signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('armed', flush=True)\n"
        "time.sleep(60)\n"
    )
    lines: list[str] = []
    res = proc.run([sys.executable, "-c", code], cwd=tmp_path, timeout_s=1.0, on_line=lines.append)
    assert res.timed_out and lines == ["armed"] and _gone(res.pid)


def test_capture_returns_code_and_output(tmp_path: Path) -> None:
    assert proc.capture([sys.executable, "-c", "print('v1.2')"], cwd=tmp_path) == (0, "v1.2")
    code, out = proc.capture(["/nonexistent/binary"], cwd=tmp_path)
    assert code is None and "nonexistent" in out


def test_background_stop_returns_exit_code(tmp_path: Path) -> None:
    bg = proc.Background([sys.executable, "-c", "import time; time.sleep(60)"], cwd=tmp_path)
    assert bg.poll() is None
    code = bg.stop()
    assert code == -15 and _gone(bg.pid)
    done = proc.Background([sys.executable, "-c", "raise SystemExit(5)"], cwd=tmp_path)
    done.child.wait()
    assert done.stop() == 5


def test_build_env_sets_and_unsets() -> None:
    env = proc.build_env({"A": "1", "B": "2"}, {"C": "3"}, ["B"])
    assert env == {"A": "1", "C": "3"}


def test_a_failing_callback_does_not_block_the_child(tmp_path: Path) -> None:
    def broken(line: str) -> None:
        raise RuntimeError("observer bug")

    code = "import sys\nfor i in range(20000): print('x' * 100)\nsys.exit(4)"  # ~2 MB: more than a pipe holds
    res = proc.run([sys.executable, "-c", code], cwd=tmp_path, on_line=broken, timeout_s=120)
    assert res.exit_code == 4 and not res.timed_out


def test_wait_notices_the_exit_and_keeps_the_timeout(tmp_path: Path) -> None:
    quick = subprocess.Popen([sys.executable, "-c", "raise SystemExit(4)"])
    proc._wait(quick, 30)
    assert quick.returncode == 4
    slow = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            proc._wait(slow, 0.2)
        assert slow.poll() is None
    finally:
        proc.kill_group(slow.pid, reap=slow.poll)
        slow.wait()


def test_without_pidfd_the_plain_wait_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "pidfd_open", raising=False)
    res = proc.run([sys.executable, "-c", "import sys; sys.exit(5)"], cwd=tmp_path, timeout_s=30)
    assert res.exit_code == 5 and not res.timed_out
    res = proc.run([sys.executable, "-c", "import time; time.sleep(30)"], cwd=tmp_path, timeout_s=0.3)
    assert res.timed_out and res.exit_code is None


def test_capture_reports_the_pid_it_started(tmp_path: Path) -> None:
    pids: list[int] = []
    code, out = proc.capture(
        [sys.executable, "-c", "import os; print(os.getpid())"], cwd=tmp_path, on_start=pids.append
    )
    assert code == 0 and pids == [int(out.strip())]


def test_background_that_cannot_start_closes_its_log(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with pytest.raises(OSError) as failed:
        proc.Background([str(tmp_path / "no-such-program")], cwd=tmp_path, log_path=log)
    # the traceback keeps the half-made object alive: its log must be closed all the same
    assert failed.traceback
    assert str(log) not in [f.path for f in psutil.Process().open_files()]


def test_a_child_that_exits_without_reading_its_input_is_still_waited_for(tmp_path: Path) -> None:
    # More input than a pipe holds, to a program that never reads it: the write breaks the pipe. The
    # run still returns the child's own exit status and reaps it (a failed compiler in native.py once
    # left an unreaped child and an open pipe behind, which a later test saw as a ResourceWarning).
    done = proc.run(["false"], cwd=tmp_path, stdin_data=b"x" * (4 << 20), timeout_s=30, trusted=True)
    assert done.exit_code == 1
    assert not psutil.Process().children(recursive=True)


# -- run_forked: tipc's own helper in a fork of this process (the observation's)


def _print_and_return() -> int:
    print("from the fork", os.getcwd(), os.getsid(0) == os.getpid())
    sys.stderr.write("on stderr\n")
    return 7


def test_run_forked_returns_the_helpers_value_and_its_output() -> None:
    lines: list[str] = []
    res = proc.run_forked(_print_and_return, timeout_s=30, on_line=lines.append)
    assert res.exit_code == 7
    assert res.pid != os.getpid()
    # its own session (a timeout stops its group, nothing else), started in /
    assert lines == ["from the fork / True", "on stderr"]


def test_run_forked_an_exception_is_exit_1_with_its_traceback() -> None:
    def fails() -> int:
        raise RuntimeError("the helper broke")

    lines: list[str] = []
    res = proc.run_forked(fails, timeout_s=30, on_line=lines.append)
    assert res.exit_code == 1
    assert lines[-1] == "RuntimeError: the helper broke"


def test_run_forked_timeout_stops_the_helper_and_its_group(tmp_path: Path) -> None:
    marker = tmp_path / "pid"

    def hangs() -> int:
        # a grandchild in the helper's group, as bash is in the observation helper's namespace
        code = f"import os, time; open({str(marker)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
        subprocess.Popen([sys.executable, "-c", code])
        time.sleep(60)
        return 0

    res = proc.run_forked(hangs, timeout_s=3)
    assert res.timed_out and res.exit_code is None
    assert res.duration_s < 20
    assert _gone(res.pid)
    assert marker.exists(), "the grandchild did not start"
    pid = int(marker.read_text())
    for _ in range(100):
        if _gone(pid):
            break
        time.sleep(0.05)
    assert _gone(pid), "the helper's child outlived the timeout"


def test_run_forked_child_starts_without_the_parents_launcher(monkeypatch: pytest.MonkeyPatch) -> None:
    class Refuse:
        def launch(self, *args: object) -> object:
            raise AssertionError("the parent's launcher was used in the fork")

        def make_folder(self, path: Path) -> None:
            pass

    monkeypatch.setattr(proc, "_launcher", Refuse())

    def starts() -> int:
        code, _ = proc.capture(["true"], cwd="/")
        return 0 if code == 0 else 9

    assert proc.run_forked(starts, timeout_s=30).exit_code == 0
