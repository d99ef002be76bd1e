from __future__ import annotations

from collections.abc import Callable

from tipc.report.markdown import MAX_CHARS, cell, fenced, inline, render_markdown
from tipc.report.model import Report

MakeReport = Callable[..., Report]


def test_markdown_structure(report: Report) -> None:
    md = render_markdown(report)
    assert md.startswith("## ❌ tipc check: FAIL")
    assert (
        "### Needs attention" in md
        and "### All rules" in md
        and "### Steps" in md
        and "### Config lint" in md
    )
    attention = md.split("### All rules")[0]
    assert "basic.tipc.chain_passes" in attention and "basic.readme.template" in attention
    assert "basic.code.entrypoints" not in attention
    rows = [line for line in md.splitlines() if line.startswith("| ") and "seed00" in line]
    assert len(rows) == 7
    assert all(row.count(" | ") == 3 for row in rows)  # escaped pipes keep 4 columns
    outside_code = "".join(md.split("````")[::2])
    assert "<script>" not in outside_code  # inside a fence it is literal text
    assert "\x1b" not in md
    assert "loss curve: 4 points" in md


def test_escaping_helpers() -> None:
    assert cell("a|b\n<c>") == "a\\|b &lt;c&gt;"
    assert inline("x `y` z") == "``x `y` z``"
    block = fenced("```\ncode\n```")
    assert block.startswith("````text") and block.endswith("````")


def test_markdown_fits_a_github_comment(make_report_fn: MakeReport) -> None:
    report = make_report_fn()
    huge_rule = report.rules[1]
    big_evidence = tuple(
        type(huge_rule.evidence[0])(f"e{i}", path="x.log", excerpt="y" * 2000) for i in range(200)
    )
    from dataclasses import replace

    big = replace(report, rules=(replace(huge_rule, evidence=big_evidence), *report.rules[2:]))
    assert len(render_markdown(big)) <= MAX_CHARS


def test_sandbox_lines_and_a_report_without_a_run(make_report_fn: MakeReport) -> None:
    from dataclasses import replace

    report = make_report_fn()
    assert report.run is not None
    box = {"backend": "overlay", "folder": "out", "changes": [{"kind": "created", "path": "a|b.txt"}]}
    md = render_markdown(replace(report, run=replace(report.run, sandbox=box)))
    assert "sandbox: overlay, network none; the run wrote 1 file(s)" in md
    assert "- created: a\\|b.txt" not in md and "- created: a|b.txt" in md  # a list item, not a table cell
    bare = render_markdown(replace(report, run=None))
    assert "### Steps" not in bare and "### Failed steps" not in bare and "config `" not in bare
    assert "### All rules" in bare
