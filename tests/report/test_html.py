from __future__ import annotations

import subprocess
from html.parser import HTMLParser
from pathlib import Path

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


class _Elements(HTMLParser):
    """(tag, class, aria-label) of every element, and the text, of a page as the browser serialised it."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, str, str]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.elements.append((tag, a.get("class") or "", a.get("aria-label") or ""))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def count(self, tag: str, cls: str = "") -> int:
        return sum(1 for t, c, _ in self.elements if t == tag and (not cls or cls in c.split()))


def test_html_report_in_a_real_browser(rich_report: Report, tmp_path: Path) -> None:
    """Chromium renders the page offline: every figure is drawn from the report's data, and it prints."""
    from tests.browser import chromium, dump_dom, screenshot

    page = tmp_path / "report.html"
    page.write_text(render_html(rich_report), encoding="utf-8")
    dom = _Elements()
    dom.feed(dump_dom(page))
    labels = {label for _, _, label in dom.elements if label}
    assert {"loss curve", "stage timeline", "lineage graph"} <= labels
    # loss chart: axes, raw and smoothed curves, the two windows and the trend line, the statistic
    assert dom.count("polyline", "raw") == 1 and dom.count("polyline", "smoothed") == 1
    assert dom.count("polyline", "window") == 2 and dom.count("line", "trend") == 1
    assert any("Mann-Kendall z=" in t for t in dom.text)
    # agreement matrix with the served model: the differing protocol is red, the rest green
    assert dom.count("td", "differ") == 2 and dom.count("td", "agree") >= 4
    assert any(t.strip() == "served (pipeline)" for t in dom.text)
    # timeline: one bar per step (the failed one marked), CPU / memory / GPU panels
    assert dom.count("rect", "bar") == 4 and dom.count("rect", "failed") == 1
    assert dom.count("g", "panel") == 3
    # lineage graph: four steps, three artefacts, one stale read
    assert (
        dom.count("rect", "step") == 4 and dom.count("rect", "file") == 3 and dom.count("line", "stale") == 1
    )
    # sticky summary names what failed, before anything else
    assert dom.count("nav", "summary") == 1
    text = "".join(dom.text)
    assert text.index("basic.tipc.chain_passes") < text.index("Figures")
    # nothing escaped the escaping
    assert dom.count("script") == 0

    png = screenshot(page, tmp_path / "report.png", height=2400)
    from PIL import Image

    with Image.open(png) as im:
        colours = {c for _, c in (im.convert("RGB").getcolors(1 << 20) or [])}
    assert (0xFF, 0xEB, 0xE9) in colours and (0xDA, 0xFB, 0xE1) in colours  # differ / agree cells drawn

    pdf = tmp_path / "report.pdf"
    argv = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-pdf-header-footer",
        f"--print-to-pdf={pdf}",
        page.resolve().as_uri(),
    ]
    subprocess.run(argv, check=False, capture_output=True, timeout=120)
    data = pdf.read_bytes() if pdf.exists() else b""
    assert data.startswith(b"%PDF") and data.count(b"/Type /Page") + data.count(b"/Type/Page") >= 2


def test_loss_chart_draws_the_checks_statistics() -> None:
    from tipc.judge.checks.convergence import analyse_curve

    curve = [(i, 3.0 / i) for i in range(1, 41)]
    _, _, data = analyse_curve(curve)
    svg = loss_curve_svg([(float(i), v) for i, v in curve], data)
    assert 'class="trend"' in svg and 'class="smoothed"' in svg and "Mann-Kendall z=" in svg
    # axes carry round tick labels of both scales
    assert ">iteration</text>" in svg and ">loss</text>" in svg and ">20</text>" in svg
