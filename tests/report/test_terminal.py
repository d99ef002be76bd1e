from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from tipc.judge.checks.base import Evidence, Verdict
from tipc.report.model import Report, RuleVerdict
from tipc.report.terminal import render_terminal


def test_terminal_table_plain(report: Report) -> None:
    text = render_terminal(report, color=False, width=140, verbose=True)
    assert "\x1b[" not in text.replace("\x1b[31mred\x1b[0m", "")  # only the user's own bytes
    for rule in report.rules:
        assert rule.id in text
    assert "Overall: FAIL" in text
    assert "[bold]markup[/bold]" in text  # user text is not rich markup
    assert "300.0 MiB" in text and "1.0 GiB" in text


def test_terminal_colour(report: Report) -> None:
    assert "\x1b[" in render_terminal(report, color=True)


def test_terminal_shows_figures(report: Report) -> None:
    text = render_terminal(report, color=False, width=140, verbose=True)
    assert "competition.predict_infer.identical: engine x engine agreement" in text
    assert "paddle_inference" in text and "onnxruntime" in text and "1e-07" in text
    assert "competition.train.loss_converges: loss over 4 points, first 2.3, last 0.9" in text


def _passing(report: Report, n: int) -> Report:
    """`report` with a passed chain and `n` PASS rules, each with evidence and a loss curve or a matrix."""
    assert report.run is not None
    steps = tuple(replace(s, status="passed", exit_code=0, reason="") for s in report.run.steps)
    curve = report.rules[3].data
    rules = tuple(
        RuleVerdict(
            "competition",
            f"competition.rule_{i:02d}",
            "seed004 §4.1.3",
            "error",
            f"rule {i}",
            Verdict.PASS,
            f"rule {i} holds",
            (Evidence(f"evidence {i}", path="train.py", line=i),),
            data=curve if i % 2 else report.rules[4].data,
        )
        for i in range(n)
    )
    return replace(report, run=replace(report.run, steps=steps), findings=(), rules=rules, notes=())


def test_a_pass_fits_a_screen_and_verbose_lists_every_rule(report: Report) -> None:
    passing = _passing(report, 45)
    text = render_terminal(passing, color=False, width=110)
    lines = text.splitlines()
    assert len(lines) <= 40, text
    assert "Overall: PASS" in lines[-1]
    assert "Rules: 45 not listed (45 PASS); -v lists every rule" in text
    assert "competition.rule_00" not in text and "evidence 0" not in text
    full = render_terminal(passing, color=False, width=110, verbose=True)
    assert len(full.splitlines()) > 90
    for i in range(45):
        assert f"competition.rule_{i:02d}" in full and f"evidence {i}" in full


def test_fail_warn_and_errors_stay_in_full(make_report_fn: Callable[..., Report]) -> None:
    text = render_terminal(make_report_fn(error=True), color=False, width=140)
    for shown in ("basic.tipc.chain_passes", "basic.readme.template", "competition.serving.equals_inference"):
        assert shown in text  # FAIL, WARN, and a SKIP whose check raised
    assert "ZeroDivisionError: boom" in text and "infer: failed" in text
    assert "basic.code.entrypoints" not in text and "competition.backbone.results_table" not in text
    assert "Rules: 4 not listed (3 PASS, 1 N-A); -v lists every rule" in text
    assert "engine x engine agreement" not in text  # a PASS rule's figures fold with it
