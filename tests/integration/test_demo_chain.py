"""The main job, end to end: `tipc run` then `tipc check` on a scratch copy of the demo repo (Paddle on CPU).

This is what the README's main command does; it asserts the chain passes, the status log keeps the
template's line format, and the user's files are left untouched outside the output folder. The run and the
check are the suite's shared ones (tests/conftest.py: demo_run, demo_checked).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.demo import DemoCheck, DemoRun
from tests.helpers.trees import tree_hashes

pytestmark = pytest.mark.integration

OUTPUT = Path("test_tipc") / "output"


def test_run_passes_every_step(demo_run: DemoRun) -> None:
    assert demo_run.code == 0, demo_run.stdout[-3000:] + demo_run.stderr[-3000:]
    record = demo_run.record()
    statuses = {r["step_id"]: r["status"] for r in record["results"]}
    stages = {s["stage"] for s in record["plan"]["steps"]}
    assert {"train", "eval", "export", "infer"} <= stages
    assert set(statuses.values()) == {"passed"}, statuses
    assert all(r["exit_code"] == 0 for r in record["results"])
    assert record["paddle_version"], "the Paddle version of the run must be recorded"


def test_status_log_uses_the_dialect_line_format(demo_run: DemoRun) -> None:
    lines = next((demo_run.repo / OUTPUT).rglob("results_python.log")).read_text().splitlines()
    assert len(lines) == 4
    for line in lines:
        # --no-color drops the ESC codes; the " - " field structure parsers rely on stays.
        assert "\x1b" not in line
        assert line.lstrip().startswith("Run successfully with command - ")


def test_run_leaves_the_repo_untouched(demo_run: DemoRun) -> None:
    assert tree_hashes(demo_run.repo, pycache=False) == demo_run.before


def test_check_passes_basic_and_competition(demo_run: DemoRun, demo_checked: DemoCheck) -> None:
    report = demo_checked.report
    failed = [(r["id"], r["summary"]) for r in report["rules"] if r["verdict"] == "FAIL"]
    assert demo_checked.code == 0, failed
    assert report["overall"] == "PASS"
    assert report["run"]["reused"] is True
    assert not failed
    assert tree_hashes(demo_checked.repo, pycache=False) == demo_checked.before
