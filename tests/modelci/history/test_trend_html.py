"""The trend text and the self-contained HTML page (checked in a real headless browser)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.browser import artefacts, dump_dom, measure, screenshot
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
    png = screenshot(page, artefacts(tmp_path) / "history_trend.png", height=900)
    print(f"screenshot: {png}")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


def _stored(i: int, started: float, version: str, metrics: dict[str, tuple[float | None, str]]) -> StoredRun:
    return StoredRun(i, f"r{i}", "check", "m", "lite", "cpu", version, started, "passed", metrics)


def test_x_labels_tell_runs_apart() -> None:
    t = 1_795_000_000.0  # 2026-11-18 11:06:40 UTC
    day_apart = [_stored(1, t, "3.3.1", {}), _stored(2, t + 86400, "3.3.1", {})]
    assert html.run_labels(day_apart) == ["11-18", "11-19"]
    hour_apart = [_stored(1, t, "3.3.1", {}), _stored(2, t + 3600, "3.3.1", {})]
    assert html.run_labels(hour_apart) == ["11-18 11:06", "11-18 12:06"]
    # two runs in the same minute: seconds tell them apart; in the same second, their numbers
    same_minute = [
        _stored(1, t, "3.3.1", {}),
        _stored(2, t + 12, "3.3.1", {}),
        _stored(3, t + 90, "3.3.1", {}),
    ]
    assert html.run_labels(same_minute) == ["11-18 11:06:40", "11-18 11:06:52", "11-18 11:08:10"]
    same_second = [_stored(7, t, "3.3.1", {}), _stored(8, t + 0.2, "3.3.1", {})]
    assert html.run_labels(same_second) == ["11-18 11:06:40 #7", "11-18 11:06:40 #8"]
    years = [_stored(1, t, "3.3.1", {}), _stored(2, t + 86400 * 60, "3.3.1", {})]
    assert html.run_labels(years) == ["2026-11-18", "2027-01-17"]


# Layout facts of the history page, measured by the browser.
GRID = r"""(() => {
  const charts = [...document.querySelectorAll('section.metric')];
  const box = e => e.getBoundingClientRect();
  const body = box(document.body);
  const style = getComputedStyle(document.body);
  const content = body.width - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return {
    viewport: innerWidth,
    width: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight,
    content: content,
    columns: new Set(charts.map(c => Math.round(box(c).left))).size,
    rows: new Set(charts.map(c => Math.round(box(c).top))).size,
    used: (Math.max(...charts.map(c => box(c).right)) - Math.min(...charts.map(c => box(c).left))) / content,
    svg_scale: charts.map(c => c.querySelector('svg')).map(s => box(s).width / s.viewBox.baseVal.width),
    labels: charts.map(c => [...c.querySelectorAll('text.xlabel')].map(
      t => [...t.querySelectorAll('tspan')].map(s => s.textContent).join(' '))),
    label_overflow: charts.flatMap(c => [...c.querySelectorAll('text.xlabel')].filter(t => {
      const b = box(t), s = box(c.querySelector('svg'));
      return b.left < s.left - 0.5 || b.right > s.right + 0.5;
    }).map(t => t.textContent)),
    label_overlap: charts.flatMap(c => {
      const ls = [...c.querySelectorAll('text.xlabel')].map(box);
      return ls.slice(1).filter((b, i) => b.left < ls[i].right).map(b => c.querySelector('h2').textContent);
    }),
  };
})()"""


def test_twenty_metrics_fill_a_wide_screen(tmp_path: Path) -> None:
    """20 metrics at 1400 px: a grid of three charts a row using the page's width (not one 480 px column with
    60 % of it empty), and the x labels of two runs in the same minute differ."""
    t = 1_795_000_000.0
    starts = [t, t + 15, t + 3600, t + 7200, t + 7210, t + 86400]  # two pairs in the same minute
    runs = [
        _stored(
            i + 1,
            start,
            "3.3.1" if i > 2 else "2.6.2",
            {f"stage.s{k:02d}.time_s": (1.0 + k + i, "s") for k in range(20)},
        )
        for i, start in enumerate(starts)
    ]
    page = tmp_path / "history.html"
    page.write_text(html.render(runs, "tipc history: grid", [], {}), encoding="utf-8")
    facts = measure(page, GRID, width=1400, height=900)
    png = screenshot(page, artefacts(tmp_path) / "history_grid.png", width=1400, height=facts["height"])
    print(f"screenshot: {png}")
    assert facts["viewport"] == 1400 and facts["width"] <= 1400
    assert facts["columns"] == 3 and facts["rows"] == 7  # 20 charts, 3 a row
    assert facts["used"] > 0.95  # the grid spans the content width
    assert all(
        0.8 < s < 1.25 for s in facts["svg_scale"]
    )  # drawn near their natural size: text stays legible
    for labels in facts["labels"]:
        assert len(labels) == len(set(labels)) == 4
        assert labels[0] == "11-18 11:06:40" and labels[-1] == "11-19 11:06:40"
    assert facts["label_overflow"] == [] and facts["label_overlap"] == []
