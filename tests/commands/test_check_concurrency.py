"""Two `tipc check --reuse-run` of one repo at once: the second waits for the first (one check at a time per
run folder, its reports included), so each one's report says what its exit code says, and neither sees a
serving failure the other caused (issue 15: 12 of 12 rounds used to end in a false serving FAIL)."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.ports import free_port
from tests.serve.fake_serving import fake_serving_repo, stdlib_python
from tests.serve.test_serving_chain import serving_rules
from tipc.execute.sandbox import run_folder, run_key

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration
CONFIG = "test_tipc/configs/m/train_infer_python.txt"
_WAITING = "waiting for the other tipc"


def _check(repo: Path, rules: Path, python: str, report: Path, *more: str) -> subprocess.Popen[str]:
    """`tipc check` as its own process; stderr goes to `<report>.err` (read while it runs)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    argv = [sys.executable, "-m", "tipc", "check", str(repo), "--ruleset", str(rules), "--python", python]
    with open(f"{report}.err", "w", encoding="utf-8") as err:
        return subprocess.Popen(
            [*argv, "--report-dir", str(report), "--format", "json", "--no-color", *more],
            env=env,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )


def _err(report: Path) -> str:
    return Path(f"{report}.err").read_text(encoding="utf-8")


def _verdicts(report: dict[str, Any]) -> dict[str, str]:
    return {r["id"]: r["verdict"] for r in report["rules"]}


def test_two_checks_with_reuse_run_at_once_each_report_agrees_with_its_exit_code(tmp_path: Path) -> None:
    repo = fake_serving_repo(tmp_path / "repo", free_port())
    rules = serving_rules(tmp_path)
    python = stdlib_python(tmp_path / "bin")
    first = _check(repo, rules, python, tmp_path / "first")
    out, _ = first.communicate(timeout=120)
    assert first.returncode in (0, 1), _err(tmp_path / "first")[-2000:]
    expected = _verdicts(json.loads(out))
    assert expected["competition.serving.steps_pass"] == "PASS", expected  # the serving chain itself works

    # Hold the run folder as a check in progress would, start two checks, let them go once both wait.
    folder = run_folder(repo.resolve(), run_key("m", CONFIG, "lite_train_lite_infer"))
    with open(f"{folder}.lock", "a+", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        both = [_check(repo, rules, python, tmp_path / name, "--reuse-run") for name in ("a", "b")]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(_WAITING in _err(tmp_path / n) for n in ("a", "b")):
            assert all(p.poll() is None for p in both), [_err(tmp_path / n) for n in ("a", "b")]
            time.sleep(0.05)
        fcntl.flock(lock, fcntl.LOCK_UN)
    results = [p.communicate(timeout=120) for p in both]
    for p, (out, _), name in zip(both, results, ("a", "b"), strict=True):
        err = _err(tmp_path / name)
        assert _WAITING in err
        printed = json.loads(out)
        on_disk = json.loads((tmp_path / name / "report.json").read_text(encoding="utf-8"))
        assert p.returncode == printed["exit_code"] == on_disk["exit_code"], err[-2000:]
        assert _verdicts(printed) == _verdicts(on_disk) == expected, err[-2000:]
