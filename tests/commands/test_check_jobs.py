"""`tipc check --jobs N`: the registry's lane checks run side by side up to N; the report stays the same."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.commands.test_check import Fakes, _run
from tests.commands.test_check import repo as repo  # the fixture
from tipc.commands import check as check_cmd
from tipc.core.errors import UserError
from tipc.judge.checks.base import CheckContext, CheckOutcome, Verdict

RULESET = """\
schema: tipc.ruleset/1
name: jobs
rules:
  - {id: jobs.a, source: s, severity: error, description: d, check: {check: {name: model_a}}}
  - {id: jobs.b, source: s, severity: error, description: d, check: {check: {name: model_b}}}
  - {id: jobs.c, source: s, severity: error, description: d, check: {file_exists: {path: train.py}}}
"""


class Timed(Fakes):
    def __init__(self, repo: Path) -> None:
        super().__init__(repo)
        self.spans: dict[str, tuple[float, float]] = {}
        self.lock = threading.Lock()

    def model(self, name: str) -> Any:
        def check(ctx: CheckContext, **args: Any) -> CheckOutcome:
            t0 = time.monotonic()
            time.sleep(0.3)
            with self.lock:
                self.spans[name] = (t0, time.monotonic())
            return CheckOutcome(Verdict.PASS, f"{name} agrees")

        return check

    def seams(self) -> check_cmd.Seams:
        base = super().seams()
        checks = {**base.checks, "model_a": self.model("model_a"), "model_b": self.model("model_b")}
        return replace(base, checks=checks, lanes={"model_a": "engines", "model_b": "scripts"})

    def overlapped(self) -> bool:
        (a0, a1), (b0, b1) = self.spans["model_a"], self.spans["model_b"]
        return a0 < b1 and b0 < a1


def _rules(tmp_path: Path) -> Path:
    path = tmp_path / "jobs.yaml"
    path.write_text(RULESET, encoding="utf-8")
    return path


def test_jobs_runs_lane_checks_side_by_side_with_the_same_report(repo: Path, tmp_path: Path) -> None:
    rules = _rules(tmp_path)
    outputs = {}
    for jobs in (1, 2):
        fakes = Timed(repo)
        code, out, _ = _run([str(repo), "--ruleset", str(rules), "--jobs", str(jobs), "--no-color"], fakes)
        assert code == 0
        assert fakes.overlapped() is (jobs == 2)
        outputs[jobs] = out
    assert outputs[1] == outputs[2]


@pytest.mark.parametrize("jobs", ["0", "-3"])
def test_a_jobs_below_one_is_a_usage_error(repo: Path, tmp_path: Path, jobs: str) -> None:
    fakes = Timed(repo)
    with pytest.raises(UserError, match="--jobs"):
        _run([str(repo), "--ruleset", str(_rules(tmp_path)), "--jobs", jobs], fakes)
    assert fakes.executed == []


def test_the_default_is_at_most_two(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert check_cmd.check_jobs(None) == 2
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    assert check_cmd.check_jobs(None) == 1
    assert check_cmd.check_jobs(5) == 5


def test_ctrl_c_while_lane_checks_run_stops_them_and_still_reports(repo: Path, tmp_path: Path) -> None:
    import os
    import signal

    from tipc.execute import proc

    leaders: list[int] = []

    class Sleepy(Timed):
        def model(self, name: str) -> Any:
            def check(ctx: CheckContext, **args: Any) -> CheckOutcome:
                res = proc.run(["sleep", "60"], cwd=tmp_path, on_start=leaders.append)
                return CheckOutcome(Verdict.PASS if res.exit_code == 0 else Verdict.FAIL, name)

            return check

    def interrupt() -> None:
        deadline = time.monotonic() + 20
        while len(leaders) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    started = time.monotonic()
    report = tmp_path / "report"
    argv = [str(repo), "--ruleset", str(_rules(tmp_path)), "--jobs", "2", "--report-dir", str(report)]
    code, out, err = _run(argv, Sleepy(repo))
    assert "interrupted" in err
    # stopped, not waited out: each child sleeps 60 s (a bound well short of that, not a speed verdict)
    assert code == 130 and time.monotonic() - started < 45
    assert len(leaders) == 2 and not set(leaders) & proc._ours
    for pid in leaders:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert "interrupted while the checks ran" in out and "2 SKIP" in out  # the SKIP rules fold into a count
    assert "not checked" in (report / "report.json").read_text(encoding="utf-8")
