import sys
from pathlib import Path

from tipc import proc


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
