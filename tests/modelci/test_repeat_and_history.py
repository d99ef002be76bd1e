"""Model CI end to end on the demo (real Paddle on the CPU, the real CLI in children): a seeded 2-run
baseline, then `tipc check --baseline --repeat 2`, which runs the chain twice and judges the medians; the
seed and the training hyper-parameters are in the baseline's provenance; every verb wrote the one default
history, keyed by the repo's identity, which `tipc history` reads without --history from another folder
holding the same repo.

Not a timing test: the demo seeds itself and tipc seeds every step, so its effect metrics are identical in
every run and judged exactly; timings are only required not to FAIL for want of comparable load."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.helpers.children import tipc
from tests.helpers.demo import copy_demo
from tests.helpers.git import git
from tests.helpers.rulesets import CHAIN_ONLY

pytestmark = pytest.mark.integration
RULESET = CHAIN_ONLY


def test_a_repeated_check_judges_medians_and_the_history_follows_the_repo(tmp_path: Path) -> None:
    repo = copy_demo(tmp_path / "lenet_digits")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "demo")
    baselines = tmp_path / "baselines"
    done = tipc(
        "baseline", "record", str(repo), "--repeat", "2", "--warmup", "0", "--baseline-dir", str(baselines)
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "effect metrics were identical in every run (seed 0): judged exactly" in done.stderr
    base = yaml.safe_load(next(baselines.glob("**/cpu.yaml")).read_text())
    prov = base["provenance"]
    assert prov["seed"] == 0 and prov["hyperparameters"]["seed"]["value"] == "2024"
    assert prov["hyperparameters"]["epochs"]["value"] == "5" and prov["contention"] is not None
    assert base["metrics"]["train.loss.last"]["deterministic"] is True
    assert base["metrics"]["stage.train.cpu_s"]["clock"] == "cpu"

    ruleset = tmp_path / "chain-only.yaml"
    ruleset.write_text(RULESET)
    check = tipc(
        "check",
        str(repo),
        "--ruleset",
        str(ruleset),
        "--baseline",
        str(baselines),
        "--repeat",
        "2",
        "--format",
        "json",
        "--no-color",
    )
    report = json.loads(check.stdout)
    rule = next(r for r in report["rules"] if r["id"] == "model-ci.baseline")
    judged = rule["data"]["baseline"]
    assert judged["repeats"] == 2 and "--repeat: run 2 of 2 of the chain" in check.stderr
    rows = {r["metric"]: r for r in judged["rows"]}
    assert (
        rows["train.loss.last"]["verdict"] == "PASS" and "median of 2 runs" in rows["train.loss.last"]["why"]
    )
    assert not [r for r in judged["rows"] if r["verdict"] == "FAIL"], rule["summary"]
    assert rule["verdict"] in ("PASS", "WARN") and check.returncode == 0
    assert not any(d.startswith("seed:") for d in judged["env_diff"])  # seeded as recorded

    # the same repo checked out into another folder: one trend, found without --history
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    shown = tipc("history", str(clone))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("3 runs from") and "train.loss.last" in shown.stdout, shown.stdout
    assert "repo root:" in shown.stderr and os.environ["TIPC_HISTORY"] in shown.stderr
    shutil.rmtree(clone)
