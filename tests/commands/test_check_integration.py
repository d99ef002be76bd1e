"""`tipc check` on the demo repo with the real planner, runner, checks and Paddle (CPU).

Needs the planner, runner and demo repo, which land on other branches: skipped until they are all present.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers.demo import DemoRun
from tipc.cli import main
from tipc.judge.rules import resolve_ruleset

DEMO = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits"
NEEDED = (
    "tipc.planning.planner",
    "tipc.execute.runner",
    "tipc.planning.lint",
    "tipc.config.discover",
    "paddle",
)


def _available(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is missing
        return False


def _missing() -> list[str]:
    missing = [m for m in NEEDED if not _available(m)]
    if not (DEMO / "test_tipc").is_dir():
        missing.append(str(DEMO))
    return missing


def _snapshot(root: Path) -> dict[str, float]:
    output = root / "test_tipc" / "output"
    return {
        str(p.relative_to(root)): p.stat().st_mtime
        for p in root.rglob("*")
        if p.is_file() and output not in p.parents and "__pycache__" not in p.parts
    }


@pytest.mark.integration
@pytest.mark.skipif(bool(_missing()), reason=f"needs {', '.join(_missing())}")
def test_check_the_demo_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], demo_run: DemoRun
) -> None:
    # The suite's shared run of the demo (tests/conftest.py), copied: this check writes its reports there.
    repo = demo_run.copy(tmp_path / "lenet_digits")
    before = _snapshot(repo)
    report_dir = tmp_path / "report"
    code = main(
        [
            "check",
            str(repo),
            "--reuse-run",
            "--device",
            "cpu",
            "--python",
            sys.executable,
            "--report-dir",
            str(report_dir),
            "--format",
            "json",
            "--no-color",
        ]
    )
    out = capsys.readouterr().out
    assert code in (0, 1), out[-2000:]
    data = json.loads(out)
    assert data == json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    assert data["schema"] == "tipc.report/1" and data["exit_code"] == code
    expected_ids = {r.id for name in ("tipc-basic", "competition") for r in resolve_ruleset(name).rules}
    verdicts = {r["id"]: r["verdict"] for r in data["rules"]}
    assert set(verdicts) == expected_ids
    assert all(r["error"] is None for r in data["rules"]), [r for r in data["rules"] if r["error"]]
    # The demo's chain really runs and passes; its artefact rules hold.
    for rule_id in ("basic.tipc.chain_passes", "basic.train.log_fields", "basic.code.entrypoints"):
        assert verdicts[rule_id] == "PASS", (rule_id, next(r for r in data["rules"] if r["id"] == rule_id))
    assert data["run"]["steps"] and all(s["status"] == "passed" for s in data["run"]["steps"])
    junit = ET.parse(report_dir / "report.junit.xml").getroot()
    # one testcase per rule and lint finding, and one per step of the chain (timed by the step itself)
    assert int(junit.get("tests", "0")) == len(expected_ids) + len(data["lint"]) + len(data["run"]["steps"])
    assert data["run"]["reused"] is True
    assert (report_dir / "report.html").is_file() and (report_dir / "report.md").is_file()
    assert _snapshot(repo) == before  # only test_tipc/output changed in the demo repo


@pytest.mark.integration
@pytest.mark.skipif(bool(_missing()), reason=f"needs {', '.join(_missing())}")
def test_a_report_dir_on_a_mount_the_sandbox_turns_read_only_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], demo_run: DemoRun
) -> None:
    """A --report-dir (a review's work area) outside the repo and outside /tmp and the homes, which the
    sandbox rebuilds: every check of a `tipc review --out /work/reviews` ended "cannot write the reports:
    Read-only file system" (exit 2), since the mount it lies on turns read-only with the rest of the host."""
    repo = demo_run.copy(tmp_path / "lenet_digits")
    build = DEMO.parents[1] / "build"  # the checkout's (ignored) build folder: a mount /tmp covers nothing of
    build.mkdir(exist_ok=True)
    outside = Path(tempfile.mkdtemp(prefix="report-dir-", dir=build))
    try:
        report_dir = outside / "report"
        argv = ["check", str(repo), "--reuse-run", "--device", "cpu", "--python", sys.executable]
        code = main([*argv, "--ruleset", "tipc-basic", "--report-dir", str(report_dir), "--no-color"])
        err = capsys.readouterr().err
        assert code in (0, 1), err[-2000:]
        assert "Read-only file system" not in err
        assert json.loads((report_dir / "report.json").read_text(encoding="utf-8"))["exit_code"] == code
    finally:
        shutil.rmtree(outside, ignore_errors=True)
