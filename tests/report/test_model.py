from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tipc.core.steps import Mode, Plan, Stage, Status, Step
from tipc.execute.record import Resources, RunRecord, StepResult
from tipc.judge.checks.base import CheckOutcome, Evidence, Verdict
from tipc.judge.rules.evaluate import RuleResult
from tipc.judge.rules.model import CheckSpec, Rule, Severity
from tipc.report.model import Report, build_report, curve_points, matrix_table

MakeReport = Callable[..., Report]


def test_overall_verdict_and_exit_code(make_report_fn: MakeReport) -> None:
    assert (make_report_fn(fail=False).overall, make_report_fn(fail=False).exit_code) == ("PASS", 0)
    assert (make_report_fn().overall, make_report_fn().exit_code) == ("FAIL", 1)
    assert make_report_fn(fail=False, lint_error=True).exit_code == 1
    assert (
        make_report_fn(fail=False, error=True).overall,
        make_report_fn(fail=False, error=True).exit_code,
    ) == (
        "ERROR",
        3,
    )
    assert (
        make_report_fn(fail=True, error=True).exit_code == 1
    )  # a definite FAIL outranks an incomplete check


def test_counts_cover_every_verdict(make_report_fn: MakeReport) -> None:
    assert make_report_fn().counts() == {"FAIL": 1, "WARN": 1, "PASS": 3, "SKIP": 1, "N-A": 1}


def test_build_report_from_rule_results_and_record(tmp_path: Path) -> None:
    rule = Rule("r", "seed002 §2.2.1", Severity.WARNING, "d", CheckSpec("file_exists", (("path", "a"),)))
    result = RuleResult(
        "rs", rule, Verdict.WARN, CheckOutcome(Verdict.FAIL, "s", (Evidence("e"),), {"x": float("nan")})
    )
    step = Step(id="train", stage=Stage.TRAIN, argv=("python", "train.py"), log="train.log")
    plan = Plan(
        "c.txt",
        str(tmp_path),
        Mode.LITE_TRAIN_LITE_INFER,
        "template",
        "m",
        "out",
        "out/r.log",
        "template",
        (step,),
    )
    record = RunRecord(
        plan,
        (StepResult("train", Status.PASSED, 0, 1.0, 3.5, resources=Resources(peak_rss_bytes=42)),),
        1.0,
        4.0,
    )
    report = build_report(
        repo=str(tmp_path), rulesets=["rs"], results=[result], record=record, tool_version="9"
    )
    assert report.rules[0].data == {"x": "nan"}  # JSON-safe
    assert report.run is not None and report.run.steps[0].duration_s == 2.5
    assert report.run.steps[0].peak_rss_bytes == 42
    assert report.overall == "PASS"


def test_curve_and_matrix_helpers() -> None:
    assert curve_points({"curve": [[1, 2.0], [2, "nan"], "junk", [3, 1.0]]}) == [(1.0, 2.0), (3.0, 1.0)]
    assert matrix_table({"matrix": {"engines": ["a", "b"], "values": [[0, 1e-7], [1e-7, 0]]}}) == (
        ["", "a", "b"],
        [["a", "0", "1e-07"], ["b", "1e-07", "0"]],
    )
    assert matrix_table({"matrix": "nope"}) is None


def test_matrix_cells_from_the_agreement_check() -> None:
    cell = {
        "within": True,
        "max_abs": 3.2e-07,
        "max_rel": 7.6e-06,
        "cosine": 0.99999999,
        "argmax_agree": 1.0,
        "outputs": [{"big": 1}],
    }
    header, rows = matrix_table(
        {"matrix": {"pi": {"pi": None, "ort": cell}, "ort": {"pi": cell, "ort": None}}}
    ) or (
        [],
        [],
    )
    assert header == ["", "pi", "ort"]
    assert rows[0] == ["pi", "—", "agree max_abs=3.2e-07 max_rel=7.6e-06 cos=0.99999999 argmax=100%"]


def test_agreement_caption_and_sparkline() -> None:
    from tipc.report.model import agreement_caption, sparkline

    data = {
        "inputs": {"source": "file", "path": "lite_data/x.npy", "feeds": {"x": {"shape": [16, 1, 8, 8]}}},
        "tolerances": {"atol": 1e-5, "rtol": 1e-4, "cosine_min": 0.99999},
    }
    assert agreement_caption(data) == (
        "inputs lite_data/x.npy (x [16, 1, 8, 8]); tolerances atol=1e-05 rtol=0.0001 cosine_min=0.99999"
    )
    assert agreement_caption({"inputs": {"source": "random", "feeds": {}}}) == "inputs random"
    assert agreement_caption({}) == ""
    line = sparkline([3.0, 2.0, 1.0, 0.0])
    assert line == "█▆▃▁" and sparkline([]) == "" and sparkline([1.0, 1.0]) == "▁▁"
    assert len(sparkline([float(i) for i in range(500)], width=40)) == 40


def test_lint_errors_become_a_failed_row_of_the_verdict_table() -> None:
    from tipc.core.findings import Finding, Level

    config = "test_tipc/configs/m/train_infer_python.txt"
    warning = Finding(config, 3, 1, Level.WARNING, "TIPC120", "odd value")
    error = Finding(config, 7, 1, Level.ERROR, "TIPC101", "bad key")
    clean = build_report(repo="/r", rulesets=["x"], results=[], findings=iter([warning]))
    assert clean.rules == () and clean.findings == (warning,)
    report = build_report(repo="/r", rulesets=["x"], results=[], findings=iter([warning, error]))
    (row,) = report.rules
    assert (row.id, row.ruleset, row.severity, row.verdict) == ("lint.config", "lint", "error", Verdict.FAIL)
    assert f"{config}:7" in row.summary and "TIPC101" in row.summary
    assert [(e.path, e.line) for e in row.evidence] == [(config, 7)]
    assert report.findings == (warning, error) and report.exit_code == 1
