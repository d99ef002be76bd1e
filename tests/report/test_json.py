from __future__ import annotations

import json

from tipc.report.json import render_json
from tipc.report.model import Report


def test_json_schema_and_stable_key_order(report: Report) -> None:
    text = render_json(report)
    data = json.loads(text)
    assert list(data) == [
        "schema",
        "tool_version",
        "created",
        "repo",
        "rulesets",
        "overall",
        "exit_code",
        "counts",
        "run",
        "lint",
        "rules",
        "notes",
        "lineage",
    ]
    assert data["schema"] == "tipc.report/1"
    assert data["overall"] == "FAIL" and data["exit_code"] == 1
    assert [r["verdict"] for r in data["rules"]] == ["PASS", "FAIL", "WARN", "PASS", "PASS", "SKIP", "N-A"]
    failing = data["rules"][1]
    assert failing["evidence"][0]["path"] == "test_tipc/output/m/infer.log"
    assert failing["evidence"][0]["numbers"] == {"exit_code": 1, "duration_s": 1.25}
    assert data["rules"][3]["data"]["curve"][3] == [4, "nan"]
    assert data["run"]["steps"][0]["peak_rss_bytes"] == 300 * 2**20
    assert render_json(report) == text  # deterministic


def test_json_has_no_nan_tokens(report: Report) -> None:
    assert "NaN" not in render_json(report)


def test_unusual_data_values_do_not_break_the_report(report: Report) -> None:
    from dataclasses import replace
    from pathlib import Path

    odd = replace(report.rules[0], data={"path": Path("a/b"), "inf": float("inf"), "pair": (1, 2)})
    data = json.loads(render_json(replace(report, rules=(odd,))))
    assert data["rules"][0]["data"] == {"path": "a/b", "inf": "inf", "pair": [1, 2]}
