from __future__ import annotations

from collections.abc import Callable

import pytest

from tipc.checks.base import Evidence, Verdict
from tipc.findings import Finding, Level
from tipc.report.model import Report, RuleVerdict, RunSummary, StepSummary

NASTY = '<script>alert("x")</script> | `tick` ```fence``` \x1b[31mred\x1b[0m & [bold]markup[/bold]'


def make_report(*, fail: bool = True, lint_error: bool = False, error: bool = False) -> Report:
    rules = [
        RuleVerdict(
            "tipc-basic",
            "basic.code.entrypoints",
            "seed002 §2.2.1",
            "error",
            "train/eval/predict exist",
            Verdict.PASS,
            "all present",
            (Evidence("found train.py", path="train.py"),),
        ),
        RuleVerdict(
            "tipc-basic",
            "basic.tipc.chain_passes",
            "seed002 §4.2.2",
            "error",
            "the chain passes",
            Verdict.FAIL if fail else Verdict.PASS,
            "1 of 3 step(s) did not pass " + NASTY,
            (
                Evidence(
                    "infer: failed",
                    path="test_tipc/output/m/infer.log",
                    line=12,
                    excerpt="Traceback (most recent call last):\n" + NASTY,
                    numbers=(("exit_code", 1), ("duration_s", 1.25)),
                ),
            ),
        ),
        RuleVerdict(
            "tipc-basic",
            "basic.readme.template",
            "seed002 §2.2.5",
            "warning",
            "README follows the template",
            Verdict.WARN,
            "no licence section",
        ),
        RuleVerdict(
            "competition",
            "competition.train.loss_converges",
            "seed004 §4.1.3",
            "error",
            "loss converges",
            Verdict.PASS,
            "loss decreases",
            data={"curve": [[1, 2.3], [2, 2.0], [3, 1.2], [4, "nan"], [5, 0.9]]},
        ),
        RuleVerdict(
            "competition",
            "competition.predict_infer.identical",
            "seed004 §4.1.3",
            "error",
            "predict == infer",
            Verdict.PASS,
            "identical",
            data={
                "matrix": {
                    "paddle_inference": {"onnxruntime": 1e-7},
                    "onnxruntime": {"paddle_inference": 1e-7},
                }
            },
        ),
        RuleVerdict(
            "competition",
            "competition.serving.equals_inference",
            "seed004 §4.2.3",
            "error",
            "serving equals inference",
            Verdict.SKIP,
            "serving check not available",
            error="ZeroDivisionError: boom" if error else None,
        ),
        RuleVerdict(
            "competition",
            "competition.backbone.results_table",
            "seed004 §4.3.4",
            "error",
            "backbone table",
            Verdict.NA,
            "does not apply",
        ),
    ]
    findings = [
        Finding("test_tipc/configs/m/train_infer_python.txt", 3, 1, Level.WARNING, "TIPC120", "odd <value>")
    ]
    if lint_error:
        findings.append(
            Finding("test_tipc/configs/m/train_infer_python.txt", 7, 1, Level.ERROR, "TIPC101", "bad key")
        )
    run = RunSummary(
        config="test_tipc/configs/m/train_infer_python.txt",
        mode="lite_train_lite_infer",
        dialect="template",
        model_name="m",
        output_dir="test_tipc/output/m/lite_train_lite_infer",
        started=100.0,
        ended=130.0,
        python="python3",
        paddle_version="3.3.1",
        git_commit="abc",
        steps=(
            StepSummary(
                "train/norm_train", "train", "norm_train", "passed", 0, 20.0, 300 * 2**20, None, "a.log", ""
            ),
            StepSummary("export", "export", None, "passed", 0, 5.0, 2**30, None, "b.log", ""),
            StepSummary("infer/" + NASTY, "infer", None, "failed", 1, 5.0, None, None, "c.log", "exit 1"),
        ),
    )
    return Report(
        tool_version="0.1.0",
        repo="/tmp/repo",
        rulesets=("tipc-basic", "competition"),
        created="2026-11-22T13:00:00Z",
        run=run,
        findings=tuple(findings),
        rules=tuple(rules),
        notes=("a note <b>",),
    )


@pytest.fixture
def report() -> Report:
    return make_report()


@pytest.fixture
def make_report_fn() -> Callable[..., Report]:
    return make_report
