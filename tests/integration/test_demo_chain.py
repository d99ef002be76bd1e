"""The main job, end to end: `tipc run` then `tipc check` on a scratch copy of the demo repo (Paddle on CPU).

This is what the README's main command does; it asserts the chain passes, the status log keeps the
template's line format, and the user's files are left untouched outside the output folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.demo_port import use_free_port

pytestmark = pytest.mark.integration

DEMO = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits"
OUTPUT = Path("test_tipc") / "output"


def _tree_hashes(root: Path) -> dict[str, str]:
    hashes = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not rel.is_relative_to(OUTPUT):
            hashes[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


def _tipc(*args: str) -> subprocess.CompletedProcess[str]:
    # `python:` in the demo config resolves through PATH, so put this interpreter's folder first.
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("FLAGS_enable_pir_api", None)
    return subprocess.run(
        [sys.executable, "-m", "tipc", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("chain") / "lenet_digits"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("output", "__pycache__"))
    use_free_port(dest)
    return dest


@pytest.fixture(scope="module")
def ran(demo: Path) -> tuple[Path, subprocess.CompletedProcess[str], dict[str, str]]:
    before = _tree_hashes(demo)
    result = _tipc("run", str(demo), "--mode", "lite_train_lite_infer", "--no-color")
    return demo, result, before


def test_run_passes_every_step(ran: tuple[Path, subprocess.CompletedProcess[str], dict[str, str]]) -> None:
    demo, result, _ = ran
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    record = json.loads(next((demo / OUTPUT).rglob("tipc_run.json")).read_text())
    statuses = {r["step_id"]: r["status"] for r in record["results"]}
    stages = {s["stage"] for s in record["plan"]["steps"]}
    assert {"train", "eval", "export", "infer"} <= stages
    assert set(statuses.values()) == {"passed"}, statuses
    assert all(r["exit_code"] == 0 for r in record["results"])
    assert record["paddle_version"], "the Paddle version of the run must be recorded"


def test_status_log_uses_the_dialect_line_format(
    ran: tuple[Path, subprocess.CompletedProcess[str], dict[str, str]],
) -> None:
    demo, _, _ = ran
    lines = next((demo / OUTPUT).rglob("results_python.log")).read_text().splitlines()
    assert len(lines) == 4
    for line in lines:
        # --no-color drops the ESC codes; the " - " field structure parsers rely on stays.
        assert "\x1b" not in line
        assert line.lstrip().startswith("Run successfully with command - ")


def test_run_leaves_the_repo_untouched(
    ran: tuple[Path, subprocess.CompletedProcess[str], dict[str, str]],
) -> None:
    demo, _, before = ran
    assert _tree_hashes(demo) == before


def test_check_passes_basic_and_competition(
    ran: tuple[Path, subprocess.CompletedProcess[str], dict[str, str]],
) -> None:
    demo, _, before = ran
    result = _tipc("check", str(demo), "--reuse-run", "--no-color", "--format", "json")
    report = json.loads(result.stdout)
    failed = [(r["id"], r["summary"]) for r in report["rules"] if r["verdict"] == "FAIL"]
    assert result.returncode == 0, failed
    assert report["overall"] == "PASS"
    assert not failed
    assert _tree_hashes(demo) == before
