"""Lineage on real runs of the demo (Paddle on CPU): the clean chain passes, and a copy whose eval.py loads
the committed pretrained weights instead of the trained ones fails, naming that file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DemoRun

pytestmark = pytest.mark.integration

DEMO = Path(__file__).resolve().parents[3] / "examples" / "lenet_digits"
COMMITTED = "pretrained/lenet_digits_pretrained.pdparams"
RULESET = """\
schema: tipc.ruleset/1
name: lineage-only
rules:
  - id: lineage.weights
    source: test
    severity: error
    description: weights
    check: {check: {name: lineage, args: {aspect: weights}}}
  - id: lineage.inference_model
    source: test
    severity: error
    description: model
    check: {check: {name: lineage, args: {aspect: inference_model}}}
  - id: lineage.cmdline_paths
    source: test
    severity: error
    description: paths
    check: {check: {name: lineage, args: {aspect: cmdline_paths}}}
"""


def tipc(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("FLAGS_enable_pir_api", None)
    return subprocess.run(
        [sys.executable, "-m", "tipc", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


def run_and_check(repo: Path, *only: str) -> dict[str, Any]:
    ruleset = repo.parent / "lineage.yaml"
    ruleset.write_text(RULESET)
    selected = [a for stage in only for a in ("--only", stage)]
    ran = tipc("run", str(repo), "--python", sys.executable, *selected)
    assert "Traceback" not in ran.stderr.split("tipc:")[-1], ran.stderr
    checked = tipc("check", str(repo), "--reuse-run", "--ruleset", str(ruleset), "--format", "json")
    assert checked.returncode in (0, 1), checked.stderr
    return dict(json.loads(checked.stdout))


def demo_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "lenet_digits"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("output", "__pycache__"))  # keeps mtimes
    return dest


def rule(report: dict[str, Any], rule_id: str) -> dict[str, Any]:
    return next(r for r in report["rules"] if r["id"] == rule_id)


def check_only(repo: Path) -> dict[str, Any]:
    ruleset = repo.parent / "lineage.yaml"
    ruleset.write_text(RULESET)
    checked = tipc("check", str(repo), "--reuse-run", "--ruleset", str(ruleset), "--format", "json")
    assert checked.returncode in (0, 1), checked.stderr
    return dict(json.loads(checked.stdout))


def test_the_demo_chain_reads_what_it_wrote(tmp_path: Path, demo_run: DemoRun) -> None:
    # The suite's shared `tipc run` of the demo (tests/conftest.py), copied with its record.
    report = check_only(demo_run.copy(tmp_path / "lenet_digits"))
    assert report["run"]["reused"] is True
    for rule_id in ("lineage.weights", "lineage.inference_model", "lineage.cmdline_paths"):
        assert rule(report, rule_id)["verdict"] == "PASS", rule(report, rule_id)
    lineage = report["lineage"]
    stages = {s["id"].split("/")[0] for s in lineage["steps"] if s["recorded"]}
    assert stages == {"train", "eval", "export", "infer"}
    weights = [f for f in lineage["files"] if f["path"].endswith("latest.pdparams")]
    assert weights and weights[0]["origin"] == "run" and weights[0]["sha256"]
    assert {r.split("/")[0] for r in weights[0]["read_by"]} == {"eval", "export"}
    model = [f for f in lineage["files"] if f["kind"] == "model" and f["written_by"]]
    assert model and all(f["read_by"] for f in model if f["path"].endswith(".pdiparams"))


def test_eval_loading_committed_weights_fails_naming_them(tmp_path: Path) -> None:
    repo = demo_copy(tmp_path)
    script = repo / "eval.py"
    text = script.read_text()
    assert "load_weights(model, args.pretrained)" in text
    script.write_text(
        text.replace("load_weights(model, args.pretrained)", f'load_weights(model, "{COMMITTED}")')
    )
    report = run_and_check(repo, "train", "eval")
    weights = rule(report, "lineage.weights")
    assert weights["verdict"] == "FAIL"
    assert f"read {COMMITTED} (there before the run" in weights["summary"]
    assert "latest.pdparams" in weights["summary"]  # what the train did write
    paths = rule(report, "lineage.cmdline_paths")
    assert paths["verdict"] == "FAIL" and "was never opened" in paths["summary"]
    assert "latest.pdparams" in paths["summary"]


@pytest.mark.skipif(
    os.geteuid() != 0, reason="the overlay sandbox (whose upper layer shows native writes) runs as root here"
)
def test_weights_written_by_a_native_program_count_as_the_train_steps(tmp_path: Path) -> None:
    """No hook sees `cp` (not Python) write the weights eval then reads: the sandbox's upper layer does."""
    repo = demo_copy(tmp_path)
    script = repo / "train.py"
    text = script.read_text()
    save = 'paddle.save(model.state_dict(), os.path.join(args.output_dir, "latest.pdparams"))'
    assert save in text
    script.write_text(
        text.replace(
            save,
            'paddle.save(model.state_dict(), "/tmp/tipc_native.pdparams"); import subprocess; '
            'subprocess.run(["cp", "/tmp/tipc_native.pdparams", '
            'os.path.join(args.output_dir, "latest.pdparams")], check=True)',
        )
    )
    report = run_and_check(repo, "train", "eval")
    weights = rule(report, "lineage.weights")
    assert weights["verdict"] == "PASS", weights
    latest = next(f for f in report["lineage"]["files"] if f["path"].endswith("latest.pdparams"))
    assert latest["origin"] == "run" and [w.split("/")[0] for w in latest["written_by"]] == ["train"], latest
    edges = [e for e in report["lineage"]["edges"] if e["file"] == latest["path"] and e["kind"] == "wrote"]
    assert [e["via"] for e in edges] == ["layer"]  # seen only in the sandbox's upper layer
