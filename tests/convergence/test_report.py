from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tipc.convergence import report
from tipc.convergence.result import FAIL, PASS, Check, ConvergeResult, SegmentResult, TestResult


def _result() -> ConvergeResult:
    ok = SegmentResult("demo", 0, "ckpts/m0", PASS)
    ok.checks = [Check(1, "loss", "MLM", "<=", 0.2, 0.0, 7.9, None, 9.5, 7.8, True)]
    ok.recorded = {"loss[MLM]": [(1, 7.9), (2, 7.3)]}
    ok.observed = {"loss[MLM]": [(1, 7.8), (2, 7.2)]}
    bad = SegmentResult(
        "demo", 4, "ckpts/m4", FAIL, ["application exited with code 3"], log_path="/x/seg.log"
    )
    bad.checks = [
        Check(5, "loss", "MLM", "<=", 0.2, 0.0, 5.84, None, 7.008, 8.76, False),
        Check(
            6,
            "loss",
            "MLM",
            "<=",
            0.2,
            0.0,
            5.477,
            None,
            6.5724,
            None,
            False,
            "step not observed in the run's log",
        ),
    ]
    bad.recorded = {"loss[MLM]": [(5, 5.84), (6, 5.477)]}
    bad.observed = {"loss[MLM]": [(5, 8.76)]}
    bad.log_tail = ["Traceback: <boom>"]
    t = TestResult("demo", "run", "c.yml", "st/demo_m.json", [ok, bad])
    return ConvergeResult("run", [t])


def test_terminal_names_the_failure() -> None:
    text = report.terminal(_result())
    assert "[FAIL] segment@4" in text and "[PASS] segment@0" in text
    assert (
        "step 5 loss[MLM]: actual 8.76, expected 5.84, operator '<=' margin 0.2 -> allowed <= 7.008" in text
    )
    assert "step 6 loss[MLM]: step not observed in the run's log (recorded 5.477)" in text
    assert text.rstrip().endswith("FAIL: 1 test(s), 2 segment(s), 1 failed (run)")


def test_json_is_complete() -> None:
    doc = json.loads(report.to_json(_result()))
    assert doc["status"] == FAIL
    seg = doc["tests"][0]["segments"][1]
    assert seg["checks"][0] == {
        "step": 5,
        "metric": "loss",
        "label": "MLM",
        "operator": "<=",
        "margin": 0.2,
        "abs_margin": 0.0,
        "expected": 5.84,
        "band": None,
        "allowed": [None, 7.008],
        "actual": 8.76,
        "passed": False,
        "reason": "",
    }


def test_junit_has_one_case_per_segment() -> None:
    root = ET.fromstring(report.junit(_result()))
    cases = root.findall(".//testcase")
    assert [c.get("name") for c in cases] == ["demo::segment@0", "demo::segment@4"]
    failure = cases[1].find("failure")
    assert failure is not None and "actual 8.76" in (failure.text or "")
    assert cases[0].find("failure") is None


def test_markdown_table() -> None:
    md = report.markdown(_result())
    assert "| 4 | `ckpts/m4` | FAIL | application exited with code 3<br>step 5 loss[MLM]" in md


def test_html_draws_recorded_and_new_curve_per_segment() -> None:
    page = report.html_report(_result())
    assert page.count("<svg") == 2
    assert page.count('class="recorded"') == 2 and page.count('class="observed"') == 2
    assert "&lt;boom&gt;" in page  # log tail escaped
    ET.fromstring(report.svg(_result().segments[1], "loss[MLM]"))  # well-formed SVG
    assert page.count('class="failed"') == 1  # step 5 circled; step 6 has no new value


@pytest.mark.parametrize("name", report.FORMATS)
def test_render_every_format(name: str) -> None:
    assert report.render(_result(), name)


def test_svg_of_a_label_without_data_says_so() -> None:
    seg = SegmentResult("demo", 0, "ckpts/m0", PASS)
    seg.recorded = {"loss[MLM]": [(1, float("nan"))]}
    assert "loss[MLM]: no data" in report.svg(seg, "loss[MLM]")
    assert "acc[&lt;x&gt;]: no data" in report.svg(seg, "acc[<x>]")
