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
    assert set(suites) == {"chain", "tipc-basic", "competition", "lint"}
    basic, comp, chain = suites["tipc-basic"], suites["competition"], suites["chain"]
    assert (basic.get("tests"), basic.get("failures"), basic.get("skipped")) == ("3", "1", "0")
    assert (comp.get("tests"), comp.get("failures"), comp.get("skipped")) == ("4", "0", "2")
    assert (chain.get("tests"), chain.get("failures")) == ("3", "1")
    assert root.get("tests") == "11" and root.get("failures") == "2" and root.get("skipped") == "2"
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


def test_junit_times_are_the_steps_and_rules_own(make_report_fn: MakeReport) -> None:
    from dataclasses import replace

    report = make_report_fn()
    rules = tuple(replace(r, duration_s=0.25 * (i + 1)) for i, r in enumerate(report.rules))
    root = ET.fromstring(render_junit(replace(report, rules=rules)))
    chain = root.find("testsuite[@name='chain']")
    assert chain is not None
    # the steps' own durations (20 s train, 5 s export, 5 s infer), and their sum on the suite
    assert [c.get("time") for c in chain.findall("testcase")] == ["20.000", "5.000", "5.000"]
    assert chain.get("time") == "30.000"
    case = root.find(".//testcase[@name='basic.tipc.chain_passes']")
    assert case is not None and case.get("time") == "0.500"
    basic = root.find("testsuite[@name='tipc-basic']")
    assert basic is not None and basic.get("time") == "1.500"  # 0.25 + 0.5 + 0.75
    assert float(root.get("time") or 0) == 30.0 + 0.25 * sum(range(1, len(rules) + 1))
