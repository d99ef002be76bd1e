"""The summary: a check's Outcome -> a row (verdict, counts, first failing rule), and every renderer."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from tipc.review.executor import Outcome
from tipc.review.summary import Row, Summary, rejected_row, render, row_from_outcome, write_all


def _report(*rules: tuple[str, str, str, str]) -> dict[str, Any]:
    return {
        "rulesets": sorted({r[0] for r in rules}),
        "rules": [
            {"ruleset": rs, "id": i, "verdict": v, "severity": sev, "summary": f"{i} says {v}"}
            for rs, i, v, sev in rules
        ],
    }


def _row(outcome: Outcome, tmp_path: Path, name: str = "sub") -> Row:
    report_dir = tmp_path / name / "report"
    report_dir.mkdir(parents=True)
    (report_dir / "report.html").write_text("<html></html>")
    return row_from_outcome(
        outcome,
        name=name,
        source=f"/src/{name}",
        content_hash="ab" * 32,
        budget_s=60,
        work_area=str(tmp_path / name),
        report_dir=str(report_dir),
        log_path=str(tmp_path / name / "check.log"),
    )


def test_verdicts_from_outcomes(tmp_path: Path) -> None:
    passing = _report(("tipc-basic", "a", "PASS", "error"), ("tipc-basic", "b", "N-A", "error"))
    row = _row(Outcome("k", 0, False, False, 12.5, 300 << 20, passing), tmp_path, "p")
    assert (row.verdict, row.first_failure) == ("PASS", None)
    assert row.rulesets[0].counts == {"PASS": 1, "N-A": 1}

    failing = _report(
        ("tipc-basic", "a", "PASS", "error"),
        ("tipc-basic", "w", "FAIL", "warning"),
        ("artefacts", "x", "FAIL", "error"),
        ("artefacts", "y", "FAIL", "error"),
    )
    row = _row(Outcome("k", 1, False, False, 3.0, None, failing), tmp_path, "f")
    # the first error-severity FAIL, not the warning before it
    assert (row.verdict, row.first_failure, row.cause) == ("FAIL", "x", "x says FAIL")

    failing["run"] = {
        "steps": [
            {"id": "prepare", "status": "passed", "causes": []},
            {
                "id": "train/x",
                "status": "failed",
                "reason": "exit 1",
                "causes": [{"cause": "the download failed"}],
            },
        ]
    }
    row = _row(Outcome("k", 1, False, False, 3.0, None, failing), tmp_path, "s")
    # the root cause is the failed step's, whatever rule comes first; rule x is not about that step
    assert (row.first_failure, row.cause, row.root_step) == (
        "x",
        "step train/x failed: the download failed",
        "train/x",
    )
    assert (row.explains, row.failing_rules) == (0, 2)

    # prepare.sh failing offline on a download no failing rule is about (Step6: "explains 0 of 3") is not
    # the root cause: the first failing rule is shown, as without a failed step
    failing["run"]["steps"] = [
        {"id": "prepare", "stage": "prepare", "status": "failed", "causes": [{"cause": "download failed"}]},
        {"id": "train/x", "stage": "train", "status": "passed", "causes": []},
    ]
    row = _row(Outcome("k", 1, False, False, 3.0, None, failing), tmp_path, "p2")
    assert (row.first_failure, row.cause, row.root_step) == ("x", "x says FAIL", None)
    # ... and it is, where a failing rule is about it
    failing["rules"][2]["summary"] = "blocked: its input step prepare failed"
    row = _row(Outcome("k", 1, False, False, 3.0, None, failing), tmp_path, "p3")
    assert (row.root_step, row.explains) == ("prepare", 1)

    row = _row(Outcome("k", None, True, False, 60.2, None, None), tmp_path, "t")
    assert (row.verdict, row.first_failure) == ("TIMEOUT", "review.budget")
    assert "budget of 60 s" in (row.cause or "")

    tail = ("some output", "tipc: config.txt:3: unknown key 'foo'")
    row = _row(Outcome("k", 2, False, False, 1.0, None, None, log_tail=tail), tmp_path, "e")
    assert (row.verdict, row.first_failure, row.cause) == (
        "ERROR",
        "check.exit_2",
        "config.txt:3: unknown key 'foo'",
    )


def _summary(tmp_path: Path) -> Summary:
    ok = _row(
        Outcome("k1", 0, False, False, 10.0, 200 << 20, _report(("tipc-basic", "a", "PASS", "error"))),
        tmp_path,
        "good",
    )
    bad = _row(
        Outcome(
            "k2",
            1,
            False,
            False,
            11.0,
            None,
            _report(("tipc-basic", "a", "FAIL", "error"), ("lint", "lint.config", "FAIL", "error")),
        ),
        tmp_path,
        "bad|<b>",
    )
    rejected = rejected_row("evil", "/src/evil.tgz", "cd" * 32, "member '../x' escapes the work area (..)")
    return Summary([ok, bad, rejected], ["tipc-basic"], "0.2.0", "local", 2, 30.0, notes=["a note"])


def test_renderers(tmp_path: Path) -> None:
    summary = _summary(tmp_path)
    assert not summary.passed
    text = render(summary, "text")
    assert "good" in text and "REJECTED" in text and "review.unpack: member '../x'" in text
    assert "3 submission(s): 1 PASS, 1 FAIL, 1 REJECTED" in text

    md = render(summary, "markdown", tmp_path)
    assert "[good](good/report/report.html)" in md  # links relative to the summary's folder
    assert "bad\\|<b>" in md and "| lint |" not in md.splitlines()[4][:10]

    rows = list(csv.DictReader(io.StringIO(render(summary, "csv"))))
    assert [r["verdict"] for r in rows] == ["PASS", "FAIL", "REJECTED"]
    assert rows[1]["tipc-basic_fail"] == "1" and rows[1]["lint_fail"] == "1" and rows[0]["lint_fail"] == ""
    assert rows[1]["first_failing_rule"] == "a"

    data = json.loads(render(summary, "json"))
    assert data["verdicts"] == {"PASS": 1, "FAIL": 1, "REJECTED": 1} and data["passed"] is False
    assert {rs.name for rs in Row.from_json(data["submissions"][1]).rulesets} == {"lint", "tipc-basic"}

    page = render(summary, "html", tmp_path)
    assert '<a href="good/report/report.html">good</a>' in page
    assert "bad|&lt;b&gt;" in page and "<b>" not in page.replace("<body>", "")
    assert "<script" not in page and "<link" not in page  # self-contained

    written = write_all(summary, tmp_path)
    assert sorted(p.name for p in written.values()) == [
        "summary.csv",
        "summary.html",
        "summary.json",
        "summary.md",
    ]


def test_summary_passes_only_when_every_row_passes(tmp_path: Path) -> None:
    ok = _row(Outcome("k1", 0, False, False, 1.0, None, _report(("r", "a", "PASS", "error"))), tmp_path)
    assert Summary([ok], ["r"], "v", "local", 1, 1.0).passed
    assert not Summary([], ["r"], "v", "local", 1, 1.0).passed


def _can_like() -> dict[str, Any]:
    """A repo whose last commit deleted a package: prepare.sh fails offline on a download nothing needs,
    every stage dies on the missing module (train failed, the rest blocked), predict.py too."""
    missing = "ModuleNotFoundError: No module named 'paddlevision.models'"
    module = {
        "id": "module-missing-from-repo",
        "cause": "The code imports `paddlevision.models`, a package of the repo itself that is missing",
        "evidence": missing,
    }
    blocked = "not run: its input step train/1 did not pass (failed); root cause: train/1 failed"
    return {
        "rulesets": ["tipc-basic"],
        "rules": [
            {
                "ruleset": "tipc-basic",
                "id": "basic.data.download",
                "verdict": "FAIL",
                "severity": "error",
                "summary": "prepare.sh failed",
                "evidence": [{"text": "prepare: exit code 4"}],
            },
            {
                "ruleset": "tipc-basic",
                "id": "basic.tipc.chain_passes",
                "verdict": "FAIL",
                "severity": "error",
                "summary": "4 of 4 step(s) did not pass",
                "evidence": [{"text": "train/1: failed"}, {"text": "eval/1: blocked"}],
            },
            {
                "ruleset": "tipc-basic",
                "id": "competition.predict_infer.identical",
                "verdict": "FAIL",
                "severity": "error",
                "summary": "predict exited 1",
                "evidence": [{"text": "python tools/predict.py", "excerpt": "Traceback ...\n" + missing}],
            },
            {
                "ruleset": "tipc-basic",
                "id": "basic.readme.template",
                "verdict": "FAIL",
                "severity": "error",
                "summary": "the README has no licence section",
                "evidence": [],
            },
        ],
        "run": {
            "steps": [
                {
                    "id": "prepare",
                    "stage": "prepare",
                    "status": "failed",
                    "reason": "exit code 4",
                    "causes": [{"id": "weights-download-failed", "cause": "the download failed"}],
                },
                {
                    "id": "train/1",
                    "stage": "train",
                    "status": "failed",
                    "reason": "exit code 1",
                    "causes": [module],
                },
                {"id": "eval/1", "stage": "eval", "status": "blocked", "reason": blocked, "causes": []},
                {"id": "export/1", "stage": "export", "status": "blocked", "reason": blocked, "causes": []},
                {
                    "id": "infer/1",
                    "stage": "infer",
                    "status": "blocked",
                    "reason": "not run: its input step export/1 did not pass (blocked); "
                    "root cause: train/1 failed",
                },
            ]
        },
    }


def test_the_root_cause_is_the_failed_steps_not_the_first_rule(tmp_path: Path) -> None:
    row = _row(Outcome("k", 1, False, False, 3.0, None, _can_like()), tmp_path, "can")
    assert row.first_failure == "basic.data.download"  # first in ruleset order: the download
    assert row.root_step == "train/1" and "paddlevision.models" in (row.cause or "")
    assert (row.explains, row.failing_rules) == (2, 4)  # the chain and predict.py, not the README
    text = render(Summary([row], ["tipc-basic"], "0.3.0", "local", 1, 3.0), "text", tmp_path)
    assert "root cause (failing rules it explains)" in text
    assert (
        "explains 2 of 4 failing rules" in text
        and "download" not in text.split("paddlevision")[0].split("\n")[-1]
    )
    csv_row = next(
        csv.DictReader(io.StringIO(render(Summary([row], ["tipc-basic"], "0.3.0", "local", 1, 3.0), "csv")))
    )
    assert (csv_row["root_step"], csv_row["explains"], csv_row["failing_rules"]) == ("train/1", "2", "4")


def test_a_failure_that_follows_from_an_earlier_step_has_that_steps_cause_as_root(tmp_path: Path) -> None:
    report = _can_like()
    steps = report["run"]["steps"]
    steps[1]["causes"] = [
        {"id": "lite-data-missing", "cause": "reads data at ./data/train", "evidence": "./data/train"},
        {"id": "upstream-output-missing", "cause": "what prepare should have made", "upstream": "prepare"},
    ]
    steps[1]["causes"][0]["upstream"] = "prepare"
    row = _row(Outcome("k", 1, False, False, 3.0, None, report), tmp_path, "data")
    assert row.root_step == "prepare" and row.cause == "step prepare failed: the download failed"
