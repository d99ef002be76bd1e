"""No silence on a terminal: `baseline record`, `converge gather`, `matrix`, `review` and the pytest plugin,
each run under a pseudo-terminal on work with a silent stretch longer than 5 s, never leave the terminal
5 s without output (issue 28).

The work is small: a copy of the demo whose scripts are stand-ins (train sleeps 6 s without a word, the
others print a line), the convergence stand-in with a 6 s pause before its first line, and for the matrix a
local environment made beforehand (its `python` runs this interpreter), so nothing is downloaded. The gaps are
wall time, so this is the timing tier.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.convergence.seed_data import HERE as CONVERGENCE_TESTS
from tests.convergence.seed_data import seed_config_text
from tests.helpers.demo import copy_demo
from tests.test_api import RULESET

pytestmark = [pytest.mark.integration, pytest.mark.timing]

MAX_SILENCE_S = 5.0
SILENT_S = 6  # longer than MAX_SILENCE_S: only tipc's own progress can fill it

TRAIN = f"""\
import time

time.sleep({SILENT_S})  # a step that works without a word
print("epoch: 1, iter: 1, loss: 1.0, avg_reader_cost: 0.01 sec, avg_batch_cost: 0.1 sec, avg_ips: 10")
"""
QUICK = 'print("done")\n'


def tiny_repo(root: Path) -> Path:
    """The demo's layout and config, its scripts replaced by stand-ins (train: 6 s of silence)."""
    repo = copy_demo(root / "tiny")
    (repo / "train.py").write_text(TRAIN)
    for name in ("eval.py", "export_model.py", "infer.py", "predict.py"):
        (repo / name).write_text(QUICK)
    return repo


def under_pty(
    argv: Sequence[str], cwd: Path, env: dict[str, str], timeout_s: float = 600
) -> tuple[int, str, float]:
    """Run argv with a pseudo-terminal as stdin, stdout and stderr; (exit code, output, the longest stretch
    without output, from the start to the end)."""
    master, slave = os.openpty()
    os.set_blocking(master, False)
    child = subprocess.Popen(
        list(argv), cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True
    )
    os.close(slave)
    chunks: list[bytes] = []
    last = start = time.monotonic()
    longest = 0.0
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 0.2)
            now = time.monotonic()
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child side closed
                    data = b""
                if data:
                    longest = max(longest, now - last)
                    last = now
                    chunks.append(data)
                    continue
                if child.poll() is not None:
                    break
            elif child.poll() is not None:
                break
            assert now - start < timeout_s, b"".join(chunks)[-3000:].decode(errors="replace")
        child.wait(timeout=30)
        longest = max(longest, time.monotonic() - last)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, 9)
            child.wait()
        os.close(master)
    return int(child.returncode), b"".join(chunks).decode(errors="replace"), longest


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("CI", "NO_COLOR", "FLAGS_enable_pir_api"):
        env.pop(name, None)  # a CI runner's CI=true would ask for plain lines: this is about a terminal
    env.update(
        TERM="xterm-256color",
        COLUMNS="120",
        LINES="40",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        XDG_CACHE_HOME=str(tmp / "cache"),  # the matrix's environments: never ~/.cache/tipc/envs
        TIPC_ENV_CACHE=str(tmp / "cache" / "tipc" / "envs"),
        TIPC_HISTORY=str(tmp / "history.sqlite3"),
    )
    return env


def _tipc(*args: str) -> list[str]:
    return [sys.executable, "-m", "tipc", *args]


def _quiet_enough(code: int, out: str, longest: float, expected: Sequence[int] = (0,)) -> None:
    assert code in expected, out[-3000:]
    assert longest < MAX_SILENCE_S, f"{longest:.1f} s without output:\n{out[-3000:]}"


def test_baseline_record_is_never_silent(tmp_path: Path) -> None:
    repo = tiny_repo(tmp_path)
    argv = _tipc("baseline", "record", str(repo), "--repeat", "1", "--warmup", "0")
    code, out, longest = under_pty([*argv, "--baseline-dir", str(tmp_path / "b")], tmp_path, _env(tmp_path))
    _quiet_enough(code, out, longest)
    assert "baseline run 1/1" in out


def test_converge_gather_is_never_silent(tmp_path: Path) -> None:
    config = tmp_path / "convergence.yml"
    config.write_text(seed_config_text(), encoding="utf-8")
    env = _env(tmp_path)
    env["FAKE_PAUSE_S"] = str(SILENT_S)
    argv = _tipc("converge", "gather", "-t", str(config), "-s", str(tmp_path / "st"))
    argv += ["--python", sys.executable]
    code, out, longest = under_pty(argv, CONVERGENCE_TESTS, env)
    _quiet_enough(code, out, longest)
    assert "gather run" in out


def _local_env(version: str, env: dict[str, str]) -> None:
    """The matrix's environment for `version`, made as tipc makes one but without a download: its `python`
    runs this interpreter (which has Paddle)."""
    script = (
        "import sys, os\n"
        "from pathlib import Path\n"
        "from tipc.modelci import matrix\n"
        "def runner(argv, cwd):\n"
        "    if '-c' in argv:\n"
        "        return 0, '%d.%d.%d' % sys.version_info[:3]\n"
        "    if 'venv' in argv:\n"
        "        python = Path(argv[-1]) / 'bin' / 'python'\n"
        "        python.parent.mkdir(parents=True)\n"
        "        python.write_text('#!/bin/sh\\nexec ' + sys.executable + ' \"$@\"\\n')\n"
        "        python.chmod(0o755)\n"
        "    return 0, ''\n"
        f"print(matrix.ensure_env({version!r}, sys.executable, [], runner=runner).path)\n"
    )
    subprocess.run([sys.executable, "-c", script], env=env, check=True, capture_output=True, text=True)


def test_matrix_is_never_silent(tmp_path: Path) -> None:
    repo = tiny_repo(tmp_path)
    env = _env(tmp_path)
    _local_env("3.3.1", env)
    argv = _tipc("matrix", str(repo), "--paddle", "3.3.1", "--python", sys.executable)
    code, out, longest = under_pty(argv, tmp_path, env)
    _quiet_enough(code, out, longest)
    assert "Paddle 3.3.1" in out


def test_review_is_never_silent(tmp_path: Path) -> None:
    repo = tiny_repo(tmp_path)
    ruleset = tmp_path / "static.yaml"
    ruleset.write_text(RULESET)
    out_dir = tmp_path / "out"
    argv = _tipc("review", str(repo), "--out", str(out_dir), "--ruleset", str(ruleset), "--budget", "300")
    code, out, longest = under_pty(argv, tmp_path, _env(tmp_path))
    _quiet_enough(code, out, longest, expected=(0, 1))
    summary = json.loads((out_dir / "summary.json").read_text())
    assert [r["name"] for r in summary["submissions"]] == ["tiny"]


def test_the_pytest_plugin_is_never_silent(tmp_path: Path) -> None:
    repo = tiny_repo(tmp_path)
    ruleset = tmp_path / "static.yaml"
    ruleset.write_text(RULESET)
    env = _env(tmp_path)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    argv = [sys.executable, "-m", "pytest", "-p", "tipc.pytest_plugin", "-p", "no:cacheprovider"]
    argv += ["--rootdir", str(tmp_path), "--tipc", str(repo), "--tipc-ruleset", str(ruleset), "-q"]
    code, out, longest = under_pty(argv, tmp_path, env)
    _quiet_enough(code, out, longest, expected=(1,))  # the ruleset's second rule fails on purpose
    assert "api.has_setup_cfg FAILED" in out
