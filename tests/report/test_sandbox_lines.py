"""Every report says how the repo was kept untouched and lists what the run wrote in the repo's tree."""

from __future__ import annotations

import json
from dataclasses import replace

from tests.report.conftest import make_report
from tipc.report import render

SANDBOX = {
    "backend": "overlay",
    "network": False,
    "folder": "test_tipc/output/tipc/m/train_infer_python/lite_train_lite_infer",
    "changes": [
        {"path": "logs/bottle/final.pdparams", "kind": "created", "size": 10},
        {"path": "logdirs/model-bottle/train.log", "kind": "changed", "size": 5},
        {"path": "test_tipc/data/Set2", "kind": "deleted", "size": None},
    ],
    "changes_total": 3,
}


def _with_sandbox(box: dict[str, object]) -> object:
    report = make_report(fail=False)
    assert report.run is not None
    return replace(report, run=replace(report.run, sandbox=box))


def test_every_format_lists_the_files_the_run_wrote() -> None:
    report = _with_sandbox(SANDBOX)
    for fmt in ("text", "markdown", "html"):
        text = render(report, fmt, color=False)  # type: ignore[arg-type]
        assert "the run wrote 3 file(s) in the repo" in text, fmt  # html escapes the apostrophe
        assert "logdirs/model-bottle/train.log" in text and "the repo itself is unchanged" in text, fmt
    data = json.loads(render(report, "json", color=False))  # type: ignore[arg-type]
    assert data["run"]["sandbox"]["changes_total"] == 3


def test_long_lists_are_cut_with_the_count_left_out() -> None:
    many = [{"path": f"f{i}.txt", "kind": "created", "size": 1} for i in range(30)]
    report = _with_sandbox({**SANDBOX, "changes": many, "changes_total": 30})
    assert report.run is not None  # type: ignore[attr-defined]
    lines = report.run.sandbox_lines(limit=10)  # type: ignore[attr-defined]
    assert len(lines) == 12 and lines[-1].strip() == "... and 20 more (report.json lists up to 5000)"


def test_an_in_place_run_says_so() -> None:
    report = _with_sandbox({"backend": "none", "changes": [], "changes_total": 0})
    assert "ran in place" in render(report, "markdown", color=False)  # type: ignore[arg-type]
