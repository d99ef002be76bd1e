from __future__ import annotations

from html.parser import HTMLParser

from tipc.report.html import loss_curve_svg, render_html
from tipc.report.model import Report


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def test_html_is_escaped_and_self_contained(report: Report) -> None:
    page = render_html(report)
    assert "<script>" not in page
    assert "&lt;script&gt;alert(" in page
    assert "a note &lt;b&gt;" in page
    parser = _Collect()
    parser.feed(page)
    assert "script" not in parser.tags and "link" not in parser.tags
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page


def test_html_has_verdicts_curve_and_matrix(report: Report) -> None:
    page = render_html(report)
    assert page.count('class="FAIL"') == 1 and ">FAIL</span></h1>" in page
    assert "<svg" in page and "<polyline" in page
    assert "onnxruntime" in page and "1e-07" in page
    assert "basic.tipc.chain_passes" in page and "seed002 §4.2.2" in page
    failed = page[page.index("<h2>Failed</h2>") : page.index("<h2>Figures</h2>")]
    assert failed.count("<li>") == 1 and 'href="#basic.tipc.chain_passes"' in failed
    # figures sit in their own section, linked both ways with their rule's row
    figures = page[page.index("<h2>Figures</h2>") : page.index("<h2>Rules</h2>")]
    assert 'id="fig-competition.predict_infer.identical"' in figures and '<table class="matrix">' in figures
    assert 'id="fig-competition.train.loss_converges"' in figures and "<svg" in figures
    assert 'href="#fig-competition.train.loss_converges"' in page


def test_loss_curve_svg_needs_two_points() -> None:
    assert loss_curve_svg([(1.0, 1.0)]) == ""
    svg = loss_curve_svg([(1.0, 2.0), (2.0, 1.0)])
    assert svg.startswith("<svg") and "polyline" in svg
