"""predict.py against infer.py on the published repos whose inputs are not one image: what both scripts can
be given is read from their own argparse code and the inference step's command line, before anything runs.
(Nothing here runs Paddle: each case decides before it would start a script.)"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tipc.core.steps import Stage, Status
from tipc.execute.record import RunRecord, StepResult
from tipc.judge.checks import CHECKS
from tipc.judge.checks.base import CheckContext, Verdict
from tipc.planning.planner import plan

pytestmark = [pytest.mark.real_repos]

CONFIGS = {
    "sldyns__DnCNN_paddle": "test_tipc/configs/DnCNN/train_infer_python.txt",
    "kongdebug__NAFNet-pd": "test_tipc/configs/NAFNet/train_infer_python.txt",
}


def _record(repo: Path, name: str) -> RunRecord:
    the_plan = plan(repo / CONFIGS[name], "lite_train_lite_infer", repo=repo)
    results = tuple(
        StepResult(step_id=s.id, status=Status.PASSED, exit_code=0, started=1.0, ended=2.0, argv=s.argv)
        for s in the_plan.steps
    )
    return RunRecord(plan=the_plan, results=results, started=1.0, python=sys.executable)


def test_dncnn_predict_py_takes_no_image_option_so_the_rule_is_not_applicable(
    unpack: Callable[[str], Path],
) -> None:
    # its infer.py reads --img-path (the config's image slot, which its script never passes); its predict.py
    # denoises the folder --data_path names
    repo = unpack("sldyns__DnCNN_paddle")
    record = _record(repo, "sldyns__DnCNN_paddle")
    assert (
        "--img-path:./test_tipc/data/BSD68/test002.png"
        in (repo / CONFIGS["sldyns__DnCNN_paddle"]).read_text()
    )
    out = CHECKS["predict_infer_agreement"](CheckContext(repo=repo, record=record))
    assert out.verdict is Verdict.NA, out.summary
    assert "predict.py takes no image option (no --img-path)" in out.summary
    assert "--data_path" in out.evidence[0].text


def test_nafnet_noisy_clean_pairs_are_the_inference_steps_own_inputs(unpack: Callable[[str], Path]) -> None:
    # infer.py reads --noisy-dir and --clean-dir (no image option); predict.py reads --data_path
    repo = unpack("kongdebug__NAFNet-pd")
    record = _record(repo, "kongdebug__NAFNet-pd")
    infer = next(s for s in record.plan.steps if s.stage is Stage.INFER)
    for arg in infer.argv:  # its lite data is an archive not shipped here: the files the step names
        if arg.startswith(("--noisy-dir=", "--clean-dir=")):
            target = repo / infer.cwd / arg.split("=", 1)[1]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(b"png")
    out = CHECKS["predict_infer_agreement"](CheckContext(repo=repo, record=record))
    assert out.verdict is Verdict.NA, out.summary
    assert "takes none of the inference step's input options (--clean-dir, --noisy-dir)" in out.summary
