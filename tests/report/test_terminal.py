from __future__ import annotations

from tipc.report.model import Report
from tipc.report.terminal import render_terminal


def test_terminal_table_plain(report: Report) -> None:
    text = render_terminal(report, color=False, width=140)
    assert "\x1b[" not in text.replace("\x1b[31mred\x1b[0m", "")  # only the user's own bytes
    for rule in report.rules:
        assert rule.id in text
    assert "Overall: FAIL" in text
    assert "[bold]markup[/bold]" in text  # user text is not rich markup
    assert "300.0 MiB" in text and "1.0 GiB" in text


def test_terminal_colour(report: Report) -> None:
    assert "\x1b[" in render_terminal(report, color=True)


def test_terminal_shows_figures(report: Report) -> None:
    text = render_terminal(report, color=False, width=140)
    assert "competition.predict_infer.identical: engine x engine agreement" in text
    assert "paddle_inference" in text and "onnxruntime" in text and "1e-07" in text
    assert "competition.train.loss_converges: loss over 4 points, first 2.3, last 0.9" in text
