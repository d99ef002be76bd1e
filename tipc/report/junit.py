"""The JUnit XML reporter: one <testsuite> per ruleset (plus "lint"), one <testcase> per rule.

FAIL => <failure>, SKIP and N-A => <skipped>, an internal error => <error>, PASS and WARN => a passing
testcase (WARN text goes to <system-out>). Error-level lint findings are failing testcases of the "lint"
suite, because they fail `tipc check` too. Characters XML 1.0 cannot hold (ANSI escapes in logs) are dropped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from tipc.checks.base import Verdict
from tipc.report.model import Report, RuleVerdict, evidence_text

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: object) -> str:
    return _INVALID_XML.sub("", str(text))


def _details(r: RuleVerdict) -> str:
    lines = [f"{r.source} ({r.severity}): {r.description}", r.summary]
    for e in r.evidence:
        lines.append(evidence_text(e))
        if e.excerpt:
            lines.extend("    " + x for x in e.excerpt.splitlines()[-20:])
    return _clean("\n".join(lines))


def _suite(parent: ET.Element, name: str) -> ET.Element:
    return ET.SubElement(parent, "testsuite", {"name": name})


def _finish(suite: ET.Element, counts: dict[str, int]) -> None:
    for key in ("tests", "failures", "errors", "skipped"):
        suite.set(key, str(counts[key]))
    suite.set("time", "0")


def render_junit(report: Report) -> str:
    root = ET.Element("testsuites", {"name": _clean(f"tipc check {report.repo}")})
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for ruleset in report.rulesets:
        suite = _suite(root, ruleset)
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for r in (r for r in report.rules if r.ruleset == ruleset):
            case = ET.SubElement(
                suite, "testcase", {"classname": f"tipc.{ruleset}", "name": r.id, "time": "0"}
            )
            counts["tests"] += 1
            if r.error is not None:
                ET.SubElement(
                    case, "error", {"message": _clean(r.summary), "type": "internal"}
                ).text = _details(r)
                counts["errors"] += 1
            elif r.verdict is Verdict.FAIL:
                ET.SubElement(
                    case, "failure", {"message": _clean(r.summary), "type": "FAIL"}
                ).text = _details(r)
                counts["failures"] += 1
            elif r.verdict in (Verdict.SKIP, Verdict.NA):
                ET.SubElement(case, "skipped", {"message": _clean(f"{r.verdict.value}: {r.summary}")})
                counts["skipped"] += 1
            elif r.verdict is Verdict.WARN:
                ET.SubElement(case, "system-out").text = _clean(f"WARN: {_details(r)}")
        _finish(suite, counts)
        for k in totals:
            totals[k] += counts[k]
    if report.findings:
        suite = _suite(root, "lint")
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for f in report.findings:
            case = ET.SubElement(
                suite,
                "testcase",
                {"classname": "tipc.lint", "name": _clean(f"{f.code} {f.path}:{f.line}"), "time": "0"},
            )
            counts["tests"] += 1
            if f.level.value == "error":
                ET.SubElement(case, "failure", {"message": _clean(f.message), "type": f.code}).text = _clean(
                    f.format()
                )
                counts["failures"] += 1
            else:
                ET.SubElement(case, "system-out").text = _clean(f.format())
        _finish(suite, counts)
        for k in totals:
            totals[k] += counts[k]
    _finish(root, totals)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
