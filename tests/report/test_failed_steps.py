"""The environment header and each failed step's cause and remedy, first, then its log tail, in every
reporter."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tipc.core.steps import Mode, Plan, Stage, Status, Step
from tipc.execute.record import RunRecord, StepResult
from tipc.judge.causes import Context, Earlier, diagnose
from tipc.judge.checks.base import Evidence, Verdict
from tipc.report.html import render_html
from tipc.report.json import render_json
from tipc.report.markdown import render_markdown
from tipc.report.model import NO_CAUSE, Report, RuleVerdict, run_summary, with_log_tails
from tipc.report.terminal import render_terminal

ENVIRONMENT = {
    "python_version": "3.11.7",
    "python_executable": "/tmp/repovenv/bin/python",
    "paddle_version": "3.3.1",
    "paddle_commit": "7688495538f4d6c1893f084dd238a402e8f68ab6",
    "paddle_build": "cpu",
    "pir": True,
    "export_format": "json+pdiparams",
    "packages": {"numpy": "1.26.4", "pillow": "10.4.0", "opencv": "4.10.0.84", "scikit-learn": "1.1.3"},
    "cpu_model": "AMD EPYC <b>",
    "cpu_count": 2,
    "gpus": [],
}
INFER_LOG = (
    "Traceback (most recent call last):\n"
    '  File "deploy/inference_python/infer.py", line 43, in __init__\n'
    "RuntimeError: (NotFound) Cannot open file ./out/inference.pdmodel, please confirm whether the file is "
    "normal.\n"
    "  [Hint: Expected paddle::inference::IsFileExists(prog_file_) == true] <script>x</script>"
)


def _report(environment: dict[str, object] | None = ENVIRONMENT) -> Report:
    steps = (
        Step("train", Stage.TRAIN, ("python", "train.py"), log="out/train.log"),
        Step("infer", Stage.INFER, ("python", "infer.py"), log="out/infer.log"),
        Step("eval", Stage.EVAL, ("python", "eval.py"), log="out/eval.log"),
    )
    plan = Plan(
        config_path="c.txt",
        repo="/r",
        mode=Mode.LITE_TRAIN_LITE_INFER,
        dialect="template",
        model_name="m",
        output_dir="out",
        results_log="out/results_python.log",
        status_format="template",
        steps=steps,
    )
    export_passed = Context(paddle="3.3.1", pir=True, earlier=(Earlier("export", "export", "passed"),))
    causes = tuple(diagnose(INFER_LOG, exit_code=1, context=export_passed))
    results = (
        StepResult("train", Status.PASSED, exit_code=0, started=1.0, ended=2.0, log="out/train.log"),
        StepResult(
            "infer", Status.FAILED, exit_code=1, started=2.0, ended=3.0, log="out/infer.log", causes=causes
        ),
        StepResult("eval", Status.FAILED, exit_code=2, started=3.0, ended=4.0, log="out/eval.log"),
    )
    record = RunRecord(plan=plan, results=results, started=1.0, ended=4.0, environment=environment)
    # a record read back from disk holds the same causes
    record = RunRecord.from_json(json.loads(json.dumps(record.to_json())))
    rule = RuleVerdict(
        "tipc-basic",
        "basic.tipc.chain_passes",
        "seed002",
        "error",
        "the chain passes",
        Verdict.FAIL,
        "2 of 3 step(s) did not pass",
        (
            Evidence("infer: failed", path="out/infer.log", excerpt=INFER_LOG),
            Evidence("eval: failed", path="out/eval.log", excerpt="eval went wrong somehow"),
        ),
    )
    run = with_log_tails(run_summary(record), [rule])
    return Report("0.1.0", "/r", ("tipc-basic",), "2026-11-23T00:00:00Z", run, (), (rule,))


def test_model_carries_causes_tails_and_the_environment() -> None:
    run = _report().run
    assert run is not None
    assert [s.id for s in run.failed_steps] == ["infer", "eval"]
    infer = run.failed_steps[0]
    assert [c.id for c in infer.causes] == ["paddle3-export-format"]
    assert infer.log_tail == INFER_LOG
    assert run.failed_steps[1].causes == ()
    assert (
        run.environment_lines[0]
        == "Paddle 3.3.1 (cpu build, commit 7688495) · by default: PIR on, export json+pdiparams"
    )
    assert _report(environment=None).run.environment_lines == []  # type: ignore[union-attr]


def _in_order(text: str, *parts: str) -> None:
    positions = [text.find(p) for p in parts]
    assert all(p >= 0 for p in positions), [p for p, at in zip(parts, positions, strict=True) if at < 0]
    assert positions == sorted(positions), list(zip(parts, positions, strict=True))


@pytest.mark.parametrize(
    ("render", "heading"),
    [(render_terminal, "Failed steps"), (render_markdown, "Failed steps"), (render_html, 'id="step-1"')],
)
def test_cause_and_remedy_come_before_the_log_tail(render: object, heading: str) -> None:
    text = render(_report())  # type: ignore[operator]
    _in_order(text, "Paddle 3.3.1 (cpu build, commit 7688495)", "Python 3.11.7 · numpy 1.26.4", heading)
    # from the failed steps on (the HTML page shows the failed rules, whose evidence quotes the logs, first)
    _in_order(
        text[text.index(heading) :],
        heading,
        "Paddle 3.3.1 with PIR on exports",  # the cause of infer
        "--paddle-compat export",  # its remedy
        "Cannot open file ./out/inference.pdmodel",  # then its log tail
        NO_CAUSE.split(":")[0],  # eval: no known cause
        "eval went wrong somehow",
    )


def test_html_escapes_causes_tails_and_environment() -> None:
    html = render_html(_report())
    assert "<script>x</script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html
    assert "AMD EPYC &lt;b&gt;" in html


def test_json_has_causes_tail_and_environment() -> None:
    data = json.loads(render_json(_report()))
    run = data["run"]
    assert run["environment"]["paddle_version"] == "3.3.1"
    assert run["environment_lines"][2].startswith("CPU: AMD EPYC")
    infer = next(s for s in run["steps"] if s["id"] == "infer")
    assert infer["causes"][0]["id"] == "paddle3-export-format"
    assert infer["causes"][0]["switch"] == "--paddle-compat export"
    assert infer["log_tail"] == INFER_LOG
    train = next(s for s in run["steps"] if s["id"] == "train")
    assert train["causes"] == [] and train["log_tail"] is None


def test_reports_without_environment_or_failures_stay_quiet() -> None:
    report = _report(environment=None)
    assert "Paddle 3.3.1 (cpu" not in render_terminal(report)
    assert "Paddle 3.3.1 (cpu" not in render_markdown(report)


def test_environment_header_names_the_interpreter_the_chain_ran_with() -> None:
    run = _report().run
    assert run is not None
    assert not run.python and not any(line.startswith("interpreter:") for line in run.environment_lines)
    named = dataclasses.replace(run, python="/opt/py/bin/python3")
    assert named.environment_lines[-1] == "interpreter: /opt/py/bin/python3"


def test_environment_header_names_the_repo_commit() -> None:
    """Issue 25: the repo's commit was in the JSON, the history and the notification, but not in the headers
    of the terminal, Markdown and HTML reports (all of them print `environment_lines`)."""
    report = _report()
    assert report.run is not None
    run = dataclasses.replace(report.run, git_commit="8042c21b690ffc0162095e749a41b94dd38732da")
    assert run.environment_lines[-1] == "repo commit: 8042c21b690ffc0162095e749a41b94dd38732da"
    assert "repo commit: 8042c21b" in render_markdown(dataclasses.replace(report, run=run))
