"""The JUnit XML reporter: one <testsuite> per ruleset (plus "lint"), one <testcase> per rule.

FAIL => <failure>, SKIP and N-A => <skipped>, an internal error => <error>, PASS and WARN => a passing
testcase (WARN text goes to <system-out>). Error-level lint findings are failing testcases of the "lint"
suite, because they fail `tipc check` too. Characters XML 1.0 cannot hold (ANSI escapes in logs) are dropped.

Times are real: a rule's testcase carries the wall time its evaluation took, and when the check ran (or
reused) a chain, a "chain" suite has one testcase per step with the step's own duration (a failed or
timed-out step is a <failure>, a step that never ran is <skipped>), so CI dashboards show where time went.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from tipc.judge.checks.base import Verdict
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


def _seconds(value: float | None) -> str:
    return f"{value:.3f}" if value is not None and value >= 0 else "0.000"


def _finish(suite: ET.Element, counts: dict[str, int], time_s: float) -> None:
    for key in ("tests", "failures", "errors", "skipped"):
        suite.set(key, str(counts[key]))
    suite.set("time", _seconds(time_s))


def _chain_suite(root: ET.Element, report: Report) -> tuple[dict[str, int], float]:
    """The run's steps as testcases, each timed by its own duration."""
    run = report.run
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if run is None or not run.steps:
        return counts, 0.0
    suite = _suite(root, "chain")
    total = 0.0
    for s in run.steps:
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": _clean(f"tipc.chain.{s.stage}"),
                "name": _clean(s.id),
                "time": _seconds(s.duration_s),
            },
        )
        counts["tests"] += 1
        total += s.duration_s or 0.0
        if s.failed:
            message = f"{s.status}" + (f" (exit {s.exit_code})" if s.exit_code is not None else "")
            text = "\n".join([s.reason, *(f"cause: {c.cause}" for c in s.causes), f"log: {s.log or '-'}"])
            ET.SubElement(case, "failure", {"message": _clean(message), "type": s.status}).text = _clean(text)
            counts["failures"] += 1
        elif s.status != "passed":
            ET.SubElement(case, "skipped", {"message": _clean(f"{s.status}: {s.reason}")})
            counts["skipped"] += 1
    _finish(suite, counts, total)
    return counts, total


def render_junit(report: Report) -> str:
    root = ET.Element("testsuites", {"name": _clean(f"tipc check {report.repo}")})
    totals, total_s = _chain_suite(root, report)
    for ruleset in report.rulesets:
        suite = _suite(root, ruleset)
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        suite_s = 0.0
        for r in (r for r in report.rules if r.ruleset == ruleset):
            case = ET.SubElement(
                suite,
                "testcase",
                {"classname": f"tipc.{ruleset}", "name": r.id, "time": _seconds(r.duration_s)},
            )
            counts["tests"] += 1
            suite_s += r.duration_s or 0.0
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
        _finish(suite, counts, suite_s)
        total_s += suite_s
        for k in totals:
            totals[k] += counts[k]
    if report.findings:
        suite = _suite(root, "lint")
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for f in report.findings:
            case = ET.SubElement(
                suite,
                "testcase",
                {"classname": "tipc.lint", "name": _clean(f"{f.code} {f.path}:{f.line}"), "time": "0.000"},
            )
            counts["tests"] += 1
            if f.level.value == "error":
                ET.SubElement(case, "failure", {"message": _clean(f.message), "type": f.code}).text = _clean(
                    f.format()
                )
                counts["failures"] += 1
            else:
                ET.SubElement(case, "system-out").text = _clean(f.format())
        _finish(suite, counts, 0.0)
        for k in totals:
            totals[k] += counts[k]
    _finish(root, totals, total_s)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
