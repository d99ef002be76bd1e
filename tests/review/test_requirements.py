"""The review summary per acceptance requirement (seed 004), the ranking, and the resume key's packages."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tipc.core.errors import ConfigError
from tipc.review import engine, packages, requirements
from tipc.review.executor import Outcome
from tipc.review.summary import Summary, rejected_row, render, row_from_outcome


def _report(**verdicts: str) -> dict[str, Any]:
    rules = [
        {"ruleset": "competition", "id": rid, "verdict": v, "severity": "error", "summary": f"{rid} is {v}"}
        for rid, v in verdicts.items()
    ]
    return {"rulesets": ["competition"], "rules": rules}


def _row(tmp_path: Path, name: str, code: int, report: dict[str, Any] | None) -> Any:
    report_dir = tmp_path / name / "report"
    report_dir.mkdir(parents=True)
    return row_from_outcome(
        Outcome(name, code, False, False, 1.0, None, report),
        name=name,
        source=f"/src/{name}",
        content_hash="ab" * 32,
        budget_s=60,
        work_area=str(tmp_path / name),
        report_dir=str(report_dir),
        log_path=str(tmp_path / name / "check.log"),
    )


NEAR = _report(
    **{
        "competition.tipc.lite_train_lite_infer": "PASS",
        "competition.docs.commands_run": "FAIL",
        "competition.eval.documented_accuracy": "PASS",
        "competition.eval.documented": "PASS",
        "competition.serving.test_script": "N-A",
        "competition.serving.documented_equals_inference": "N-A",
    }
)
FAR = _report(
    **{
        "competition.tipc.lite_train_lite_infer": "FAIL",
        "competition.docs.commands_run": "FAIL",
        "competition.eval.documented_accuracy": "FAIL",
        "competition.serving.test_script": "PASS",
        "competition.backbone.verified": "SKIP",
    }
)


def test_cells_per_requirement() -> None:
    cells = requirements.cells(NEAR)
    assert cells["chain"] == {
        "verdict": "PASS",
        "evidence": "competition.tipc.lite_train_lite_infer: competition.tipc.lite_train_lite_infer is PASS",
    }
    assert cells["documented_commands"]["verdict"] == "FAIL"
    assert cells["accuracy"]["verdict"] == "PASS"
    assert cells["serving"]["verdict"] == "N-A"
    assert "convergence" not in cells  # no rule of it in the report
    far = requirements.cells(FAR)
    assert far["backbones"] == {
        "verdict": "N-A",
        "evidence": "competition.backbone.verified: not checked: competition.backbone.verified is SKIP",
    }


def test_rows_are_ranked_by_distance_and_every_renderer_shows_the_columns(tmp_path: Path) -> None:
    far = _row(tmp_path, "far", 1, FAR)
    near = _row(tmp_path, "near", 1, NEAR)
    broken = _row(tmp_path, "broken", 3, None)
    rejected = rejected_row("evil", "/src/evil", "cd" * 32, "bad archive")
    assert (near.distance, far.distance) == (1, 3)
    assert broken.distance == rejected.distance == len(requirements.load())
    summary = Summary([far, broken, near, rejected], ["competition"], "0.3.0", "local", 1, 5.0)
    assert [r.name for r in summary.ranked()] == ["near", "far", "broken", "evil"]

    text = render(summary, "text", tmp_path)
    assert text.index("near") < text.index("far")
    assert "4.1.3 documented_commands" in text and "acceptance per requirement" in text
    assert "competition.docs.commands_run: competition.docs.commands_run is FAIL" in text

    md = render(summary, "markdown", tmp_path)
    assert "## Acceptance per requirement" in md
    assert "| near | 1/5 fail | **PASS** competition.tipc.lite_train_lite_infer" in md

    rows = list(csv.DictReader(io.StringIO(render(summary, "csv"))))
    assert [r["submission"] for r in rows] == ["near", "far", "broken", "evil"]
    assert rows[0]["req_documented_commands"] == "FAIL" and rows[0]["distance"] == "1"
    assert rows[0]["req_accuracy_evidence"].startswith("competition.eval.documented_accuracy")

    page = render(summary, "html", tmp_path)
    assert 'class="req v-FAIL"' in page and "4.2.3 serving" in page
    data = json.loads(render(summary, "json"))
    assert data["submissions"][2]["requirements"]["chain"]["verdict"] == "PASS"


def test_a_broken_requirements_file_is_located(tmp_path: Path) -> None:
    path = tmp_path / "requirements.yaml"
    path.write_text(
        "schema: tipc.requirements/1\nrequirements:\n  - {id: a, section: '1', title: t, rules: []}\n"
    )
    with pytest.raises(ConfigError) as info:
        requirements._load(path)
    assert info.value.line == 3


def test_the_resume_key_changes_with_what_the_interpreter_has_installed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "sub"
    folder.mkdir()
    options = engine.ReviewOptions(submissions=[str(folder)], out=tmp_path / "out")
    monkeypatch.setattr(packages, "package_list", lambda python: "3.11\nnumpy==1.0\n")
    first = engine.plan(options)[0].key
    assert engine.plan(options)[0].key == first
    monkeypatch.setattr(packages, "package_list", lambda python: "3.11\nnumpy==1.0\nscipy==1.13\n")
    assert engine.plan(options)[0].key != first


def test_the_checks_interpreter_and_its_package_list() -> None:
    assert packages.checks_python(["--python", "/x/python"]) == "/x/python"
    assert packages.checks_python(["--python=/y/python"]) == "/y/python"
    assert packages.checks_python(["--device", "cpu"]) == sys.executable
    listed = packages.package_list(sys.executable)
    assert listed is not None and "pyyaml==" in listed.lower()
    assert packages.packages_digest("/no/such/python") == "unavailable:/no/such/python"
