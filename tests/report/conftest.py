from __future__ import annotations

from collections.abc import Callable

import pytest

from tipc.core.findings import Finding, Level
from tipc.judge.checks.base import Evidence, Verdict
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


def make_rich_report() -> Report:
    """A report with every figure's data as the checks and the monitor record it: a timed chain with resource
    series, a loss curve with the convergence statistics, an agreement matrix and a served model that differs,
    and a lineage graph with one stale read."""
    from dataclasses import replace

    from tipc.judge.checks.convergence import analyse_curve

    base = make_report()
    curve = [(i, 2.5 * 0.97**i + 0.05 * ((i * 7919) % 13) / 13) for i in range(1, 121)]
    _, summary, conv = analyse_curve(curve)

    def samples(n: int, rss: int, gpu: bool = False) -> tuple[tuple[float, int, float, int | None], ...]:
        return tuple(
            (0.5 * k, rss + k * 2**20, 40.0 + (k % 5) * 10, (k * 2**22) if gpu else None) for k in range(n)
        )

    steps = (
        StepSummary(
            "train/norm_train",
            "train",
            "norm_train",
            "passed",
            0,
            20.0,
            300 * 2**20,
            2**28,
            "a.log",
            "",
            started=100.0,
            samples=samples(40, 200 * 2**20, gpu=True),
        ),
        StepSummary(
            "eval",
            "eval",
            None,
            "passed",
            0,
            4.0,
            2**28,
            None,
            "e.log",
            "",
            started=120.5,
            samples=samples(8, 150 * 2**20),
        ),
        StepSummary(
            "export",
            "export",
            None,
            "passed",
            0,
            5.0,
            2**30,
            None,
            "b.log",
            "",
            started=125.0,
            samples=samples(10, 180 * 2**20),
        ),
        StepSummary(
            "infer/" + NASTY,
            "infer",
            None,
            "failed",
            1,
            5.0,
            None,
            None,
            "c.log",
            "exit 1",
            started=130.5,
            samples=samples(10, 120 * 2**20),
        ),
    )
    cell = {"within": True, "max_abs": 3e-7, "max_rel": 6e-6, "cosine": 1.0, "argmax_agree": 1.0}
    agreement = RuleVerdict(
        "tipc-basic",
        "basic.infer.engines_agree",
        "seed002 §3.2.1",
        "error",
        "engines agree",
        Verdict.PASS,
        "2 engines agree",
        data={
            "engines": ["paddle_inference", "onnxruntime"],
            "matrix": {
                "paddle_inference": {"paddle_inference": None, "onnxruntime": cell},
                "onnxruntime": {"paddle_inference": cell, "onnxruntime": None},
            },
        },
    )
    serving = RuleVerdict(
        "competition",
        "competition.serving.equals_inference",
        "seed004 §4.2.3",
        "error",
        "serving equals",
        Verdict.FAIL,
        "pipeline output differs from Paddle Inference",
        data={
            "agreement": {
                "v2": {"out": {"max_abs": 2e-7, "max_rel": 3e-6, "cosine": 1.0}},
                "pipeline": {"out": {"max_abs": 0.4, "max_rel": 0.9, "cosine": 0.7}},
            },
            "tolerances": {"atol": 1e-5, "rtol": 1e-4, "cosine_min": 0.99999},
            # as the serving check records them: each protocol against the agreement's other engines and
            # against the other protocol
            "cross": {
                "engines": {
                    "onnxruntime": {
                        "v2": {"out": {"max_abs": 3e-7, "max_rel": 4e-6, "cosine": 1.0, "within": True}},
                        "pipeline": {"out": {"max_abs": 0.4, "max_rel": 0.9, "cosine": 0.7, "within": False}},
                    }
                },
                "protocols": {
                    "v2": {
                        "pipeline": {"out": {"max_abs": 0.4, "max_rel": 0.9, "cosine": 0.7, "within": False}}
                    }
                },
                "not_compared": {},
            },
        },
    )
    loss = RuleVerdict(
        "competition",
        "competition.train.loss_converges",
        "seed004 §4.1.3",
        "error",
        "loss converges",
        Verdict.PASS,
        summary,
        data=conv,
    )
    rules = (*tuple(r for r in base.rules if r.id not in {loss.id, serving.id}), agreement, serving, loss)
    lineage = {
        "steps": [
            {"id": "train/norm_train", "stage": "train", "recorded": True},
            {"id": "eval", "stage": "eval", "recorded": True},
            {"id": "export", "stage": "export", "recorded": True},
            {"id": "infer/" + NASTY, "stage": "infer", "recorded": True},
        ],
        "files": [
            {"path": "out/model.pdparams", "kind": "weights", "written_by": ["train/norm_train"]},
            {"path": "pretrained/old.pdparams", "kind": "weights", "origin": "committed"},
            {"path": "out/inference.json", "kind": "model", "written_by": ["export"]},
        ],
        "edges": [
            {"step": "train/norm_train", "file": "out/model.pdparams", "kind": "wrote"},
            {"step": "eval", "file": "pretrained/old.pdparams", "kind": "read", "fresh": False},
            {"step": "export", "file": "out/model.pdparams", "kind": "read", "fresh": True},
            {"step": "export", "file": "out/inference.json", "kind": "wrote"},
            {"step": "infer/" + NASTY, "file": "out/inference.json", "kind": "read", "fresh": True},
        ],
    }
    assert base.run is not None
    return replace(base, rules=rules, run=replace(base.run, steps=steps), lineage=lineage)


@pytest.fixture
def rich_report() -> Report:
    return make_rich_report()
