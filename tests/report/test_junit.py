from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable

from tipc.report.junit import render_junit
from tipc.report.model import Report

MakeReport = Callable[..., Report]


def test_junit_parses_with_right_counts(report: Report) -> None:
    root = ET.fromstring(render_junit(report))
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"tipc-basic", "competition", "lint"}
    basic, comp = suites["tipc-basic"], suites["competition"]
    assert (basic.get("tests"), basic.get("failures"), basic.get("skipped")) == ("3", "1", "0")
    assert (comp.get("tests"), comp.get("failures"), comp.get("skipped")) == ("4", "0", "2")
    assert root.get("tests") == "8" and root.get("failures") == "1" and root.get("skipped") == "2"
    failing = basic.find("testcase[@name='basic.tipc.chain_passes']")
    assert failing is not None
    failure = failing.find("failure")
    assert failure is not None and "Traceback" in (failure.text or "")
    assert "\x1b" not in (failure.text or "")
    warn = basic.find("testcase[@name='basic.readme.template']")
    assert warn is not None and warn.find("failure") is None and "WARN" in (warn.findtext("system-out") or "")


def test_junit_internal_error_and_lint_error(make_report_fn: MakeReport) -> None:
    root = ET.fromstring(render_junit(make_report_fn(fail=False, lint_error=True, error=True)))
    assert root.get("errors") == "1"
    lint = root.find("testsuite[@name='lint']")
    assert lint is not None and lint.get("failures") == "1" and lint.get("tests") == "2"
