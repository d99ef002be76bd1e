"""The lineage graph in the reports: per-step words, the JSON key, the terminal summary and the HTML list."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from tests.judge.lineage.lineage_fixtures import OUT, W, chain, committed_file, write_access
from tests.report.conftest import NASTY, make_report
from tipc.execute.lineage import dir_for, load
from tipc.judge.lineage_graph import build_graph
from tipc.report import render
from tipc.report.lineage import summary_lines
from tipc.report.model import build_report


def graph_json(repo: Path) -> dict[str, object]:
    stale = f"{OUT}/export/inference.pdmodel"
    committed_file(repo, stale)
    record = chain(repo)
    write_access(record, "train", writes=[W])
    write_access(record, "eval", reads=[W])
    write_access(
        record,
        "export",
        reads=[W],
        writes=[f"{OUT}/export/inference.json", f"{OUT}/export/inference.pdiparams"],
    )
    write_access(record, "infer", reads=[stale])
    return build_graph(record, load(dir_for(record.plan)), repo, use_git=False).to_json()


def test_summary_lines_follow_the_chain_and_flag_what_this_run_did_not_write(tmp_path: Path) -> None:
    lines = summary_lines(graph_json(tmp_path))
    w = f"{OUT}/train/latest.pdparams"  # whole: a shortened path could not be opened
    assert lines[0] == f"train: wrote {w}"
    assert lines[1] == f"eval: read {w} (from train)"
    assert lines[2].startswith(f"export: read {w} (from train); wrote ") and "inference.json" in lines[2]
    assert lines[3].startswith("infer: read ! ") and "inference.pdmodel (there before the run)" in lines[3]


def test_reports_carry_the_graph_once(tmp_path: Path) -> None:
    lineage = graph_json(tmp_path)
    base = make_report()
    # a lineage check's data holds the graph: the report lifts it to the top and drops it from the rule
    rule = dataclasses.replace(base.rules[0], data={"lineage": lineage, "x": 1})
    report = dataclasses.replace(base, rules=(rule, *base.rules[1:]))
    lifted = build_report(repo="r", rulesets=["tipc-basic"], results=[], lineage=lineage)
    assert lifted.lineage == lineage
    report = dataclasses.replace(report, lineage=lineage)
    js = json.loads(render(report, "json"))
    assert js["lineage"]["steps"][0]["id"] == "train"
    text = render(report, "text", width=200)
    assert "Lineage" in text and f"eval: read {OUT}/train/latest.pdparams (from train)" in text
    html = render(report, "html")
    assert ">Lineage</h2>" in html and "inference.pdmodel (there before the run)" in html
    assert NASTY not in html  # still escaped
    assert json.loads(render(base, "json"))["lineage"] is None
    assert "Lineage" not in render(base, "text")


def test_terminal_folds_a_lineage_with_nothing_odd_unless_verbose(tmp_path: Path) -> None:
    record = chain(tmp_path)
    write_access(record, "train", writes=[W])
    write_access(record, "eval", reads=[W])
    lineage = build_graph(record, load(dir_for(record.plan)), tmp_path, use_git=False).to_json()
    report = dataclasses.replace(make_report(), lineage=lineage)
    n = len(summary_lines(lineage))
    text = render(report, "text", width=200)
    assert f"Lineage: {n} step(s), each read only what this run wrote (-v lists them)" in text
    assert f"eval: read {OUT}/train/latest.pdparams" not in text
    full = render(report, "text", width=200, verbose=True)
    assert f"eval: read {OUT}/train/latest.pdparams (from train)" in full
