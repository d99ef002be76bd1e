"""The trend text and the self-contained HTML page (checked in a real headless browser)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.browser import dump_dom, screenshot
from tipc.modelci.history import html, trend
from tipc.modelci.history.db import StoredRun


def _runs() -> list[StoredRun]:
    out = []
    for i, (version, loss, ips) in enumerate(
        [("2.6.2", 0.30, 900.0), ("2.6.2", 0.28, 950.0), ("3.3.1", 0.27, 1000.0), ("3.3.1", 0.90, 400.0)]
    ):
        out.append(
            StoredRun(
                i + 1,
                f"r{i}",
                "check",
                "m",
                "lite",
                "cpu",
                version,
                1_795_000_000.0 + 3600 * i,
                "passed",
                {"train.loss.last": (loss, ""), "train.avg_ips": (ips, "images/sec")},
            )
        )
    return out


def test_sparkline_and_terminal_trend() -> None:
    assert trend.sparkline([1.0, 2.0, 3.0]) == "▁▅█"
    assert trend.sparkline([2.0, 2.0]) == "▁▁"
    assert trend.sparkline([1.0, float("nan")]) == "▁!"
    text = trend.render(_runs(), ["train.loss.last"], {"train.loss.last": (0.28, 0.05)})
    assert "4 runs from" in text and "Paddle 2.6.2, 3.3.1" in text
    assert "last 4: 0.3, 0.28, 0.27, 0.9" in text
    assert "latest OUTSIDE the baseline band 0.28 ± 0.05" in text
    assert "no runs stored" in trend.render([], [])


def test_the_html_page_is_self_contained_and_renders(tmp_path: Path) -> None:
    bands = {"train.loss.last": (0.28, 0.05), "train.avg_ips": (950.0, 190.0)}
    page = tmp_path / "trend.html"
    page.write_text(html.render(_runs(), "tipc history: demo", [], bands), encoding="utf-8")
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text and not re.search(r"(src|href)=\"https?:", text)
    dom = dump_dom(page)
    assert dom.count("<svg") == 2  # one plot per metric
    assert dom.count('class="point"') == 8 and dom.count('class="band"') == 2
    # points coloured by Paddle version: two colours, one per version, as in the legend
    colours = set(re.findall(r'class="point"[^>]*fill="(#[0-9a-f]{6})"', dom))
    assert len(colours) == 2
    assert "Paddle 2.6.2" in dom and "Paddle 3.3.1" in dom and "baseline 0.28 ± 0.05" in dom
    out = Path(os.environ.get("TIPC_TEST_ARTEFACTS", tmp_path)) / "history_trend.png"
    png = screenshot(page, out, height=900)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
