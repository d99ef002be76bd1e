"""The demo repo end to end: gather once (module scope), then run the done-when cases. Real Paddle, tiny runs
(14 steps of LeNet on the lite data, checkpoints every 5 steps, 2 segments of 3 steps)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tipc.convergence import ConvergeResult, do_convergence_test
from tipc.convergence.result import FAIL, PASS
from tipc.execute import proc

pytestmark = pytest.mark.integration

DEMO = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits"
CONFIG = DEMO / "test_tipc" / "convergence.yaml"
MANIFEST = "convergence_harness_manifest.json"


def _converge(storage: Path, config: Path, **kw: Any) -> ConvergeResult:
    return do_convergence_test(storage, MANIFEST, config, python=sys.executable, jobs=2, **kw)


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    text = CONFIG.read_text()
    assert old in text
    text = text.replace(old, new).replace('directory: ".."', f'directory: "{DEMO}"')
    path = tmp_path / "convergence.yaml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def storage(tmp_path_factory: pytest.TempPathFactory) -> Path:
    st = tmp_path_factory.mktemp("lenet_conv")
    gathered = _converge(st, CONFIG, do_gather=True)
    assert gathered.passed, gathered.tests[0].errors
    assert [s.start_step for s in gathered.segments] == [5, 10]
    return st


def test_gather_then_run_passes_and_leaves_the_repo_clean(storage: Path) -> None:
    result = _converge(storage, CONFIG)
    assert result.passed, [s.failure_text() for s in result.segments]
    assert [len(s.checks) for s in result.segments] == [6, 6]  # loss and acc at 3 steps
    assert not any("wrote into" in n for n in result.tests[0].notes), result.tests[0].notes
    status = subprocess.run(
        ["git", "status", "--porcelain", "--", str(DEMO)],
        capture_output=True,
        text=True,
        cwd=DEMO,
        check=False,
    )
    assert "output" not in status.stdout


def test_changed_learning_rate_fails_on_named_steps(storage: Path, tmp_path: Path) -> None:
    config = _variant(tmp_path, "value: 0.01", "value: 0.2")
    result = _converge(storage, config)
    assert not result.passed
    failed = [c for s in result.segments for c in s.failed_checks]
    assert failed and all(c.actual is not None and c.expected is not None for c in failed)
    assert {c.step for c in failed} <= {6, 7, 8, 11, 12, 13}
    text = result.segments[-1].failure_text()
    assert "loss[0]: actual" in text and "operator '=='" in text


def test_crash_in_one_segment(storage: Path, tmp_path: Path) -> None:
    copy = tmp_path / "st"
    shutil.copytree(storage, copy)
    (copy / "ckpts" / "step_5.pdopt").unlink()  # resuming at step 5 now raises in the application
    result = _converge(copy, CONFIG)
    first, second = result.segments
    assert first.status == FAIL and first.exit_code not in (0, None)
    assert any(r.startswith("application exited with code") for r in first.reasons)
    assert second.status == PASS


def test_log_lacking_a_recorded_step_fails_not_observed(storage: Path, tmp_path: Path) -> None:
    # the application stops at step 12 (exit 0): step 13 of the second segment never shows
    config = _variant(
        tmp_path,
        '            run_for:\n                key: "--max_steps"\n                set_in_script: true\n',
        '            run_for:\n                key: "--max_steps"\n                set_in_script: true\n'
        '            misc:\n                stop_early:\n                    key: "--max_steps"\n'
        "                    value: 12\n",
    )
    result = _converge(storage, config)
    first, second = result.segments
    assert first.status == PASS
    assert second.status == FAIL and second.exit_code == 0
    assert {(c.step, c.reason) for c in second.failed_checks} == {(13, "step not observed in the run's log")}


def test_plain_training_log_is_unchanged_without_the_segment_flags(tmp_path: Path) -> None:
    code, out = proc.capture(
        [sys.executable, "train.py", "--epochs", "1", "--output_dir", str(tmp_path)], cwd=DEMO, timeout_s=300
    )
    assert code == 0, out
    config_line = next(line for line in out.splitlines() if line.startswith("[Config]"))
    assert "save_interval" not in config_line and "resume" not in config_line
    assert "[Step " not in out and "[Checkpoint]" not in out
    assert "[Epoch 1/1][Iter 19/19] loss:" in out and "[Eval] acc:" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "best_model.pdparams",
        "latest.pdopt",
        "latest.pdparams",
        "train.log",
    ]


def test_gather_with_seeds_then_run_passes_inside_the_band(tmp_path: Path) -> None:
    storage = tmp_path / "st"
    gathered = _converge(storage, CONFIG, do_gather=True, seeds=2)
    assert gathered.passed, gathered.tests[0].errors
    doc = json.loads((storage / f"lenet_digits_{MANIFEST}").read_text())
    band = doc["ckpt_logs"]["5"]["envelope"]["6"]["loss"]["0"]
    assert band["n"] == 2 and band["min"] < band["max"]  # two runs, two data orders
    result = _converge(storage, CONFIG)
    assert result.passed, [s.failure_text() for s in result.segments]
    assert all(c.band is not None for s in result.segments for c in s.checks)
